"""Two exported recognisers averaged tensor by tensor: a model halfway between two runs from the same start.

    python benchmarks/stt_weight_average.py sonare/assets/stt models/stt-asterisk-speakers models/stt-soup

The first export's metadata (config, thresholds) and language model go with the average; both must have the same
architecture. Session 39 measured such an average of the shipped model and a continuation of it (docs/benchmarks.md,
STT); nothing shipped from it, so this stays a benchmark script, not a recipe.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from safetensors import safe_open
from safetensors.torch import save_file

from sonare.stt.lm import LM_FILE

WEIGHTS = "stt.safetensors"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path, help="export whose metadata and language model the average keeps")
    parser.add_argument("second", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--weight", type=float, default=0.5, help="the second export's share")
    args = parser.parse_args()
    first, second = safe_open(args.first / WEIGHTS, "pt"), safe_open(args.second / WEIGHTS, "pt")
    if set(first.keys()) != set(second.keys()):
        raise SystemExit("the two exports have different tensors")
    averaged = {}
    for name in sorted(first.keys()):
        a, b = first.get_tensor(name), second.get_tensor(name)
        averaged[name] = ((1 - args.weight) * a + args.weight * b).to(a.dtype) if a.is_floating_point() else a
    args.out.mkdir(parents=True, exist_ok=True)
    save_file(averaged, args.out / WEIGHTS, metadata=first.metadata())
    if (args.first / LM_FILE).exists():
        shutil.copy(args.first / LM_FILE, args.out / LM_FILE)
    print(f"wrote {args.out / WEIGHTS}")


if __name__ == "__main__":
    main()
