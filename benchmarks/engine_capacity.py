"""Engine capacity: how many real-time streams one process sustains with zero underruns.

Each stream is paced like TTS playback: it must deliver one decoder frame every `--frame-ms` (11.6 ms is a
256-sample hop at 22.05 kHz), may run at most `--ahead-ms` ahead of playback, and counts an underrun whenever
it is served after its playback deadline. The model is an SSM stack of the size of the default TTS decoder.
For each core count the number of streams is swept upward until underruns appear.

    python benchmarks/engine_capacity.py [--cores 1 2] [--seconds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from sonare.engine import Engine
from sonare.ssm import BatchState, Mamba2Config, SSMStack


class PacedSession:
    def __init__(self, frame_s: float, ahead_s: float, frames: int):
        self.frame_s, self.ahead_s, self.total = frame_s, ahead_s, frames
        self.emitted = 0
        self.t0: float | None = None  # playback starts with the first frame

    def push(self, item: Any) -> None:
        pass

    def ready(self, now: float) -> bool:
        if self.emitted >= self.total:
            return False
        return self.t0 is None or self.emitted * self.frame_s < now - self.t0 + self.ahead_s

    def deadline(self) -> float | None:
        return None if self.t0 is None else self.t0 + self.emitted * self.frame_s

    def finished(self) -> bool:
        return self.emitted >= self.total


class DecoderSizedModel:
    name = "decoder"

    def __init__(self, frame_s: float, ahead_s: float, frames: int, width: int, layers: int):
        torch.manual_seed(0)
        self.net = SSMStack(Mamba2Config(d_model=width, d_state=32, head_dim=32), layers).eval()
        self.width, self.frame_s, self.ahead_s, self.frames = width, frame_s, ahead_s, frames

    def new_state(self, slots: int) -> BatchState:
        return self.net.new_state(slots)

    def open(self, options: Mapping[str, Any]) -> PacedSession:
        return PacedSession(self.frame_s, self.ahead_s, self.frames)

    def step(self, state: BatchState, sessions: Sequence[PacedSession]) -> tuple[BatchState, list[list[Any]]]:
        x = torch.randn(len(sessions), self.width)
        _, state = self.net.step(x, state)
        now = time.monotonic()
        for s in sessions:
            if s.t0 is None:
                s.t0 = now
            s.emitted += 1
        return state, [[1] for _ in sessions]


async def run_load(engine: Engine, streams: int) -> None:
    async def one() -> None:
        async for _ in engine.open("decoder"):
            pass

    await asyncio.gather(*(one() for _ in range(streams)))


def measure(cores: int, streams: int, args: argparse.Namespace) -> dict:
    model = DecoderSizedModel(args.frame_ms / 1e3, args.ahead_ms / 1e3, int(args.seconds * 1e3 / args.frame_ms),
                              args.width, args.layers)  # fmt: skip
    engine = Engine({"decoder": model}, slots=streams, max_batch=streams, threads=cores)
    engine.start()
    t0 = time.perf_counter()
    asyncio.run(run_load(engine, streams))
    wall = time.perf_counter() - t0
    engine.stop()
    m = engine.metrics.registry.get_sample_value
    steps = m("sonare_step_seconds_count", {"model": "decoder"})
    return dict(
        cores=cores,
        streams=streams,
        underruns=int(m("sonare_underruns_total", {"model": "decoder"})),
        frames=int(m("sonare_batch_size_sum", {"model": "decoder"})),
        mean_batch=m("sonare_batch_size_sum", {"model": "decoder"}) / steps,
        mean_step_ms=1e3 * m("sonare_step_seconds_sum", {"model": "decoder"}) / steps,
        wall_s=wall,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cores", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seconds", type=float, default=4.0, help="audio per stream")
    ap.add_argument("--frame-ms", type=float, default=256 / 22050 * 1e3)
    ap.add_argument("--ahead-ms", type=float, default=200.0)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--start", type=int, default=8)
    args = ap.parse_args()
    torch.set_flush_denormal(True)
    print(f"decoder: width {args.width}, {args.layers} layers; frame every {args.frame_ms:.1f} ms; "
          f"{args.seconds:.0f} s per stream; up to {args.ahead_ms:.0f} ms ahead")  # fmt: skip
    print(f"{'cores':>5}{'streams':>8}{'underruns':>10}{'mean batch':>11}{'step ms':>9}{'wall s':>8}")
    for cores in args.cores:
        os.sched_setaffinity(0, set(range(cores)))
        streams, best = args.start, 0
        while True:
            r = measure(cores, streams, args)
            print(f"{cores:>5}{streams:>8}{r['underruns']:>10}{r['mean_batch']:>11.1f}{r['mean_step_ms']:>9.2f}"
                  f"{r['wall_s']:>8.2f}")  # fmt: skip
            if r["underruns"]:
                break
            best = streams
            streams = int(streams * 1.5)
        print(f"  -> {cores} core(s): {best} concurrent real-time streams with zero underruns")


if __name__ == "__main__":
    main()
