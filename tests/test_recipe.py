from pathlib import Path

import pytest

from sonare.recipe import read_recipe
from sonare.train.stt import STTTrainConfig


def test_a_stage_on_a_base_changes_one_model_entry_and_replaces_lists(tmp_path):
    first = tmp_path / "first.yaml"
    first.write_text(
        "sources: [a/manifest.jsonl, b/manifest.jsonl]\nrun_dir: runs/first\n"
        "model: {d_model: 192, n_layers: 16, dropout: 0.1}\nsteps: 2000\nlr: 0.0004\n"
    )
    second = tmp_path / "second.yaml"
    second.write_text(f"base: {first}\nsources: [c/manifest.jsonl]\nrun_dir: runs/second\nmodel: {{dropout: 0.2}}\n")
    third = tmp_path / "third.yaml"
    third.write_text(f"base: {second}\nsteps: 500\n")
    cfg = STTTrainConfig.load(third)
    assert cfg.sources == ["c/manifest.jsonl"]  # a plain list is replaced, not appended to
    assert cfg.run_dir == "runs/second"
    assert cfg.model == {"d_model": 192, "n_layers": 16, "dropout": 0.2}
    assert (cfg.steps, cfg.lr) == (500, 0.0004)
    assert read_recipe(first)["model"]["dropout"] == 0.1  # the base itself is unchanged


def test_named_items_merge_by_name_and_nested_mappings_key_by_key(tmp_path):
    base = tmp_path / "base.yaml"
    base.write_text("sections:\n  - {name: read, hours: 1.0, transform: {pitch: [-4, 4], tempo: [0.9, 1.1]}}\n")
    derived = tmp_path / "derived.yaml"
    derived.write_text(f"base: {base}\nsections:\n  - {{name: read, transform: {{pitch: [-8, 8]}}}}\n")
    assert read_recipe(derived)["sections"] == [
        {"name": "read", "hours": 1.0, "transform": {"pitch": [-8, 8], "tempo": [0.9, 1.1]}}
    ]


def test_a_recipe_that_is_not_a_mapping_is_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ValueError, match="mapping"):
        read_recipe(bad)


def test_every_stt_stage_recipe_in_configs_loads():
    for path in sorted(Path("configs").glob("stt-*.yaml")):
        assert STTTrainConfig.load(path).model["d_model"] > 0, path
