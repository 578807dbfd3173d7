"""A team's own recordings (LJSpeech layout, or one folder per speaker) become an aligned corpus section that the
TTS recipe reads."""

import re
import shutil
from pathlib import Path

import pytest

from sonare.data.build import build_corpus
from sonare.data.config import load_config
from sonare.data.manifest import MANIFEST_NAME, read_manifest, validate_record
from sonare.data.recordings import read_recordings

LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
pytestmark = pytest.mark.skipif(not LIBRIVOX.is_dir(), reason="pocketsphinx-testdata is not installed")


def librivox() -> list[tuple[str, str]]:
    """(clip id, transcript) of the five real LibriVox sentences."""
    lines = (LIBRIVOX / "transcription").read_text().splitlines()
    return [m.groups()[::-1] for m in (re.fullmatch(r"<s> (.*) </s> \((.+)\)", x.strip()) for x in lines) if m]


def ljspeech_folder(root: Path, clips: list[tuple[str, str]], normalized_column: bool = False) -> Path:
    (root / "wavs").mkdir(parents=True)
    rows = []
    for clip, text in clips:
        shutil.copy(LIBRIVOX / f"{clip}.wav", root / "wavs" / f"{clip}.wav")
        rows.append(f"{clip}|{text.upper()}|{text}" if normalized_column else f"{clip}|{text}")
    (root / "metadata.csv").write_text("\n".join(rows) + "\n")
    return root


def recipe(tmp_path: Path, dataset: Path) -> Path:
    config = tmp_path / "data.yaml"
    config.write_text(
        f"name: mine\nseed: 1\nsections:\n  - {{name: mine, kind: recordings, path: '{dataset}', tasks: [tts]}}\n"
    )
    return config


@pytest.fixture(scope="module")
def jane(tmp_path_factory) -> tuple[Path, Path]:
    """(recipe, corpus): jane's LJSpeech folder of the LibriVox clips, plus a line without audio, built."""
    tmp = tmp_path_factory.mktemp("recordings")
    dataset = ljspeech_folder(tmp / "jane", librivox(), normalized_column=True)
    with (dataset / "metadata.csv").open("a") as f:
        f.write("missing-clip|This one has no audio.\n")
    config = recipe(tmp, dataset)
    build_corpus(load_config(config), tmp / "corpus", workers=1, progress=False, features=False)
    return config, tmp / "corpus"


def test_an_ljspeech_folder_becomes_an_aligned_corpus_the_tts_recipe_reads(jane, tmp_path):
    from sonare.tts.dataset import load_examples

    config, out = jane
    clips = librivox()
    assert [r.text for r in read_recordings(load_config(config).sections[0].path)][:1] == [clips[0][1]]
    records = list(read_manifest(out / MANIFEST_NAME))
    assert len(records) == len(clips)  # the line without audio is skipped
    for r in records:
        validate_record(r)
        assert r["teacher"] == "recorded" and r["speaker"] == "recorded:jane" and (out / r["audio"]).is_file()
        ends = [p["end"] for p in r["phones"]]
        assert ends == sorted(ends) and 0 < ends[-1] <= r["duration"]
        assert len(r["words"]) == len(r["normalized"].split())

    examples = load_examples([out / MANIFEST_NAME], tmp_path / "frames", teachers=["recorded"], workers=1,
                             progress=False)  # fmt: skip
    assert len(examples) == len(clips) and all(e.n_frames > 100 for e in examples)

    # A second build finds everything done.
    build_corpus(load_config(config), out, workers=1, progress=False, features=False)
    assert len(list(read_manifest(out / MANIFEST_NAME))) == len(clips)


def test_a_voice_trained_on_the_recordings_speaks(jane, tmp_path):
    import numpy as np

    from sonare.train.tts import TTSTrainConfig, export, train
    from sonare.tts import builtin_voices, load_default
    from sonare.tts.messages import SynthesisOptions, VoiceSpec

    cfg = TTSTrainConfig.load(Path(__file__).parents[1] / "configs" / "tts-smoke.yaml")
    cfg.manifests, cfg.teachers, cfg.run_dir = [str(jane[1] / MANIFEST_NAME)], ["recorded"], str(tmp_path / "run")
    cfg.val_sentences, cfg.steps = [], 2
    cfg.voices = {"jane": {"speaker": "recorded:jane", "name": "Jane", "gender": "feminine", "language": "en"}}
    train(cfg, progress=False)
    out = export(cfg, tmp_path / "export")
    assert [v["id"] for v in builtin_voices(out)] == ["jane"] and builtin_voices(out)[0]["profile"]
    audio, _ = load_default(out).synthesize("Hello there.", SynthesisOptions(VoiceSpec(id="jane")))
    assert len(audio) > 0 and np.isfinite(audio).all()


def test_one_folder_per_speaker_names_the_speakers(tmp_path):
    clips = librivox()
    ljspeech_folder(tmp_path / "voices" / "ann", clips[:2])
    ljspeech_folder(tmp_path / "voices" / "ben", clips[2:3])
    found = read_recordings(tmp_path / "voices")
    assert [(r.speaker, r.id) for r in found] == [("ann", clips[0][0]), ("ann", clips[1][0]), ("ben", clips[2][0])]
    with pytest.raises(ValueError, match="metadata.csv"):
        read_recordings(tmp_path)  # neither layout: the speakers are two levels down
