"""The command line of a benchmark over held-out sentences run in shards: `--sentences N --shard K/M --out F` measures
every Mth of the first N sentences from the Kth (one thread, so shards run side by side on the cores), and
`--summarize F ...` prints the table of the shards' files."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import torch


def run(measure: Callable[[int, int, int], dict], summarize: Callable[[list[str]], None], sentences: int = 200) -> None:
    """`measure(sentences, shard, shards)` returns a shard's counts; `summarize(paths)` prints them together."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=sentences, help="the first N held-out sentences (seed 0)")
    ap.add_argument("--shard", default="0/1", help="K/N: every Nth sentence from the Kth")
    ap.add_argument("--out", help="where this shard's counts go (JSON)")
    ap.add_argument("--summarize", nargs="+", help="print the table of these shards' files")
    args = ap.parse_args()
    if args.summarize:
        summarize(args.summarize)
        return
    torch.set_num_threads(1)
    shard, shards = (int(v) for v in args.shard.split("/"))
    result = measure(args.sentences, shard, shards)
    if args.out:
        Path(args.out).write_text(json.dumps(result))
    else:
        print(json.dumps(result))
