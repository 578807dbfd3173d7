"""How right `sonare data label`'s transcripts are, on real speech that people transcribed: every clip of the
real-speech manifest (`python -m sonare.stt.realspeech runs/realspeech`) is labelled as untranscribed audio, one
voice folder per section, and what the labeller keeps is scored against the human transcripts. Prints, per
section and in all, the share of clips and words kept and the WER of the kept transcripts (normalised as
`sonare eval stt` normalises).

    python benchmarks/pseudolabel_accuracy.py [--manifest runs/realspeech/manifest.jsonl] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sonare.audio.io import load_audio, save_audio
from sonare.data.pseudolabel import label
from sonare.data.recordings import read_recordings
from sonare.eval.wer import corpus_errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", default="runs/realspeech/manifest.jsonl")
    parser.add_argument("--work", default="runs/pseudolabel-check")
    args = parser.parse_args()
    work = Path(args.work)
    records = [json.loads(line) for line in Path(args.manifest).read_text().splitlines()]
    reference = {}
    for r in records:
        clip = work / "in" / r["section"] / f"{r['id']}.wav"
        if not clip.exists():
            save_audio(clip, *load_audio(r["audio"]))
        reference[(r["section"], r["id"])] = r["normalized"]
    label(work / "in", work / "out")
    kept = {(rec.speaker, rec.id): rec.text for rec in read_recordings(work / "out")}
    print(f"{'section':16} {'clips kept':>12} {'words kept':>12} {'WER of kept':>12}")
    for section in [*sorted({s for s, _ in reference}), None]:
        keys = [k for k in reference if section in (None, k[0])]
        ours = [k for k in keys if k in kept]
        words = sum(len(reference[k].split()) for k in ours)
        total = sum(len(reference[k].split()) for k in keys)
        wer = corpus_errors((reference[k], kept[k]) for k in ours).wer if ours else float("nan")
        name = section or "all"
        print(f"{name:16} {len(ours):>5} / {len(keys):<5} {words:>5} / {total:<5} {wer:>11.1%}")


if __name__ == "__main__":
    main()
