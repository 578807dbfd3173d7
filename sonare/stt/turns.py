"""Turn events from the turn head's per-frame probabilities, with hysteresis.

A turn starts when speech (speech probability >= the speech threshold) has been heard for START_FRAMES frames
in a row. Inside a turn the end-of-turn
probability is compared with two thresholds: crossing the lower one gives an eager end (a client may start
preparing its reply), the higher one ends the turn. Speech after an eager end, before the end, resumes the
turn. A silence longer than the maximum (MAX_SILENCE_SECONDS unless a client sets it) ends a turn whatever the
head says, so a stream never stays in a turn forever on a low-confidence pause. A client's settings
(`TurnSettings`) replace any of these values, at the start of a stream or mid-stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from sonare.stt.messages import TurnSettings
from sonare.stt.model import FRAME_SECONDS, TURN_END, TURN_SPEECH, frame_time

SPEECH_THRESHOLD = 0.5
START_FRAMES = 2  # 80 ms of speech
EAGER_THRESHOLD = 0.5
END_THRESHOLD = 0.8
MAX_SILENCE_SECONDS = 4.0
# End thresholds an evaluation sweeps: each is one operating point on the false cut-off / latency curve. The
# head is often very sure of itself on hold pauses, so the sweep goes on in finer steps close to 1.
THRESHOLDS = tuple(round(float(t), 2) for t in np.arange(0.3, 0.99, 0.05)) + (0.97, 0.98, 0.99, 0.995, 0.998)

Kind = Literal["start", "eager_end", "resume", "end"]


@dataclass
class TurnTracker:
    eager_threshold: float = EAGER_THRESHOLD
    end_threshold: float = END_THRESHOLD
    speech_threshold: float = SPEECH_THRESHOLD
    max_silence_s: float = MAX_SILENCE_SECONDS
    in_turn: bool = False
    eager: bool = False
    speech_run: int = 0
    silence_run: int = 0

    def push(self, p_end: float, p_speech: float) -> Kind | None:
        """Feed one encoder frame's probabilities; returns the turn event it causes, if any."""
        speaking = p_speech >= self.speech_threshold
        self.speech_run = self.speech_run + 1 if speaking else 0
        self.silence_run = 0 if speaking else self.silence_run + 1
        if not self.in_turn:
            if self.speech_run >= START_FRAMES:
                self.in_turn, self.eager = True, False
                return "start"
            return None
        if p_end >= self.end_threshold or self.silence_run * FRAME_SECONDS >= self.max_silence_s:
            self.in_turn = self.eager = False
            return "end"
        if not self.eager and p_end >= self.eager_threshold and not speaking:
            self.eager = True
            return "eager_end"
        if self.eager and self.speech_run >= START_FRAMES:
            self.eager = False
            return "resume"
        return None

    def configure(self, settings: TurnSettings) -> None:
        """Apply a client's settings (API thresholds bound P(the turn goes on): see `TurnSettings`)."""
        if settings.start_threshold is not None:
            self.speech_threshold = settings.start_threshold
        if settings.eager_end_threshold is not None:
            self.eager_threshold = 1.0 - settings.eager_end_threshold
        if settings.end_threshold is not None:
            self.end_threshold = 1.0 - settings.end_threshold
        if settings.end_timeout_s is not None:
            self.max_silence_s = settings.end_timeout_s

    def close(self) -> bool:
        """The stream is being finalised or ended: True if a turn was open (and is now over)."""
        was, self.in_turn, self.eager = self.in_turn, False, False
        return was


def turn_fires(probs: np.ndarray, eager_threshold: float, end_threshold: float) -> list[float]:
    """Times (seconds) a tracker ends turns, fed one recording's per-frame sigmoid turn outputs (L, 2)."""
    tracker = TurnTracker(eager_threshold, end_threshold)
    return [frame_time(k) for k, p in enumerate(probs) if tracker.push(p[TURN_END], p[TURN_SPEECH]) == "end"]
