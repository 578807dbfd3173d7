"""The speaker encoder: a clip of someone speaking -> a voice embedding the TTS model speaks with.

A voice is described by a profile in the terms of the WORLD analysis the TTS frames come from: the median
and spread of log F0 over voiced frames, and the average log envelope of voiced frames. (Aperiodicity, which
WORLD's D4C measures at twice the cost of everything else together, made no measurable difference to
similarity, so it is not part of the profile.) Two ways measure one:

  - `analyse`: WORLD's pitch tracker and envelope on the clip itself. Exact on clean speech, so it measures
    what is known to be clean: each built-in voice's profile (shipped in voices.json, taken at export from
    its teacher's audio in the corpus, the speech the model learned to reproduce) and the trained encoder's
    targets.
  - `estimate`: the trained encoder (`sonare.voices.profile_net`, shipped weights) predicts from a clip the
    profile `analyse` would measure on a minute of that speaker's clean speech: it sees through the noise,
    rooms, phone lines and short samples that real clips bring. Cloning uses it.

Cloning then compares like with like:

  1. the base is the profiled voice whose pitch is nearest the clip's (the smallest pitch change sounds best);
  2. the adaptation (`sonare.tts.adapt`) shifts and scales pitch to the clip's, picks the formant warp that
     best matches the base's average envelope to the clip's, and keeps what is left of the difference in
     timbre as a smoothed spectral correction (without overall level: that is volume).

No speaker identity is looked up, so it works for any voice, heard in training or not; what it cannot copy is
accent and rhythm (the base voice's). Clips that are not usable speech are refused with a `CloneError` that
says why: too short or too long, silence, noise or music, too little voiced speech.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from sonare.tts.acoustic import ANALYSIS_FFT, N_ENV, SAMPLE_RATE, mel_points
from sonare.tts.adapt import ADAPTATION_DIM, ENVELOPE, PIVOT, RANGE, SHIFT, WARP, compose, identity, warp_envelope
from sonare.voices.profile_net import BANDWIDTH_HZ as NET_BANDWIDTH_HZ
from sonare.voices.profile_net import FRAME_MS as ANALYSIS_PERIOD_MS
from sonare.voices.profile_net import SAMPLE_RATE as NET_RATE
from sonare.voices.profile_net import ProfileNet, clip_features, load_profile_net, pitch_track

MIN_CLIP_SECONDS = 3.0
MAX_CLIP_SECONDS = 60.0
MIN_VOICED_SECONDS = 1.5
SILENCE_DB = -45.0  # frames this far below the clip's loudest are pauses, not voice
WARPS = np.linspace(-0.3, 0.3, 61)  # formant ratios 0.74-1.35, in log steps of 0.01
# Cost per squared log-ratio. Against a transformed copy of the base voice the right warp wins by 1 or more
# (mean squared residual, log power); against a different real speaker the residual is 1-2 everywhere with
# shallow, spurious minima at the edges, which this prior keeps a warp from chasing.
WARP_PRIOR = 5.0
RANGE_LIMIT = 0.7  # pitch excursions scaled by at most 2x either way
ENVELOPE_LIMIT = 3.0  # natural-log power, about 13 dB
SMOOTHING = 5  # envelope points averaged: a correction of timbre, not of single harmonics
# Speech alternates voiced sounds with consonants and pauses several times a second, so its level swings
# widely (about 20 dB between the 10th and 90th percentile of frames, 14 dB under noise at 10 dB SNR) and its
# voiced runs are short; sustained tones and chords (music, hum) hold their level and stay voiced, and noise
# is hardly voiced at all.
MIN_LEVEL_RANGE_DB = 6.0
MAX_MEDIAN_VOICED_RUN_SECONDS = 0.6
MIN_VOICED_FRACTION, MAX_VOICED_FRACTION = 0.2, 0.95


class CloneError(ValueError):
    """The clip cannot be cloned; the message says why."""


@dataclass(frozen=True)
class VoiceProfile:
    median_lf0: float  # over voiced frames: robust to pitch-tracking errors
    spread_lf0: float  # half the 16-84 percentile spread
    envelope: tuple[float, ...]  # (N_ENV,) average log envelope of voiced frames
    bandwidth_hz: float  # the clip's Nyquist frequency: nothing above it was heard

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> VoiceProfile:
        return VoiceProfile(
            float(data["median_lf0"]),
            float(data["spread_lf0"]),
            tuple(float(x) for x in data["envelope"]),
            float(data["bandwidth_hz"]),
        )


def analyse(audio: np.ndarray, sample_rate: int) -> VoiceProfile:
    """The WORLD profile of the voice in a mono clip at any sample rate; CloneError if it is not usable speech.

    Exact on clean speech: what built-in voices' profiles and the trained encoder's targets are measured with.
    """
    import pyworld

    from sonare.audio.resample import resample

    x = _checked(audio, sample_rate)
    if sample_rate != SAMPLE_RATE:
        x = resample(x.astype(np.float32), sample_rate, SAMPLE_RATE).astype(np.float64)
    x = x / np.abs(x).max() * 0.5  # the profile must not depend on the recording level

    f0, times = pitch_track(x, SAMPLE_RATE)
    voiced = _voiced_speech(x, SAMPLE_RATE, f0, times)

    sp = pyworld.cheaptrick(x, f0[voiced], times[voiced], SAMPLE_RATE, fft_size=ANALYSIS_FFT)
    bins = np.arange(ANALYSIS_FFT // 2 + 1) * SAMPLE_RATE / ANALYSIS_FFT
    env = np.log(np.maximum(np.stack([np.interp(mel_points(N_ENV), bins, row) for row in sp]), 1e-10))
    # Median and half the 16-84 percentile spread: robust to DIO's occasional octave errors.
    lo, median, hi = np.percentile(np.log(f0[voiced]), [16, 50, 84])
    return VoiceProfile(
        float(median),
        float((hi - lo) / 2),
        tuple(env.mean(0).tolist()),
        float(min(sample_rate, SAMPLE_RATE) / 2),
    )


def estimate(audio: np.ndarray, sample_rate: int, net: ProfileNet) -> VoiceProfile:
    """The profile of the voice in a clip as the trained encoder predicts it; CloneError if it is not speech."""
    from sonare.audio.resample import resample

    x = _checked(audio, sample_rate)
    x16 = resample(x.astype(np.float32), sample_rate, NET_RATE) if sample_rate != NET_RATE else x
    features, f0 = clip_features(x16)
    times = (np.arange(len(f0)) + 1) * ANALYSIS_PERIOD_MS / 1000  # frame i is centred near (i + 1) * 20 ms
    _voiced_speech(np.asarray(x16, np.float64), NET_RATE, f0, times)
    profile = net.profile(features).double().numpy()
    return VoiceProfile(
        float(profile[0]),
        float(max(profile[1], 1e-3)),
        tuple(profile[2:].tolist()),
        float(min(sample_rate / 2, NET_BANDWIDTH_HZ)),
    )


def _checked(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """The clip as float64 if its length and samples can be a voice; CloneError otherwise."""
    seconds = len(audio) / sample_rate
    if seconds < MIN_CLIP_SECONDS:
        raise CloneError(f"the clip is {seconds:.1f} s long; at least {MIN_CLIP_SECONDS:.0f} s of speech is needed")
    if seconds > MAX_CLIP_SECONDS:
        raise CloneError(f"the clip is {seconds:.0f} s long; at most {MAX_CLIP_SECONDS:.0f} s is accepted")
    x = np.asarray(audio, np.float64)
    if not np.isfinite(x).all():
        raise CloneError("the clip holds samples that are not numbers")
    if np.abs(x).max() < 1e-4:
        raise CloneError("the clip is silent")
    return x


def _voiced_speech(x: np.ndarray, rate: int, f0: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Frames (at `times`) that are voiced and not pauses; CloneError unless the clip sounds like speech."""
    hop = int(rate * ANALYSIS_PERIOD_MS / 1000)
    energy = np.array([np.mean(x[max(0, i - hop) : i + hop] ** 2) for i in (times * rate).astype(int)])
    level_db = 10 * np.log10(energy + 1e-12)
    sounding = level_db > level_db.max() + SILENCE_DB
    voiced = (f0 > 0) & sounding
    _check_speech(voiced, level_db[sounding])
    return voiced


def _check_speech(voiced: np.ndarray, sounding_db: np.ndarray) -> None:
    """voiced: per frame; sounding_db: the level of the frames that are not silence."""
    frame_s = ANALYSIS_PERIOD_MS / 1000
    if voiced.sum() * frame_s < MIN_VOICED_SECONDS:
        raise CloneError(
            f"the clip has {voiced.sum() * frame_s:.1f} s of voiced speech; at least {MIN_VOICED_SECONDS} s is needed"
        )
    fraction = voiced.sum() / max(1, len(sounding_db))
    level_range = np.percentile(sounding_db, 90) - np.percentile(sounding_db, 10)
    runs = _run_lengths(voiced) * frame_s
    if (
        not MIN_VOICED_FRACTION <= fraction <= MAX_VOICED_FRACTION
        or np.median(runs) > MAX_MEDIAN_VOICED_RUN_SECONDS
        or level_range < MIN_LEVEL_RANGE_DB
    ):
        raise CloneError("the clip does not sound like speech (music, a tone or noise?); send someone speaking")


def _run_lengths(mask: np.ndarray) -> np.ndarray:
    """Lengths of the runs of True in a boolean array."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return np.nonzero(edges == -1)[0] - np.nonzero(edges == 1)[0]


class SpeakerEncoder:
    """Clips -> voice embeddings, against the built-in voices of one TTS model.

    `builtins`: the model's voices as shipped in voices.json ({id, embedding, profile}); those without a
    profile cannot serve as a base.
    """

    def __init__(self, builtins: Sequence[Mapping[str, Any]], net: ProfileNet | None = None):
        self.net = net or load_profile_net()
        self.bases = [
            (np.asarray(v["embedding"], np.float32), VoiceProfile.from_json(v["profile"]))
            for v in builtins
            if v.get("profile")
        ]
        if not self.bases:
            raise ValueError("no built-in voice has a profile to clone from; re-export the TTS model")

    @property
    def embedding_dim(self) -> int:
        return len(self.bases[0][0])

    def embed(self, audio: np.ndarray, sample_rate: int) -> np.ndarray:
        """A clip -> the voice embedding (float32) that speaks like it."""
        return self.adapt(estimate(audio, sample_rate, self.net))

    def adapt(self, clip: VoiceProfile) -> np.ndarray:
        embedding, base = min(self.bases, key=lambda b: abs(b[1].median_lf0 - clip.median_lf0))
        # Relative to the base voice as its teacher spoke (its profile); the base's calibration comes first.
        a = np.zeros(ADAPTATION_DIM, np.float32)
        a[PIVOT] = base.median_lf0
        a[SHIFT] = clip.median_lf0 - base.median_lf0
        a[RANGE] = np.clip(np.log(max(clip.spread_lf0, 1e-3) / max(base.spread_lf0, 1e-3)), -RANGE_LIMIT, RANGE_LIMIT)

        heard_env = mel_points(N_ENV) < clip.bandwidth_hz * 0.95
        target = np.asarray(clip.envelope)
        warped = _warped(np.asarray(base.envelope), WARPS)  # (len(WARPS), N_ENV)
        # Formant positions, not level or tilt (a microphone or a channel changes those): compare the shapes
        # left after removing each one's straight-line trend over the heard band. A mild prior keeps the warp
        # near 1 when the evidence is weak.
        residual = _detrended(warped[:, heard_env]) - _detrended(target[heard_env][None])
        cost = (residual**2).mean(1) + WARP_PRIOR * WARPS**2
        best = int(np.argmin(cost))
        a[WARP] = WARPS[best]

        delta = target - warped[best]
        delta = np.where(heard_env, delta - delta[heard_env].mean(), 0.0)
        a[ENVELOPE] = np.clip(np.where(heard_env, _smoothed(delta), 0.0), -ENVELOPE_LIMIT, ENVELOPE_LIMIT)

        d_speaker = len(embedding) - ADAPTATION_DIM
        return np.concatenate([embedding[:d_speaker], compose(embedding[d_speaker:], a)]).astype(np.float32)


def _detrended(rows: np.ndarray) -> np.ndarray:
    """Each row minus its least-squares straight line."""
    x = np.arange(rows.shape[1], dtype=np.float64)
    design = np.stack([np.ones_like(x), x], axis=1)
    coef, *_ = np.linalg.lstsq(design, rows.T, rcond=None)
    return rows - (design @ coef).T


def _smoothed(envelope: np.ndarray) -> np.ndarray:
    """A moving average over SMOOTHING envelope points: a correction of timbre, not of single harmonics."""
    return np.convolve(np.pad(envelope, SMOOTHING // 2, mode="edge"), np.ones(SMOOTHING) / SMOOTHING, "valid")


def _warped(envelope: np.ndarray, warps: np.ndarray) -> np.ndarray:
    env = torch.as_tensor(envelope, dtype=torch.float64)[None, None, :].expand(len(warps), 1, -1)
    return warp_envelope(env, torch.as_tensor(warps, dtype=torch.float64))[:, 0].numpy()


def calibration(spoken: VoiceProfile, teacher: VoiceProfile) -> np.ndarray:
    """The adaptation that gives a trained voice its teacher's profile: `spoken` measured on the model's speech,
    `teacher` on the teacher's, both with `analyse` on the same texts. Log-F0 median and spread move to the
    teacher's, and the average envelope's shape (not its level, which `analyse` normalises) follows it,
    smoothed as a clone's is."""
    a = identity()
    a[PIVOT] = spoken.median_lf0
    a[SHIFT] = teacher.median_lf0 - spoken.median_lf0
    a[RANGE] = np.clip(np.log(teacher.spread_lf0 / spoken.spread_lf0), -RANGE_LIMIT, RANGE_LIMIT)
    delta = np.asarray(teacher.envelope) - np.asarray(spoken.envelope)
    a[ENVELOPE] = np.clip(_smoothed(delta - delta.mean()), -ENVELOPE_LIMIT, ENVELOPE_LIMIT)
    return a


def teacher_clips(manifests: Sequence[str], speaker: str, seconds: float = 30.0) -> list[tuple[np.ndarray, int, str]]:
    """The first `seconds` of a speaker's untransformed audio in the corpus: (audio, sample rate, text) per clip."""
    from pathlib import Path

    from sonare.audio.io import load_audio
    from sonare.data.manifest import read_manifest

    clips, total = [], 0.0
    for manifest in manifests:  # later manifests are not opened once the first have enough
        for record in read_manifest(manifest):
            if record["speaker"] != speaker or record.get("augment"):
                continue
            audio, rate = load_audio(Path(manifest).parent / record["audio"])
            clips.append((audio, rate, record["text"]))
            total += len(audio) / rate
            if total >= seconds:
                return clips
    if not clips:
        raise ValueError(f"no audio of speaker {speaker!r} in {list(manifests)}")
    return clips


def corpus_profile(clips: Sequence[tuple[np.ndarray, int, str]]) -> VoiceProfile:
    """A built-in voice's profile, measured on its teacher's audio in the training corpus (`teacher_clips`): the
    speech the model learned to reproduce, analysed exactly as a clip is."""
    rate = clips[0][1]
    return analyse(np.concatenate([audio for audio, _, _ in clips])[: int(MAX_CLIP_SECONDS * rate)], rate)
