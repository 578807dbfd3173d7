"""Model audio to the client's output format, as it streams: resample, encode, frame in a container."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from sonare.audio.codecs import alaw_encode, mulaw_encode
from sonare.audio.resample import StreamingResampler

ENCODINGS = ("pcm_s16le", "pcm_f32le", "pcm_mulaw", "pcm_alaw")
CONTAINERS = ("raw", "wav", "mp3")
MIN_RATE, MAX_RATE = 8000, 48000
MP3_RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)
MP3_BIT_RATES = (32000, 48000, 64000, 96000, 128000, 160000, 192000, 256000, 320000)
BYTES_PER_SAMPLE = {"pcm_s16le": 2, "pcm_f32le": 4, "pcm_mulaw": 1, "pcm_alaw": 1}
_WAV_FORMAT_TAG = {"pcm_s16le": 1, "pcm_f32le": 3, "pcm_alaw": 6, "pcm_mulaw": 7}
CONTENT_TYPES = {"raw": "application/octet-stream", "wav": "audio/wav", "mp3": "audio/mpeg"}


@dataclass(frozen=True)
class OutputFormat:
    container: str
    encoding: str  # for mp3: the PCM fed to the encoder (pcm_s16le)
    sample_rate: int
    bit_rate: int | None = None  # mp3 only

    @property
    def bytes_per_sample(self) -> int:
        return BYTES_PER_SAMPLE[self.encoding]


def encode_pcm(samples: np.ndarray, encoding: str) -> bytes:
    """Float audio in [-1, 1] as headerless bytes in `encoding`."""
    clipped = np.clip(samples, -1.0, 1.0)
    if encoding == "pcm_s16le":
        return np.round(clipped * 32767.0).astype("<i2").tobytes()
    if encoding == "pcm_f32le":
        return clipped.astype("<f4").tobytes()
    if encoding == "pcm_mulaw":
        return mulaw_encode(clipped).tobytes()
    if encoding == "pcm_alaw":
        return alaw_encode(clipped).tobytes()
    raise ValueError(f"unsupported encoding {encoding!r}")


def wav_header(fmt: OutputFormat, data_bytes: int | None = None) -> bytes:
    """A RIFF/WAVE header. With `data_bytes` unknown (streaming) the sizes are set to their maximum,
    which readers take as "until the end of the file"."""
    width = fmt.bytes_per_sample
    size = 0xFFFFFFFF - 36 - 2 if data_bytes is None else data_bytes
    tag = _WAV_FORMAT_TAG[fmt.encoding]
    fmt_chunk = struct.pack("<HHIIHH", tag, 1, fmt.sample_rate, fmt.sample_rate * width, width, width * 8)
    if tag != 1:
        fmt_chunk += struct.pack("<H", 0)  # cbSize: non-PCM formats carry the extension size
    riff_size = min(0xFFFFFFFF, 4 + 8 + len(fmt_chunk) + 8 + size)
    return (
        b"RIFF"
        + struct.pack("<I", riff_size)
        + b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt_chunk))
        + fmt_chunk
        + b"data"
        + struct.pack("<I", size)
    )


class AudioOutput:
    """Converts one stream's audio chunks into the output format, chunk by chunk.

    The resampler is created from the first chunk's rate (the model's), so the same code serves any
    model. `push` returns the bytes ready now; `finish` returns what the resampler and encoder held back.
    """

    def __init__(self, fmt: OutputFormat):
        self.format = fmt
        self.samples_out = 0
        self._resampler: StreamingResampler | None = None
        self._mp3 = _mp3_encoder(fmt) if fmt.container == "mp3" else None

    @property
    def seconds_out(self) -> float:
        return self.samples_out / self.format.sample_rate

    def header(self) -> bytes:
        return wav_header(self.format) if self.format.container == "wav" else b""

    def push(self, pcm: np.ndarray, sample_rate: int) -> bytes:
        if self._resampler is None:
            self._resampler = StreamingResampler(sample_rate, self.format.sample_rate)
        elif sample_rate != self._resampler.orig_rate:
            raise ValueError(f"model changed its sample rate mid-stream ({self._resampler.orig_rate} -> {sample_rate})")
        return self._encode(self._resampler.process(pcm))

    def finish(self) -> bytes:
        tail = self._encode(self._resampler.flush()) if self._resampler is not None else b""
        if self._mp3 is not None:
            tail += bytes(self._mp3.flush())
        return tail

    def _encode(self, samples: np.ndarray) -> bytes:
        self.samples_out += len(samples)
        if self._mp3 is not None:
            return bytes(self._mp3.encode(encode_pcm(samples, "pcm_s16le"))) if len(samples) else b""
        return encode_pcm(samples, self.format.encoding)


def _mp3_encoder(fmt: OutputFormat):
    import lameenc  # only mp3 requests need it

    encoder = lameenc.Encoder()
    encoder.set_bit_rate((fmt.bit_rate or 128000) // 1000)
    encoder.set_in_sample_rate(fmt.sample_rate)
    encoder.set_channels(1)
    encoder.set_quality(2)
    return encoder


def split_frames(data: bytes, max_bytes: int, sample_width: int) -> list[bytes]:
    """Cut encoded audio into pieces of at most `max_bytes`, on sample boundaries, none empty."""
    step = max(sample_width, max_bytes - max_bytes % sample_width)
    return [data[i : i + step] for i in range(0, len(data), step)]
