"""Greedy CTC decoding, one encoder frame at a time, into words with timestamps.

The best path is append-only: a character, once emitted, is never taken back. So the words of a partial
transcript are a prefix of every later partial, apart from the last word, which may still be growing; that
is the stability the streaming API promises (a partial revises at most its last word).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sonare.stt.messages import Word
from sonare.stt.model import FRAME_SECONDS
from sonare.stt.vocab import ALPHABET, BLANK, SPACE

# A causal CTC model emits a character's spike some frames after the sound (it waits for evidence). Word
# times undo that delay, measured with `python -m sonare.stt.bench` (word timestamp errors on held-out clips).
EMISSION_DELAY_FRAMES = 0


@dataclass
class GreedyDecoder:
    """Collapses repeats, drops blanks and splits words on the space symbol."""

    previous: int = BLANK
    words: list[Word] = field(default_factory=list)  # closed words of the current segment
    chars: str = ""  # the word being spelled
    first_frame: int = 0
    last_frame: int = 0

    def push(self, token: int, frame: int) -> bool:
        """Feed the best token of encoder frame `frame`; True when the text changed."""
        changed = False
        if token != self.previous and token != BLANK:
            if token == SPACE:
                changed = self._close_word()
            else:
                if not self.chars:
                    self.first_frame = frame
                self.chars += ALPHABET[token - 1]
                self.last_frame = frame
                changed = True
        self.previous = token
        return changed

    def _close_word(self) -> bool:
        if not self.chars:
            return False
        start = max(0, self.first_frame - EMISSION_DELAY_FRAMES - 1) * FRAME_SECONDS
        end = max(start + FRAME_SECONDS, (self.last_frame - EMISSION_DELAY_FRAMES + 1) * FRAME_SECONDS)
        self.words.append(Word(self.chars, round(start, 3), round(end, 3)))
        self.chars = ""
        return False  # closing a word does not change the text

    def text(self) -> str:
        """The segment's words so far, each preceded by a space (the transport's joining convention)."""
        words = [w.word for w in self.words] + ([self.chars] if self.chars else [])
        return "".join(" " + w for w in words)

    def take_segment(self) -> list[Word]:
        """Close the segment: its words (the last one included), leaving the decoder ready for the next."""
        self._close_word()
        words, self.words = self.words, []
        return words
