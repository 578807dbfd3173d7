"""`sonare text ...`: normalise, phonemise and generate sentences from the command line."""

from __future__ import annotations

import argparse
import sys

from sonare.text.sentences import SPLITS, STYLES


def _normalize(args: argparse.Namespace) -> int:
    from sonare.text.normalize import normalize

    for line in _lines(args.text):
        print(normalize(line))
    return 0


def _phonemize(args: argparse.Namespace) -> int:
    from sonare.text.inventory import encode
    from sonare.text.normalize import normalize
    from sonare.text.phonemes import Word, phonemize

    for line in _lines(args.text):
        if args.language.startswith("en"):
            line = normalize(line)
        items = phonemize(line, args.language)
        print(" ".join("".join(i.phonemes) if isinstance(i, Word) else i for i in items))
        if args.ids:
            print(" ".join(map(str, encode(items)[0])))
    return 0


def _sentences(args: argparse.Namespace) -> int:
    from sonare.text.sentences import generate_sentences

    for sentence in generate_sentences(args.n, seed=args.seed, split=args.split, style=args.style):
        print(sentence)
    return 0


def _languages(args: argparse.Namespace) -> int:
    from sonare.text.phonemes import list_languages

    print("\n".join(list_languages()))
    return 0


def _lines(text: list[str]) -> list[str]:
    """The text given as arguments, or standard input line by line."""
    return [" ".join(text)] if text else [line.rstrip("\n") for line in sys.stdin]


def register(subparsers: argparse._SubParsersAction) -> None:
    text = subparsers.add_parser("text", help="text front end: normalise, phonemise, training sentences")
    commands = text.add_subparsers(dest="text_command", metavar="ACTION", required=True)

    normalize = commands.add_parser("normalize", help="written English to spoken words")
    normalize.add_argument("text", nargs="*", help="text (default: standard input, line by line)")
    normalize.set_defaults(handler=_normalize)

    phonemize = commands.add_parser("phonemize", help="IPA phonemes per word (English is normalised first)")
    phonemize.add_argument("text", nargs="*", help="text (default: standard input, line by line)")
    phonemize.add_argument("--language", default="en-us", help="espeak-ng language (see `sonare text languages`)")
    phonemize.add_argument("--ids", action="store_true", help="also print the inventory ids")
    phonemize.set_defaults(handler=_phonemize)

    sentences = commands.add_parser("sentences", help="generated training sentences, one per line")
    sentences.add_argument("-n", type=int, default=100, help="how many distinct sentences")
    sentences.add_argument("--seed", type=int, default=0)
    sentences.add_argument("--split", choices=SPLITS, default="train")
    sentences.add_argument(
        "--style", choices=STYLES, default="mixed", help="mixed sentences, lone answers, or lone words"
    )
    sentences.set_defaults(handler=_sentences)

    languages = commands.add_parser("languages", help="espeak-ng language codes")
    languages.set_defaults(handler=_languages)
