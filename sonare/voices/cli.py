"""`sonare clone CLIP --name NAME` and `sonare voices`: the voice library from the command line.

Both use the library the server uses (`voices.sqlite3` in the server's data directory, from the same
configuration: `--data-dir`, `SONARE_DATA_DIR` or the config file), so a voice cloned here is usable by id
from the API and from `sonare say --voice ID`, and one cloned through the API is listed here.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    clone = sub.add_parser("clone", help="clone a voice from a 3-60 s clip of someone speaking, and store it")
    clone.add_argument("clip", help="audio file (wav, flac, ogg, mp3, ...)")
    clone.add_argument("--name", required=True)
    clone.add_argument("--description", default="")
    clone.add_argument("--language", default="en")
    _common(clone)
    clone.set_defaults(handler=_clone)
    voices = sub.add_parser("voices", help="list the built-in and stored voices (or delete one)")
    voices.add_argument("--delete", metavar="ID", help="delete this stored voice")
    _common(voices)
    voices.set_defaults(handler=_voices)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="the server's data directory (default: from the server configuration)")
    p.add_argument("--model-dir", help="TTS weights directory instead of the bundled ones")


def _clone(args: argparse.Namespace) -> int:
    from sonare.audio.io import load_audio
    from sonare.voices.encoder import CloneError, SpeakerEncoder
    from sonare.voices.library import configured_library

    try:
        audio, rate = load_audio(args.clip)
    except (OSError, RuntimeError, ValueError) as exc:
        raise SystemExit(f"error: cannot read {args.clip}: {exc}") from exc
    library, builtins = configured_library(args.data_dir, args.model_dir)
    try:
        embedding = SpeakerEncoder(builtins).embed(audio, rate)
    except CloneError as exc:
        raise SystemExit(f"error: {exc}") from exc
    voice = library.add(args.name, embedding, args.language, args.description, source="clone")
    print(json.dumps({"id": voice.id, "name": voice.name, "language": voice.language}))
    print(f"cloned; speak with: sonare say --voice {voice.id} 'Hello there.' -o hello.wav", file=sys.stderr)
    return 0


def _voices(args: argparse.Namespace) -> int:
    from sonare.voices.library import BuiltinVoice, configured_library

    library, _ = configured_library(args.data_dir, args.model_dir)
    if args.delete:
        try:
            if not library.delete(args.delete):
                raise SystemExit(f"error: no stored voice with id {args.delete!r}")
        except BuiltinVoice as exc:
            raise SystemExit(f"error: {args.delete!r} is a built-in voice") from exc
        print(f"deleted {args.delete}", file=sys.stderr)
        return 0
    cursor = None
    while True:
        page, more = library.page(100, starting_after=cursor)
        for v in page:
            kind = "built-in" if v.builtin else "stored"
            print(f"{v.id}\t{v.name}\t{v.language}\t{kind}\t{v.description}")
        if not more or not page:
            return 0
        cursor = page[-1].id
