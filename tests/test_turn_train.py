"""The turn-head recipe on the fixture corpus: trains the head alone, resumes, exports the recogniser with it."""

import json
from dataclasses import asdict, replace

import numpy as np
import pytest
import torch
import yaml
from safetensors import safe_open
from safetensors.torch import load_file

from sonare.train.lm import LMTrainConfig, train_lm
from sonare.train.stt import STTTrainConfig
from sonare.train.stt import export as export_stt
from sonare.train.stt import train as train_stt
from sonare.train.turn import TurnTrainConfig, export, train

SMALL = {"channels": 8, "d_model": 32, "n_layers": 2, "d_state": 8, "head_dim": 16}


@pytest.fixture
def recogniser(fixture_corpus, tmp_path):
    """A small trained recogniser with its language model, exported."""
    manifest = str(fixture_corpus / "manifest.jsonl")
    cfg = STTTrainConfig(
        sources=[manifest], run_dir=str(tmp_path / "stt-run"), model=SMALL, batch_frames=4000, steps=1, warmup=1,
        val_turn_fraction=1.0, max_false_cutoff=1.0,
    )  # fmt: skip
    train_stt(cfg, progress=False)
    export_stt(cfg, tmp_path / "stt")
    recipe = tmp_path / "stt.yaml"
    recipe.write_text(yaml.safe_dump(asdict(cfg)))
    train_lm(LMTrainConfig(generated_sentences=300, wordnet=False, stt_recipe=str(recipe), alphas=[0.5], betas=[1.0]),
             tmp_path / "stt")  # fmt: skip
    return tmp_path / "stt"


def small_run(fixture_corpus, recogniser, tmp_path, **settings) -> TurnTrainConfig:
    """A turn recipe on the fixture corpus for the small recogniser, its run in tmp_path / "run"."""
    return TurnTrainConfig(
        sources=[str(fixture_corpus / "manifest.jsonl")],
        stt_dir=str(recogniser),
        run_dir=str(tmp_path / "run"),
        **settings,
    )


def test_the_head_trains_alone_resumes_and_exports_with_its_thresholds(fixture_corpus, recogniser, tmp_path):
    from sonare.stt import load_from
    from sonare.stt.lm import LM_FILE, WordLM
    from sonare.stt.turns import THRESHOLDS

    cfg = small_run(
        fixture_corpus, recogniser, tmp_path, steps=4, warmup=1, batch=2, window_frames=64, val_turn_fraction=0.0
    )
    train(cfg, progress=False)
    assert torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["step"] == 4
    cfg.steps = 6
    train(cfg, progress=False)  # resumes from step 4, the encoder's outputs from the run's cache
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)["step"] == 6 and log == []

    # Every conversation held back to choose the thresholds on; every threshold within the budget.
    export(replace(cfg, val_turn_fraction=1.0, max_false_cutoff=1.0), tmp_path / "export")
    before, after = load_file(recogniser / "stt.safetensors"), load_file(tmp_path / "export" / "stt.safetensors")
    assert set(before) == set(after)
    assert all(torch.equal(before[k], after[k]) for k in before if not k.startswith("turn."))  # the words stay
    assert not torch.equal(before["turn.weight"], after["turn.weight"])
    with safe_open(str(tmp_path / "export" / "stt.safetensors"), framework="pt") as f:
        meta = f.metadata()
    assert float(meta["end_threshold"]) in THRESHOLDS and meta["turn_head_step"] == "6"
    lm = WordLM.load(tmp_path / "export" / LM_FILE)
    assert lm.end_threshold in THRESHOLDS and lm.decoding == WordLM.load(recogniser / LM_FILE).decoding
    assert load_from(tmp_path / "export").end_threshold == lm.end_threshold


def test_a_retune_exports_the_recognisers_own_head_with_thresholds_chosen_anew(fixture_corpus, recogniser, tmp_path):
    from sonare.stt import load_from
    from sonare.stt.lm import LM_FILE, WordLM
    from sonare.stt.turns import THRESHOLDS

    cfg = small_run(fixture_corpus, recogniser, tmp_path, val_turn_fraction=1.0, max_false_cutoff=1.0)
    export(cfg, tmp_path / "export", retune=True)  # no run, no checkpoint: nothing trained
    before, after = load_file(recogniser / "stt.safetensors"), load_file(tmp_path / "export" / "stt.safetensors")
    assert set(before) == set(after) and all(torch.equal(before[k], after[k]) for k in before)
    with safe_open(str(tmp_path / "export" / "stt.safetensors"), framework="pt") as f:
        meta = f.metadata()
    assert float(meta["end_threshold"]) in THRESHOLDS and "turn_head_step" not in meta
    lm = WordLM.load(tmp_path / "export" / LM_FILE)
    assert lm.end_threshold in THRESHOLDS and lm.eager_threshold in THRESHOLDS
    recogniser_out = load_from(tmp_path / "export")  # with the words, theirs; the eager end never after the end
    assert recogniser_out.end_threshold == lm.end_threshold
    assert recogniser_out.eager_threshold == min(lm.eager_threshold, lm.end_threshold)
    with pytest.raises(SystemExit, match="no checkpoint"):  # without --retune the export wants the run's head
        export(replace(cfg, run_dir=str(tmp_path / "no-run")), tmp_path / "export2")


def test_a_heads_own_unsure_tier_travels_with_the_language_model_into_every_stream(
    fixture_corpus, recogniser, tmp_path, monkeypatch
):
    from sonare.stt import load_from
    from sonare.stt.evaluation import SonareTurnDetector
    from sonare.stt.lm import LM_FILE, WordLM
    from sonare.stt.messages import RecognitionOptions
    from sonare.stt.turns import DEFAULT_TIERS, turn_fires

    assert load_from(recogniser).tiers == DEFAULT_TIERS  # none chosen: the defaults
    cfg = small_run(fixture_corpus, recogniser, tmp_path, val_turn_fraction=1.0, max_false_cutoff=1.0, unsure_end=0.985)
    export(cfg, tmp_path / "export", retune=True)
    assert WordLM.load(tmp_path / "export" / LM_FILE).unsure_end == 0.985
    stt = load_from(tmp_path / "export")
    assert stt.tiers.unsure_end == 0.985 and stt.tiers.unfinished_end == DEFAULT_TIERS.unfinished_end
    assert stt.open(RecognitionOptions(sample_rate=16000)).turns.tiers == stt.tiers
    monkeypatch.setenv("SONARE_STT_DIR", str(tmp_path / "export"))  # `sonare eval turns` scores the same tiers
    assert SonareTurnDetector().stt.tiers == stt.tiers
    eager = SonareTurnDetector(event="eager_end")  # its sweep stops at the recogniser's own end threshold
    assert eager.setting_name == "eager_threshold" and eager.thresholds[-1] <= stt.end_threshold < 1.0
    eager.stt.end_threshold = 0.8  # as a recogniser whose end threshold is 0.8: eager ends at 0.5 come first
    speech, unsure, end = [0.0, 0.9], [0.6, 0.0], [0.95, 0.0]
    probs = np.array([speech] * 3 + [unsure, end] + [speech] * 3 + [unsure] + [speech] * 3)  # the second resumes
    fires = eager.fires(probs, 0.5, None, None)
    expected = turn_fires(probs, 0.5, 0.8, step_seconds=eager.stt.step_seconds, tiers=stt.tiers, event="eager_end")
    assert len(fires) == 2 and fires == expected
    # A new language model for the same recogniser keeps the head's tier.
    train_lm(LMTrainConfig(generated_sentences=50, wordnet=False, stt_recipe=None), tmp_path / "export")  # no tuning
    assert WordLM.load(tmp_path / "export" / LM_FILE).unsure_end == 0.985


def test_a_run_of_another_encoder_is_not_resumed(fixture_corpus, recogniser, tmp_path):
    from safetensors.torch import save_file

    cfg = small_run(
        fixture_corpus, recogniser, tmp_path, steps=2, warmup=1, batch=2, window_frames=64, val_turn_fraction=0.0
    )
    train(cfg, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    with safe_open(str(recogniser / "stt.safetensors"), framework="pt") as f:
        meta = f.metadata()
    weights = load_file(recogniser / "stt.safetensors")
    weights["ctc.bias"] = weights["ctc.bias"] + 1.0
    save_file(weights, other / "stt.safetensors", metadata=meta)
    with pytest.raises(SystemExit, match="another encoder"):
        train(replace(cfg, stt_dir=str(other), steps=4), progress=False)


def test_a_source_without_conversations_is_a_clear_error(fixture_corpus, recogniser, tmp_path):
    # Every conversation held back: none to train on.
    cfg = small_run(fixture_corpus, recogniser, tmp_path, val_turn_fraction=1.0)
    with pytest.raises(SystemExit, match="no training conversations"):
        train(cfg, progress=False)
