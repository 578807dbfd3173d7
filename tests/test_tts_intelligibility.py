"""The intelligibility loss: a frozen recogniser reading rendered TTS frames, against the shipped STT weights."""

from pathlib import Path

import numpy as np
import pytest
import torch

from sonare.train.intelligibility import RecogniserLoss, text_targets, to_recogniser_rate
from sonare.train.tts import TTSTrainConfig, collate, losses, recipe_examples
from sonare.tts.acoustic import SAMPLE_RATE
from sonare.tts.dataset import load_frames

SHIPPED_STT = Path(__file__).parents[1] / "sonare" / "assets" / "stt"


def test_text_targets_pad_and_mark_what_cannot_be_spelt():
    targets, lengths = text_targets(["hi there", "Ünïcode 東京", "ok"])
    assert lengths.tolist() == [8, 0, 2]
    assert targets.shape == (3, 8) and targets[2, 2:].eq(0).all() and targets[0].ne(0).all()


def test_resampling_keeps_a_tone_its_frequency_and_level():
    t = torch.arange(SAMPLE_RATE) / SAMPLE_RATE
    out = to_recogniser_rate(0.5 * torch.sin(2 * torch.pi * 1000.0 * t)[None])
    assert out.shape == (1, 16000)
    spectrum = torch.fft.rfft(out[0]).abs()
    assert int(spectrum.argmax()) == 1000  # 1 Hz bins over one second
    assert float(out[0, 100:-100].abs().max()) == pytest.approx(0.5, abs=0.01)


@pytest.fixture(scope="module")
def teacher_clips(fixture_corpus, tmp_path_factory):
    cfg = TTSTrainConfig(
        manifests=[str(fixture_corpus / "manifest.jsonl")], run_dir=str(tmp_path_factory.mktemp("run")), workers=1
    )
    first, *rest = recipe_examples(cfg, progress=False)
    return [first, next(e for e in rest if e.text != first.text)]


def test_the_recogniser_reads_a_clips_own_words_better_than_the_same_words_reordered(teacher_clips):
    critic = RecogniserLoss(SHIPPED_STT)
    a = teacher_clips[0]
    frames = torch.from_numpy(load_frames(a))[None].requires_grad_(True)
    lengths = torch.tensor([a.n_frames])
    own = critic(frames, lengths, *text_targets([a.text]))
    shuffled = " ".join(reversed(a.text.split()))  # the same letters, so alike in length, in another order
    other = critic(frames, lengths, *text_targets([shuffled]))
    assert shuffled != a.text and own.item() < 0.5 * other.item()
    own.backward()
    grad = frames.grad[0]
    assert torch.isfinite(grad).all()
    assert grad[:, 0].eq(0).all()  # F0 is held: its phase gradient has no local meaning
    assert grad[:, 2:].abs().sum() > 0  # the envelope and aperiodicity are what it moves


def test_a_recipe_with_a_critic_adds_what_it_hears_to_the_loss(teacher_clips):
    from sonare.text.inventory import vocab_size
    from sonare.tts.model import TTSConfig, TTSModel

    torch.manual_seed(0)
    model = TTSModel(TTSConfig(vocab_size=vocab_size(), n_speakers=2, d_text=32, d_frame=32, d_speaker=8))
    batch = collate(teacher_clips, {e.speaker: 0 for e in teacher_clips})
    cfg = TTSTrainConfig(manifests=[], asr_weight=0.5)
    plain = losses(model, batch, cfg)
    heard = losses(model, batch, cfg, RecogniserLoss(SHIPPED_STT))
    assert "heard" not in plain and heard["heard"].item() > 0
    assert heard["loss"].item() == pytest.approx(plain["loss"].item() + 0.5 * heard["heard"].item(), rel=1e-5)
    heard["loss"].backward()
    grads = [p.grad for p in model.decoder.parameters() if p.grad is not None]
    assert grads and all(np.isfinite(g.numpy()).all() for g in grads)
