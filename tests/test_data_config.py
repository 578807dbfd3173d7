from pathlib import Path

import pytest

from sonare.data.build import section_speakers
from sonare.data.config import load_config

DEFAULT = Path(__file__).resolve().parent.parent / "configs" / "data-default.yaml"


def _voices(section):
    if section.kind == "speech":
        return {(section.teacher, v) for v in section.voices}
    if section.kind == "conversation":
        return {(g["teacher"], v) for g in section.conversation["speakers"] for v in g["voices"]}
    return set()


def test_default_recipe_size_and_teachers():
    config = load_config(DEFAULT)
    speech = [s for s in config.sections if s.kind in ("speech", "conversation")]
    assert sum(s.hours for s in speech) >= 5.0
    assert len({s.teacher for s in speech if s.kind == "speech"}) >= 3
    # The clean Piper joe portion comes first: TTS training starts on it while the rest builds.
    first = config.sections[0]
    assert (first.teacher, first.voices, first.transform, first.split) == ("piper", ["joe"], {}, "train")
    assert first.hours >= 2.0


@pytest.mark.parametrize("recipe", ["data-default.yaml", "data-stt-answers.yaml", "data-stt-words.yaml"])
def test_heldout_speakers_are_never_trained_on(recipe):
    config = load_config(DEFAULT.parent / recipe)
    train = [s for s in config.sections if s.split == "train"]
    heldout = [s for s in config.sections if s.split == "heldout"]
    assert heldout
    train_voices = set().union(*(_voices(s) for s in train))
    train_speakers = {sp[0] for s in train if s.kind == "speech" for sp in section_speakers(config, s)}
    for section in heldout:
        if section.kind == "augment":
            assert all(config.section(name).split == "heldout" for name in section.sources)
            continue
        assert section.sentence_split == "heldout"
        for teacher, voice in _voices(section):
            if (teacher, voice) in train_voices:
                # Only a transformed voice may recur, as speakers drawn for this section alone.
                assert section.kind == "speech" and section.speakers_per_voice > 0
        if section.kind == "speech":
            assert not {sp[0] for sp in section_speakers(config, section)} & train_speakers


def test_a_recipe_on_a_base_replaces_keys_and_merges_sections_by_name(tmp_path):
    base = tmp_path / "base.yaml"
    base.write_text(
        "name: base\nseed: 1\nsections:\n"
        "  - {name: read, kind: speech, hours: 1.0, teacher: espeak, voices: [en-us], rate: [0.9, 1.1]}\n"
        "  - {name: noisy, kind: augment, hours: 0.5, sources: [read]}\n"
    )
    derived = tmp_path / "derived.yaml"
    derived.write_text(
        f"base: {base}\nname: derived\nseed: 2\nsections:\n"
        "  - {name: read, hours: 2.0}\n"
        "  - {name: more, kind: speech, hours: 0.1, teacher: flite, voices: [kal]}\n"
    )
    config = load_config(derived)
    assert (config.name, config.seed) == ("derived", 2)
    assert [s.name for s in config.sections] == ["read", "noisy", "more"]
    read = config.section("read")
    assert (read.hours, read.teacher, read.rate) == (2.0, "espeak", [0.9, 1.1])  # only `hours` replaced
    assert config.section("noisy").hours == 0.5
    assert load_config(base).section("read").hours == 1.0  # the base recipe itself is unchanged


def test_answers_recipe_reads_lone_answers_with_no_held_out_voice(tmp_path):
    config = load_config(DEFAULT.parent / "data-stt-answers.yaml")
    assert all(s.sentence_style == "answers" for s in config.sections if s.kind == "speech")
    speech = [s for s in config.sections if s.kind == "speech" and s.split == "train"]
    heldout = load_config(DEFAULT)
    untransformed = {
        v for s in heldout.sections if s.split == "heldout" and s.speakers_per_voice == 0 for v in _voices(s)
    }
    assert not untransformed & set().union(*(_voices(s) for s in speech))
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: x\nseed: 1\nsections:\n  - {name: a, kind: speech, teacher: espeak, voices: [en-us],"
        " sentence_style: poems}\n"
    )
    with pytest.raises(ValueError, match="sentence_style"):
        load_config(bad)
