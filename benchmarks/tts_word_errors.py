"""Where two engines' intelligibility differs, from their `sonare eval tts` results on the same sentences.

Per engine: corpus WER and mean DNSMOS overall, the sentences whose first or last word Whisper got wrong (an
utterance's edges are where a stream starts and ends), and the sentences where it made more errors than the other
engine, worst first. `--sentences N` compares the first N only: a 400-sentence run holds the target's 100
(`generate_sentences` extends a shorter list).

    python benchmarks/tts_word_errors.py benchmarks/results/tts-session29/eval-sonare-400.json \
        benchmarks/results/tts-session29/eval-piper-400.json --asr whisper-base --show 20
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sonare.eval.wer import WordErrors, normalize_for_wer, utterance_errors


def _edge_wrong(reference: str, heard: str, index: int) -> bool:
    ref, hyp = normalize_for_wer(reference), normalize_for_wer(heard)
    return bool(ref) and (not hyp or hyp[index] != ref[index])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", type=Path, help="an engine's `sonare eval tts --out` file")
    ap.add_argument("second", type=Path, help="another engine's, on the same sentences")
    ap.add_argument("--asr", default="whisper-base", help="whose transcripts to score")
    ap.add_argument("--show", type=int, default=10, help="sentences to list where the first engine loses most")
    ap.add_argument("--sentences", type=int, help="compare only the first N sentences of both files")
    args = ap.parse_args()

    runs = [json.loads(path.read_text())["utterances"][: args.sentences] for path in (args.first, args.second)]
    if [u["text"] for u in runs[0]] != [u["text"] for u in runs[1]]:
        raise SystemExit("the two files hold different sentences")
    heard = [[u["transcripts"][args.asr] for u in run] for run in runs]
    texts = [u["text"] for u in runs[0]]
    errors = [[utterance_errors(t, h) for t, h in zip(texts, run, strict=True)] for run in heard]
    for path, run, errs, utterances in zip((args.first, args.second), heard, errors, runs, strict=True):
        total = sum(errs, WordErrors())
        dnsmos = [u["dnsmos"]["ovrl"] for u in utterances if u["dnsmos"]]
        first = sum(_edge_wrong(t, h, 0) for t, h in zip(texts, run, strict=True))
        last = sum(_edge_wrong(t, h, -1) for t, h in zip(texts, run, strict=True))
        print(f"{path.name}: WER {total.wer:.2%} ({total.errors} of {total.reference_words} words), "
              f"DNSMOS {sum(dnsmos) / len(dnsmos):.3f}; "
              f"first word wrong in {first}, last word in {last} of {len(texts)} sentences")  # fmt: skip
    worse = sorted(
        ((a.errors - b.errors, i) for i, (a, b) in enumerate(zip(*errors, strict=True)) if a.errors > b.errors),
        reverse=True,
    )
    better = sum(a.errors < b.errors for a, b in zip(*errors, strict=True))
    print(f"{args.first.name} makes more errors in {len(worse)} sentences, fewer in {better}")
    for extra, i in worse[: args.show]:
        print(f"+{extra} {texts[i]}\n     {heard[0][i]}\n     {heard[1][i]}")


if __name__ == "__main__":
    main()
