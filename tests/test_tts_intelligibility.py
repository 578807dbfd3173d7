"""The intelligibility loss: a frozen recogniser reading rendered TTS frames, against the shipped STT weights."""

from pathlib import Path

import numpy as np
import pytest
import torch

from sonare.text import generate_sentences, normalize, split_of
from sonare.text.inventory import BOS_ID, EOS_ID, vocab_size
from sonare.train.intelligibility import (
    FreshTexts,
    RecogniserLoss,
    spoken_freely,
    text_targets,
    to_recogniser_rate,
)
from sonare.train.tts import TTSTrainConfig, collate, fresh_text_loss, losses, recipe_examples
from sonare.tts.acoustic import N_ENV, SAMPLE_RATE
from sonare.tts.dataset import load_frames
from sonare.tts.model import TTSConfig, TTSModel

SHIPPED_STT = Path(__file__).parents[1] / "sonare" / "assets" / "stt"


def test_text_targets_concatenate_and_mark_what_cannot_be_spelt():
    targets, lengths = text_targets(["hi there", "Ünïcode 東京", "ok"])
    assert lengths.tolist() == [8, 0, 2]
    assert targets.tolist() == text_targets(["hi there"])[0].tolist() + text_targets(["ok"])[0].tolist()
    assert targets.ne(0).all()  # no padding: symbol 0 is the CTC blank


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
    frames.grad = None
    critic = RecogniserLoss(SHIPPED_STT, hold_aperiodicity=True)
    critic(frames, lengths, *text_targets([a.text])).backward()
    held = frames.grad[0]
    assert held[:, 2 + N_ENV :].eq(0).all() and held[:, 0].eq(0).all() and held[:, 2 : 2 + N_ENV].abs().sum() > 0


def tiny_model() -> TTSModel:
    torch.manual_seed(0)
    model = TTSModel(TTSConfig(vocab_size=vocab_size(), n_speakers=2, d_text=32, d_frame=32, d_speaker=8))
    with torch.no_grad():
        model.durations.net[-1].bias.fill_(1.4)  # about 3 frames a phoneme, as a trained model speaks
    return model


def test_a_recipe_with_a_critic_adds_what_it_hears_to_the_loss(teacher_clips):
    model = tiny_model()
    batch = collate(teacher_clips, {e.speaker: 0 for e in teacher_clips})
    cfg = TTSTrainConfig(manifests=[], asr_weight=0.5)
    plain = losses(model, batch, cfg)
    heard = losses(model, batch, cfg, RecogniserLoss(SHIPPED_STT))
    assert "heard" not in plain and heard["heard"].item() > 0
    assert heard["loss"].item() == pytest.approx(plain["loss"].item() + 0.5 * heard["heard"].item(), rel=1e-5)
    heard["loss"].backward()
    grads = [p.grad for p in model.decoder.parameters() if p.grad is not None]
    assert grads and all(np.isfinite(g.numpy()).all() for g in grads)


def test_fresh_texts_are_training_sentences_no_clip_speaks():
    recorded = set(generate_sentences(60, seed=3))
    fresh = FreshTexts(recorded, per_step=5, seed=3, pool=200)
    assert len(fresh.sentences) == 140 and not recorded & set(fresh.sentences)
    assert all(split_of(s) == "train" for s in fresh.sentences)
    ids, texts = fresh.draw()
    assert ids.shape[0] == 5 and all(normalize(t) == t for t in texts)
    lengths = ids.ne(0).sum(1)
    assert ids[:, 0].eq(BOS_ID).all() and all(ids[i, n - 1] == EOS_ID for i, n in enumerate(lengths.tolist()))
    assert fresh.draw()[1] != texts  # each step hears other sentences


def test_speaking_freely_takes_the_predicted_durations_and_ignores_padding():
    model = tiny_model()
    ids = torch.tensor([[BOS_ID, 5, 6, 7, EOS_ID, 0, 0], [BOS_ID, 5, 6, 7, EOS_ID, 9, EOS_ID]])
    frames, lengths = spoken_freely(model, ids, torch.tensor([0, 0]))
    with torch.no_grad():
        alone, alone_lengths = spoken_freely(model, ids[:1, :5], torch.tensor([0]))
        predicted = torch.expm1(model.durations(model.encode(ids[:1, :5], model.speakers(torch.tensor([0])))))
    assert lengths[0] == alone_lengths[0] == predicted.clamp(min=0).round().sum() > 5
    assert frames.shape == (2, int(lengths.max()), model.cfg.frame_dim)
    assert torch.allclose(frames[0, : lengths[0]], alone[0], atol=1e-5)  # a row's padding changes nothing


def test_the_fresh_text_loss_trains_the_encoder_and_decoder_not_the_durations():
    model = tiny_model()
    fresh = FreshTexts(set(), per_step=2, seed=0, pool=20)
    loss = fresh_text_loss(model, fresh, speaker=1, critic=RecogniserLoss(SHIPPED_STT))
    assert loss.item() > 0
    loss.backward()
    assert all(p.grad is None for p in model.durations.parameters())
    assert model.speakers.weight.grad[1].abs().sum() > 0 and model.speakers.weight.grad[0].eq(0).all()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.decoder.out.parameters())
    assert model.encoder.embed.weight.grad.abs().sum() > 0


def test_a_recipe_with_fresh_sentences_but_no_critic_is_refused():
    with pytest.raises(SystemExit, match="asr_critic"):
        TTSTrainConfig(manifests=["corpus/manifest.jsonl"], asr_fresh_texts=4)
