"""Sample-rate conversion with soxr, offline and streaming."""

from __future__ import annotations

import numpy as np
import soxr


def resample(audio: np.ndarray, orig_rate: int, target_rate: int, quality: str = "HQ") -> np.ndarray:
    """Resample mono float audio; returns float32 of length round(len * target / orig)."""
    audio = np.asarray(audio, dtype=np.float32)
    if orig_rate == target_rate:
        return audio.copy()
    return soxr.resample(audio, orig_rate, target_rate, quality=quality).astype(np.float32, copy=False)


class StreamingResampler:
    """Resamples a stream delivered in chunks of any size.

    The concatenated outputs of `process` (with `last=True` on the final call) equal the offline
    `resample` of the whole signal, apart from the filter's edge behaviour at the very start and end.
    """

    def __init__(self, orig_rate: int, target_rate: int, quality: str = "HQ") -> None:
        self.orig_rate = orig_rate
        self.target_rate = target_rate
        self.quality = quality
        self._stream: soxr.ResampleStream | None = None
        self.reset()

    def reset(self) -> None:
        """Forget all buffered input, ready for a new stream."""
        if self.orig_rate != self.target_rate:
            self._stream = soxr.ResampleStream(
                self.orig_rate, self.target_rate, 1, dtype="float32", quality=self.quality
            )

    def process(self, chunk: np.ndarray, last: bool = False) -> np.ndarray:
        """Feed a chunk (possibly empty); returns the output samples that are ready."""
        chunk = np.ascontiguousarray(chunk, dtype=np.float32)
        if self._stream is None:
            return chunk.copy()
        return self._stream.resample_chunk(chunk, last=last)

    def flush(self) -> np.ndarray:
        """End of stream: returns the remaining samples and resets for the next stream."""
        out = self.process(np.zeros(0, dtype=np.float32), last=True)
        self.reset()
        return out
