"""Client audio into the float samples the STT model takes: the PCM encodings of the protocol, decoded
as frames arrive (a frame may end in the middle of a sample)."""

from __future__ import annotations

import numpy as np

from sonare.audio.codecs import alaw_decode, mulaw_decode

INPUT_ENCODINGS = {"pcm_s16le": 2, "pcm_s32le": 4, "pcm_f16le": 2, "pcm_f32le": 4, "pcm_mulaw": 1, "pcm_alaw": 1}
MIN_RATE, MAX_RATE = 8000, 48000


def decode_pcm(data: bytes, encoding: str) -> np.ndarray:
    """Whole samples of headerless PCM as float32 in [-1, 1]."""
    if encoding == "pcm_s16le":
        return np.frombuffer(data, "<i2").astype(np.float32) / 32768.0
    if encoding == "pcm_s32le":
        return (np.frombuffer(data, "<i4").astype(np.float64) / 2147483648.0).astype(np.float32)
    if encoding == "pcm_f16le":
        return _finite(np.frombuffer(data, "<f2").astype(np.float32))
    if encoding == "pcm_f32le":
        return _finite(np.frombuffer(data, "<f4").astype(np.float32))
    if encoding == "pcm_mulaw":
        return mulaw_decode(np.frombuffer(data, np.uint8))
    if encoding == "pcm_alaw":
        return alaw_decode(np.frombuffer(data, np.uint8))
    raise ValueError(f"unsupported encoding {encoding!r}")


def _finite(samples: np.ndarray) -> np.ndarray:
    """Float input is untrusted: NaN and infinities become silence, and values are clipped."""
    return np.clip(np.nan_to_num(samples, nan=0.0, posinf=0.0, neginf=0.0), -1.0, 1.0)


class PcmDecoder:
    """Decodes a stream of PCM byte frames, keeping a partial sample for the next frame."""

    def __init__(self, encoding: str, sample_rate: int):
        self.encoding = encoding
        self.sample_rate = sample_rate
        self.width = INPUT_ENCODINGS[encoding]
        self.samples_in = 0
        self._carry = b""

    def push(self, data: bytes) -> np.ndarray:
        data = self._carry + data
        whole = len(data) - len(data) % self.width
        self._carry = data[whole:]
        samples = decode_pcm(data[:whole], self.encoding)
        self.samples_in += len(samples)
        return samples
