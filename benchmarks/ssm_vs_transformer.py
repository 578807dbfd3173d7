"""Per-frame step latency and per-stream memory against context length: SSM block vs transformer block.

Both blocks have the same width and (nearly) the same parameter count; the transformer keeps a KV cache.
For each context length the SSM block is stepped from a state of that age (its size does not depend on it)
and the transformer from a cache of that length. Run on one core, in one process, side by side, so the ratios
hold on a noisy machine.

    python benchmarks/ssm_vs_transformer.py [--width 256] [--steps 200] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from sonare.ssm import Mamba2Config, SSMBlock


class TransformerBlock(nn.Module):
    """Pre-norm causal self-attention + MLP, stepping one frame against a KV cache."""

    def __init__(self, width: int, heads: int, mlp_hidden: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.proj = nn.Linear(width, width, bias=False)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, mlp_hidden), nn.GELU(), nn.Linear(mlp_hidden, width))

    def step(self, x: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, length: int) -> torch.Tensor:
        """x: (B, D); caches: (B, heads, capacity, D/heads) with `length` frames filled; appends this frame."""
        b, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, 3, self.heads, d // self.heads).unbind(1)
        k_cache[:, :, length] = k
        v_cache[:, :, length] = v
        att = F.scaled_dot_product_attention(q[:, :, None], k_cache[:, :, : length + 1], v_cache[:, :, : length + 1])
        x = x + self.proj(att.reshape(b, d))
        return x + self.mlp(self.norm2(x))


def n_params(m: nn.Module) -> int:
    return sum(p.numel() for p in m.parameters())


def time_steps(fn, steps: int) -> list[float]:
    for _ in range(10):
        fn(0)
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t0)
    return times


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--contexts", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 64])
    ap.add_argument("--json", help="also write results here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(0)

    d = args.width
    ssm = SSMBlock(Mamba2Config(d_model=d, d_state=32, head_dim=32)).eval()
    heads = d // 64
    # Pick the MLP width that matches the SSM block's parameter count (attention has 4 d^2).
    mlp_hidden = max(64, (n_params(ssm) - 4 * d * d) // (2 * d))
    tfm = TransformerBlock(d, heads, mlp_hidden).eval()
    print(f"SSM block: {n_params(ssm):,} params; transformer block: {n_params(tfm):,} params; width {d}")
    print(f"threads={args.threads}  steps={args.steps}  (times per frame; memory per stream)")
    header = f"{'block':<12}{'batch':>6}{'context':>9}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'state KiB':>11}"
    print(header)
    rows = []
    with torch.inference_mode():
        for batch in args.batches:
            for context in args.contexts:
                x = torch.randn(batch, d)
                # SSM: a state that has seen `context` frames (the prefill builds a realistic one)
                _, state = ssm(torch.randn(1, context, d))
                state = state.gather(torch.zeros(batch, dtype=torch.long))

                def ssm_step(i, state=state, x=x):
                    ssm.step(x, state)

                t_ssm = time_steps(ssm_step, args.steps)
                mem_ssm = state.nbytes_per_row()

                cap = context + args.steps + 16
                k = torch.randn(batch, heads, cap, d // heads)
                v = torch.randn(batch, heads, cap, d // heads)

                def tfm_step(i, k=k, v=v, x=x, context=context):
                    tfm.step(x, k, v, context + i % 16)

                t_tfm = time_steps(tfm_step, args.steps)
                mem_tfm = 2 * context * d * 4  # K and V, float32, per stream
                for name, t, mem in (("ssm", t_ssm, mem_ssm), ("transformer", t_tfm, mem_tfm)):
                    row = dict(
                        block=name,
                        batch=batch,
                        context=context,
                        p50_ms=statistics.median(t) * 1e3,
                        p90_ms=pct(t, 0.9) * 1e3,
                        p99_ms=pct(t, 0.99) * 1e3,
                        state_kib=mem / 1024,
                    )
                    rows.append(row)
                    print(
                        f"{name:<12}{batch:>6}{context:>9}{row['p50_ms']:>9.3f}{row['p90_ms']:>9.3f}"
                        f"{row['p99_ms']:>9.3f}{row['state_kib']:>11.1f}"
                    )

    print("\nGrowth from the shortest to the longest context (p50 step time, memory):")
    lo, hi = min(args.contexts), max(args.contexts)
    for batch in args.batches:
        for name in ("ssm", "transformer"):
            a = next(r for r in rows if r["block"] == name and r["batch"] == batch and r["context"] == lo)
            b = next(r for r in rows if r["block"] == name and r["batch"] == batch and r["context"] == hi)
            print(
                f"  {name:<12} batch {batch:>3}: time x{b['p50_ms'] / a['p50_ms']:.2f}, "
                f"memory x{b['state_kib'] / a['state_kib']:.2f}"
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    assert math.isfinite(rows[0]["p50_ms"])


if __name__ == "__main__":
    main()
