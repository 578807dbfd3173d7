"""The `sonare` command. Each area of the package registers its own subcommands.

A subcommand module exposes `register(subparsers)`; it must import only light modules at top level
so that `sonare --help` stays fast and the heavy imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Modules that contribute subcommands, in the order `sonare --help` lists them.
COMMAND_MODULES = [
    "sonare.server.cli",
    "sonare.tts.cli",
    "sonare.stt.cli",
    "sonare.voices.cli",
    "sonare.text.cli",
    "sonare.data.cli",
    "sonare.train.cli",
    "sonare.eval.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sonare", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real missing dependency inside the module, not an absent area
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:
        # The reader went away (`sonare transcribe --json f.wav | head`): stop quietly, as Unix tools do, and keep
        # Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
