"""Sonare's recogniser and turn head as systems for the independent evaluators (`sonare eval stt|turns`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from sonare.audio.features import SAMPLE_RATE, log_mel
from sonare.audio.resample import resample
from sonare.stt.model import SUBSAMPLING
from sonare.stt.turns import THRESHOLDS, SentenceEndTiers, turn_fires

if TYPE_CHECKING:
    from sonare.stt.beam import BeamDecoder
    from sonare.stt.decode import GreedyDecoder


class SonareTranscriber:
    """The streaming recogniser fed the whole recording (`Transcriber` protocol), with or without its word
    language model. SONARE_STT_DIR selects weights other than the bundled (as for the detector below)."""

    def __init__(self, language_model: bool = True) -> None:
        from sonare.stt import load_default

        self.model = load_default(os.environ.get("SONARE_STT_DIR"), language_model=language_model)

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        return self.model.transcribe(audio, sample_rate)


class SonareTurnDetector:
    """The turn head, the decoder and the tracker at a sweep of end thresholds (`TurnDetector` protocol), or,
    for the eager end, at a sweep of eager thresholds up to the recogniser's own end threshold, scoring the eager
    ends a client may act on speculatively as the end's sweep scores the ends.

    The model's outputs come from one pass over the recording, which equals the streaming session's per-frame
    output (the model is causal and tests hold the two paths equal); the decoder and the tracker then run once
    per threshold, as the session runs them, so the language model's view of the words weighs in."""

    def __init__(self, step_seconds: float | None = None, event: Literal["end", "eager_end"] = "end") -> None:
        from sonare.stt import load_default

        self.stt = load_default(os.environ.get("SONARE_STT_DIR"), step_seconds=step_seconds)
        self.event = event
        self.setting_name = "end_threshold" if event == "end" else "eager_threshold"
        self.thresholds = [t for t in THRESHOLDS if event == "end" or t <= self.stt.end_threshold]

    @torch.inference_mode()
    def outputs(self, audio: np.ndarray, sample_rate: int) -> tuple[np.ndarray, np.ndarray]:
        """CTC log-probabilities (L·R, V) and turn probabilities (L, 2)."""
        mel = log_mel(resample(audio, sample_rate, SAMPLE_RATE))
        mel = mel[: len(mel) // SUBSAMPLING * SUBSAMPLING]
        ctc, turn, _ = self.stt.model(mel[None])
        return torch.log_softmax(ctc[0], -1).numpy(), torch.sigmoid(turn[0]).numpy()

    def fires(
        self,
        probs: np.ndarray,
        threshold: float,
        decoder: GreedyDecoder | BeamDecoder | None,
        logp: np.ndarray,
        tiers: SentenceEndTiers | None = None,
    ) -> list[float]:
        """When a live client of this recogniser's step hears of each end of turn (or eager end) the tracker
        decides at `threshold` (`turn_fires`), with the recogniser's own sentence-end tiers unless given others."""
        tiers = self.stt.tiers if tiers is None else tiers
        end = threshold if self.event == "end" else self.stt.end_threshold
        step = self.stt.step_seconds
        return turn_fires(probs, threshold, end, decoder, logp, step_seconds=step, tiers=tiers, event=self.event)

    def detect(self, audio: np.ndarray, sample_rate: int) -> dict[float, list[float]]:
        logp, probs = self.outputs(audio, sample_rate)
        return {t: self.fires(probs, t, self.stt.new_decoder(), logp) for t in self.thresholds}
