"""Sonare's recogniser and turn head as systems for the independent evaluators (`sonare eval stt|turns`)."""

from __future__ import annotations

import os

import numpy as np
import torch

from sonare.audio.features import SAMPLE_RATE, log_mel
from sonare.audio.resample import resample
from sonare.stt.model import SUBSAMPLING
from sonare.stt.turns import THRESHOLDS, turn_fires


class SonareTranscriber:
    """The streaming recogniser fed the whole recording (`Transcriber` protocol), with or without its word
    language model. SONARE_STT_DIR selects weights other than the bundled (as for the detector below)."""

    def __init__(self, language_model: bool = True) -> None:
        from sonare.stt import load_default

        self.model = load_default(os.environ.get("SONARE_STT_DIR"), language_model=language_model)

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        return self.model.transcribe(audio, sample_rate)


class SonareTurnDetector:
    """The turn head and tracker at a sweep of end thresholds (`TurnDetector` protocol).

    Probabilities come from one pass of the model over the recording, which equals the streaming session's
    per-frame output (the model is causal and tests hold the two paths equal); the tracker then runs once
    per threshold."""

    setting_name = "end_threshold"

    def __init__(self) -> None:
        from sonare.stt import load_default

        self.model = load_default(os.environ.get("SONARE_STT_DIR")).model

    @torch.inference_mode()
    def probabilities(self, audio: np.ndarray, sample_rate: int) -> np.ndarray:
        mel = log_mel(resample(audio, sample_rate, SAMPLE_RATE))
        mel = mel[: len(mel) // SUBSAMPLING * SUBSAMPLING]
        _, turn, _ = self.model(mel[None])
        return torch.sigmoid(turn[0]).numpy()

    def detect(self, audio: np.ndarray, sample_rate: int) -> dict[float, list[float]]:
        probs = self.probabilities(audio, sample_rate)
        return {threshold: turn_fires(probs, threshold, threshold) for threshold in THRESHOLDS}
