"""`sonare train tts|refiner|stt|turn|lm|voices --config FILE [--export DIR]`: run (or resume) a recipe, then export."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("train", help="train a model from a corpus (resumable)")
    which = parser.add_subparsers(dest="recipe", metavar="RECIPE", required=True)
    tts = which.add_parser("tts", help="the TTS acoustic model")
    tts.add_argument("--config", required=True, help="recipe YAML, e.g. configs/tts-default.yaml")
    tts.add_argument("--export", metavar="DIR", help="after training, write weights and voices here")
    tts.add_argument("--export-only", action="store_true", help="export the latest checkpoint without training")
    tts.add_argument("--slim-checkpoint", metavar="PATH", help="also save a checkpoint without optimizer state")
    tts.add_argument("--no-progress", action="store_true")
    tts.set_defaults(handler=_train_tts)
    stt = which.add_parser("stt", help="the STT recogniser with its end-of-turn head")
    stt.add_argument("--config", required=True, help="recipe YAML, e.g. configs/stt-default.yaml")
    stt.add_argument("--export", metavar="DIR", help="after training, write the best weights here")
    stt.add_argument("--export-only", action="store_true", help="export the best checkpoint without training")
    stt.add_argument("--init-from", metavar="PATH", help="start a new run from these weights (.pt or model dir)")
    stt.add_argument("--no-progress", action="store_true")
    stt.set_defaults(handler=_train_stt)
    turn = which.add_parser("turn", help="the STT end-of-turn head alone, on a trained recogniser")
    turn.add_argument("--config", required=True, help="recipe YAML, e.g. configs/turn-default.yaml")
    turn.add_argument("--export", metavar="DIR", help="after training, write the recogniser with the new head here")
    turn.add_argument("--export-only", action="store_true", help="export the latest checkpoint without training")
    turn.add_argument(
        "--retune", action="store_true", help="no training: export stt_dir's own head with its thresholds chosen anew"
    )
    turn.add_argument("--no-progress", action="store_true")
    turn.set_defaults(handler=_train_turn)
    lm = which.add_parser("lm", help="the STT word language model, its beam search tuned for an STT model")
    lm.add_argument("--config", required=True, help="recipe YAML, e.g. configs/lm-default.yaml")
    lm.add_argument("--export", metavar="DIR", default="sonare/assets/stt", help="the STT model directory")
    lm.set_defaults(handler=_train_lm)
    refiner = which.add_parser("refiner", help="the neural refiner after the TTS vocoder")
    refiner.add_argument("--config", required=True, help="recipe YAML, e.g. configs/refiner-default.yaml")
    refiner.add_argument("--export", metavar="DIR", help="after training, write refiner.safetensors here")
    refiner.add_argument("--export-only", action="store_true", help="export the best checkpoint without training")
    refiner.add_argument("--no-progress", action="store_true")
    refiner.set_defaults(handler=_train_refiner)
    voices = which.add_parser("voices", help="the speaker encoder that cloning measures clips with")
    voices.add_argument("--config", required=True, help="recipe YAML, e.g. configs/voices-default.yaml")
    voices.add_argument("--export", metavar="DIR", help="after training, write encoder.safetensors here")
    voices.add_argument("--export-only", action="store_true", help="export the latest checkpoint without training")
    voices.add_argument("--no-progress", action="store_true")
    voices.set_defaults(handler=_train_voices)


def _train_tts(args: argparse.Namespace) -> int:
    from sonare.train.tts import TTSTrainConfig, export, save_slim_checkpoint, train

    cfg = TTSTrainConfig.load(args.config)
    if not args.export_only:
        train(cfg, progress=not args.no_progress)
    if args.export or args.export_only:
        out = export(cfg, args.export or "sonare/assets/tts")
        print(f"exported to {out}")
    if args.slim_checkpoint:
        print(f"slim checkpoint: {save_slim_checkpoint(cfg, args.slim_checkpoint)}")
    return 0


def _train_refiner(args: argparse.Namespace) -> int:
    from sonare.train.refiner import RefinerTrainConfig, export, train

    cfg = RefinerTrainConfig.load(args.config)
    if not args.export_only:
        train(cfg, progress=not args.no_progress)
    if args.export or args.export_only:
        print(f"exported to {export(cfg, args.export or 'sonare/assets/tts')}")
    return 0


def _train_stt(args: argparse.Namespace) -> int:
    from sonare.train.stt import STTTrainConfig, export, train

    cfg = STTTrainConfig.load(args.config)
    if args.init_from:
        cfg.init_from = args.init_from
    if not args.export_only:
        train(cfg, progress=not args.no_progress)
    if args.export or args.export_only:
        out = export(cfg, args.export or "sonare/assets/stt")
        print(f"exported to {out}")
    return 0


def _train_turn(args: argparse.Namespace) -> int:
    from sonare.train.turn import TurnTrainConfig, export, train

    cfg = TurnTrainConfig.load(args.config)
    if not (args.export_only or args.retune):
        train(cfg, progress=not args.no_progress)
    if args.export or args.export_only or args.retune:
        print(f"exported to {export(cfg, args.export or cfg.stt_dir, retune=args.retune)}")
    return 0


def _train_lm(args: argparse.Namespace) -> int:
    from sonare.train.lm import LMTrainConfig, train_lm

    print(f"exported to {train_lm(LMTrainConfig.load(args.config), args.export)}")
    return 0


def _train_voices(args: argparse.Namespace) -> int:
    from sonare.train.voices import VoicesTrainConfig, export, train

    cfg = VoicesTrainConfig.load(args.config)
    if not args.export_only:
        train(cfg, progress=not args.no_progress)
    if args.export or args.export_only:
        print(f"exported to {export(cfg, args.export or 'sonare/assets/voices')}")
    return 0
