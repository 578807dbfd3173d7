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

# CTC emits a character's spike when the encoder has heard enough of it, typically late in the sound; a
# word's start is put one frame before its first spike, its end one frame after its last.
SPIKE_LEAD_FRAMES = 1
SPIKE_TAIL_FRAMES = 1


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
        start = max(0, self.first_frame - SPIKE_LEAD_FRAMES) * FRAME_SECONDS
        end = (self.last_frame + 1 + SPIKE_TAIL_FRAMES) * FRAME_SECONDS
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
