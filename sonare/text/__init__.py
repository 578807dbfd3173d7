"""Text front end: normalisation, phonemes, the shared symbol inventory, training sentences."""

from sonare.text.inventory import encode
from sonare.text.phonemes import Word, phonemize

__all__ = ["Word", "encode", "phonemize"]
