"""Voice adaptation: pitch calibration and its composition with transforms, and the shipped voices' calibration."""

import numpy as np
import pytest
import torch

from sonare.tts.acoustic import FRAME_DIM, N_ENV
from sonare.tts.adapt import (
    ENVELOPE,
    RANGE,
    SHIFT,
    WARP,
    adapt_frames,
    calibration,
    compose_pitch,
    from_transform,
    identity,
)


def frames_with_lf0(lf0: np.ndarray) -> torch.Tensor:
    frames = torch.zeros(1, len(lf0), FRAME_DIM)
    frames[0, :, 0] = torch.tensor(lf0, dtype=torch.float32)
    frames[0, :, 2 : 2 + N_ENV] = torch.linspace(-2.0, -9.0, N_ENV)
    return frames


def test_calibration_moves_the_models_median_and_spread_to_the_teachers():
    a = calibration(model_median=5.0, model_spread=0.1, teacher_median=5.2, teacher_spread=0.25)
    out = adapt_frames(frames_with_lf0(np.array([4.9, 5.0, 5.1])), torch.from_numpy(a)[None])[0, :, 0]
    np.testing.assert_allclose(out.numpy(), [4.95, 5.2, 5.45], atol=1e-5)


def test_composed_pitch_changes_equal_applying_them_in_turn():
    first = calibration(5.1, 0.16, 5.16, 0.23)
    second = from_transform(5.16, pitch_semitones=3.6, pitch_range=0.83, formant_ratio=1.12)
    second[ENVELOPE] = np.linspace(0.3, -0.3, N_ENV)
    frames = frames_with_lf0(np.linspace(4.6, 5.7, 12))
    in_turn = adapt_frames(adapt_frames(frames, torch.from_numpy(first)[None]), torch.from_numpy(second)[None])
    composed = compose_pitch(first, second)
    at_once = adapt_frames(frames, torch.from_numpy(composed)[None])
    torch.testing.assert_close(at_once, in_turn, atol=1e-5, rtol=0)
    assert composed[WARP] == second[WARP] and np.array_equal(composed[ENVELOPE], second[ENVELOPE])


def test_an_uncalibrated_voice_passes_a_change_through_and_a_first_change_must_be_pitch_alone():
    second = from_transform(5.16, pitch_semitones=-2.5, pitch_range=1.1)
    assert np.array_equal(compose_pitch(identity(), second), second)
    warped = identity()
    warped[WARP] = 0.1
    with pytest.raises(ValueError, match="pitch alone"):
        compose_pitch(warped, second)


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
