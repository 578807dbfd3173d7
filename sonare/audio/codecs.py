"""G.711 companding (mu-law and A-law), as used on telephone lines, in numpy.

Encoders take float audio in [-1, 1] and return one uint8 code per sample; decoders invert them.
The bit layouts follow ITU-T G.711, so the codes are interchangeable with real telephony payloads.
"""

from __future__ import annotations

import numpy as np

_MULAW_BIAS = 33  # in 14-bit units (132 in 16-bit units)
_MULAW_CLIP = 8159


def _to_int16(audio: np.ndarray) -> np.ndarray:
    return np.clip(np.round(np.asarray(audio, dtype=np.float64) * 32768.0), -32768, 32767).astype(np.int32)


def _segment(magnitude: np.ndarray, first_limit: int) -> np.ndarray:
    """Index of the power-of-two segment holding each magnitude (segment k ends at 2^k (first + 1) - 1)."""
    limits = ((first_limit + 1) << np.arange(8)) - 1
    return np.searchsorted(limits, magnitude, side="left").astype(np.int32)


def mulaw_encode(audio: np.ndarray) -> np.ndarray:
    pcm = _to_int16(audio) >> 2
    negative = pcm < 0
    magnitude = np.minimum(np.where(negative, -pcm, pcm), _MULAW_CLIP) + _MULAW_BIAS
    seg = _segment(magnitude, 0x3F)
    code = np.where(seg >= 8, 0x7F, (np.minimum(seg, 7) << 4) | ((magnitude >> (seg + 1)) & 0x0F))
    return (code ^ np.where(negative, 0x7F, 0xFF)).astype(np.uint8)


def mulaw_decode(codes: np.ndarray) -> np.ndarray:
    u = ~np.asarray(codes, dtype=np.int32) & 0xFF
    magnitude = (((u & 0x0F) << 3) + 4 * _MULAW_BIAS) << ((u & 0x70) >> 4)
    pcm = np.where(u & 0x80, 4 * _MULAW_BIAS - magnitude, magnitude - 4 * _MULAW_BIAS)
    return (pcm / 32768.0).astype(np.float32)


def alaw_encode(audio: np.ndarray) -> np.ndarray:
    pcm = _to_int16(audio) >> 3
    negative = pcm < 0
    magnitude = np.where(negative, -pcm - 1, pcm)
    seg = _segment(magnitude, 0x1F)
    shift = np.where(seg < 2, 1, seg)
    code = np.where(seg >= 8, 0x7F, (np.minimum(seg, 7) << 4) | ((magnitude >> shift) & 0x0F))
    return (code ^ np.where(negative, 0x55, 0xD5)).astype(np.uint8)


def alaw_decode(codes: np.ndarray) -> np.ndarray:
    a = np.asarray(codes, dtype=np.int32) ^ 0x55
    seg = (a & 0x70) >> 4
    mantissa = ((a & 0x0F) << 4) + 8
    magnitude = np.where(seg == 0, mantissa, (mantissa + 0x100) << np.maximum(seg - 1, 0))
    pcm = np.where(a & 0x80, magnitude, -magnitude)
    return (pcm / 32768.0).astype(np.float32)
