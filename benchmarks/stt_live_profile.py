"""Where a live recognition stream's CPU time goes: the shipped recogniser's parts, as shares of real time.

Held-out clips are streamed in chunks of `--chunk` seconds, one stream, one thread, as `python -m
sonare.stt.bench` streams them; each part is timed by wrapping its function (thread CPU time), so the
figures add up without a profiler's per-call cost (cProfile inflates the beam search's many small Python calls
several times over). Every figure is seconds of CPU per second of audio (an RTF).

    python benchmarks/stt_live_profile.py --manifest corpus/default/manifest.jsonl --clips 30 --chunk 0.02
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Callable

import torch


def timed(obj: object, name: str, label: str, totals: collections.Counter) -> None:
    """Replace obj.name by a wrapper adding its thread CPU time to totals[label]."""
    inner: Callable = getattr(obj, name)

    def wrapper(*args, **kwargs):
        start = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            totals[label] += time.thread_time() - start

    setattr(obj, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", default="corpus/default/manifest.jsonl")
    parser.add_argument("--clips", type=int, default=30)
    parser.add_argument("--chunk", type=float, default=0.02, help="seconds of audio per client chunk")
    parser.add_argument("--step", type=float, help="seconds a stream gathers a step (default: the shipped setting)")
    args = parser.parse_args()
    torch.set_num_threads(1)

    from sonare.audio.io import load_audio
    from sonare.data.manifest import read_manifest
    from sonare.stt.bench import partial_latencies
    from sonare.stt.stream import STTSession
    from sonare.stt.weights import load_default

    model = load_default(step_seconds=args.step)
    totals: collections.Counter = collections.Counter()
    timed(STTSession, "_hear", "features and resampling", totals)
    timed(model.model.subsample, "forward", "subsampler", totals)
    timed(model.model.encoder, "forward", "SSM encoder", totals)
    timed(model, "_frame", "decoder and turn tracker", totals)
    timed(model, "_emit_partial", "partials", totals)
    timed(model, "step", "engine step (all of the above but features)", totals)

    root = args.manifest.rsplit("/", 1)[0]
    held_out = (r for r in read_manifest(args.manifest) if r["split"] == "heldout")
    records = [r for r in held_out if "conversation" not in r["section"]][: args.clips]
    clips = [(load_audio(f"{root}/{r['audio']}"), r["words"]) for r in records]
    (audio, rate), words = clips[0]
    partial_latencies(model, audio, rate, words, args.chunk)  # compiles and warms up
    totals.clear()
    compute = heard = 0.0
    for (audio, rate), words in clips:
        compute += partial_latencies(model, audio, rate, words, args.chunk)[1]
        heard += len(audio) / rate
    chunks = f"{args.chunk * 1000:.0f} ms chunks, {model.step_seconds * 1000:.0f} ms steps"
    print(f"{len(clips)} clips, {heard:.0f} s, {chunks}: RTF {compute / heard:.4f}")
    for label, seconds in totals.most_common():
        print(f"  {label:45s} {seconds / heard:.4f}")


if __name__ == "__main__":
    main()
