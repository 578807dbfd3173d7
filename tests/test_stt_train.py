"""A smoke run of the STT recipe on the fixture corpus: trains, validates, resumes, exports, loads, streams."""

import json
from dataclasses import asdict, replace

import numpy as np
import pytest
import torch
import yaml

from sonare.train.lm import LMTrainConfig, train_lm
from sonare.train.stt import STTTrainConfig, collate, export, train

SMALL = {"channels": 8, "d_model": 32, "n_layers": 2, "d_state": 8, "head_dim": 16}


def test_recipe_trains_resumes_and_exports(fixture_corpus, tmp_path, monkeypatch):
    from sonare.stt import load_from
    from sonare.stt.evaluation import SonareTranscriber
    from sonare.stt.messages import RecognitionOptions, Transcript

    cfg = STTTrainConfig(
        sources=[str(fixture_corpus / "manifest.jsonl")], run_dir=str(tmp_path / "run"), model=SMALL,
        batch_frames=4000, steps=4, warmup=1, val_every=2, val_fraction=0.2,
    )  # fmt: skip
    train(cfg, progress=False)
    cfg.steps = 6
    train(cfg, progress=False)  # resumes from step 4
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    validations = [r for r in log if "val" in r]
    assert [r["step"] for r in validations] == [2, 4, 6]
    assert all(r["val"]["wer"] >= 0.0 for r in validations) and "heldout" in validations[-1]

    # A new run continued from that checkpoint starts from its weights and its trained phoneme head.
    source = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)
    continued = STTTrainConfig(**{**asdict(cfg), "run_dir": str(tmp_path / "next"), "steps": 1, "val_every": 10})
    continued.init_from, continued.lr = str(tmp_path / "run" / "checkpoint.pt"), 1e-12
    train(continued, progress=False)
    state = torch.load(tmp_path / "next" / "checkpoint.pt", weights_only=False)
    assert torch.allclose(state["phone_head"]["weight"], source["phone_head"]["weight"])
    assert torch.allclose(state["model"]["ctc.weight"], source["model"]["ctc.weight"])
    # A stage that keeps the turn head: the head stays as it starts while the rest learns.
    kept = replace(continued, run_dir=str(tmp_path / "kept"), lr=1e-2, freeze_turn_head=True)
    train(kept, progress=False)
    state = torch.load(tmp_path / "kept" / "checkpoint.pt", weights_only=False)
    assert torch.equal(state["model"]["turn.weight"], source["model"]["turn.weight"])
    assert not torch.allclose(state["model"]["ctc.weight"], source["model"]["ctc.weight"])

    recognizer = load_from(export(cfg, tmp_path / "export"))
    assert recognizer.lm is None  # no language model yet: greedy decoding
    monkeypatch.setenv("SONARE_STT_DIR", str(tmp_path / "export"))  # the evaluators measure the export
    assert SonareTranscriber().model.model.cfg.d_model == SMALL["d_model"]
    audio = np.random.default_rng(0).normal(0, 0.1, 16000).astype(np.float32)
    events = list(recognizer.stream([audio], RecognitionOptions()))
    assert all(isinstance(e.text, str) for e in events if isinstance(e, Transcript))

    # The language model recipe, its beam tuned for this model on the recipe's held-back clips.
    recipe = tmp_path / "stt.yaml"
    recipe.write_text(yaml.safe_dump(asdict(cfg)))
    own_text = tmp_path / "domain.txt"
    own_text.write_text("the flux capacitor is ready\n")
    lm_cfg = LMTrainConfig(
        generated_sentences=300, wordnet=False, text_files=[str(own_text)], stt_recipe=str(recipe),
        alphas=[0.5], betas=[1.0, 2.0], beam=4,
    )  # fmt: skip
    train_lm(lm_cfg, tmp_path / "export")
    recognizer = load_from(tmp_path / "export")
    assert "capacitor" in recognizer.lm.words and recognizer.beam.alpha == 0.5 and recognizer.beam.beam == 4
    assert recognizer.beam.beta in (1.0, 2.0)
    events = list(recognizer.stream([audio], RecognitionOptions()))
    assert all(isinstance(e.text, str) for e in events if isinstance(e, Transcript))


def _saved_small_model(path):
    """A small random model, saved as a run's best.pt is."""
    from sonare.stt.model import STTConfig, STTModel

    torch.manual_seed(0)
    model = STTModel(STTConfig(**SMALL)).eval()
    torch.save({"model": model.state_dict(), "model_config": model.cfg.to_dict()}, path)
    return model


def test_a_model_grows_deeper_without_changing_what_it_computes(tmp_path):
    from sonare.train.stt import initial_weights

    small = _saved_small_model(tmp_path / "best.pt")
    deeper, phone_head = initial_weights(str(tmp_path / "best.pt"), {"n_layers": 4})
    deeper.eval()
    assert phone_head is None  # best.pt keeps no phoneme head
    assert len(deeper.encoder.layers) == 4
    mel = torch.randn(2, 80, 80)
    with torch.no_grad():
        assert torch.allclose(small(mel)[0], deeper(mel)[0], atol=1e-6)


def test_a_continuation_sets_its_own_dropout_without_changing_what_the_model_reads(tmp_path):
    from sonare.train.stt import initial_weights

    small = _saved_small_model(tmp_path / "best.pt")
    regularised, _ = initial_weights(str(tmp_path / "best.pt"), {"block_dropout": 0.3, "dropout": 0.0})
    assert (regularised.cfg.block_dropout, regularised.cfg.dropout) == (0.3, 0.0)
    mel = torch.randn(2, 80, 80)
    with torch.no_grad():
        read = small(mel)[0]
        assert torch.allclose(read, regularised.eval()(mel)[0], atol=1e-6)
    torch.manual_seed(1)
    trained = regularised.train()(mel)[0]  # with gradients, as in training: block outputs dropped
    assert not torch.allclose(read, trained.detach(), atol=1e-3)


def test_a_run_from_an_export_trains_and_validates_unrounded_weights(tmp_path):
    """The inference loader rounds the encoder's projections to int8 (sonare.ssm.cpu_step); a run that starts from
    an export must not, or its validation would read other weights than a resumed run's."""
    from safetensors.torch import save_file

    from sonare.stt.weights import WEIGHTS_NAME, load_from
    from sonare.train.stt import initial_weights

    small = _saved_small_model(tmp_path / "best.pt")
    (tmp_path / "export").mkdir()
    metadata = {"config": json.dumps(small.cfg.to_dict()), "eager_threshold": "0.5", "end_threshold": "0.8"}
    save_file(small.state_dict(), tmp_path / "export" / WEIGHTS_NAME, metadata=metadata)
    assert load_from(tmp_path / "export").model.encoder.int8_projections
    start, _ = initial_weights(str(tmp_path / "export"), {})
    assert not start.encoder.int8_projections


def test_splitting_ctc_frames_keeps_what_the_model_reads(tmp_path):
    from sonare.train.stt import greedy_text, initial_weights

    small = _saved_small_model(tmp_path / "best.pt")
    split, _ = initial_weights(str(tmp_path / "best.pt"), {"ctc_per_frame": 2})
    split.eval()
    mel = torch.randn(1, 400, 80) * 3
    with torch.no_grad():
        before, after = small(mel)[0].log_softmax(-1)[0].numpy(), split(mel)[0].log_softmax(-1)[0].numpy()
    assert after.shape == (2 * before.shape[0], before.shape[1])  # two 20 ms CTC frames per encoder frame
    text = greedy_text(before, small.cfg.ctc_frame_seconds)
    assert text and greedy_text(after, split.cfg.ctc_frame_seconds) == text  # repeats merge: the same letters
    torch.save({"model": split.state_dict(), "model_config": split.cfg.to_dict()}, tmp_path / "split.pt")
    with pytest.raises(SystemExit):
        initial_weights(str(tmp_path / "split.pt"), {"ctc_per_frame": 3})


def test_collate_masks_and_augments(fixture_corpus, tmp_path):
    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel

    items = load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path)
    conversation = next(u for u in items if u.pauses)
    assert np.nanmax(conversation.end) == 1.0 and np.nanmax(conversation.speech) == 1.0
    cfg = STTTrainConfig(sources=[], max_frames=400)
    model = STTModel(STTConfig(**SMALL))
    batch = collate([conversation, items[0]], model, cfg, np.random.default_rng(0))
    assert int(batch["lengths"][0]) == 100  # the long conversation is cropped to a window
    assert batch["target_lengths"][0] == 0  # whose words are unknown: it trains the turn head only
    assert batch["target_lengths"][1] == len(items[0].target)
    plain = collate([items[0]], model, cfg, None)
    n = int(plain["lengths"][0]) * 4
    assert torch.equal(plain["mel"][0, :n], torch.from_numpy(items[0].mel[:n].astype(np.float32)))


def test_an_opening_silence_repeats_the_first_frame_before_the_same_words(fixture_corpus, tmp_path):
    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel
    from sonare.text.inventory import PAD_ID

    item = next(u for u in load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path) if not u.pauses)
    model = STTModel(STTConfig(**SMALL))
    quiet = STTTrainConfig(sources=[], gain_db=0.0, freq_masks=0, time_masks=0, lead_silence_prob=1.0)
    batch = collate([item], model, replace(quiet, lead_silence_s=0.4), np.random.default_rng(0))
    k = int(batch["lengths"][0]) - item.n_frames
    assert 1 <= k <= 10  # up to 0.4 s of 40 ms frames
    mel = batch["mel"][0].numpy()
    first = item.mel[:4].astype(np.float32)
    assert np.array_equal(mel[: 4 * k], np.tile(first, (k, 1)))
    assert np.array_equal(mel[4 * k : 4 * (k + item.n_frames)], item.mel.astype(np.float32))
    assert torch.equal(batch["targets"], torch.from_numpy(item.target))  # the same words, heard later
    assert (batch["speech"][0, :k] == 0).all() and torch.isnan(batch["end"][0, :k]).all()
    assert item.phones is not None and (batch["phones"][0, :k] == PAD_ID).all()
    # none asked for (the default), or no training randomness: the utterance as it is
    for cfg, rng in ((replace(quiet, lead_silence_prob=0.0, lead_silence_s=0.4), 0), (quiet, 0), (quiet, None)):
        plain = collate([item], model, cfg, None if rng is None else np.random.default_rng(rng))
        assert int(plain["lengths"][0]) == item.n_frames


def test_a_tempo_change_retimes_the_frames_and_their_labels_and_keeps_the_words(fixture_corpus, tmp_path):
    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel
    from sonare.train.stt import retimed_frames

    item = next(u for u in load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path) if not u.pauses)
    model = STTModel(STTConfig(**SMALL))
    quiet = {"gain_db": 0.0, "freq_masks": 0, "time_masks": 0, "max_frames": 10**6}
    faster = STTTrainConfig(sources=[], tempo_prob=1.0, tempo_range=[2.0, 2.0], **quiet)
    batch = collate([item], model, faster, np.random.default_rng(0))
    n = item.n_frames
    assert int(batch["lengths"][0]) == round(n / 2)
    mel = batch["mel"][0, : 4 * round(n / 2)].numpy()
    whole = item.mel.astype(np.float32)
    # twice as fast: each new frame lies halfway between two of the original's
    np.testing.assert_allclose(mel[:10], (whole[0:20:2] + whole[1:21:2]) / 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(batch["phones"][0, : n // 2].numpy(), item.phones[1 : 2 * (n // 2) : 2])
    np.testing.assert_array_equal(batch["speech"][0, : n // 2].numpy(), item.speech[1 : 2 * (n // 2) : 2])
    assert torch.equal(batch["targets"], torch.from_numpy(item.target))  # the same words
    slower = collate([item], model, replace(faster, tempo_range=[0.8, 0.8]), np.random.default_rng(0))
    assert int(slower["lengths"][0]) == round(n / 0.8)
    assert int(collate([item], model, replace(faster, tempo_prob=0.0), np.random.default_rng(0))["lengths"][0]) == n
    assert retimed_frames(whole, len(whole)) is whole


def test_turn_thresholds_are_chosen_on_every_held_back_conversation(fixture_corpus, tmp_path):
    from sonare.train.stt import load_data

    manifest = str(fixture_corpus / "manifest.jsonl")  # read twice: two conversations
    cfg = STTTrainConfig(sources=[manifest, manifest], val_turn_fraction=1.0, val_limit=1)
    train_items, sets = load_data(cfg, tmp_path)
    conversations = [u for u in sets["val-turns"] if u.pauses is not None]
    assert len(conversations) == len(sets["val-turns"]) >= 2  # all of them, not a sample of val_limit
    assert len(sets["val"]) == 1
    assert not any(u.pauses for u in train_items)


def test_collate_warps_frequencies_when_asked(fixture_corpus, tmp_path):
    from sonare.audio.features import warp_log_mel
    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel

    item = load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path)[0]
    model = STTModel(STTConfig(**SMALL))
    no_other_augmentation = {"gain_db": 0.0, "freq_masks": 0, "time_masks": 0, "max_frames": 10**6}
    cfg = STTTrainConfig(sources=[], warp_factor=[1.15, 1.15], **no_other_augmentation)
    n = len(item.mel) // 4 * 4
    mel = collate([item], model, cfg, np.random.default_rng(0))["mel"][0, :n].numpy()
    np.testing.assert_allclose(mel, warp_log_mel(item.mel[:n].astype(np.float32), 1.15), rtol=1e-5)
    unwarped = collate([item], model, replace(cfg, warp_factor=[1.0, 1.0]), np.random.default_rng(0))["mel"]
    assert not np.allclose(unwarped[0, :n].numpy(), mel)


def test_a_consistency_batch_reads_every_utterance_again_through_a_warp(fixture_corpus, tmp_path):
    from sonare.audio.features import warp_log_mel
    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel
    from sonare.train.stt import losses

    items = [u for u in load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path) if len(u.target)][:3]
    torch.manual_seed(0)
    model = STTModel(STTConfig(**SMALL))
    cfg = STTTrainConfig(sources=[], consistency_weight=1.0, consistency_warp=[1.12, 1.12], max_frames=10**6)
    batch = collate(items, model, cfg, np.random.default_rng(0))
    assert batch["mel_warped"].shape == batch["mel"].shape
    for row, n in enumerate(batch["lengths"].tolist()):
        frames = batch["mel"][row, : 4 * n].numpy()
        np.testing.assert_allclose(batch["mel_warped"][row, : 4 * n].numpy(), warp_log_mel(frames, 1.12), rtol=1e-5)
    assert "mel_warped" not in collate(items, model, cfg, None)  # validation reads once
    assert "mel_warped" not in collate(items, model, replace(cfg, consistency_weight=0.0), np.random.default_rng(0))

    head = torch.nn.Linear(SMALL["d_model"], 400)
    parts = losses(model, head, batch, cfg)
    assert parts["consistency"] > 0  # an untrained model reads the two differently
    parts["loss"].backward()
    assert model.ctc.weight.grad.abs().sum() > 0
    same = dict(batch, mel_warped=batch["mel"])
    model.eval()  # no dropout: the same frames read the same
    assert losses(model, head, same, cfg)["consistency"].item() == pytest.approx(0.0, abs=1e-6)


def test_the_ctc_divergence_is_zero_only_where_the_readings_agree():
    from sonare.train.stt import ctc_divergence

    a = torch.randn(2, 6, 5)
    lengths = torch.tensor([6, 3])
    assert ctc_divergence(a, a, lengths).item() == pytest.approx(0.0, abs=1e-6)
    b = a.clone()
    b[1, 4:] = torch.randn(2, 5)  # past row 1's valid frames: not counted
    assert ctc_divergence(a, b, lengths).item() == pytest.approx(0.0, abs=1e-6)
    b[0, 0] = -a[0, 0]
    assert ctc_divergence(a, b, lengths) > 0


def test_colouring_is_a_smooth_bounded_curve_added_to_every_frame(fixture_corpus, tmp_path):
    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel
    from sonare.train.stt import random_colouring

    curves = [random_colouring(np.random.default_rng(seed), 80, 6.0) for seed in range(50)]
    assert all(np.abs(c).max() <= 6.0 + 1e-5 for c in curves)
    assert max(np.abs(c).max() for c in curves) > 3.0  # it does colour
    assert all(np.abs(np.diff(c)).max() < 6.0 * np.pi * 3 / 80 for c in curves)  # broad, not per-bin noise
    assert not np.allclose(curves[0], curves[1])

    item = load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path)[0]
    model = STTModel(STTConfig(**SMALL))
    no_other_augmentation = {"gain_db": 0.0, "freq_masks": 0, "time_masks": 0, "max_frames": 10**6}
    cfg = STTTrainConfig(sources=[], colouring_db=6.0, **no_other_augmentation)
    n = len(item.mel) // 4 * 4
    mel = collate([item], model, cfg, np.random.default_rng(0))["mel"][0, :n].numpy()
    difference = mel - item.mel[:n]
    np.testing.assert_allclose(difference, np.broadcast_to(difference[0], difference.shape), atol=1e-4)
    assert np.abs(difference[0]).max() > 0.05


def test_phone_labels_follow_the_alignment_and_train_the_auxiliary_head(fixture_corpus, tmp_path):
    from sonare.stt.dataset import load_source, phone_labels
    from sonare.stt.model import STTConfig, STTModel, frame_time
    from sonare.text.inventory import PAD_ID, token_ids
    from sonare.train.stt import IGNORE, losses

    phones = [{"phoneme": "h", "start": 0.1, "end": 0.2}, {"phoneme": "ˈ", "start": 0.2, "end": 0.2}]
    phones.append({"phoneme": "a͡ɪ", "start": 0.2, "end": 0.45})
    labels = phone_labels(15, phones)
    heard = [frame_time(k) - 0.02 for k in range(15)]
    for k, t in enumerate(heard):
        expected = token_ids("h")[0] if 0.1 <= t < 0.2 else token_ids("a͡ɪ")[0] if 0.2 <= t < 0.45 else PAD_ID
        assert labels[k] == expected
    assert phone_labels(15, None) is None

    items = load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path)
    assert all(u.phones is not None and len(u.phones) == u.n_frames for u in items)
    model = STTModel(STTConfig(**SMALL))
    head = torch.nn.Linear(SMALL["d_model"], 400)
    batch = collate(items[:2], model, STTTrainConfig(sources=[]), None)
    assert (batch["phones"][0, : int(batch["lengths"][0])] != IGNORE).all()
    parts = losses(model, head, batch, STTTrainConfig(sources=[], phone_weight=1.0))
    parts["loss"].backward()
    assert parts["phone"] > 0 and head.weight.grad.abs().sum() > 0


def test_a_run_from_an_export_fits_a_phoneme_head_to_the_frozen_encoder(fixture_corpus, tmp_path):
    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel
    from sonare.text.inventory import vocab_size
    from sonare.train.stt import fit_phone_head, phone_loss

    cfg = STTTrainConfig(sources=[], batch_frames=4000, phone_head_fit_steps=20, phone_head_fit_lr=1e-2)
    items = load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path)
    torch.manual_seed(0)
    model = STTModel(STTConfig(**SMALL))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    head = torch.nn.Linear(SMALL["d_model"], vocab_size())
    batch = collate(items, model, cfg, None)

    def head_loss() -> float:
        with torch.no_grad():
            h, _ = model.encode(batch["mel"], lengths=batch["lengths"])
            return phone_loss(head, h, batch["phones"]).item()

    untrained = head_loss()
    fit_phone_head(model, head, items, cfg)
    assert head_loss() < 0.8 * untrained
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # the encoder stays as it was
    assert model.training


def test_a_turn_teacher_pulls_the_turn_outputs_toward_its_own(fixture_corpus, tmp_path):
    """The teacher's term is nothing while the model computes what the teacher does, and its gradient through a
    frozen turn head moves the encoder until the turn outputs come close to the teacher's."""
    import copy

    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel
    from sonare.text.inventory import vocab_size
    from sonare.train.stt import losses

    cfg = STTTrainConfig(sources=[], batch_frames=4000, turn_teacher_weight=1.0)
    items = load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path)
    torch.manual_seed(0)
    model = STTModel(STTConfig(**SMALL)).eval()  # eval: no dropout, so the same weights give the same outputs
    teacher = STTModel(STTConfig(**SMALL)).eval()  # other random weights
    head = torch.nn.Linear(SMALL["d_model"], vocab_size())
    batch = collate(items, model, cfg, None)
    assert abs(losses(model, head, batch, cfg, copy.deepcopy(model))["turn_kl"].item()) < 1e-6

    model.turn.requires_grad_(False)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    divergences = []
    for _ in range(40):
        kl = losses(model, head, batch, cfg, teacher)["turn_kl"]
        divergences.append(kl.item())
        opt.zero_grad()
        kl.backward()
        opt.step()
    assert divergences[0] > 0 and divergences[-1] < 0.3 * divergences[0]


def test_a_run_with_a_turn_teacher_logs_how_far_it_is_from_the_teacher(fixture_corpus, tmp_path):
    from safetensors.torch import save_file

    from sonare.stt.weights import WEIGHTS_NAME

    small = _saved_small_model(tmp_path / "best.pt")
    (tmp_path / "teacher").mkdir()
    metadata = {"config": json.dumps(small.cfg.to_dict()), "eager_threshold": "0.5", "end_threshold": "0.8"}
    save_file(small.state_dict(), tmp_path / "teacher" / WEIGHTS_NAME, metadata=metadata)
    cfg = STTTrainConfig(
        sources=[str(fixture_corpus / "manifest.jsonl")], run_dir=str(tmp_path / "run"), model=SMALL,
        batch_frames=4000, steps=25, warmup=1, val_every=100, init_from=str(tmp_path / "teacher"),
        phone_head_fit_steps=1, turn_teacher=str(tmp_path / "teacher"), turn_teacher_weight=10.0,
    )  # fmt: skip
    train(cfg, progress=False)
    state = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)
    assert not torch.equal(state["model"]["ctc.weight"], small.state_dict()["ctc.weight"])  # it trained
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    losses = [r for r in log if "loss" in r]  # every 25 steps
    assert [r["step"] for r in losses] == [25] and losses[0]["turn_kl"] > 0.0


def test_the_ctc_loss_runs_over_every_ctc_frame(fixture_corpus, tmp_path):
    from dataclasses import replace

    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel
    from sonare.train.stt import losses

    item = next(u for u in load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path) if len(u.target))
    # 1.5 letters per encoder frame: CTC cannot spell it in one frame each (the loss is zeroed as infinite), but
    # can in two.
    fast = replace(item, target=np.resize(item.target, int(1.5 * item.n_frames)))
    head = torch.nn.Linear(SMALL["d_model"], 400)
    cfg = STTTrainConfig(sources=[])
    torch.manual_seed(0)
    one = STTModel(STTConfig(**SMALL))
    two = STTModel(STTConfig(**SMALL, ctc_per_frame=2))
    batch = collate([fast], one, cfg, None)
    assert losses(one, head, batch, cfg)["ctc"] == 0.0
    ctc = losses(two, head, batch, cfg)["ctc"]
    assert torch.isfinite(ctc) and ctc > 0
    ctc.backward()
    assert two.ctc.weight.grad.abs().sum() > 0


def _clip(name: str, frames: int, letters: int = 5):
    """A silent training utterance of `frames` encoder frames spelling `letters` letters."""
    from sonare.stt.dataset import Utterance

    nan = np.full(frames, np.nan, np.float32)
    mel = np.zeros((4 * frames, 80), np.float32)
    return Utterance(name, "test", mel, np.ones(letters, np.int64), nan, nan, "x", None, None)


def test_fast_speech_is_trained_on_only_when_ctc_can_spell_it():
    from sonare.train.stt import fit_ctc

    slow, fast = (
        _clip("slow", 30, letters=20),
        _clip("fast", 30, letters=45),
    )  # 45 letters in 1.2 s: more than one per 40 ms frame
    assert fit_ctc([slow, fast], 1) == [slow]
    assert fit_ctc([slow, fast], 2) == [slow, fast]


def test_an_utterance_listed_twice_goes_into_two_different_batches():
    import random

    from sonare.train.stt import make_batches

    once = [_clip(f"u{i}", 50) for i in range(12)]  # equal lengths: copies would otherwise sort side by side
    items = once + once[:4]
    batches = make_batches(items, batch_frames=4 * 50 * 5, max_frames=3000, rng=random.Random(0))
    assert sorted(i for b in batches for i in b) == list(range(len(items)))
    for batch in batches:
        assert len({id(items[i]) for i in batch}) == len(batch)
    assert all(len(b) <= 5 for b in batches)  # the frame budget: five 200-frame clips


def test_a_repeated_source_enters_training_that_many_times_and_validation_once(fixture_corpus, tmp_path):
    from sonare.train.stt import load_data

    manifest = str(fixture_corpus / "manifest.jsonl")
    plain_train, plain_sets = load_data(STTTrainConfig(sources=[manifest], val_fraction=0.2), tmp_path)
    cfg = STTTrainConfig(sources=[manifest], source_repeats={manifest: 3}, val_fraction=0.2)
    train_items, sets = load_data(cfg, tmp_path)
    assert len(train_items) == 3 * len(plain_train) > 0
    assert [u.id for u in sets["val"]] == [u.id for u in plain_sets["val"]]
    with pytest.raises(SystemExit, match="not in sources"):
        load_data(STTTrainConfig(sources=[manifest], source_repeats={"corpus/typo.jsonl": 2}), tmp_path)


def test_held_back_clips_are_chosen_by_id_alone():
    from sonare.train.common import is_held_back

    ids = [f"clip-{i:05d}" for i in range(4000)]
    held = [i for i in ids if is_held_back(i, 0.05)]
    assert held == [i for i in ids if is_held_back(i, 0.05)]  # the same in every run and tool
    assert 0.04 < len(held) / len(ids) < 0.06
    assert set(held) <= {i for i in ids if is_held_back(i, 0.2)}  # a larger share keeps the smaller one's clips


def test_the_weight_average_follows_the_weights_with_its_decay():
    from sonare.train.common import WeightAverage

    model = torch.nn.BatchNorm1d(2)  # float weights and an integer buffer (num_batches_tracked)
    with torch.no_grad():
        model.weight.fill_(0.0)
    average = WeightAverage(model, decay=0.5)
    with torch.no_grad():
        model.weight.fill_(1.0)
        model.num_batches_tracked.fill_(7)
    average.update(model)  # the ramp (1 + 1) / (10 + 1) keeps 2/11 of the start
    assert torch.allclose(average.weights["weight"], torch.full((2,), 9 / 11))
    assert int(average.weights["num_batches_tracked"]) == 7
    for _ in range(30):  # past the ramp the decay rules: the start's share halves every update
        average.update(model)
    assert torch.allclose(average.weights["weight"], torch.ones(2), atol=1e-6)
    restored = WeightAverage.from_state(model, average.state_dict())
    assert restored.updates == 31 and torch.equal(restored.weights["weight"], average.weights["weight"])


def test_a_run_with_a_weight_average_keeps_and_exports_the_average(fixture_corpus, tmp_path):
    from safetensors.torch import load_file

    cfg = STTTrainConfig(
        sources=[str(fixture_corpus / "manifest.jsonl")], run_dir=str(tmp_path / "run"), model=SMALL,
        batch_frames=4000, steps=3, warmup=1, val_every=3, val_fraction=0.2, ema_decay=0.9, lr=1e-2,
    )  # fmt: skip
    train(cfg, progress=False)
    averages = {3: torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["average"]["weights"]}
    cfg.steps = 4
    train(cfg, progress=False)  # resumes, its average included
    state = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)
    assert state["average"]["updates"] == 4
    averages[4] = state["average"]["weights"]
    assert not torch.equal(averages[4]["ctc.weight"], state["model"]["ctc.weight"])
    best = torch.load(tmp_path / "run" / "best.pt", weights_only=False)
    assert torch.equal(best["model"]["ctc.weight"], averages[best["best"]["step"]]["ctc.weight"])
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    validations = [r for r in log if "val" in r]
    assert [r["step"] for r in validations] == [3, 4] and all("val" in r["raw"] for r in validations)
    exported = load_file(export(cfg, tmp_path / "export") / "stt.safetensors")
    assert torch.equal(exported["ctc.weight"], best["model"]["ctc.weight"])


def test_the_lm_recipe_tunes_the_end_threshold_the_words_weigh_in_on(fixture_corpus, tmp_path):
    from sonare.stt import load_from
    from sonare.stt.lm import LM_FILE, WordLM
    from sonare.stt.turns import THRESHOLDS

    manifest = str(fixture_corpus / "manifest.jsonl")
    cfg = STTTrainConfig(
        sources=[manifest], run_dir=str(tmp_path / "run"), model=SMALL, batch_frames=4000, steps=1, warmup=1,
        val_turn_fraction=1.0, max_false_cutoff=1.0,  # every conversation held back; every threshold in budget
    )  # fmt: skip
    train(cfg, progress=False)
    export(cfg, tmp_path / "export")
    head_alone = load_from(tmp_path / "export", language_model=False).end_threshold
    recipe = tmp_path / "stt.yaml"
    recipe.write_text(yaml.safe_dump(asdict(cfg)))
    lm_cfg = LMTrainConfig(generated_sentences=300, wordnet=False, stt_recipe=str(recipe), alphas=[0.5], betas=[1.0])
    train_lm(lm_cfg, tmp_path / "export")
    tuned = WordLM.load(tmp_path / "export" / LM_FILE)
    assert tuned.end_threshold in THRESHOLDS and tuned.eager_threshold in THRESHOLDS
    with_words = load_from(tmp_path / "export")  # with the words, their thresholds
    assert (with_words.end_threshold, with_words.eager_threshold) == (
        tuned.end_threshold,
        min(tuned.eager_threshold, tuned.end_threshold),
    )
    assert load_from(tmp_path / "export", language_model=False).end_threshold == head_alone  # greedy: the head's


def test_the_exported_threshold_detects_the_most_ends_when_none_detects_most():
    from sonare.eval.turns import TurnOutcomes, summarize
    from sonare.train.common import chosen_threshold

    def metrics(mid_fired: int, found: int, p50: float):
        outcomes = TurnOutcomes(hold_fired=[True] * mid_fired + [False] * (20 - mid_fired))
        outcomes.hold_after_sentence = [False] * 20
        outcomes.end_latencies = [p50] * found + [None] * (10 - found)
        return summarize(outcomes)

    curve = {0.5: metrics(3, 8, 0.2), 0.7: metrics(1, 7, 0.3), 0.9: metrics(0, 6, 0.5)}
    assert chosen_threshold(curve, 0.05) == 0.7  # within 5% of pauses to think, detecting most, soonest
    curve = {0.5: metrics(3, 6, 0.2), 0.7: metrics(1, 4, 0.3), 0.9: metrics(0, 2, 0.5)}
    assert chosen_threshold(curve, 0.05) == 0.7  # none detects most: the most within the budget
    assert chosen_threshold(curve, 0.0) == 0.9


def test_noise_mixed_into_frames_reads_as_noise_mixed_into_the_audio():
    from sonare.audio.features import log_mel
    from sonare.data.augment import SAMPLE_RATE, add_noise, make_noise
    from sonare.train.feature_noise import mix_noise, unit_power

    t = np.arange(3 * SAMPLE_RATE) / SAMPLE_RATE
    voiced = sum(np.sin(2 * np.pi * 140 * k * t) / k for k in range(1, 20)) * (np.sin(2 * np.pi * 2 * t) > 0)
    audio = (0.1 * voiced).astype(np.float32)
    clean = log_mel(audio).numpy()
    noise = unit_power(log_mel(make_noise("babble", len(audio), 7).astype(np.float32)))
    mixed = mix_noise(clean, noise, 10.0)  # the stretch the audio heard: from the first frame
    heard = log_mel(add_noise(audio, "babble", 10.0, 7).astype(np.float32)).numpy()
    assert np.abs(heard - clean).mean() > 1.5  # the noise is loud enough to matter
    assert np.abs(mixed - heard).mean() < 0.4
    assert abs((mixed - heard).mean()) < 0.3  # at the SNR asked for
    # Babble falls silent between phrases: a short clip may land in such a stretch and hears nothing added.
    np.testing.assert_allclose(mix_noise(clean[:50], np.zeros((100, 80)), 10.0, start=30), clean[:50])


def test_collate_mixes_noise_at_the_snr_drawn(fixture_corpus, tmp_path):
    from sonare.stt.dataset import load_source
    from sonare.stt.model import STTConfig, STTModel

    item = load_source(fixture_corpus / "manifest.jsonl", "train", tmp_path)[0]
    model = STTModel(STTConfig(**SMALL))
    no_other_augmentation = {"gain_db": 0.0, "freq_masks": 0, "time_masks": 0, "max_frames": 10**6}
    n = len(item.mel) // 4 * 4

    def frames(**noise) -> np.ndarray:
        cfg = STTTrainConfig(sources=[], noise_kinds=["pink"], **no_other_augmentation, **noise)
        return collate([item], model, cfg, np.random.default_rng(0))["mel"][0, :n].numpy()

    change = {snr: np.abs(frames(noise_prob=1.0, noise_snr_db=[snr, snr]) - item.mel[:n]) for snr in (0, 40)}
    assert np.median(change[0]) > 1.0 > 10 * np.median(change[40])
    np.testing.assert_array_equal(frames(noise_prob=0.0), item.mel[:n])
