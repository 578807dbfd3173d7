"""Speaker similarity with an independent encoder: Resemblyzer's GE2E d-vector (256-d, L2-normed).

Its weights (`pretrained.pt`) ship inside the `resemblyzer` wheel; it runs on CPU. Clips are
resampled to 16 kHz, volume-normalised and stripped of long silences by Resemblyzer's own
preprocessing before embedding, so leading/trailing silence does not move the score.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from sonare.audio.resample import resample

ENCODER_RATE = 16000


class SpeakerEncoder:
    """Resemblyzer's VoiceEncoder, loaded once."""

    def __init__(self) -> None:
        from resemblyzer import VoiceEncoder

        self._encoder = VoiceEncoder(device="cpu", verbose=False)

    def embed(self, audio: np.ndarray, sample_rate: int) -> np.ndarray:
        """Unit-norm speaker embedding of one clip."""
        from resemblyzer import preprocess_wav

        wav = preprocess_wav(resample(audio, sample_rate, ENCODER_RATE))
        if wav.size == 0:
            raise ValueError("clip has no voiced audio to embed")
        return self._encoder.embed_utterance(wav)

    def embed_speaker(self, clips: Sequence[tuple[np.ndarray, int]]) -> np.ndarray:
        """One embedding for several clips of a speaker: the normalised mean of their embeddings."""
        return mean_embedding([self.embed(audio, rate) for audio, rate in clips])


def mean_embedding(embeddings: Sequence[np.ndarray]) -> np.ndarray:
    mean = np.mean(np.stack(embeddings), axis=0)
    return mean / np.linalg.norm(mean)


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@dataclass(frozen=True)
class SimilarityReport:
    """Cosine similarities between clip embeddings of the same speaker and of different speakers.

    `separation` is the gap between the mean same-speaker and mean different-speaker similarity;
    `equal_error_rate` is the EER of thresholding similarity to decide "same speaker".
    """

    same_mean: float
    same_min: float
    different_mean: float
    different_max: float
    separation: float
    equal_error_rate: float
    same_pairs: int
    different_pairs: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def equal_error_rate(same: Sequence[float], different: Sequence[float]) -> float:
    """Rate at which false accepts equal false rejects, over all thresholds at observed scores."""
    same_scores, diff_scores = np.asarray(same), np.asarray(different)
    best = 1.0
    for threshold in np.unique(np.concatenate([same_scores, diff_scores])):
        false_reject = float(np.mean(same_scores < threshold))
        false_accept = float(np.mean(diff_scores >= threshold))
        best = min(best, max(false_reject, false_accept))
    return best


def same_vs_different(embeddings: Mapping[str, Sequence[np.ndarray]]) -> SimilarityReport:
    """Compare every pair of clip embeddings, grouped by speaker label."""
    labelled = [(speaker, e) for speaker, group in embeddings.items() for e in group]
    same: list[float] = []
    different: list[float] = []
    for (speaker_a, a), (speaker_b, b) in itertools.combinations(labelled, 2):
        (same if speaker_a == speaker_b else different).append(cosine_similarity(a, b))
    if not same or not different:
        raise ValueError("need at least two clips of one speaker and clips of two speakers")
    return SimilarityReport(
        same_mean=float(np.mean(same)),
        same_min=float(np.min(same)),
        different_mean=float(np.mean(different)),
        different_max=float(np.max(different)),
        separation=float(np.mean(same) - np.mean(different)),
        equal_error_rate=equal_error_rate(same, different),
        same_pairs=len(same),
        different_pairs=len(different),
    )
