"""`sonare say`: speak text with the bundled TTS, to a file, a raw PCM pipe, or the speakers, as it streams."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("say", help="synthesize speech from text (argument or stdin)")
    p.add_argument("text", nargs="?", help="text to speak; omit or '-' to read stdin line by line")
    p.add_argument("-o", "--output", help="write a WAV (or FLAC/OGG by extension) file")
    p.add_argument("--raw", action="store_true", help="stream 16-bit little-endian mono PCM to stdout")
    p.add_argument("--play", action="store_true", help="stream to the speakers (needs aplay, paplay or ffplay)")
    p.add_argument("--voice", help="voice id (see `sonare voices`); default: the model's default voice")
    p.add_argument("--speed", type=float, default=1.0, help="0.5-2.0")
    p.add_argument("--volume", type=float, default=1.0, help="0-2")
    p.add_argument("--language", default="en")
    p.add_argument("--model-dir", help="load weights from this directory instead of the bundled ones")
    p.set_defaults(handler=_say)


def _player(sample_rate: int) -> list[str]:
    for cmd in (
        ["aplay", "-q", "-f", "S16_LE", "-c", "1", "-r", str(sample_rate)],
        ["paplay", "--raw", "--format=s16le", "--channels=1", f"--rate={sample_rate}"],
        ["ffplay", "-nodisp", "-autoexit", "-loglevel", "quiet", "-f", "s16le", "-ar", str(sample_rate), "-"],
    ):
        if shutil.which(cmd[0]):
            return cmd
    raise SystemExit("--play needs aplay, paplay or ffplay on PATH; use --raw and pipe to a player instead")


def _say(args: argparse.Namespace) -> int:
    import numpy as np

    from sonare.tts import load_default
    from sonare.tts.messages import AudioChunk, SynthesisOptions, VoiceSpec

    pieces = iter(sys.stdin) if args.text in (None, "-") else iter([args.text])
    if not (args.output or args.raw or args.play):
        raise SystemExit("choose an output: -o FILE, --raw or --play")
    model = load_default(args.model_dir)
    voice = VoiceSpec(id=args.voice)
    if args.voice and args.voice not in model.voices:  # a cloned or mixed voice of the library
        from sonare.voices.library import configured_library

        stored = configured_library(None, args.model_dir)[0].get(args.voice)
        if stored is None:
            raise SystemExit(f"error: no voice {args.voice!r} (see `sonare voices`)")
        voice = VoiceSpec(id=stored.id, embedding=tuple(stored.embedding.tolist()))
    try:
        options = SynthesisOptions(voice=voice, language=args.language, speed=args.speed, volume=args.volume)
        events = model.stream(pieces, options)
        player = subprocess.Popen(_player(model.sample_rate), stdin=subprocess.PIPE) if args.play else None
        kept = []
        for event in events:
            if not isinstance(event, AudioChunk):
                continue
            pcm16 = (np.clip(event.pcm, -1, 1) * 32767).astype("<i2").tobytes()
            if args.raw:
                sys.stdout.buffer.write(pcm16)
                sys.stdout.buffer.flush()
            if player:
                player.stdin.write(pcm16)
            if args.output:
                kept.append(event.pcm)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from exc
    if player:
        player.stdin.close()
        player.wait()
    if args.output:
        from sonare.audio.io import save_audio

        save_audio(args.output, np.concatenate(kept) if kept else np.zeros(0, np.float32), model.sample_rate)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0
