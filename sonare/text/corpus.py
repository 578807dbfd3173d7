"""Openly licensed English sentences shipped with the package (see sonare/assets/text/)."""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

CORPUS_PATH = Path(__file__).resolve().parent.parent / "assets" / "text" / "wordnet_examples.txt.gz"


@functools.cache
def corpus_sentences() -> tuple[str, ...]:
    """WordNet 3.0 usage examples as sentences, in the order they were extracted."""
    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        return tuple(line.rstrip("\n") for line in f if line.strip())
