"""The beam search alone: CPU time per CTC frame of `BeamDecoder.push`, and the words it decodes.

The shipped recogniser's CTC log-probabilities for held-out clips are computed once (whole files), then every
clip is decoded frame by frame as a live stream would be (a partial read after each encoder frame's CTC frames,
the segment closed at the end), one thread. The greedy decoder on the same frames is the same-run reference.
`--out` writes every clip's words, so two revisions can be checked for the same output.

    python benchmarks/stt_beam.py --manifest corpus/default/manifest.jsonl --clips 100 [--out FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import torch


def clip_log_probs(
    manifest: str, clips: int, split: str = "heldout", sections: list[str] | None = None
) -> list[tuple[str, np.ndarray]]:
    """(transcript, CTC log-probabilities (frames, V)) of the split's first `clips` clips, conversations left out,
    only `sections` when given; audio paths are relative to the manifest or absolute."""
    from sonare.audio.features import StreamingFrames
    from sonare.audio.io import load_audio
    from sonare.audio.resample import resample
    from sonare.data.manifest import read_manifest
    from sonare.stt.model import SUBSAMPLING
    from sonare.stt.weights import load_default

    model = load_default(language_model=False).model
    out = []
    for record in read_manifest(manifest):
        if record["split"] != split or "conversation" in record["section"]:
            continue
        if sections and record["section"] not in sections:
            continue
        audio, rate = load_audio(Path(manifest).parent / record["audio"])
        mel = StreamingFrames().push(resample(audio, rate, 16000))
        mel = mel[: len(mel) // SUBSAMPLING * SUBSAMPLING]
        with torch.inference_mode():
            ctc, _, _ = model(mel[None])
        out.append((record.get("normalized") or record["text"], torch.log_softmax(ctc[0], -1).numpy()))
        if len(out) == clips:
            break
    return out


def decode(make_decoder, logps: list[np.ndarray], per: int) -> tuple[list[float], list[str]]:
    """Per-CTC-frame CPU times and each clip's final words, decoding as the live stream does."""
    times, texts = [], []
    for logp in logps:
        decoder = make_decoder()
        for j, row in enumerate(logp):
            start = time.thread_time()
            decoder.push(row, j)
            if j % per == per - 1:
                decoder.text()
            times.append(time.thread_time() - start)
        texts.append(" ".join(w.word for w in decoder.take_segment()))
    return times, texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", default="corpus/default/manifest.jsonl")
    parser.add_argument("--clips", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3, help="decode every clip this many times; best run kept")
    parser.add_argument("--out", help="write the timings and every clip's words here (JSON)")
    parser.add_argument("--beam", type=int, help="hypotheses kept per frame (default: the shipped setting)")
    parser.add_argument("--margin", type=float, help="score margin below the best (default: the shipped setting)")
    args = parser.parse_args()
    torch.set_num_threads(1)

    from sonare.stt.beam import BeamDecoder
    from sonare.stt.decode import GreedyDecoder
    from sonare.stt.weights import load_default

    stt = load_default()
    overrides = {k: v for k, v in (("beam", args.beam), ("margin", args.margin)) if v is not None}
    settings = dataclasses.replace(stt.beam, **overrides)
    seconds, per = stt.model.cfg.ctc_frame_seconds, stt.model.cfg.ctc_per_frame
    logps = [logp for _, logp in clip_log_probs(args.manifest, args.clips)]
    audio_s = sum(len(x) for x in logps) * seconds
    result = {"clips": len(logps), "audio_seconds": round(audio_s, 1), "settings": dataclasses.asdict(settings)}
    for name, make in {
        "beam": lambda: BeamDecoder(stt.lm, settings, seconds),
        "greedy": lambda: GreedyDecoder(seconds),
    }.items():
        runs = [decode(make, logps, per) for _ in range(args.repeats)]
        times, texts = min(runs, key=lambda run: sum(run[0]))
        ms = np.array(times) * 1e3
        result[name] = {
            "total_s": round(float(ms.sum() / 1e3), 4),
            "rtf": round(float(ms.sum() / 1e3 / audio_s), 5),
            "p50_ms": round(float(np.percentile(ms, 50)), 4),
            "p90_ms": round(float(np.percentile(ms, 90)), 4),
            "p99_ms": round(float(np.percentile(ms, 99)), 4),
            "words_sha1": hashlib.sha1("\n".join(texts).encode()).hexdigest()[:12],
            "texts": texts,
        }
        r = result[name]
        print(
            f"{name:6s} {r['total_s']:.3f} s for {audio_s:.0f} s of audio (RTF {r['rtf']:.4f}); per CTC frame "
            f"p50 {r['p50_ms']:.3f} ms, p90 {r['p90_ms']:.3f}, p99 {r['p99_ms']:.3f}; words {r['words_sha1']}"
        )
    print(f"beam / greedy: {result['beam']['total_s'] / result['greedy']['total_s']:.1f}x")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
