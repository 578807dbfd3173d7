"""Reading and writing audio files as float32 mono arrays."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import BinaryIO

import numpy as np
import soundfile as sf

from sonare.audio.resample import resample


def load_audio(source: str | os.PathLike | BinaryIO, sample_rate: int | None = None) -> tuple[np.ndarray, int]:
    """Read any format libsndfile knows (wav, flac, ogg, mp3, ...) as float32 mono in [-1, 1].

    `source` is a path or an open binary file. Channels are averaged. When `sample_rate` is given
    the audio is resampled to it.
    """
    if isinstance(source, str | os.PathLike):
        source = str(source)
    audio, rate = sf.read(source, dtype="float32", always_2d=True)
    mono = audio.mean(axis=1) if audio.shape[1] > 1 else audio[:, 0]
    if sample_rate is not None and sample_rate != rate:
        mono = resample(mono, rate, sample_rate)
        rate = sample_rate
    return np.ascontiguousarray(mono, dtype=np.float32), int(rate)


def decode_audio(data: bytes, sample_rate: int | None = None) -> tuple[np.ndarray, int]:
    """Like `load_audio`, for an encoded file held in memory."""
    return load_audio(io.BytesIO(data), sample_rate)


def save_audio(path: str | os.PathLike, audio: np.ndarray, sample_rate: int, subtype: str = "PCM_16") -> None:
    """Write mono audio; the container (wav, flac, ogg) follows the file extension.

    The file is written under a temporary name and renamed into place, so a reader never sees a
    half-written file and a killed writer leaves nothing behind under the final name.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fmt = {".wav": "WAV", ".flac": "FLAC", ".ogg": "OGG", ".mp3": "MP3"}[path.suffix.lower()]
    if fmt in ("OGG", "MP3"):
        subtype = "VORBIS" if fmt == "OGG" else "MPEG_LAYER_III"
    clipped = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
    sf.write(str(tmp), clipped, sample_rate, format=fmt, subtype=subtype)
    os.replace(tmp, path)
