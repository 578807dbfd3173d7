"""Voice adaptation: a trained voice's calibration, its composition with transforms, the shipped voices'."""

import numpy as np
import pytest
import torch

from sonare.tts.acoustic import FRAME_DIM, N_ENV
from sonare.tts.adapt import ENVELOPE, RANGE, SHIFT, WARP, adapt_frames, compose, from_transform, identity
from sonare.voices.encoder import VoiceProfile, calibration


def profile(median: float, spread: float, tilt: float) -> VoiceProfile:
    return VoiceProfile(median, spread, tuple(np.linspace(-3.0, -3.0 - tilt, N_ENV).tolist()), 11025.0)


def frames_with_lf0(lf0: np.ndarray) -> torch.Tensor:
    frames = torch.zeros(1, len(lf0), FRAME_DIM)
    frames[0, :, 0] = torch.tensor(lf0, dtype=torch.float32)
    frames[0, :, 2 : 2 + N_ENV] = torch.linspace(-2.0, -9.0, N_ENV)
    return frames


def test_calibration_moves_the_models_pitch_and_envelope_shape_to_the_teachers():
    a = calibration(profile(5.0, 0.1, tilt=4.0), profile(5.2, 0.18, tilt=6.0))
    frames = frames_with_lf0(np.array([4.9, 5.0, 5.1]))
    out = adapt_frames(frames, torch.from_numpy(a)[None])[0]
    np.testing.assert_allclose(out[:, 0].numpy(), [5.02, 5.2, 5.38], atol=1e-5)
    # The teacher's envelope falls 2 more (log power) from bottom to top; the level is left alone.
    change = (out[:, 2 : 2 + N_ENV] - frames[0, :, 2 : 2 + N_ENV]).numpy()
    assert change[:, 4] - change[:, -5] == pytest.approx(2.0 * (N_ENV - 9) / (N_ENV - 1), abs=1e-3)
    assert change.mean() == pytest.approx(0.0, abs=1e-5)


def test_composed_changes_equal_applying_them_in_turn():
    first = calibration(profile(5.1, 0.16, tilt=4.0), profile(5.16, 0.23, tilt=5.0))
    second = from_transform(5.16, pitch_semitones=3.6, pitch_range=0.83, formant_ratio=1.12)
    second[ENVELOPE] = np.linspace(0.3, -0.3, N_ENV)
    frames = frames_with_lf0(np.linspace(4.6, 5.7, 12))
    in_turn = adapt_frames(adapt_frames(frames, torch.from_numpy(first)[None]), torch.from_numpy(second)[None])
    composed = compose(first, second)
    at_once = adapt_frames(frames, torch.from_numpy(composed)[None])
    torch.testing.assert_close(at_once, in_turn, atol=1e-5, rtol=0)
    assert composed[WARP] == second[WARP]


def test_an_uncalibrated_voice_passes_a_change_through_and_a_first_change_must_not_warp():
    second = from_transform(5.16, pitch_semitones=-2.5, pitch_range=1.1)
    assert np.array_equal(compose(identity(), second), second)
    warped = identity()
    warped[WARP] = 0.1
    with pytest.raises(ValueError, match="must not warp"):
        compose(warped, second)


def test_the_shipped_default_voice_speaks_with_a_wider_pitch_range_than_its_uncalibrated_speaker():
    """Against the real weights: measured as the teacher's profile was, the calibrated default voice spreads
    its pitch about exp(RANGE) times as wide as the same speaker uncalibrated, nearer its teacher's spread."""
    from sonare.text.sentences import generate_sentences
    from sonare.tts import builtin_voices, load_default
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.voices.encoder import analyse

    torch.set_num_threads(1)
    tts = load_default()
    joe = next(v for v in builtin_voices() if v["id"] == "joe")
    d = tts.model.cfg.d_speaker
    adaptation = np.asarray(joe["embedding"][d:])
    assert adaptation[RANGE] > 0.2 and abs(adaptation[SHIFT]) < 0.2 and not adaptation[WARP]
    tts.voices["uncalibrated"] = torch.cat([tts.voices["joe"][:d], torch.from_numpy(identity())])

    sentences = generate_sentences(12, seed=5, split="train")
    spoken = {}
    for voice in ("joe", "uncalibrated"):
        options = SynthesisOptions(VoiceSpec(voice))
        spoken[voice] = analyse(np.concatenate([tts.synthesize(s, options)[0] for s in sentences]), tts.sample_rate)
    ratio = spoken["joe"].spread_lf0 / spoken["uncalibrated"].spread_lf0
    assert ratio == pytest.approx(np.exp(adaptation[RANGE]), rel=0.15)
    shift = spoken["joe"].median_lf0 - spoken["uncalibrated"].median_lf0
    assert shift == pytest.approx(adaptation[SHIFT], abs=0.02)
    teacher = joe["profile"]["spread_lf0"]
    assert abs(spoken["joe"].spread_lf0 - teacher) < abs(spoken["uncalibrated"].spread_lf0 - teacher)
