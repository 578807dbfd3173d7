"""Extract the example sentences of WordNet 3.0 into `sonare/assets/text/wordnet_examples.txt.gz`.

WordNet's glosses hold some 48,000 short usage examples written by lexicographers ("he still hangs
out with the same crowd"): natural modern English over a very wide vocabulary, under a licence
that allows copying and redistribution with its notice (shipped beside the file). The data comes
from Debian's `wordnet-base` package:

    apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb /tmp/wn
    python -m sonare.text.corpus_build /tmp/wn/usr/share/wordnet
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

from sonare.text.corpus import CORPUS_PATH

_EXAMPLE = re.compile(r'"([^"]+)"')
# Examples with these characters are notation or fragments of citations, not sentences.
_REJECT = re.compile(r"[\[\]{}<>/\\|_=*^~`@#$%&;]|\.\.\.|--|\(")


def examples(wordnet_dir: Path) -> list[str]:
    """Usage examples with at least four words, as sentences (capitalised, ending in punctuation)."""
    seen: set[str] = set()
    found: list[str] = []
    for part in ("noun", "verb", "adj", "adv"):
        for line in (wordnet_dir / f"data.{part}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  ") or "|" not in line:
                continue  # the licence header
            for text in _EXAMPLE.findall(line.split("|", 1)[1]):
                text = " ".join(text.split()).strip(" ,;:")
                if len(text.split()) < 4 or _REJECT.search(text) or not text.isascii():
                    continue
                text = text[0].upper() + text[1:]
                if text[-1] not in ".?!":
                    text += "."
                if text.casefold() not in seen:
                    seen.add(text.casefold())
                    found.append(text)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wordnet_dir", type=Path, help="folder with WordNet's data.noun, data.verb ...")
    args = parser.parse_args()
    sentences = examples(args.wordnet_dir)
    CORPUS_PATH.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0 keeps the file byte-identical across rebuilds
    with gzip.GzipFile(CORPUS_PATH, "wb", mtime=0) as f:
        f.write("".join(s + "\n" for s in sentences).encode())
    print(f"{len(sentences)} sentences -> {CORPUS_PATH}")


if __name__ == "__main__":
    main()
