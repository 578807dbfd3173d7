"""The shipped recogniser's encoder over a few frames: the PyTorch path against the compiled CPU inference path.

Without autograd on a CPU, `SSMStack` runs `sonare.ssm.cpu_step` (each block one Numba-compiled function, the
recurrence frame by frame); with autograd, PyTorch's ops. This times three paths (PyTorch's being `Mamba2.step` for
one frame, the chunked scan for more; the compiled one with the projections in float32, and with them rounded to
int8 as the shipped model's loader sets it) on the shipped STT encoder (its real weights, a state warmed on noise) for
several batch sizes (rows = live streams stepped together) and frame counts (a live stream's frames per step: 1
when it keeps up at 40 ms, more when its client sends larger chunks), one thread, interleaved so that all three see
the same machine load. Compute time is this thread's CPU time.

    python benchmarks/stt_step.py [--batches 1 4 16] [--frames 1 2 4 8 16 32 64] [--steps 200]
"""

from __future__ import annotations

import argparse
import copy
import json
import time

import numpy as np
import torch


def main() -> None:
    from sonare.ssm import cpu_step
    from sonare.stt import load_default

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--frames", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    int8_encoder = load_default().model.encoder
    for p in int8_encoder.parameters():
        p.requires_grad_(False)
    encoder = copy.deepcopy(int8_encoder)
    encoder.int8_projections = False
    rng = torch.Generator().manual_seed(0)

    def torch_path(x, state):
        with torch.enable_grad():  # PyTorch's own path (no tensor needs a gradient, so none is recorded)
            return encoder.step(x[:, 0], state) if x.shape[1] == 1 else encoder(x, state)

    def compiled_path(x, state):
        with torch.inference_mode():
            return cpu_step.stack_steps(encoder, x, state)

    def int8_path(x, state):
        with torch.inference_mode():
            return cpu_step.stack_steps(int8_encoder, x, state)

    results = {}
    for batch in args.batches:
        with torch.inference_mode():
            state = encoder(torch.randn(batch, 50, encoder.cfg.d_model, generator=rng))[1]
        for frames in args.frames:
            x = torch.randn(batch, frames, encoder.cfg.d_model, generator=rng)
            times: dict[str, list[float]] = {"torch": [], "compiled": [], "int8": []}
            for _ in range(args.steps):
                for name, fn in (("torch", torch_path), ("compiled", compiled_path), ("int8", int8_path)):
                    start = time.thread_time()
                    fn(x, state)
                    times[name].append((time.thread_time() - start) * 1e3)
            row = {
                name: {"p50_ms": float(np.median(t)), "p90_ms": float(np.percentile(t, 90))}
                for name, t in times.items()
            }
            row["speedup_p50"] = row["torch"]["p50_ms"] / row["compiled"]["p50_ms"]
            row["int8_speedup_p50"] = row["compiled"]["p50_ms"] / row["int8"]["p50_ms"]
            results[f"batch {batch} frames {frames}"] = row
            print(
                f"batch {batch:3d} frames {frames:3d}: torch p50 {row['torch']['p50_ms']:.2f} ms "
                f"(p90 {row['torch']['p90_ms']:.2f}), compiled p50 {row['compiled']['p50_ms']:.2f} ms "
                f"(p90 {row['compiled']['p90_ms']:.2f}), speed-up {row['speedup_p50']:.2f}x; int8 p50 "
                f"{row['int8']['p50_ms']:.2f} ms (p90 {row['int8']['p90_ms']:.2f}), "
                f"{row['int8_speedup_p50']:.2f}x the compiled float32",
                flush=True,
            )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
