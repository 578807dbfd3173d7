"""Does silence around a clip change what the recogniser hears? Held-out clips transcribed as they are and with
digital silence added before (a stream that opens before the speaker talks) or after (a clip cut tight at its last
word, where a causal model's last letters could still be due).

    python benchmarks/stt_silence_padding.py --manifest corpus/default/manifest-heldout.jsonl --lead 0.5
    python benchmarks/stt_silence_padding.py --manifest runs/realspeech/manifest.jsonl --tail 0.5

Prints WER by section for the padding asked for and, in the same run, unpadded: the clean single-speaker clips of
the held-out split (augmented copies and conversations left out), the shipped recogniser with its language model.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--lead", type=float, default=0.0, help="seconds of silence before each clip")
    ap.add_argument("--tail", type=float, default=0.0, help="seconds of silence after each clip")
    args = ap.parse_args()
    torch.set_num_threads(1)

    from sonare.audio.io import load_audio
    from sonare.eval.registry import DEFAULT_BEAM_SIZE, load_transcriber
    from sonare.eval.wer import WordErrors, utterance_errors

    asr = load_transcriber("sonare", DEFAULT_BEAM_SIZE)
    records = [json.loads(line) for line in Path(args.manifest).read_text().splitlines()]
    clips = [
        r
        for r in records
        if r.get("split", "heldout") == "heldout" and not any(k in r["section"] for k in ("augmented", "conversation"))
    ]
    totals: dict[str, dict[str, WordErrors]] = {"unpadded": collections.defaultdict(WordErrors)}
    padded = f"lead {args.lead:g} s, tail {args.tail:g} s"
    totals[padded] = collections.defaultdict(WordErrors)
    for r in clips:
        audio, rate = load_audio(Path(args.manifest).parent / r["audio"])
        audio = audio.astype(np.float32)
        silence = [np.zeros(round(s * rate), np.float32) for s in (args.lead, args.tail)]
        for name, signal in (("unpadded", audio), (padded, np.concatenate([silence[0], audio, silence[1]]))):
            errors = utterance_errors(r.get("normalized") or r["text"], asr.transcribe(signal, rate))
            totals[name][r["section"]] += errors
            totals[name]["all"] += errors
    for name, sections in totals.items():
        print(name)
        for section, e in sorted(sections.items()):
            print(f"  {section:<22} {e.wer:7.2%}  ({e.errors} of {e.reference_words} words)")


if __name__ == "__main__":
    main()
