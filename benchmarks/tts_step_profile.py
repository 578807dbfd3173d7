"""Where a batched TTS step spends its time: N new streams stepped together, stage by stage, one thread.

Each stream gets the bench's default text (`sonare.server.bench.DEFAULT_TEXT`) at once; the first `--steps`
engine steps of the batch are timed whole and split into the phoneme encoder, the duration predictor, the
frame decoder and the vocoder (the networks' own forward calls), median over `--repeats` fresh batches.

    python benchmarks/tts_step_profile.py [--streams 16] [--steps 4] [--repeats 5]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from collections.abc import Callable

import torch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=16)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)

    from sonare.server.bench import DEFAULT_TEXT
    from sonare.tts import load_default
    from sonare.tts.messages import EndOfInput, SynthesisOptions, TextPiece, VoiceSpec

    tts = load_default()
    spent: dict[str, float] = collections.defaultdict(float)

    def timed(name: str, fn: Callable) -> Callable:
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            out = fn(*a, **k)
            spent[name] += time.perf_counter() - t0
            return out

        return wrapper

    stages = {
        "encoder": tts.model.encoder,
        "durations": tts.model.durations,
        "decoder": tts.model.decoder,
    }
    for name, module in stages.items():
        module.forward = timed(name, module.forward)
    tts.vocoder.run = timed("vocoder", tts.vocoder.run)

    runs: list[list[dict[str, float]]] = []
    for _ in range(args.repeats + 1):  # the first batch warms up
        with torch.inference_mode():
            sessions = [tts.open(SynthesisOptions(VoiceSpec())) for _ in range(args.streams)]
            for s in sessions:
                s.push(TextPiece(DEFAULT_TEXT))
                s.push(EndOfInput())
            state = tts.new_state(args.streams)
            steps = []
            for _ in range(args.steps):
                spent.clear()
                t0 = time.perf_counter()
                state, _ = tts.step(state, sessions)
                steps.append({"total": time.perf_counter() - t0, **spent})
            runs.append(steps)
    names = ["total", *stages, "vocoder"]
    print(f"{args.streams} new streams stepped together, one thread; ms, median of {args.repeats} batches")
    print("step " + "".join(f"{n:>11}" for n in names))
    for k in range(args.steps):
        row = [statistics.median(run[k].get(n, 0.0) for run in runs[1:]) * 1000 for n in names]
        print(f"{k + 1:>4} " + "".join(f"{v:>11.1f}" for v in row))


if __name__ == "__main__":
    main()
