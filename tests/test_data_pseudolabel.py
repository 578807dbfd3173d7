"""Untranscribed recordings become a training dataset where two readers agree on every word of a clip; the
readers here are stand-ins that hear each burst of sound as the word their script gives, so that which clips
are kept, and which words go with which clip when clips are read together, are known."""

from pathlib import Path

import numpy as np
import pytest

from sonare.audio.io import save_audio
from sonare.data import pseudolabel
from sonare.data.pseudolabel import WINDOW_SECONDS, agreed, label
from sonare.data.recordings import read_recordings

RATE = 16000


def burst(seconds: float, seed: int) -> np.ndarray:
    return (0.3 * np.random.default_rng(seed).standard_normal(int(seconds * RATE))).astype(np.float32)


class ScriptedReader:
    """Hears each stretch of sound as the next entry of its script (a clip's words), timed to the stretch."""

    scripts: dict[str, list[str]] = {}
    made = 0

    def __init__(self, name: str, cpu_threads: int = 2) -> None:
        type(self).made += 1
        self.script = self.scripts[name]
        self.heard = 0

    def timed_words(self, audio: np.ndarray, rate: int) -> list[tuple[str, float, float]]:
        hop = rate // 100
        frames = len(audio) // hop
        loud = np.abs(audio[: frames * hop]).reshape(frames, hop).max(axis=1) > 0.01
        edges = np.flatnonzero(np.diff(np.concatenate([[0], loud.astype(int), [0]])))
        words = []
        for start, end in zip(edges[::2], edges[1::2], strict=True):
            spoken = self.script[self.heard].split()
            self.heard += 1
            step = (end - start) / 100 / len(spoken)
            words += [(w, start / 100 + i * step, start / 100 + (i + 1) * step) for i, w in enumerate(spoken)]
        return words


@pytest.fixture
def readers(monkeypatch) -> type[ScriptedReader]:
    monkeypatch.setattr(pseudolabel, "WhisperTranscriber", ScriptedReader)
    ScriptedReader.made = 0
    return ScriptedReader


def test_agreement_ignores_case_and_punctuation_but_not_words():
    assert agreed({"whisper-base": "Cover me!", "whisper-tiny": "cover me."}) == "Cover me!"
    assert agreed({"whisper-base": "Take cover!", "whisper-tiny": "Take care!"}) is None
    assert agreed({"whisper-base": "", "whisper-tiny": ""}) is None
    assert agreed({"whisper-base": "[laughs]", "whisper-tiny": "[laughs]"}) is None


def test_clips_read_together_keep_their_own_words_and_only_agreed_ones_are_kept(tmp_path, readers):
    voice = tmp_path / "in" / "pilot"
    clips = {"a": 0.8, "b": 1.2, "c": 0.6, "d": 0.1}  # d: too short to read
    for i, (name, seconds) in enumerate(clips.items()):
        save_audio(voice / f"{name}.wav", burst(seconds, i), RATE)
    readers.scripts = {
        "whisper-base": ["Prepare for dust off.", "Landing zone clear", "Go, go, go!"],
        "whisper-tiny": ["prepare for dust-off", "landing zone here", "go go go"],
    }
    kept, total, seconds = label(tmp_path / "in", tmp_path / "out")
    assert (kept, total) == (2, 4)
    assert seconds == pytest.approx(0.8 + 0.6, abs=0.01)
    recordings = read_recordings(tmp_path / "out")
    assert [(r.speaker, r.id, r.text) for r in recordings] == [
        ("pilot", "a", "Prepare for dust off."),
        ("pilot", "c", "Go, go, go!"),
    ]
    assert all(r.wav.is_file() for r in recordings)
    assert readers.made == 2  # both readers, once


def test_a_finished_run_resumes_without_reading_again(tmp_path, readers):
    save_audio(tmp_path / "in" / "v" / "a.wav", burst(0.5, 1), RATE)
    readers.scripts = {"whisper-base": ["hello"], "whisper-tiny": ["Hello."]}
    first = label(tmp_path / "in", tmp_path / "out")
    second = label(tmp_path / "in", tmp_path / "out")
    assert first == second and first[0] == 1
    assert readers.made == 2


def test_packs_fill_one_window_and_never_mix_voices(tmp_path):
    files = []
    for voice, lengths in (("x", [9.0, 9.0, 9.0, 2.0]), ("y", [1.0])):
        for i, seconds in enumerate(lengths):
            path = tmp_path / voice / f"{i}.wav"
            save_audio(path, burst(seconds, i), RATE)
            files.append((voice, Path(path)))
    packs = list(pseudolabel._packs(files))
    assert [[f.stem for _, f, _ in p] for p in packs] == [["0", "1"], ["2", "3"], ["0"]]
    assert all({v for v, _, _ in p} == {p[0][0]} for p in packs)
    assert all(sum(len(a) / RATE + pseudolabel.GAP_SECONDS for _, _, a in p) <= WINDOW_SECONDS for p in packs)


def test_a_folder_without_voice_folders_of_audio_is_a_clear_error(tmp_path, readers):
    (tmp_path / "flat.wav").write_bytes(b"")
    with pytest.raises(ValueError, match="one folder per voice"):
        label(tmp_path, tmp_path / "out")
    with pytest.raises(ValueError, match="one folder per voice"):
        label(tmp_path / "missing", tmp_path / "out")


def test_two_clips_of_one_name_in_two_formats_are_a_clear_error(tmp_path, readers):
    save_audio(tmp_path / "in" / "v" / "a.wav", burst(0.5, 1), RATE)
    save_audio(tmp_path / "in" / "v" / "a.flac", burst(0.5, 2), RATE)
    with pytest.raises(ValueError, match="two clips of one name"):
        label(tmp_path / "in", tmp_path / "out")
    assert not (tmp_path / "out" / "transcripts.jsonl").exists()
