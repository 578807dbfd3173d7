"""`sonare transcribe FILE`: transcribe a recording with the bundled STT model.

By default prints the transcript of each turn as it is finalised. `--stream` plays the file through the
recogniser in real time (20 ms chunks, paced by the clock) and shows partials and turn events as they happen,
stamped with the wall-clock time since the start; `--json` prints every final with its word timestamps.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

CHUNK_SECONDS = 0.02


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transcribe", help="transcribe an audio file (any common format)")
    p.add_argument("file", help="audio file (wav, flac, mp3, ogg, ...)")
    p.add_argument("--stream", action="store_true", help="play the file in real time and show partials and turns")
    p.add_argument("--json", action="store_true", help="print finals with word timestamps as JSON")
    p.add_argument("--no-turns", action="store_true", help="no turn detection: one transcript for the whole file")
    p.add_argument("--model-dir", help="load weights from this directory instead of the bundled ones")
    p.add_argument("--greedy", action="store_true", help="decode without the word language model (faster)")
    p.add_argument(
        "--keyterm", action="append", default=[], help="a word or name to favour (repeatable; with the language model)"
    )
    p.set_defaults(handler=_transcribe)


def _chunks(audio, rate: int, paced: bool):
    step = max(1, int(rate * CHUNK_SECONDS))
    start = time.monotonic()
    for i in range(0, len(audio), step):
        if paced:  # hand over each chunk no earlier than it would arrive from a live microphone
            time.sleep(max(0.0, start + (i + step) / rate - time.monotonic()))
        yield audio[i : i + step]


def _transcribe(args: argparse.Namespace) -> int:
    import torch

    from sonare.audio.io import load_audio
    from sonare.stt import load_default
    from sonare.stt.messages import RecognitionOptions, Transcript, TurnEvent

    if args.greedy and args.keyterm:
        raise SystemExit("error: --keyterm needs the language model, which --greedy leaves out")
    torch.set_num_threads(1)
    try:
        audio, rate = load_audio(args.file)
    except (OSError, RuntimeError, ValueError) as exc:
        raise SystemExit(f"error: cannot read {args.file}: {exc}") from exc
    model = load_default(args.model_dir, language_model=not args.greedy)
    options = RecognitionOptions(sample_rate=rate, turn_detection=not args.no_turns, keyterms=tuple(args.keyterm))
    start = time.monotonic()
    finals = []
    for event in model.stream(_chunks(audio, rate, args.stream), options):
        if isinstance(event, Transcript) and event.is_final:
            finals.append(event)
        if args.stream:
            clock = f"{time.monotonic() - start:7.2f}s"
            if isinstance(event, Transcript):
                label = "final  " if event.is_final else "partial"
                print(f"{clock} {label} {event.text.strip()}", flush=True)
            elif isinstance(event, TurnEvent):
                print(f"{clock} turn.{event.kind} (audio {event.time:.2f}s)", flush=True)
        elif not args.json and isinstance(event, Transcript) and event.is_final:
            print(event.text.strip(), flush=True)
    if args.json:
        document = {
            "text": "".join(f.text for f in finals).strip(),
            "segments": [
                {
                    "text": f.text.strip(),
                    "start": f.start,
                    "duration": f.duration,
                    "words": [{"word": w.word, "start": w.start, "end": w.end} for w in f.words],
                }
                for f in finals
            ],
        }
        json.dump(document, sys.stdout, indent=2)
        print()
    return 0
