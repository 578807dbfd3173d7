"""Exported recognisers averaged tensor by tensor: a model between runs from the same start.

    python benchmarks/stt_weight_average.py sonare/assets/stt models/stt-asterisk-speakers models/stt-soup
    python benchmarks/stt_weight_average.py sonare/assets/stt models/stt-a models/stt-b models/stt-c models/stt-soup

Two exports average with `--weight` the second's share (default half); more, equally. The first export's
metadata (config, thresholds) and language model go with the average; all must have the same architecture.
Sessions 39, 46 and 54 measured such averages of the shipped model and continuations of it (docs/benchmarks.md,
STT); nothing shipped from them, so this stays a benchmark script, not a recipe.
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
    parser.add_argument("exports", type=Path, nargs="+", help="exports to average, then the output folder")
    parser.add_argument("--weight", type=float, default=0.5, help="with two exports, the second's share")
    args = parser.parse_args()
    *exports, out = args.exports
    if len(exports) < 2:
        raise SystemExit("give at least two exports and an output folder")
    shares = [1 - args.weight, args.weight] if len(exports) == 2 else [1 / len(exports)] * len(exports)
    files = [safe_open(export / WEIGHTS, "pt") for export in exports]
    if any(set(f.keys()) != set(files[0].keys()) for f in files[1:]):
        raise SystemExit("the exports have different tensors")
    averaged = {}
    for name in sorted(files[0].keys()):
        tensors = [f.get_tensor(name) for f in files]
        first = tensors[0]
        averaged[name] = (
            sum(w * t for w, t in zip(shares, tensors, strict=True)).to(first.dtype)
            if first.is_floating_point()
            else first
        )
    out.mkdir(parents=True, exist_ok=True)
    save_file(averaged, out / WEIGHTS, metadata=files[0].metadata())
    if (exports[0] / LM_FILE).exists():
        shutil.copy(exports[0] / LM_FILE, out / LM_FILE)
    print(f"wrote {out / WEIGHTS}")


if __name__ == "__main__":
    main()
