"""The TTS recipe runs end to end on the fixture corpus: train a few steps, resume, export, load, speak."""

from pathlib import Path

import numpy as np
import pytest

from sonare.train.tts import TTSTrainConfig, export, recipe_examples, train


@pytest.mark.slow
def test_smoke_recipe_trains_resumes_exports_and_speaks(fixture_corpus, tmp_path):
    cfg = TTSTrainConfig.load(Path(__file__).parents[1] / "configs" / "tts-smoke.yaml")
    cfg.manifests = [str(fixture_corpus / "manifest.jsonl")]
    cfg.run_dir = str(tmp_path / "run")
    cfg.steps = 3
    ckpt = train(cfg, progress=False)
    first = ckpt.stat().st_mtime_ns
    cfg.steps = 6  # rerunning continues from the checkpoint instead of starting over
    train(cfg, progress=False)
    log = (tmp_path / "run" / "log.jsonl").read_text()
    assert '"step": 6' in log and ckpt.stat().st_mtime_ns != first
    assert list((tmp_path / "run" / "val").glob("step000006-0.wav"))
    cfg.model = {**cfg.model, "frame_layers": 2}  # a recipe that grows the run's model goes on from its checkpoint
    cfg.steps = 7
    train(cfg, progress=False)
    assert '"step": 7' in (tmp_path / "run" / "log.jsonl").read_text()

    from sonare.tts import builtin_voices, load_default
    from sonare.tts.adapt import ADAPTATION_DIM
    from sonare.tts.messages import SynthesisOptions, VoiceSpec

    out = export(cfg, tmp_path / "export")
    voices = builtin_voices(out)
    # every voice: its 8-number speaker vector, unadapted (a 6-step model's speech cannot be measured, so the
    # export leaves it uncalibrated), and the profile cloning starts from
    assert voices and all(len(v["embedding"]) == 8 + ADAPTATION_DIM for v in voices)
    assert all(v["profile"]["bandwidth_hz"] > 0 and not any(v["embedding"][8:]) for v in voices)
    model = load_default(out)
    audio, _ = model.synthesize("Hello world.", SynthesisOptions(VoiceSpec(id=voices[0]["id"])))
    assert audio.dtype == np.float32 and np.isfinite(audio).all()


def test_a_recipes_envelope_chooses_its_frames_and_their_cache(fixture_corpus, tmp_path):
    cfg = TTSTrainConfig(manifests=[str(fixture_corpus / "manifest.jsonl")], run_dir=str(tmp_path), workers=1)
    cheaptrick = recipe_examples(cfg, progress=False)[0].frames_path
    cfg.envelope = "smoothed-power"
    smoothed = recipe_examples(cfg, progress=False)[0].frames_path
    assert (cheaptrick.parent.name, smoothed.parent.name) == ("frames-dio-cheaptrick", "frames-dio-smoothed-power")
    a, b = np.load(cheaptrick), np.load(smoothed)
    assert np.array_equal(a[:, :2], b[:, :2])  # the same pitch and voicing
    assert not np.allclose(a[:, 2:], b[:, 2:], atol=0.05)  # another envelope and aperiodicity


def test_a_resumed_model_grows_deeper_without_changing_what_it_speaks():
    import torch

    from sonare.train.tts import resumed_model
    from sonare.tts.model import TTSConfig, TTSModel

    torch.manual_seed(0)
    small = TTSModel(
        TTSConfig(
            vocab_size=20,
            n_speakers=2,
            d_text=32,
            text_layers=1,
            d_frame=32,
            frame_layers=1,
            d_speaker=8,
            d_state=8,
            head_dim=16,
        )
    ).eval()
    ckpt = {"model": small.state_dict(), "model_config": small.cfg.to_dict()}
    deeper = resumed_model(ckpt, {"text_layers": 2, "frame_layers": 3}).eval()
    assert (len(deeper.encoder.ssm.layers), len(deeper.decoder.ssm.layers)) == (2, 3)
    ids, durations = torch.randint(1, 20, (2, 7)), torch.randint(1, 4, (2, 7))
    speakers = torch.tensor([0, 1])
    with torch.no_grad():
        before, after = small(ids, speakers, durations, 20), deeper(ids, speakers, durations, 20)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(before, after, strict=True))  # durations, frames
    assert resumed_model(ckpt, {}).cfg == small.cfg  # the recipe's depth unchanged: the checkpoint's model
    with pytest.raises(SystemExit, match="grow, not shrink"):
        resumed_model({"model": deeper.state_dict(), "model_config": deeper.cfg.to_dict()}, {"frame_layers": 1})
