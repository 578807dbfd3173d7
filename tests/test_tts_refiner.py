"""The vocoder refiner starts as the identity, streams in chunks of any size, keeps a fixed-size state, and its
recipe trains, resumes and exports."""

import json
import math
import shutil

import numpy as np
import pytest
import torch

from sonare.tts.acoustic import FRAME_DIM, HOP, LOG_AP_FLOOR
from sonare.tts.refiner import RefinedVocoder, VocoderRefiner
from sonare.tts.vocoder import HarmonicNoiseVocoder
from tests.test_tts_vocoder import steady_frames


def speech_like_frames() -> torch.Tensor:
    a = steady_frames(60, 120.0, 1.0, 0.01, LOG_AP_FLOOR)
    a[20:40, 0] = math.log(170.0)
    a[40:, 1] = 0.0  # an unvoiced stretch
    return a


def trained_looking_refiner() -> VocoderRefiner:
    """A refiner whose output layer is no longer zero, so it really changes magnitude and phase."""
    torch.manual_seed(0)
    refiner = VocoderRefiner(dim=32, layers=2, kernel=5)
    with torch.no_grad():
        refiner.out.weight.normal_(0, 0.05)
    return refiner.eval()


@torch.no_grad()
def test_an_untrained_refiner_reproduces_the_vocoder_one_hop_later_to_the_last_sample():
    frames = speech_like_frames()
    plain = HarmonicNoiseVocoder()
    plain_pcm, plain_state = plain.run(frames[None], plain.new_state(1))
    refined = RefinedVocoder(VocoderRefiner(dim=32, layers=2))
    pcm, state = refined.run(frames[None], refined.new_state(1))
    whole_plain = torch.cat([plain_pcm, plain.pending(plain_state)], dim=1)[0]
    whole_refined = torch.cat([pcm, refined.pending(state)], dim=1)[0]
    assert len(whole_refined) == len(whole_plain) + HOP
    assert torch.allclose(whole_refined[HOP:], whole_plain, atol=1e-5)


@torch.no_grad()
def test_chunks_and_rows_of_any_length_agree_with_one_pass():
    vocoder = RefinedVocoder(trained_looking_refiner())
    a, b = speech_like_frames(), speech_like_frames().flip(0)
    whole_a, _ = vocoder.run(a[None], vocoder.new_state(1))
    whole_b, _ = vocoder.run(b[None], vocoder.new_state(1))
    assert not torch.allclose(whole_a[0, HOP:], HarmonicNoiseVocoder().render(a)[:-HOP], atol=1e-3)

    # two rows stepped together; row b gets fewer valid frames per chunk, and its padding frames are garbage
    state, out_a, out_b, done_b = vocoder.new_state(2), [], [], 0
    for start, size in ((0, 1), (1, 7), (8, 16), (24, 3), (27, 33)):
        n_b = min(max(size - 2, 1), 60 - done_b)
        chunk_b = torch.full((size, a.shape[1]), 9.0)
        chunk_b[:n_b] = b[done_b : done_b + n_b]
        pcm, state = vocoder.run(torch.stack([a[start : start + size], chunk_b]), state, torch.tensor([size, n_b]))
        out_a.append(pcm[0])
        out_b.append(pcm[1, : n_b * HOP])
        done_b += n_b
    assert torch.allclose(torch.cat(out_a), whole_a[0], atol=2e-4)
    assert torch.allclose(torch.cat(out_b), whole_b[0, : done_b * HOP], atol=2e-4)


def test_state_is_fixed_size():
    refiner = VocoderRefiner(dim=32, layers=2, kernel=5)
    vocoder = RefinedVocoder(refiner)
    per_row = HarmonicNoiseVocoder().new_state(1).nbytes_per_row() + (2 * HOP + FRAME_DIM + 2 * 4 * 32) * 4
    assert vocoder.new_state(3).nbytes_per_row() == per_row


@pytest.mark.slow
def small_recipe(fixture_corpus, tmp_path, **overrides):
    """A refiner recipe on the fixture corpus's first TTS speaker, tiny enough to run in a test."""
    from sonare.data.manifest import read_manifest
    from sonare.train.refiner import RefinerTrainConfig

    manifest = fixture_corpus / "manifest.jsonl"
    speaker = next(r["speaker"] for r in read_manifest(manifest) if r["split"] == "train" and "tts" in r["tasks"])
    return RefinerTrainConfig(
        manifests=[str(manifest)],
        frames_dir=str(tmp_path / "frames"),
        run_dir=str(tmp_path / "run"),
        speaker=speaker,
        val_clips=1,
        model={"dim": 16, "layers": 1, "kernel": 3, "points": 8},
        batch=2,
        segment_frames=12,
        warm_frames=4,
        threads=1,
        **overrides,
    )


def test_recipe_trains_resumes_and_exports_only_a_refiner_that_beats_the_vocoder(fixture_corpus, tmp_path):
    from sonare.train.refiner import export, train
    from sonare.tts import load_default
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.tts.weights import ASSET_DIR

    # the last two steps train with the discriminators
    cfg = small_recipe(fixture_corpus, tmp_path, steps=2, val_every=2, adversarial_from=3)
    best = train(cfg, progress=False)
    before = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["discriminators"]
    cfg.steps = 4  # rerunning continues from the checkpoint instead of starting over
    train(cfg, progress=False)
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if "val_dnsmos" in r] == [2, 4]
    after = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["discriminators"]
    assert any(not torch.equal(before[k], after[k]) for k in before)  # they trained from step 3 on

    # export follows the validation verdict of the best step
    ckpt = torch.load(best, weights_only=False)
    out = tmp_path / "model"
    out.mkdir()
    for name in ("tts.safetensors", "voices.json"):
        shutil.copy(ASSET_DIR / name, out / name)
    ckpt["scores"] = {"refined": 2.0, "vocoder": 2.1}
    torch.save(ckpt, best)
    with pytest.raises(SystemExit, match="no better than the vocoder"):
        export(cfg, str(out))
    ckpt["scores"] = {"refined": 2.2, "vocoder": 2.1}
    torch.save(ckpt, best)
    export(cfg, str(out))
    model = load_default(out)  # the refiner beside the TTS weights is picked up
    assert isinstance(model.vocoder, RefinedVocoder) and model.vocoder.refiner.config()["points"] == 8
    audio, _ = model.synthesize("Hello world.", SynthesisOptions(VoiceSpec(id=model.default_voice)))
    assert len(audio) > 0.3 * model.sample_rate and np.isfinite(audio).all()


def test_recipe_stops_validated_and_saved_when_its_minutes_are_up(fixture_corpus, tmp_path):
    from sonare.train.refiner import train

    # already over after the first step
    cfg = small_recipe(fixture_corpus, tmp_path, steps=1000, val_every=500, max_minutes=0.0)
    best = train(cfg, progress=False)
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if "val_dnsmos" in r] == [1]
    assert torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["step"] == 1
    assert torch.load(best, weights_only=False)["step"] == 1
