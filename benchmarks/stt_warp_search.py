"""Would the recogniser read an unseen voice better through a frequency warp chosen for it, or through several?

Training clips read at about 2% WER and unseen voices' sentences at 22% (docs/benchmarks.md, STT): the model fits
the voices it hears. A formant shift is a stretch of the frequency axis, which `warp_log_mel` can undo (the
held-out joe speakers are formant and pitch transforms of a voice the model trains on). Each clip is decoded
(beam + LM, whole file) through each warp factor of a grid. The summary gives the WER at each fixed factor; with
the factor chosen per clip by the recogniser's own confidence (the best hypothesis's score, acoustic and LM, per
CTC frame, over the whole clip or its first `--first` seconds; or the mean best-letter log-probability); with the
oracle factor per clip (fewest errors: the most any choice could give); with one factor per speaker (the best
summed score), and with the factor a speaker's first clip chose applied to their later clips (what a stream
adapting to its speaker could do); and with the CTC posteriors of several factors averaged frame by frame
(`--fuse`, an ensemble of one model over warped copies). Clean and babble at 10 dB, as `sonare eval stt`:

    python benchmarks/stt_warp_search.py --manifest corpus/heldout/manifest.jsonl --fuse 1.0,1.16 \
        --fuse 0.92,1.0,1.08 --fuse 0.92,1.0,1.08,1.16 --fuse 0.88,0.96,1.04,1.12,1.2 --out warp-heldout.json
    python benchmarks/stt_warp_search.py --manifest runs/realspeech/manifest.jsonl --clean-only (the same --fuse) \
        --out warp-realspeech.json
    python benchmarks/stt_warp_search.py --manifest M --summarize OUT.json   # the tables again

SONARE_STT_DIR selects other weights than the bundled, as for `sonare eval stt`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path

import torch
from stt_real_speech_rows import GROUPS  # benchmarks/, this script's folder

FACTORS = (0.84, 0.88, 0.92, 0.96, 1.0, 1.04, 1.08, 1.12, 1.16, 1.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=Path("corpus/heldout/manifest.jsonl"))
    parser.add_argument("--snr", type=float, default=10.0, help="babble level against the speech, dB")
    parser.add_argument("--clean-only", action="store_true", help="no babble condition (real speech)")
    parser.add_argument("--first", type=float, default=2.0, help="seconds a live choice may listen to")
    parser.add_argument("--limit", type=int, default=0, help="only this many clips (0: all)")
    parser.add_argument(
        "--fuse",
        action="append",
        default=[],
        type=lambda v: tuple(float(f) for f in v.split(",")),
        help="also decode the mean of these factors' CTC posteriors, e.g. 0.92,1.0,1.08 (repeatable)",
    )
    parser.add_argument("--out", type=Path, help="per-clip results (JSON)")
    parser.add_argument("--summarize", type=Path, help="only print the tables of an --out file of this manifest")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.summarize:
        from sonare.data.manifest import split_records

        records = split_records(args.manifest, "heldout")
        summarize(json.loads(args.summarize.read_text()), speakers(records))
        return

    from sonare.audio.features import SAMPLE_RATE, log_mel, warp_log_mel
    from sonare.audio.resample import resample
    from sonare.data.manifest import load_record_audio, split_records
    from sonare.eval.stt_eval import clean, noisy
    from sonare.eval.wer import utterance_errors
    from sonare.stt import load_default
    from sonare.stt.decode import transcript
    from sonare.stt.model import SUBSAMPLING

    stt = load_default(os.environ.get("SONARE_STT_DIR"))  # as `sonare eval stt`: other weights than the bundled
    records = [r for r in split_records(args.manifest, "heldout") if "pauses" not in r and not r.get("augment")]
    records = records[: args.limit or None]
    conditions = (
        {"clean": clean}
        if args.clean_only
        else {"clean": clean, f"babble@{args.snr:g}dB": noisy("babble", args.snr, 0)}
    )
    ctc_per_second = 1.0 / stt.model.cfg.ctc_frame_seconds
    results: dict[str, list[dict]] = {}
    for name, condition in conditions.items():
        rows = results[name] = []
        for i, record in enumerate(records):
            audio, rate = condition(*load_record_audio(args.manifest, record), i)
            mel = log_mel(resample(audio, rate, SAMPLE_RATE)).numpy()
            mel = mel[: len(mel) // SUBSAMPLING * SUBSAMPLING]
            row = {"id": record["id"], "section": record.get("section", ""), "factors": {}, "fused": {}}
            logps = {}
            for factor in FACTORS:
                warped = torch.from_numpy(warp_log_mel(mel, factor) if factor != 1.0 else mel)
                with torch.inference_mode():
                    logits, _, _ = stt.model(warped[None])
                logps[factor] = torch.log_softmax(logits[0], -1)
            for group in args.fuse:
                fused = torch.logsumexp(torch.stack([logps[f] for f in group]), 0) - math.log(len(group))
                text = transcript(stt.new_decoder(), fused.numpy())
                errors = utterance_errors(record["normalized"], text)
                row["fused"][",".join(map(str, group))] = {"text": text, "errors": errors.errors}
            for factor in FACTORS:
                logp = logps[factor].numpy()
                decoder = stt.new_decoder()
                first = int(args.first * ctc_per_second)
                score_first = None
                for k, frame in enumerate(logp):
                    decoder.push(frame, k)
                    if k + 1 == min(first, len(logp)):
                        score_first = max(h.total() for h in decoder.hyps.values()) / (k + 1)
                score = max(h.total() for h in decoder.hyps.values()) / max(1, len(logp))
                text = " ".join(w.word for w in decoder.take_segment())
                errors = utterance_errors(record["normalized"], text)
                row["factors"][str(factor)] = {
                    "text": text,
                    "errors": errors.errors,
                    "words": errors.reference_words,
                    "score": round(score, 4),
                    "score_first": round(score_first if score_first is not None else score, 4),
                    "confidence": round(float(logp.max(-1).mean()), 4),
                }
            rows.append(row)
            print(name, i, record["id"], {f: v["errors"] for f, v in row["factors"].items()}, flush=True)

    if args.out:
        args.out.write_text(json.dumps(results))
    summarize(results, speakers(records))


def speakers(records: list[dict]) -> dict[str, str]:
    """Clip id -> its speaker; real speech lists none, so its section stands in (Asterisk's voice has two)."""
    return {r["id"]: r.get("speaker", r.get("section", "")) for r in records}


def _errors(rows: list[dict], pick) -> int:
    return sum(pick(r)["errors"] for r in rows)


def summarize(results: dict[str, list[dict]], speakers: dict[str, str]) -> None:
    """WER at each fixed factor, per clip chosen, per speaker chosen, oracle, fused; overall and per section."""

    def best_by(key):
        return lambda r: max(r["factors"].values(), key=lambda v: v[key])

    for name, rows in results.items():
        words = sum(r["factors"]["1.0"]["words"] for r in rows)
        fixed = {f: _errors(rows, lambda r, f=f: r["factors"][str(f)]) / words for f in FACTORS}
        chosen = {key: _errors(rows, best_by(key)) / words for key in ("score", "score_first", "confidence")}
        oracle = _errors(rows, lambda r: min(r["factors"].values(), key=lambda v: v["errors"])) / words
        print(f"\n{name}: {len(rows)} clips, {words} words")
        print("  fixed factor: " + "  ".join(f"{f:g} {w:.1%}" for f, w in fixed.items()))
        print("  chosen per clip by: " + "  ".join(f"{k} {w:.1%}" for k, w in chosen.items()))
        print(f"  oracle per clip: {oracle:.1%}")
        # One factor per speaker: the one with the best summed score over all their clips; and the one their
        # first clip chose, applied to their later clips (what a stream adapting to its speaker could do).
        by_speaker: dict[str, list[dict]] = {}
        for r in rows:
            by_speaker.setdefault(speakers[r["id"]], []).append(r)
        per_speaker = later = later_unwarped = later_words = 0
        for clips in by_speaker.values():
            factor = max(clips[0]["factors"], key=lambda f: sum(r["factors"][f]["score"] for r in clips))
            per_speaker += _errors(clips, lambda r, f=factor: r["factors"][f])
            first = max(clips[0]["factors"], key=lambda f: clips[0]["factors"][f]["score"])
            later += _errors(clips[1:], lambda r, f=first: r["factors"][f])
            later_unwarped += _errors(clips[1:], lambda r: r["factors"]["1.0"])
            later_words += sum(r["factors"]["1.0"]["words"] for r in clips[1:])
        print(f"  one factor per speaker ({len(by_speaker)}), chosen by summed score: {per_speaker / words:.1%}")
        if later_words:
            print(
                f"  later clips, with the factor their speaker's first clip chose: {later / later_words:.1%} "
                f"(unwarped {later_unwarped / later_words:.1%})"
            )
        for group in rows[0]["fused"]:
            print(f"  posteriors averaged over {group}: {_errors(rows, lambda r, g=group: r['fused'][g]) / words:.1%}")
        sections = {r["section"]: (r["section"],) for r in rows}
        groups = {g: names for g, names in GROUPS.items() if set(names) <= set(sections)}  # real speech's
        for section, names in {**dict(sorted(sections.items())), **groups}.items():
            part = [r for r in rows if r["section"] in names]
            n = sum(r["factors"]["1.0"]["words"] for r in part)
            base = _errors(part, lambda r: r["factors"]["1.0"]) / n
            fused = "".join(f", {g} {_errors(part, lambda r, g=g: r['fused'][g]) / n:.1%}" for g in part[0]["fused"])
            print(
                f"  {section}: unwarped {base:.1%}, chosen by score {_errors(part, best_by('score')) / n:.1%}, "
                f"oracle {_errors(part, lambda r: min(r['factors'].values(), key=lambda v: v['errors'])) / n:.1%}"
                f"{fused}"
            )


if __name__ == "__main__":
    main()
