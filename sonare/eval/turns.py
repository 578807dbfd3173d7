"""Turn-detection evaluation, and the baseline to beat: a voice-activity detector plus a silence timer.

Scoring. A conversation has labelled pauses: `end_of_turn` (the speaker has finished; the pause
lasts until speech starts again) and `hold` (the speaker pauses mid-turn and goes on). A detector
outputs the times at which it declared "end of turn". Each pause owns a window of time:

- a hold pause owns `[start, next pause start)`: a firing anywhere in it is a false cut-off (the
  agent would have interrupted the speaker). The window runs past the end of the silence because
  a detector that reacts late to the hold still fires after the speaker has resumed, and that is
  the same interruption;
- an end-of-turn pause owns `[start, end]`: the first firing's latency is `t - start` (time from the
  end of speech to the decision); no firing before speech starts again is a miss;
- firings in no window happen in speech that starts a turn, and are counted separately.

Holds are also scored by where they fall, when the corpus says so (`after_sentence`): mid-sentence (after
"and", a list item, a filler, some digits: a pause to think, which words and intonation give away) and after a
complete sentence (heard exactly as an end of turn until the speaker goes on, so no detector can tell it from
one sooner than the pause's own length allows).

A detector may have several operating points (timer lengths, thresholds); each is scored, giving
a curve, and the operating point reported is the one with the lowest median latency whose
false cut-off rate is within a budget (5% by default).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Protocol

import numpy as np

from sonare.audio.resample import resample
from sonare.eval.latency import percentiles

END_OF_TURN = "end_of_turn"
HOLD = "hold"
DEFAULT_MAX_FALSE_CUTOFF = 0.05


@dataclass(frozen=True)
class Pause:
    start: float
    end: float
    kind: str
    after_sentence: bool | None = None  # for holds: follows a complete sentence (None: not labelled)

    def __post_init__(self) -> None:
        if self.kind not in (END_OF_TURN, HOLD):
            raise ValueError(f"pause kind must be {END_OF_TURN!r} or {HOLD!r}, not {self.kind!r}")
        if self.end < self.start:
            raise ValueError(f"pause ends ({self.end}) before it starts ({self.start})")

    @classmethod
    def from_dict(cls, row: Mapping[str, object]) -> Pause:
        after = row.get("after_sentence")
        return cls(float(row["start"]), float(row["end"]), str(row["kind"]), None if after is None else bool(after))


@dataclass
class TurnOutcomes:
    """Per-pause results of one or more conversations: when (if at all) the detector fired."""

    hold_fired: list[bool] = field(default_factory=list)
    hold_after_sentence: list[bool | None] = field(default_factory=list)  # parallel to hold_fired
    end_latencies: list[float | None] = field(default_factory=list)
    fires_in_speech: int = 0
    audio_seconds: float = 0.0

    def extend(self, other: TurnOutcomes) -> None:
        self.hold_fired += other.hold_fired
        self.hold_after_sentence += other.hold_after_sentence
        self.end_latencies += other.end_latencies
        self.fires_in_speech += other.fires_in_speech
        self.audio_seconds += other.audio_seconds


def score_fires(pauses: Sequence[Pause], fires: Iterable[float], audio_seconds: float) -> TurnOutcomes:
    """Match one conversation's detector firings against its labelled pauses."""
    fire_times = np.sort(np.asarray(list(fires), dtype=np.float64))
    ordered = sorted(pauses, key=lambda p: p.start)
    outcomes = TurnOutcomes(audio_seconds=audio_seconds)
    in_a_window = np.zeros(fire_times.size, dtype=bool)
    for index, pause in enumerate(ordered):
        first = int(np.searchsorted(fire_times, pause.start, side="left"))
        if pause.kind == HOLD:
            following = ordered[index + 1].start if index + 1 < len(ordered) else math.inf
            last = int(np.searchsorted(fire_times, following, side="left"))
        else:
            last = int(np.searchsorted(fire_times, pause.end, side="right"))
        in_a_window[first:last] = True
        fired_at = float(fire_times[first]) if first < last else None
        if pause.kind == HOLD:
            outcomes.hold_fired.append(fired_at is not None)
            outcomes.hold_after_sentence.append(pause.after_sentence)
        else:
            outcomes.end_latencies.append(None if fired_at is None else fired_at - pause.start)
    outcomes.fires_in_speech = int(np.count_nonzero(~in_a_window))
    return outcomes


@dataclass(frozen=True)
class TurnMetrics:
    holds: int
    false_cutoffs: int
    false_cutoff_rate: float
    ends: int
    misses: int
    miss_rate: float
    latency_p50: float
    latency_p90: float
    latency_mean: float
    fires_in_speech: int
    fires_in_speech_per_minute: float
    mid_sentence_holds: int
    mid_sentence_false_cutoff_rate: float
    after_sentence_holds: int
    after_sentence_false_cutoff_rate: float

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def summarize(outcomes: TurnOutcomes) -> TurnMetrics:
    """Rates and latency percentiles (seconds, over detected ends) from pooled outcomes."""
    holds = len(outcomes.hold_fired)
    false_cutoffs = sum(outcomes.hold_fired)
    detected = [lat for lat in outcomes.end_latencies if lat is not None]
    ends = len(outcomes.end_latencies)
    misses = ends - len(detected)
    latency = percentiles(detected, (50, 90))
    minutes = outcomes.audio_seconds / 60.0
    labelled = list(zip(outcomes.hold_fired, outcomes.hold_after_sentence, strict=True))
    mid = [fired for fired, after_sentence in labelled if after_sentence is False]
    after = [fired for fired, after_sentence in labelled if after_sentence is True]
    return TurnMetrics(
        holds=holds,
        false_cutoffs=false_cutoffs,
        false_cutoff_rate=_rate(outcomes.hold_fired),
        ends=ends,
        misses=misses,
        miss_rate=misses / ends if ends else float("nan"),
        latency_p50=latency["p50"],
        latency_p90=latency["p90"],
        latency_mean=latency["mean"],
        fires_in_speech=outcomes.fires_in_speech,
        fires_in_speech_per_minute=outcomes.fires_in_speech / minutes if minutes else float("nan"),
        mid_sentence_holds=len(mid),
        mid_sentence_false_cutoff_rate=_rate(mid),
        after_sentence_holds=len(after),
        after_sentence_false_cutoff_rate=_rate(after),
    )


def _rate(fired: list[bool]) -> float:
    return sum(fired) / len(fired) if fired else float("nan")


def detects_most_ends(metrics: TurnMetrics) -> bool:
    """Whether a setting fires in most end-of-turn pauses: otherwise its median end is never detected."""
    return metrics.miss_rate < 0.5


def all_holds_cutoff_rate(metrics: TurnMetrics) -> float:
    return metrics.false_cutoff_rate


def thinking_pause_cutoff_rate(metrics: TurnMetrics) -> float:
    """False cut-offs on mid-sentence holds where the conversations say which those are (a hold after a complete
    sentence cannot be told from an end sooner than its own length, so no setting can avoid cutting it off
    without waiting as long as a silence timer), on all holds otherwise."""
    return metrics.mid_sentence_false_cutoff_rate if metrics.mid_sentence_holds else metrics.false_cutoff_rate


def best_operating_point(
    curve: Mapping[float, TurnMetrics],
    max_false_cutoff: float = DEFAULT_MAX_FALSE_CUTOFF,
    rate: Callable[[TurnMetrics], float] = all_holds_cutoff_rate,
) -> float | None:
    """The setting with the lowest median latency among those within the false cut-off budget (`rate`) that
    detect most ends. A setting that misses half the ends or more has no median latency after a true end (the
    median end is never detected), however short the latency of the few it catches."""
    allowed = [
        (metrics.latency_p50, setting)
        for setting, metrics in curve.items()
        if rate(metrics) <= max_false_cutoff and detects_most_ends(metrics) and not math.isnan(metrics.latency_p50)
    ]
    return min(allowed)[1] if allowed else None


def most_ends_within_budget(
    curve: Mapping[float, TurnMetrics],
    max_false_cutoff: float = DEFAULT_MAX_FALSE_CUTOFF,
    rate: Callable[[TurnMetrics], float] = all_holds_cutoff_rate,
) -> float:
    """The setting within the false cut-off budget (`rate`) that detects the most ends, the sooner (median latency)
    among equals; when none keeps within the budget, the same among those that come closest to it. For a detector
    that holds back the ends it is unsure of, where no setting may detect most ends, so that `best_operating_point`
    has none to offer."""
    return min(
        curve,
        key=lambda setting: (
            max(rate(curve[setting]) - max_false_cutoff, 0.0),
            curve[setting].miss_rate,
            math.inf if math.isnan(curve[setting].latency_p50) else curve[setting].latency_p50,
        ),
    )


class TurnDetector(Protocol):
    """Anything that declares ends of turn in a recording, at one or more operating points."""

    setting_name: str

    def detect(self, audio: np.ndarray, sample_rate: int) -> dict[float, list[float]]:
        """End-of-turn firing times (seconds from the start), for each operating point."""
        ...


def evaluate_detector(
    detector: TurnDetector, conversations: Iterable[tuple[np.ndarray, int, Sequence[Pause]]]
) -> dict[float, TurnMetrics]:
    """Score a detector over (audio, sample_rate, pauses) conversations, pooled per setting."""
    pooled: dict[float, TurnOutcomes] = {}
    for audio, sample_rate, pauses in conversations:
        seconds = len(audio) / sample_rate
        for setting, fires in detector.detect(audio, sample_rate).items():
            pooled.setdefault(setting, TurnOutcomes()).extend(score_fires(pauses, fires, seconds))
    return {setting: summarize(outcomes) for setting, outcomes in sorted(pooled.items())}


# --- Baseline: Silero VAD speech probabilities plus a silence timer ---------------------------

VAD_RATE = 16000
VAD_FRAME_SAMPLES = 512  # Silero's window at 16 kHz: one probability per 32 ms
VAD_FRAME_SECONDS = VAD_FRAME_SAMPLES / VAD_RATE
SPEECH_THRESHOLD = 0.5
# Hysteresis as in Silero's own iterator: silence only counts below a lower threshold, so a
# probability wobbling around 0.5 does not restart the timer.
SILENCE_THRESHOLD = 0.35
DEFAULT_TIMERS_MS = tuple(range(100, 2001, 100))


class SileroVad:
    """Silero VAD (TorchScript weights bundled in the `silero-vad` wheel) on CPU."""

    def __init__(self) -> None:
        import torch

        threads = torch.get_num_threads()
        import silero_vad  # its import pins torch to one thread; give the caller back its setting

        torch.set_num_threads(threads)
        self._model = silero_vad.load_silero_vad()

    def speech_probabilities(self, audio: np.ndarray, sample_rate: int) -> np.ndarray:
        """One speech probability per 32 ms frame, computed causally from the start of `audio`."""
        import torch

        samples = torch.from_numpy(np.ascontiguousarray(resample(audio, sample_rate, VAD_RATE)))
        # One 32 ms frame is far too little work to split across threads; on a busy machine the
        # second thread's spin-waiting costs ten times the work itself.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.no_grad():
                probabilities = self._model.audio_forward(samples, VAD_RATE)
        finally:
            torch.set_num_threads(threads)
        return probabilities.numpy().reshape(-1).astype(np.float64)


def silence_timer_fires(probabilities: np.ndarray, timer_seconds: float) -> list[float]:
    """Times a silence timer declares end of turn, given per-frame speech probabilities.

    The timer arms once speech has been heard, counts consecutive silent frames, and fires at the
    end of the frame that completes `timer_seconds` of silence; it re-arms on the next speech.
    A frame's probability is known only at the end of that frame, so latency includes it.
    """
    frames_needed = max(1, math.ceil(timer_seconds / VAD_FRAME_SECONDS - 1e-9))
    fires: list[float] = []
    armed = False
    silent_frames = 0
    for index, probability in enumerate(probabilities):
        if probability >= SPEECH_THRESHOLD:
            armed, silent_frames = True, 0
        elif armed and (probability < SILENCE_THRESHOLD or silent_frames > 0):
            silent_frames += 1
            if silent_frames == frames_needed:
                fires.append((index + 1) * VAD_FRAME_SECONDS)
                armed, silent_frames = False, 0
    return fires


class VadTimerDetector:
    """The baseline detector; its operating points are silence-timer lengths in milliseconds."""

    setting_name = "timer_ms"

    def __init__(self, timers_ms: Sequence[int] = DEFAULT_TIMERS_MS) -> None:
        self.timers_ms = tuple(timers_ms)
        self._vad = SileroVad()

    def detect(self, audio: np.ndarray, sample_rate: int) -> dict[float, list[float]]:
        probabilities = self._vad.speech_probabilities(audio, sample_rate)
        return {float(ms): silence_timer_fires(probabilities, ms / 1000.0) for ms in self.timers_ms}
