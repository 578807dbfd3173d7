"""The speaker encoder's recipe on the fixture corpus, its feature warp, and the shipped weights on real speech."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from sonare.audio.features import N_MELS
from sonare.train.voices import VoicesTrainConfig, export, train, warp_features
from sonare.voices.profile_net import FEATURE_DIM, load_profile_net

LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")


def test_recipe_renders_clips_trains_resumes_and_exports(fixture_corpus, tmp_path):
    from sonare.tts import builtin_voices
    from sonare.voices.encoder import SpeakerEncoder

    cfg = VoicesTrainConfig(
        manifests=[str(fixture_corpus / "manifest.jsonl")], run_dir=str(tmp_path / "run"),
        model={"channels": 16, "hidden": 32}, clips_per_speaker=3, batch=4, steps=4, warmup=1, val_every=2,
        val_fraction=0.5, acoustic={"noise": {"prob": 1.0, "kinds": ["pink"], "snr_db": [10, 20]}}, workers=1,
    )  # fmt: skip
    train(cfg, progress=False)
    bank = sorted((tmp_path / "run" / "bank").glob("*.npz"))
    assert bank and all(len(np.load(f)["lengths"]) == 3 for f in bank)
    cfg.steps = 6
    train(cfg, progress=False)  # resumes from step 4 on the same bank
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    validations = [r for r in log if "val" in r]
    assert [r["step"] for r in validations] == [2, 4, 6]
    assert validations[-1]["val"]["net_clips"] > 0 and validations[-1]["val"]["net_envelope"] >= 0.0

    net = load_profile_net(export(cfg, tmp_path / "export"))
    speech = np.concatenate([sf.read(f, dtype="float32")[0] for f in sorted(LIBRIVOX.glob("*.wav"))][:3])
    embedding = SpeakerEncoder(builtin_voices(), net).embed(speech, 16000)
    assert np.isfinite(embedding).all()


def test_warping_features_moves_spectrum_and_pitch_together():
    rng = np.random.default_rng(0)
    features = torch.from_numpy(rng.normal(size=(2, 10, FEATURE_DIM)).astype(np.float32))
    features[..., N_MELS + 1] = torch.tensor([1.0, 0.0]).repeat(5)  # alternate voiced and unvoiced frames
    same = warp_features(features, torch.ones(2))
    torch.testing.assert_close(same, features, atol=1e-4, rtol=0)
    up = warp_features(features, torch.tensor([1.1, 1.1]))
    shift = up[..., N_MELS] - features[..., N_MELS]
    torch.testing.assert_close(shift[:, ::2], torch.full((2, 5), float(np.log(1.1))))
    assert shift[:, 1::2].abs().max() == 0  # unvoiced frames carry no pitch
    # A spectral peak moves up by the ratio: its mel bin index rises.
    peaked = torch.zeros(1, 1, FEATURE_DIM)
    peaked[0, 0, 30] = 1.0
    assert int(warp_features(peaked, torch.tensor([1.15]))[0, 0, :N_MELS].argmax()) > 30


@pytest.mark.skipif(not LIBRIVOX.is_dir(), reason="pocketsphinx-testdata is not installed (make system-deps)")
def test_the_shipped_encoder_hears_a_real_voice_through_noise():
    """A real reader's clip and the same clip at 10 dB babble noise: the trained encoder's profiles agree
    more closely than the direct analysis's do."""
    from sonare.data.augment import add_noise
    from sonare.voices.encoder import analyse, estimate

    net = load_profile_net()
    speech = np.concatenate([sf.read(f, dtype="float32")[0] for f in sorted(LIBRIVOX.glob("*.wav"))])[: 12 * 16000]
    noisy = add_noise(speech, "babble", 10.0, seed=1)

    def gap(a, b) -> tuple[float, float]:
        heard = np.arange(len(a.envelope)) < 50  # below 7 kHz
        ea, eb = np.asarray(a.envelope)[heard], np.asarray(b.envelope)[heard]
        shape = np.sqrt((((ea - ea.mean()) - (eb - eb.mean())) ** 2).mean())
        return abs(a.median_lf0 - b.median_lf0) * 12 / np.log(2), shape

    net_pitch, net_shape = gap(estimate(speech, 16000, net), estimate(noisy, 16000, net))
    _, analysis_shape = gap(analyse(speech, 16000), analyse(noisy, 16000))
    assert net_pitch < 1.0  # semitones
    assert net_shape < analysis_shape
