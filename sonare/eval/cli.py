"""`sonare eval tts|stt|turns|clone`: independent evaluations that print a table and write JSON.

Every run records the exact command line in its JSON output (`--out`), so each published figure
can be reproduced.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sonare.eval.registry import DEFAULT_BEAM_SIZE, SYNTHESIZERS, TRANSCRIBERS, TURN_DETECTORS

DEFAULT_ASRS = ["whisper-base", "whisper-tiny"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("eval", help="measure quality and latency with independent evaluators")
    parser.set_defaults(handler=lambda args: _print_help(parser))
    sub = parser.add_subparsers(dest="evaluation", metavar="EVALUATION")

    tts = sub.add_parser("tts", help="TTS intelligibility (Whisper WER), DNSMOS, RTF, time to first audio")
    tts.add_argument("--engine", choices=list(SYNTHESIZERS), required=True)
    tts.add_argument("--voice", help="engine voice (default: the engine's first voice)")
    tts.add_argument("--sentences", type=int, default=100, help="held-out sentences to speak")
    tts.add_argument("--seed", type=int, default=0, help="seed of the held-out sentence generator")
    tts.add_argument(
        "--input",
        choices=["normalized", "raw"],
        default="normalized",
        help="speak sentences after sonare.text.normalize (same front end for every engine, measures the "
        "voice) or as written (measures the engine's own text handling too)",
    )
    _add_asr_options(tts)
    _add_common_options(tts)
    tts.set_defaults(handler=_run_tts)

    stt = sub.add_parser("stt", help="STT word error rate on held-out clips, clean and in noise")
    stt.add_argument("--manifest", type=Path, required=True)
    stt.add_argument("--split", default="heldout")
    stt.add_argument("--limit", type=int, help="evaluate this many clips, drawn at random (seeded)")
    stt.add_argument("--snr", type=float, help="also evaluate with noise added at this SNR (dB)")
    stt.add_argument("--noise", default="babble", help="noise kind for --snr (see sonare.data.augment)")
    stt.add_argument("--seed", type=int, default=0, help="seed for clip selection and noise")
    _add_phone_option(stt, "also evaluate the clips as a phone call")
    stt.add_argument("--reverb", type=float, metavar="RT60", help="also evaluate in a reverberant room (RT60, s)")
    stt.add_argument("--drr", type=float, default=3.0, help="direct-to-reverberant ratio for --reverb (dB)")
    _add_asr_options(stt)
    _add_common_options(stt)
    stt.set_defaults(handler=_run_stt)

    turns = sub.add_parser("turns", help="end-of-turn detection: false cut-offs, latency, misses")
    turns.add_argument(
        "--manifest",
        type=Path,
        nargs="+",
        required=True,
        help="manifests with conversation records (several: scored as one pooled set)",
    )
    turns.add_argument("--split", default="heldout")
    turns.add_argument("--detector", choices=list(TURN_DETECTORS), default="vad-timer")
    turns.add_argument("--max-false-cutoff", type=float, default=0.05, help="false cut-off budget")
    turns.add_argument("--limit", type=int, help="evaluate this many conversations")
    _add_phone_option(turns, "hear the conversations as a phone call")
    _add_common_options(turns)
    turns.set_defaults(handler=_run_turns)

    clone = sub.add_parser("clone", help="speaker similarity with an independent speaker encoder")
    source = clone.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--pair",
        nargs=2,
        action="append",
        type=Path,
        metavar=("REFERENCE_DIR", "GENERATED_DIR"),
        help="reference clips of a speaker and clips generated in that voice (repeatable)",
    )
    source.add_argument("--manifest", type=Path, help="same- vs different-speaker report over a manifest")
    clone.add_argument("--split", default="heldout")
    clone.add_argument("--speakers", type=int, default=20, help="speakers to take from --manifest")
    clone.add_argument("--clips-per-speaker", type=int, default=3)
    _add_common_options(clone)
    clone.set_defaults(handler=_run_clone)


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _add_phone_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--phone CODEC`: the audio as a telephone call delivers it (`sonare.eval.stt_eval.phone`)."""
    parser.add_argument("--phone", choices=["mulaw", "alaw"], help=f"{what}: 8 kHz, this G.711 codec")


def _add_asr_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--asr",
        action="append",
        choices=list(TRANSCRIBERS),
        help=f"recogniser(s) to use, repeatable (default: {' and '.join(DEFAULT_ASRS)})",
    )
    parser.add_argument("--beam", type=int, default=DEFAULT_BEAM_SIZE, help="beam width for Whisper")


def _add_common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


# ---- shared plumbing -----------------------------------------------------------------------------


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "handler"}


def _finish(args: argparse.Namespace, table: str, results: dict[str, Any]) -> int:
    print(table)
    if args.out:
        document = {"command": " ".join(["sonare", *sys.argv[1:]]), "settings": _settings(args), **results}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(document, indent=2, default=str) + "\n")
        print(f"wrote {args.out}")
    return 0


def _sample(items: list, limit: int | None, seed: int) -> list:
    """`limit` items drawn without replacement, kept in manifest order; all of them without a limit."""
    if limit is None or limit >= len(items):
        return items
    import numpy as np

    chosen = np.sort(np.random.default_rng(seed).choice(len(items), size=limit, replace=False))
    return [items[i] for i in chosen]


def _plain(number: float) -> int | float:
    """Whole numbers (timer lengths in ms) print and serialise as integers."""
    return int(number) if float(number).is_integer() else number


def _metric_table(metrics: dict[str, float]) -> str:
    from sonare.eval.latency import format_table

    return format_table([{"metric": k, "value": v} for k, v in metrics.items()], ["metric", "value"])


# ---- evaluations -----------------------------------------------------------------------------------


def _run_tts(args: argparse.Namespace) -> int:
    from sonare.eval.registry import load_synthesizer, load_transcriber
    from sonare.eval.tts_eval import evaluate_tts
    from sonare.text.sentences import generate_sentences

    sentences = generate_sentences(args.sentences, seed=args.seed, split="heldout")
    if args.input == "normalized":
        from sonare.text.normalize import normalize

        sentences = [normalize(s) for s in sentences]
    asrs = args.asr or DEFAULT_ASRS
    transcribers = {name: load_transcriber(name, args.beam) for name in asrs}
    report = evaluate_tts(
        load_synthesizer(args.engine, args.voice), sentences, transcribers, show_progress=not args.quiet
    )
    summary = report.summary()
    results = {"summary": summary, "utterances": [u.as_dict() for u in report.utterances]}
    return _finish(args, f"TTS evaluation: {args.engine}\n" + _metric_table(summary), results)


def _run_stt(args: argparse.Namespace) -> int:
    from sonare.data.manifest import load_record_audio, split_records
    from sonare.eval.latency import format_table
    from sonare.eval.registry import load_transcriber
    from sonare.eval.stt_eval import SttClip, clean, evaluate_stt, noisy, phone, reverberant

    # Clean single-speaker clips: conversations and already-augmented copies are left out.
    records = [r for r in split_records(args.manifest, args.split) if "pauses" not in r and not r.get("augment")]
    records = _sample(records, args.limit, args.seed)
    if not records:
        raise SystemExit(f"no clean '{args.split}' clips in {args.manifest}")
    # The reference is the spoken form the teacher read; WER normalisation would reach it from "text" too.
    clips = [
        SttClip(r["id"], *load_record_audio(args.manifest, r), r["normalized"], r.get("section", "")) for r in records
    ]
    conditions = {"clean": clean}
    if args.snr is not None:
        conditions[f"{args.noise}@{args.snr:g}dB"] = noisy(args.noise, args.snr, args.seed)
    if args.phone:
        conditions[f"phone-{args.phone}"] = phone(args.phone)
    if args.reverb is not None:
        conditions[f"room-rt60-{args.reverb:g}s"] = reverberant(args.reverb, args.drr, args.seed)

    rows, results = [], {"summary": {}, "clips": [{"id": c.id, "text": c.text} for c in clips]}
    for name in args.asr or DEFAULT_ASRS:
        report = evaluate_stt(load_transcriber(name, args.beam), clips, conditions, not args.quiet)
        summary, by_group = report.summary(), report.by_group()
        results["summary"][name] = summary
        results.setdefault("by_section", {})[name] = by_group
        for condition, metrics in summary.items():
            rows.append({"asr": name, "condition": condition, "section": "all", **metrics})
            rows += [{"asr": name, "condition": condition, "section": g, **m} for g, m in by_group[condition].items()]
            for item, hypothesis in zip(results["clips"], report.transcripts[condition], strict=True):
                item[f"{name}/{condition}"] = hypothesis
    columns = ["asr", "condition", "section", "clips", "wer", "substitutions", "deletions", "insertions", "rtf"]
    return _finish(args, format_table(rows, columns), results)


def _run_turns(args: argparse.Namespace) -> int:
    from sonare.data.manifest import load_record_audio, split_records
    from sonare.eval.latency import format_table
    from sonare.eval.registry import load_turn_detector
    from sonare.eval.stt_eval import clean, phone
    from sonare.eval.turns import (
        Pause,
        all_holds_cutoff_rate,
        best_operating_point,
        evaluate_detector,
        thinking_pause_cutoff_rate,
    )

    records = [
        (manifest, r) for manifest in args.manifest for r in split_records(manifest, args.split) if "pauses" in r
    ][: args.limit]
    if not records:
        raise SystemExit(f"no '{args.split}' conversation records in {', '.join(map(str, args.manifest))}")
    detector = load_turn_detector(args.detector)
    heard = phone(args.phone) if args.phone else clean

    def conversations():
        for index, (manifest, record) in enumerate(records):
            audio, rate = heard(*load_record_audio(manifest, record), index)
            yield audio, rate, [Pause.from_dict(p) for p in record["pauses"]]

    curve = evaluate_detector(detector, conversations())
    rows = [{detector.setting_name: _plain(setting), **metrics.as_dict()} for setting, metrics in curve.items()]
    columns = [
        detector.setting_name,
        "false_cutoff_rate",
        "mid_sentence_false_cutoff_rate",
        "after_sentence_false_cutoff_rate",
        "miss_rate",
        "latency_p50",
        "latency_p90",
        "fires_in_speech_per_minute",
    ]
    first = next(iter(curve.values()))
    heading = (
        f"{args.detector}{f' (phone, {args.phone})' if args.phone else ''}: {len(records)} conversations, "
        f"{first.holds} holds ({first.mid_sentence_holds} mid-sentence,"
        f" {first.after_sentence_holds} after a complete sentence), {first.ends} ends"
    )
    budgets = {"all holds": all_holds_cutoff_rate}
    if first.mid_sentence_holds:
        budgets["pauses to think (mid-sentence holds)"] = thinking_pause_cutoff_rate
    verdicts, best = [], {}
    for holds, rate in budgets.items():
        setting = best_operating_point(curve, args.max_false_cutoff, rate)
        best[holds] = None if setting is None else {detector.setting_name: _plain(setting), **curve[setting].as_dict()}
        if setting is None:
            verdicts.append(f"{holds}: no setting keeps false cut-offs within {args.max_false_cutoff:.0%}")
        else:
            chosen = curve[setting]
            verdicts.append(
                f"{holds}: best within {args.max_false_cutoff:.0%} false cut-offs: {detector.setting_name}="
                f"{setting:g}, p50 latency {chosen.latency_p50 * 1000:.0f} ms, p90 {chosen.latency_p90 * 1000:.0f} ms,"
                f" false cut-offs {rate(chosen):.1%}, misses {chosen.miss_rate:.1%}"
            )
    results = {"conversations": len(records), "curve": rows, "best": best}
    return _finish(args, "\n".join([heading, format_table(rows, columns), *verdicts]), results)


def _run_clone(args: argparse.Namespace) -> int:
    from sonare.eval.speaker import SpeakerEncoder

    encoder = SpeakerEncoder()
    if args.pair:
        return _clone_pairs(args, encoder)
    return _clone_manifest(args, encoder)


AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".mp3")


def _embed_dir(encoder, directory: Path) -> list:
    from sonare.audio.io import load_audio

    paths = sorted(p for p in directory.iterdir() if p.suffix.lower() in AUDIO_SUFFIXES)
    if not paths:
        raise SystemExit(f"no audio files in {directory}")
    return [encoder.embed(*load_audio(p)) for p in paths]


def _clone_pairs(args: argparse.Namespace, encoder) -> int:
    """How close generated clips are to their reference speaker, next to how close they are to the
    other pairs' reference speakers (a different-speaker baseline, when there are several pairs)."""
    import numpy as np

    from sonare.eval.latency import format_table
    from sonare.eval.speaker import cosine_similarity, mean_embedding

    references = [mean_embedding(_embed_dir(encoder, ref)) for ref, _ in args.pair]
    rows = []
    for index, (ref_dir, gen_dir) in enumerate(args.pair):
        generated = _embed_dir(encoder, gen_dir)
        target = [cosine_similarity(references[index], g) for g in generated]
        others = [cosine_similarity(r, g) for j, r in enumerate(references) if j != index for g in generated]
        rows.append(
            {
                "reference": str(ref_dir),
                "generated": str(gen_dir),
                "clips": len(generated),
                "similarity_mean": float(np.mean(target)),
                "similarity_min": float(np.min(target)),
                "other_speakers_mean": float(np.mean(others)) if others else float("nan"),
            }
        )
    overall = {"similarity_mean": float(np.mean([r["similarity_mean"] for r in rows]))}
    return _finish(args, format_table(rows), {"pairs": rows, "summary": overall})


def _clone_manifest(args: argparse.Namespace, encoder) -> int:
    from sonare.data.manifest import load_record_audio, split_records
    from sonare.eval.speaker import same_vs_different

    by_speaker: dict[str, list[dict[str, Any]]] = {}
    for record in split_records(args.manifest, args.split):
        if "pauses" not in record and not record.get("augment"):
            by_speaker.setdefault(record["speaker"], []).append(record)
    speakers = sorted(by_speaker)[: args.speakers]
    embeddings = {
        speaker: [
            encoder.embed(*load_record_audio(args.manifest, r)) for r in by_speaker[speaker][: args.clips_per_speaker]
        ]
        for speaker in speakers
    }
    report = same_vs_different(embeddings)
    summary = {"speakers": len(speakers), **report.as_dict()}
    return _finish(args, _metric_table(summary), {"summary": summary})
