"""Greedy CTC decoding, one CTC frame at a time, into words with timestamps.

The decoder for a model without a language model beside it (`sonare.stt.beam` is the one with).

The best path is append-only: a character, once emitted, is never taken back. So the words of a partial
transcript are a prefix of every later partial, apart from the last word, which may still be growing; that
is the stability the streaming API promises (a partial revises at most its last word).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from sonare.stt.messages import Word
from sonare.stt.vocab import ALPHABET, BLANK, SPACE

if TYPE_CHECKING:
    from sonare.stt.beam import BeamDecoder

# A causal CTC model emits a character's spike some frames after the sound (it waits for evidence). Word
# times undo that delay, measured with `python -m sonare.stt.bench` (word timestamp errors on held-out clips).
EMISSION_DELAY_FRAMES = 0


def word_at(chars: str, first_frame: int, last_frame: int, frame_seconds: float) -> Word:
    """A word spelled from CTC frame `first_frame` to `last_frame` (each `frame_seconds` long), times in seconds."""
    start = max(0, first_frame - EMISSION_DELAY_FRAMES - 1) * frame_seconds
    end = max(start + frame_seconds, (last_frame - EMISSION_DELAY_FRAMES + 1) * frame_seconds)
    return Word(chars, round(start, 3), round(end, 3))


@dataclass
class GreedyDecoder:
    """Collapses repeats, drops blanks and splits words on the space symbol."""

    frame_seconds: float  # the model's CTC frame (`STTConfig.ctc_frame_seconds`)
    previous: int = BLANK
    words: list[Word] = field(default_factory=list)  # closed words of the current segment
    chars: str = ""  # the word being spelled
    first_frame: int = 0
    last_frame: int = 0

    def push(self, logp: np.ndarray, frame: int) -> None:
        """Feed one CTC frame's log-probabilities (V,)."""
        token = int(logp.argmax())
        if token != self.previous and token != BLANK:
            if token == SPACE:
                self._close_word()
            else:
                if not self.chars:
                    self.first_frame = frame
                self.chars += ALPHABET[token - 1]
                self.last_frame = frame
        self.previous = token

    def _close_word(self) -> None:
        if self.chars:
            self.words.append(word_at(self.chars, self.first_frame, self.last_frame, self.frame_seconds))
            self.chars = ""

    def text(self) -> str:
        """The segment's words so far, each preceded by a space (the transport's joining convention)."""
        words = [w.word for w in self.words] + ([self.chars] if self.chars else [])
        return "".join(" " + w for w in words)

    def sentence_end_probability(self) -> float:
        """Whether the words so far could end a sentence: without a language model, no objection (1.0)."""
        return 1.0

    def take_segment(self) -> list[Word]:
        """Close the segment: its words (the last one included), leaving the decoder ready for the next."""
        self._close_word()
        words, self.words = self.words, []
        return words


def transcript(decoder: GreedyDecoder | BeamDecoder, logp: np.ndarray) -> str:
    """The words a fresh decoder reads from one utterance's CTC log-probabilities (frames, V)."""
    for k, row in enumerate(logp):
        decoder.push(row, k)
    return " ".join(w.word for w in decoder.take_segment())
