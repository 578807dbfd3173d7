"""The shipped recogniser's per-frame encoder step: the PyTorch path against the NumPy path CPU inference uses.

`SSMStack.step` runs `sonare.ssm.numpy_step` when autograd is off on a CPU and `Mamba2.step` otherwise; this
times both on the shipped STT encoder (its real weights and a state warmed on noise), at several batch sizes
(rows = live streams stepped together), one thread, interleaved so that both see the same machine load.
Compute time is this thread's CPU time.

    python benchmarks/stt_step.py [--batches 1 4 16] [--steps 400]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch


def main() -> None:
    from sonare.ssm import numpy_step
    from sonare.stt import load_default

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    encoder = load_default().model.encoder
    for p in encoder.parameters():
        p.requires_grad_(False)
    rng = torch.Generator().manual_seed(0)

    def torch_step(x, state):
        with torch.enable_grad():  # the PyTorch path (no tensor needs a gradient, so none is recorded)
            return encoder.step(x, state)

    def numpy_path(x, state):
        with torch.inference_mode():
            return numpy_step.stack_step(encoder, x, state)

    results = {}
    for batch in args.batches:
        with torch.inference_mode():
            state = encoder(torch.randn(batch, 50, encoder.cfg.d_model, generator=rng))[1]
        x = torch.randn(batch, encoder.cfg.d_model, generator=rng)
        times: dict[str, list[float]] = {"torch": [], "numpy": []}
        for _ in range(args.steps):
            for name, fn in (("torch", torch_step), ("numpy", numpy_path)):
                start = time.thread_time()
                fn(x, state)
                times[name].append((time.thread_time() - start) * 1e3)
        row = {
            name: {"p50_ms": float(np.median(t)), "p90_ms": float(np.percentile(t, 90))} for name, t in times.items()
        }
        row["speedup_p50"] = row["torch"]["p50_ms"] / row["numpy"]["p50_ms"]
        results[f"batch {batch}"] = row
        print(
            f"batch {batch:3d}: torch p50 {row['torch']['p50_ms']:.2f} ms (p90 {row['torch']['p90_ms']:.2f}), "
            f"numpy p50 {row['numpy']['p50_ms']:.2f} ms (p90 {row['numpy']['p90_ms']:.2f}), "
            f"speed-up {row['speedup_p50']:.2f}x"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
