"""Speaker transforms: one teacher voice becomes many distinct speakers.

The audio is analysed with WORLD (pyworld: F0, spectral envelope, aperiodicity), the parameters
are changed, and the speech is resynthesised:
- pitch: F0 scaled by 2^(semitones / 12), and its excursions around the mean widened or
  narrowed (`pitch_range`), which changes how lively a speaker sounds;
- formants: the spectral envelope's frequency axis stretched by `formant_ratio`, the effect of a
  shorter (> 1) or longer (< 1) vocal tract;
- tempo: the frame sequence resampled, so speech is faster (> 1) or slower without a pitch change.
The parameters are the speaker's identity and are recorded in the manifest as they are.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

FRAME_PERIOD_MS = 5.0


@dataclass(frozen=True)
class SpeakerTransform:
    pitch_semitones: float = 0.0
    pitch_range: float = 1.0
    formant_ratio: float = 1.0
    tempo: float = 1.0

    @property
    def is_identity(self) -> bool:
        return self == SpeakerTransform()

    def to_dict(self) -> dict[str, float]:
        return {k: round(v, 4) for k, v in asdict(self).items()}

    @staticmethod
    def from_dict(values: dict[str, float]) -> SpeakerTransform:
        return SpeakerTransform(**values)

    def moved(self, seconds: float) -> float:
        """Where a moment `seconds` into the source falls in the transformed audio (tempo only moves time)."""
        return seconds / self.tempo

    def then(self, other: SpeakerTransform) -> SpeakerTransform:
        """This transform followed by `other`, as one: in log F0 shifts add and scalings multiply, and the
        frequency-axis and time-axis stretches multiply."""
        return SpeakerTransform(
            pitch_semitones=self.pitch_semitones + other.pitch_semitones,
            pitch_range=self.pitch_range * other.pitch_range,
            formant_ratio=self.formant_ratio * other.formant_ratio,
            tempo=self.tempo * other.tempo,
        )


def _warp_envelope(sp: np.ndarray, ratio: float) -> np.ndarray:
    """New envelope at frequency f = old envelope at f / ratio (linear interpolation per frame)."""
    bins = np.arange(sp.shape[1], dtype=np.float64)
    source = np.clip(bins / ratio, 0, sp.shape[1] - 1)
    lo = np.floor(source).astype(int)
    hi = np.minimum(lo + 1, sp.shape[1] - 1)
    frac = source - lo
    return sp[:, lo] * (1 - frac) + sp[:, hi] * frac


def _retime(frames: np.ndarray, tempo: float) -> np.ndarray:
    """Resample a frame sequence to len / tempo frames (nearest frame, keeping voicing decisions)."""
    n_out = max(1, round(len(frames) / tempo))
    index = np.minimum(np.round(np.arange(n_out) * tempo).astype(int), len(frames) - 1)
    return frames[index]


def apply_speaker_transform(audio: np.ndarray, sample_rate: int, transform: SpeakerTransform) -> np.ndarray:
    """Transformed audio (float32); its length is len(audio) / tempo, up to one frame."""
    if transform.is_identity:
        return audio.astype(np.float32, copy=True)
    import pyworld

    x = audio.astype(np.float64)
    f0, t = pyworld.dio(x, sample_rate, frame_period=FRAME_PERIOD_MS, f0_floor=60.0, f0_ceil=600.0)
    f0 = pyworld.stonemask(x, f0, t, sample_rate)
    sp = pyworld.cheaptrick(x, f0, t, sample_rate)
    ap = pyworld.d4c(x, f0, t, sample_rate)

    voiced = f0 > 0
    if voiced.any():
        log_f0 = np.log(f0[voiced])
        mean = log_f0.mean()
        log_f0 = mean + (log_f0 - mean) * transform.pitch_range + np.log(2.0) * transform.pitch_semitones / 12
        f0 = f0.copy()
        f0[voiced] = np.exp(log_f0)
    if transform.formant_ratio != 1.0:
        sp = _warp_envelope(sp, transform.formant_ratio)
    if transform.tempo != 1.0:
        f0, sp, ap = (_retime(a, transform.tempo) for a in (f0, sp, ap))
    y = pyworld.synthesize(
        np.ascontiguousarray(f0),
        np.ascontiguousarray(sp),
        np.ascontiguousarray(ap),
        sample_rate,
        FRAME_PERIOD_MS,
    )
    # Keep the input's peak level: resynthesis changes the gain a little.
    peak_in, peak_out = np.abs(audio).max(initial=0.0), np.abs(y).max(initial=0.0)
    if peak_out > 0:
        y *= peak_in / peak_out
    return y.astype(np.float32)


def sample_transform(rng: np.random.Generator, ranges: dict[str, list[float]]) -> SpeakerTransform:
    """A speaker drawn uniformly from per-parameter [low, high] ranges (absent = unchanged)."""
    values = {name: float(rng.uniform(*ranges[name])) for name in sorted(ranges)}
    return SpeakerTransform(**values)
