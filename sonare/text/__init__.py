"""Text front end: normalisation, phonemes, the shared symbol inventory, training sentences."""

from sonare.text.inventory import encode
from sonare.text.normalize import normalize
from sonare.text.phonemes import Word, phonemize
from sonare.text.sentences import generate_sentences, split_of

__all__ = ["Word", "encode", "generate_sentences", "normalize", "phonemize", "split_of"]
