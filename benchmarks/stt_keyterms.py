"""Key terms (the API's `keyterm`, `sonare transcribe --keyterm`): how often a boosted word is heard, and what a
boost for a word that is not said costs.

For every clip (of the held-out split unless `--split` names another), its rarest word of four letters or more (the
lowest unigram probability in the shipped language model, or a word it does not know: the product names and jargon a
client would boost) is the key term. Each clip's CTC log-probabilities are computed once and decoded three ways: no
key terms; its own rare word as the key term; and the rare word of another clip as the key term (a boost for a word
that is not said). Prints the share of clips whose rare word is in the transcript, the WER, and how often a word
boosted but not said appears; `--floors` compares key-term probability floors (`BeamSettings.keyterm`),
to choose one on clips that are not held out.

    python benchmarks/stt_keyterms.py --manifest corpus/default/manifest-heldout.jsonl --clips 400
    python benchmarks/stt_keyterms.py --manifest runs/realspeech/manifest.jsonl --sections asterisk
    python benchmarks/stt_keyterms.py --manifest corpus/default/manifest.jsonl --split train --floors 0.01 0.05 0.2
"""

from __future__ import annotations

import argparse
import dataclasses
import math

import torch
from stt_beam import clip_log_probs  # benchmarks/, this script's folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", default="corpus/default/manifest-heldout.jsonl")
    parser.add_argument("--clips", type=int, default=200)
    parser.add_argument("--sections", nargs="+", help="only these sections of the manifest")
    parser.add_argument("--split", default="heldout")
    parser.add_argument(
        "--floors", type=float, nargs="+", help="key-term probability floors to compare (default: the shipped one)"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)

    from sonare.eval.wer import corpus_errors, normalize_for_wer
    from sonare.stt.beam import BeamDecoder
    from sonare.stt.decode import transcript
    from sonare.stt.weights import load_default

    stt = load_default()
    lm, seconds = stt.lm, stt.model.cfg.ctc_frame_seconds

    def rarity(word: str) -> float:
        known = lm.ids.get(word)
        return -1.0 if known is None else lm.unigram[known]

    clips = clip_log_probs(args.manifest, args.clips, args.split, args.sections)
    rare = []
    for text, _ in clips:
        words = [w for w in normalize_for_wer(text) if len(w) >= 4 and w.isalpha()]
        rare.append(min(words, key=rarity) if words else None)
    scored = [(i, t, logp) for i, (t, logp) in enumerate(clips) if rare[i] is not None]
    others = [rare[scored[(k + 1) % len(scored)][0]] for k in range(len(scored))]  # another clip's rare word

    runs = [("no key terms", [[] for _ in scored], stt.beam.keyterm)]
    for floor in args.floors or [math.exp(stt.beam.keyterm)]:
        runs.append((f"its rare word boosted, {floor:g}", [[rare[i]] for i, _, _ in scored], math.log(floor)))
        runs.append((f"another clip's word boosted, {floor:g}", [[w] for w in others], math.log(floor)))
    rows = {}
    for name, terms, log_floor in runs:
        settings = dataclasses.replace(stt.beam, keyterm=log_floor)
        pairs, heard, false_alarms = [], 0, 0
        for (i, text, logp), boost in zip(scored, terms, strict=True):
            hyp = transcript(BeamDecoder(lm, settings, seconds, boost), logp)
            words = normalize_for_wer(hyp)
            pairs.append((text, hyp))
            heard += rare[i] in words
            said = normalize_for_wer(text)
            false_alarms += sum(1 for w in boost if w in words and w not in said)
        rows[name] = (heard / len(scored), corpus_errors(pairs).wer, false_alarms)
    unknown = sum(rare[i] not in lm.ids for i, _, _ in scored)
    print(f"{len(scored)} {args.split} clips of {args.manifest} ({unknown} rare words unknown to the language model)")
    print(f"{'decoding, floor':<40} {'rare word heard':>15} {'WER':>7} {'boosted, not said, heard':>25}")
    for name, (share, wer, alarms) in rows.items():
        print(f"{name:<40} {share:15.1%} {wer:7.1%} {alarms:25d}")


if __name__ == "__main__":
    main()
