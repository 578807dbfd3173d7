"""DNSMOS (Microsoft's non-intrusive speech quality predictor) through `speechmos`.

`speechmos` ships the ONNX models inside its wheel and runs them with onnxruntime, so nothing is
fetched at run time. DNSMOS scores 9.01 s windows at 16 kHz with a 1 s hop and averages them;
shorter clips are tiled to 9.01 s by the package (a clip is scored as if repeated).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from sonare.audio.resample import resample

DNSMOS_RATE = 16000


@dataclass(frozen=True)
class DnsMos:
    """Predicted MOS on a 1-5 scale: overall, signal, background (P.835) and P.808 overall."""

    ovrl: float
    sig: float
    bak: float
    p808: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def dnsmos(audio: np.ndarray, sample_rate: int) -> DnsMos:
    """Score one clip at any sample rate."""
    from speechmos import dnsmos as speechmos_dnsmos

    samples = resample(audio, sample_rate, DNSMOS_RATE)
    if samples.size == 0:
        raise ValueError("cannot score an empty clip")
    # speechmos rejects samples outside [-1, 1]; a clipped sample is what a player would output.
    samples = np.clip(samples, -1.0, 1.0).astype(np.float32, copy=False)
    scores = speechmos_dnsmos.run(samples, DNSMOS_RATE)
    return DnsMos(
        ovrl=float(scores["ovrl_mos"]),
        sig=float(scores["sig_mos"]),
        bak=float(scores["bak_mos"]),
        p808=float(scores["p808_mos"]),
    )
