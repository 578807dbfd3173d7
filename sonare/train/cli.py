"""`sonare train tts|stt --config FILE [--export DIR]`: run (or resume) a training recipe, then export."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("train", help="train a model from a corpus (resumable)")
    which = parser.add_subparsers(dest="recipe", metavar="RECIPE", required=True)
    tts = which.add_parser("tts", help="the TTS acoustic model")
    tts.add_argument("--config", required=True, help="recipe YAML, e.g. configs/tts-default.yaml")
    tts.add_argument("--export", metavar="DIR", help="after training, write weights and voices here")
    tts.add_argument("--export-only", action="store_true", help="export the latest checkpoint without training")
    tts.add_argument("--no-progress", action="store_true")
    tts.set_defaults(handler=_train_tts)


def _train_tts(args: argparse.Namespace) -> int:
    from sonare.train.tts import TTSTrainConfig, export, train

    cfg = TTSTrainConfig.load(args.config)
    if not args.export_only:
        train(cfg, progress=not args.no_progress)
    if args.export or args.export_only:
        out = export(cfg, args.export or "sonare/assets/tts")
        print(f"exported to {out}")
    return 0
