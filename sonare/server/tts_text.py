"""Text arriving for synthesis: inline markup clients embed, and buffering by `max_buffer_delay_ms`."""

from __future__ import annotations

import re
import time

_PHONEME_BLOCK = re.compile(r"<<[^<>]*>>")
_SPELL = re.compile(r"<spell>(.*?)</spell>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
# The end of a clause: punctuation, optional closing quotes or brackets, then whitespace.
_CLAUSE_END = re.compile(r"[.!?;:,\u2026\u3002\uff01\uff1f][\"'\u201d\u2019)\]]*\s+|\n")
# Without punctuation, a long run of text is still released at a word boundary.
LONG_TEXT = 200


def strip_markup(text: str) -> str:
    """Remove the SSML-like tags and phoneme blocks clients may embed; this model cannot realise
    them and must not read them out. `<spell>ABC</spell>` becomes "A B C", read letter by letter."""
    text = _PHONEME_BLOCK.sub("", text)
    text = _SPELL.sub(lambda m: " ".join(m.group(1).replace(" ", "")), text)
    return _TAG.sub("", text)


def _complete_part(text: str) -> int:
    """Length of the prefix of `text` holding no unfinished tag (a '<' not yet closed by '>')."""
    opening = text.rfind("<")
    return opening if opening > text.rfind(">") else len(text)


class TextBuffer:
    """Collects a context's text pieces and decides when to pass them to the model.

    With a delay of 0 every piece goes on at once. Otherwise text waits until a clause ends, the text
    grows long, or `delay` seconds pass since the oldest unreleased text (the caller runs the timer
    from `due`). Markup is never split: an unfinished tag waits for the rest of it.
    """

    def __init__(self, delay_ms: int):
        self.delay = delay_ms / 1000.0
        self._pending = ""
        self._since: float | None = None

    @property
    def empty(self) -> bool:
        return not self._pending

    def due(self) -> float | None:
        """Monotonic time at which the buffered text must go out, if any is waiting."""
        return None if self._since is None else self._since + self.delay

    def add(self, text: str) -> str:
        """Buffer `text`; returns the text to synthesise now (markup removed, maybe empty)."""
        if not text:
            return ""
        self._pending += text
        complete = _complete_part(self._pending)
        if self.delay == 0:
            cut = complete
        else:
            ends = [m.end() for m in _CLAUSE_END.finditer(self._pending, 0, complete)]
            cut = ends[-1] if ends else 0
            if complete - cut >= LONG_TEXT:
                space = self._pending.rfind(" ", cut, complete)
                cut = space + 1 if space >= 0 else complete
        return self._release(cut)

    def release_due(self) -> str:
        """The timer fired: release everything but an unfinished tag."""
        return self._release(_complete_part(self._pending))

    def release_all(self) -> str:
        """Flush or end of input: release everything."""
        return self._release(len(self._pending))

    def _release(self, cut: int) -> str:
        out, self._pending = self._pending[:cut], self._pending[cut:]
        if not self._pending:
            self._since = None
        elif out or self._since is None:
            self._since = time.monotonic()
        return strip_markup(out)
