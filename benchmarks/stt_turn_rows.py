"""The end-of-turn rows docs/benchmarks.md and the STT card report, from `sonare eval turns` result files: at one
end threshold of each file's curve, the pauses to think cut off (mid-sentence holds, with their count), all holds
cut off, the ends missed, and the latency after a detected end.

    python benchmarks/stt_turn_rows.py RESULT.json [RESULT.json ...] [--threshold 0.85]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def row_at(curve: list[dict], threshold: float) -> dict:
    """The curve's setting at `threshold` (a setting the evaluator swept, to the rounding of its JSON)."""
    for row in curve:
        if abs(row["end_threshold"] - threshold) < 1e-9:
            return row
    swept = ", ".join(f"{r['end_threshold']:g}" for r in curve)
    raise SystemExit(f"no setting at {threshold:g} in the curve (swept: {swept})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--threshold", type=float, default=0.85, help="end threshold (default: the shipped 0.85)")
    args = ap.parse_args()
    for path in args.results:
        r = row_at(json.loads(Path(path).read_text())["curve"], args.threshold)
        thinking = round(r["mid_sentence_false_cutoff_rate"] * r["mid_sentence_holds"])
        print(
            f"{Path(path).name}  at {args.threshold:g}: pauses to think cut off "
            f"{r['mid_sentence_false_cutoff_rate']:.1%} ({thinking} of {r['mid_sentence_holds']}), "
            f"all holds {r['false_cutoff_rate']:.1%}, ends missed {r['miss_rate']:.1%}, "
            f"latency p50 {r['latency_p50']:.3f} s, p90 {r['latency_p90']:.3f} s"
        )


if __name__ == "__main__":
    main()
