"""The phoneme token sequence stored in the manifest, built from `sonare.text.phonemize`.

Tokens are the words' phonemes in order, a word break " " between consecutive words, and the
punctuation tokens where they stand (they carry prosody). Each word remembers which tokens are
its own so word timings follow from phoneme timings.
"""

from __future__ import annotations

from dataclasses import dataclass

from sonare.data.timings import WORD_BREAK


@dataclass
class TokenizedText:
    tokens: list[str]
    words: list[tuple[str, int, int]]  # (word, first token index, one past the last)


def tokenize(normalized: str, language: str) -> TokenizedText:
    from sonare.text.phonemes import Word, phonemize

    tokens: list[str] = []
    words: list[tuple[str, int, int]] = []
    for item in phonemize(normalized, language=language):
        if isinstance(item, Word):
            if not item.phonemes:
                continue
            if tokens:
                tokens.append(WORD_BREAK)
            words.append((item.text, len(tokens), len(tokens) + len(item.phonemes)))
            tokens.extend(item.phonemes)
        else:
            tokens.append(item)
    return TokenizedText(tokens, words)
