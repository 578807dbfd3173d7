"""Parsing STT session parameters (WebSocket query strings, batch form fields)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sonare.server.audio_in import INPUT_ENCODINGS, MAX_RATE, MIN_RATE
from sonare.server.errors import invalid
from sonare.stt.messages import TurnSettings

# Ranges of the turn-detection settings clients may send (the Cartesia API's documented bounds).
TURN_RANGES = {
    "turn_start_threshold": (0.5, 0.9),
    "turn_eager_end_threshold": (0.3, 0.6),
    "turn_end_threshold": (0.05, 0.5),
    "turn_end_timeout_ms": (640.0, 11200.0),
}
VAD_RANGES = {"min_volume": (0.0, 1.0), "max_silence_duration_secs": (0.0, 60.0)}
MAX_KEYTERMS, MAX_KEYTERM_CHARS = 100, 1200  # the Cartesia API's bounds on `keyterm`


@dataclass(frozen=True)
class AudioParams:
    encoding: str
    sample_rate: int
    language: str


def language_code(value: str | None) -> str:
    """ISO-639-1 base code; regional tags such as en-US are reduced to their language."""
    base = (value or "en").replace("_", "-").split("-")[0].lower()
    if not base.isalpha() or not 2 <= len(base) <= 3:
        raise invalid(f"language {value!r} is not an ISO-639 code")
    return base


def audio_params(query: Mapping[str, str]) -> AudioParams:
    encoding = query.get("encoding")
    if encoding not in INPUT_ENCODINGS:
        raise invalid(f"encoding must be one of {', '.join(INPUT_ENCODINGS)}")
    rate_text = query.get("sample_rate", "")
    if not rate_text.isdigit() or not MIN_RATE <= int(rate_text) <= MAX_RATE:
        raise invalid(f"sample_rate must be an integer between {MIN_RATE} and {MAX_RATE}")
    return AudioParams(encoding, int(rate_text), language_code(query.get("language")))


def keyterms(values: Sequence[str]) -> tuple[str, ...]:
    """A client's key terms (the repeatable `keyterm`, already URL-decoded): each with a letter or digit, at most
    MAX_KEYTERMS of them and MAX_KEYTERM_CHARS characters in all."""
    terms = tuple(v.strip() for v in values)
    if len(terms) > MAX_KEYTERMS:
        raise invalid(f"at most {MAX_KEYTERMS} keyterm values are allowed, got {len(terms)}")
    if sum(len(t) for t in terms) > MAX_KEYTERM_CHARS:
        raise invalid(f"keyterm values may hold at most {MAX_KEYTERM_CHARS} characters in all")
    if not all(re.search(r"[^\W_]", t) for t in terms):
        raise invalid("every keyterm must contain a letter or digit")
    return terms


def check_ranges(query: Mapping[str, Any], ranges: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    values = {}
    for name, (low, high) in ranges.items():
        if name in query:
            raw = query[name]
            try:
                value = math.nan if isinstance(raw, bool) else float(raw)
            except (TypeError, ValueError):
                value = math.nan
            if not low <= value <= high:
                raise invalid(f"{name} must be a number between {low:g} and {high:g}")
            values[name] = value
    return values


def silence_settings(query: Mapping[str, Any]) -> TurnSettings:
    """The turn settings of the client-finalized route's VAD-style options: `max_silence_duration_secs` is the
    silence after which the server finalizes on its own (the turn head may end a turn sooner), and `min_volume` the
    RMS level (full scale 1) under which audio counts as silence even where the speech head hears speech."""
    values = check_ranges(query, VAD_RANGES)
    return TurnSettings(end_timeout_s=values.get("max_silence_duration_secs"), min_volume=values.get("min_volume"))


def turn_settings(query: Mapping[str, Any]) -> TurnSettings:
    """A client's turn settings (query parameters, or a config message's `turn` object with the `turn_` prefix
    added): each in range, and start > eager_end > end, the absent ones taken at the API's defaults."""
    values = check_ranges(query, TURN_RANGES)
    start = values.get("turn_start_threshold", 0.8)
    eager = values.get("turn_eager_end_threshold", 0.4)
    end = values.get("turn_end_threshold", 0.2)
    if not start > eager > end:
        raise invalid("turn thresholds must satisfy start > eager_end > end")
    timeout = values.get("turn_end_timeout_ms")
    return TurnSettings(
        values.get("turn_start_threshold"),
        values.get("turn_eager_end_threshold"),
        values.get("turn_end_threshold"),
        None if timeout is None else timeout / 1000,
    )
