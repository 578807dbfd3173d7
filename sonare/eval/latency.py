"""Timing helpers shared by the evaluators and benchmarks: percentiles, a timer, streaming timing
(time to first audio, real-time factor) and plain-text summary tables."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

PERCENTILES = (50, 90, 95, 99)


def percentiles(values: Sequence[float], points: Sequence[int] = PERCENTILES) -> dict[str, float]:
    """`{"n", "mean", "p50", ..., "max"}` of `values`; NaN statistics when there are none."""
    data = np.asarray(values, dtype=np.float64)
    summary: dict[str, float] = {"n": float(data.size)}
    if data.size == 0:
        summary["mean"] = float("nan")
        summary.update({f"p{p}": float("nan") for p in points})
        summary["max"] = float("nan")
        return summary
    summary["mean"] = float(data.mean())
    summary.update({f"p{p}": float(v) for p, v in zip(points, np.percentile(data, points), strict=True)})
    summary["max"] = float(data.max())
    return summary


class Timer:
    """Wall-clock timer for a `with` block; `elapsed` is in seconds."""

    def __init__(self) -> None:
        self.elapsed = 0.0
        self._start = 0.0

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.elapsed = time.perf_counter() - self._start


@dataclass(frozen=True)
class StreamTiming:
    """How one streamed synthesis went. Real-time factor is compute time over audio duration
    (below 1 means faster than real time)."""

    time_to_first_audio: float
    total_time: float
    audio_seconds: float
    chunks: int

    @property
    def real_time_factor(self) -> float:
        return self.total_time / self.audio_seconds if self.audio_seconds > 0 else float("inf")

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "real_time_factor": self.real_time_factor}


def time_stream(stream: Callable[[], Iterable[np.ndarray]], sample_rate: int) -> tuple[StreamTiming, np.ndarray]:
    """Run a streaming synthesis to the end, timing its first non-empty chunk and the whole run.

    `stream` is called inside the timed region, so work done before the first chunk (text
    processing, prefill) counts towards time to first audio. Returns the timing and the audio.
    """
    chunks: list[np.ndarray] = []
    first_audio = float("nan")
    start = time.perf_counter()
    for chunk in stream():
        samples = np.asarray(chunk, dtype=np.float32).reshape(-1)
        if samples.size and not chunks:
            first_audio = time.perf_counter() - start
        if samples.size:
            chunks.append(samples)
    total = time.perf_counter() - start
    audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
    timing = StreamTiming(first_audio, total, audio.size / sample_rate, len(chunks))
    return timing, audio


def format_table(rows: Sequence[Mapping[str, object]], columns: Sequence[str] | None = None) -> str:
    """A fixed-width text table: text left-aligned, numbers right-aligned, floats to 3 decimals."""
    if not rows:
        return ""
    columns = list(columns) if columns is not None else list(rows[0])

    def cell(value: object) -> tuple[str, bool]:
        if isinstance(value, float):
            return f"{value:.3f}", True
        return str(value), isinstance(value, int)

    cells = [[cell(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i][0]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in cells:
        line = "  ".join(
            text.rjust(w) if numeric else text.ljust(w) for (text, numeric), w in zip(row, widths, strict=True)
        )
        lines.append(line.rstrip())
    return "\n".join(lines)
