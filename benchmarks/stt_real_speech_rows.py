"""The real-speech rows docs/benchmarks.md and the STT card report, from `sonare eval stt` result files of the
real-speech manifest (`python -m sonare.stt.realspeech runs/realspeech`): WER per section, and the groups the
tables use, summed edit by edit (not averaged): the Asterisk voice's unheard prompts, the other real voices
(LibriVox, pocketsphinx cards, alsa speaker-test), every held-out clip but KTuberling's and qABCs's (the 218
clips scored before session 39), and the isolated words of three voices (Asterisk's, KTuberling's, qABCs's).

    python benchmarks/stt_real_speech_rows.py RESULT.json [RESULT.json ...] [--asr sonare] [--condition clean]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

GROUPS = {
    "other real voices": ("librivox", "cards", "alsa"),
    "all but KTuberling and qABCs": ("librivox", "cards", "alsa", "asterisk", "asterisk-words"),
    "isolated words": ("asterisk-words", "ktuberling", "qabcs"),
}


def rows(sections: dict[str, dict[str, float]]) -> dict[str, tuple[float, int]]:
    """(WER, reference words) per section and per group of `GROUPS`."""

    def summed(names: tuple[str, ...]) -> tuple[float, int]:
        parts = [sections[n] for n in names if n in sections]
        errors = sum(p["substitutions"] + p["deletions"] + p["insertions"] for p in parts)
        words = sum(p["reference_words"] for p in parts)
        return errors / max(words, 1), words

    out = {name: summed((name,)) for name in sorted(sections)}
    out.update({group: summed(names) for group, names in GROUPS.items()})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--asr", default="sonare")
    ap.add_argument("--condition", default="clean")
    args = ap.parse_args()
    for path in args.results:
        sections = json.loads(Path(path).read_text())["by_section"][args.asr][args.condition]
        print(path)
        for name, (wer, words) in rows(sections).items():
            print(f"  {name:<28} {wer:7.1%}  ({words} words)")


if __name__ == "__main__":
    main()
