"""The shipped recogniser's `Mamba2.forward` here against an earlier revision's: a training step and a file step.

Two timings of the shipped STT model (its weights), each with `Mamba2.forward` as it is in this checkout and as
it was at `--reference` (loaded from git), interleaved so that both see the same machine load:

  train: forward and backward, dropout on, of one batch of the training recipe's shape (8 rows of 1,248 log-mel
         frames: 100 s of audio, what `batch_frames: 10000` gives) on `--threads` threads, wall time;
  file:  inference on one stream's 2 s step (200 log-mel frames, the most a step encodes when a whole file is
         sent before session 19), one thread, this thread's CPU time.

Both revisions compute the same function: the script checks that outputs and gradients agree before timing.

    python benchmarks/ssm_forward.py [--reference 1aab0f5] [--threads 2] [--repeats 6]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

TRAIN_BATCH = (8, 1248)
FILE_STEP_FRAMES = 200
FILE_STEPS_PER_REPEAT = 20


def reference_forward(revision: str) -> Callable:
    """`Mamba2.forward` as it was at `revision` (a module loaded from `git show`)."""
    source = subprocess.run(
        ["git", "show", f"{revision}:sonare/ssm/mamba2.py"], check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "mamba2_reference.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("mamba2_reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module.Mamba2.forward


def main() -> None:
    from sonare.ssm.mamba2 import Mamba2
    from sonare.stt import load_default

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default="1aab0f5", help="git revision whose Mamba2.forward is the reference")
    parser.add_argument("--threads", type=int, default=2, help="threads of the training step")
    parser.add_argument("--repeats", type=int, default=6)
    args = parser.parse_args()
    torch.manual_seed(0)
    implementations = {"this checkout": Mamba2.forward, args.reference: reference_forward(args.reference)}
    model = load_default().model
    batch = torch.randn(*TRAIN_BATCH, model.cfg.n_mels)
    file_step = torch.randn(1, FILE_STEP_FRAMES, model.cfg.n_mels)
    state = model.new_state(1)

    def train_step(forward: Callable) -> tuple[torch.Tensor, list[torch.Tensor]]:
        Mamba2.forward = forward
        model.train().zero_grad()
        torch.manual_seed(1)  # the same dropout masks for both
        ctc, turn, _ = model(batch)
        (ctc.logsumexp(-1).mean() + turn.mean()).backward()
        return ctc.detach(), [p.grad.clone() for p in model.parameters()]

    @torch.inference_mode()
    def file_steps(forward: Callable, steps: int = 1) -> torch.Tensor:
        Mamba2.forward = forward
        model.eval()
        for _ in range(steps):
            ctc, _, _ = model(file_step, state)
        return ctc

    (out_a, grads_a), (out_b, grads_b) = (train_step(f) for f in implementations.values())
    train_diff = (out_a - out_b).abs().max().item()
    grad_diff = max(
        ((a - b).abs().max() / b.abs().max().clamp(min=1e-12)).item() for a, b in zip(grads_a, grads_b, strict=True)
    )
    file_diff = (file_steps(Mamba2.forward) - file_steps(implementations[args.reference])).abs().max().item()
    if max(train_diff, grad_diff, file_diff) > 1e-3:
        raise SystemExit(f"the revisions disagree: outputs {train_diff:.2e} / {file_diff:.2e}, grads {grad_diff:.2e}")

    train: dict[str, list[float]] = {name: [] for name in implementations}
    file: dict[str, list[float]] = {name: [] for name in implementations}
    for _ in range(args.repeats):
        for name, forward in implementations.items():
            torch.set_num_threads(args.threads)
            start = time.perf_counter()
            train_step(forward)
            train[name].append(time.perf_counter() - start)
            torch.set_num_threads(1)
            start = time.thread_time()
            file_steps(forward, FILE_STEPS_PER_REPEAT)
            file[name].append((time.thread_time() - start) / FILE_STEPS_PER_REPEAT)
    train_median = {name: statistics.median(times) for name, times in train.items()}
    file_median = {name: statistics.median(times) for name, times in file.items()}
    audio_seconds = FILE_STEP_FRAMES * 0.01
    result = {
        "train_batch": list(TRAIN_BATCH),
        "threads": args.threads,
        "repeats": args.repeats,
        "max_output_diff": max(train_diff, file_diff),
        "max_relative_grad_diff": grad_diff,
        "train_step_seconds_median": train_median,
        "train_ratio": train_median["this checkout"] / train_median[args.reference],
        "file_step_encoder_rtf_median": {name: t / audio_seconds for name, t in file_median.items()},
        "file_ratio": file_median["this checkout"] / file_median[args.reference],
        "command": "python benchmarks/ssm_forward.py " + " ".join(sys.argv[1:]),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
