"""`sonare data ...`: build the synthetic speech corpus."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser("data", help="build the synthetic speech corpus")
    sub = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)

    build = sub.add_parser("build", help="build or resume a corpus from a recipe")
    build.add_argument("--config", default="configs/data-default.yaml")
    build.add_argument("--out", default=None, help="corpus directory (default: corpus/<recipe name>)")
    build.add_argument("--workers", type=int, default=2)
    build.add_argument("--section", action="append", help="build only this section (repeatable)")
    build.add_argument("--no-features", action="store_true", help="skip caching STT features")
    build.set_defaults(handler=_build)

    fixture = sub.add_parser("fixture", help="a tiny corpus (a dozen utterances) for tests")
    fixture.add_argument("--out", required=True)
    fixture.add_argument("--workers", type=int, default=1)
    fixture.set_defaults(handler=_fixture)

    stats = sub.add_parser("stats", help="hours per section, teacher and split of a corpus")
    stats.add_argument("corpus", nargs="?", default="corpus/default")
    stats.set_defaults(handler=_stats)

    label = sub.add_parser("label", help="transcribe untranscribed recordings where two Whisper models agree")
    label.add_argument("recordings", help="a folder with one folder of audio clips per voice")
    label.add_argument("--out", required=True, help="where to write the transcribed dataset (LJSpeech layout)")
    label.add_argument("--threads", type=int, default=2)
    label.set_defaults(handler=_label)

    features = sub.add_parser("features", help="cache STT log-mel features for a built corpus")
    features.add_argument("corpus", nargs="?", default="corpus/default")
    features.set_defaults(handler=_features)


def _build(args: argparse.Namespace) -> int:
    from sonare.data.build import build_corpus
    from sonare.data.config import load_config

    try:
        config = load_config(args.config)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"error: {args.config}: {exc}") from exc
    out = args.out or f"corpus/{config.name}"
    hours = build_corpus(config, out, workers=args.workers, sections=args.section, features=not args.no_features)
    for name, h in hours.items():
        print(f"{name}: {h:.2f} h")
    return 0


def _fixture(args: argparse.Namespace) -> int:
    from sonare.data.fixture import build_fixture

    build_fixture(args.out, workers=args.workers)
    return 0


def _stats(args: argparse.Namespace) -> int:
    from sonare.data.stats import corpus_stats

    print(corpus_stats(args.corpus))
    return 0


def _label(args: argparse.Namespace) -> int:
    from sonare.data.pseudolabel import label

    try:
        kept, clips, seconds = label(args.recordings, args.out, threads=args.threads)
    except (ValueError, RuntimeError) as exc:  # no clips; Whisper's weights not installed
        raise SystemExit(f"error: {exc}") from exc
    print(f"{kept} of {clips} clips kept ({seconds / 60:.1f} min) -> {args.out}")
    return 0


def _features(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sonare.data.featcache import cache_features
    from sonare.data.manifest import MANIFEST_NAME, read_manifest

    records = [r for r in read_manifest(Path(args.corpus) / MANIFEST_NAME) if "stt" in r["tasks"]]
    print(f"{cache_features(args.corpus, records)} utterances added")
    return 0
