import numpy as np
import pytest

from sonare.eval.asr import WhisperTranscriber, base_model_dir
from sonare.eval.wer import utterance_errors

SENTENCE = "The garden gate was left open all night long."


@pytest.fixture(scope="module")
def speech() -> tuple[np.ndarray, int]:
    from sonare.data.teachers import get_teacher

    clip = get_teacher("espeak").synthesize(SENTENCE, "en-us")
    return clip.audio, clip.sample_rate


@pytest.fixture(scope="module")
def tiny() -> WhisperTranscriber:
    return WhisperTranscriber("whisper-tiny", beam_size=1)


def test_whisper_tiny_transcribes_synthesized_speech(tiny, speech):
    hypothesis = tiny.transcribe(*speech)
    assert utterance_errors(SENTENCE, hypothesis).wer <= 0.2, hypothesis


def test_timed_words_are_the_transcript_placed_where_the_speech_is(tiny, speech):
    audio, rate = speech
    padded = np.concatenate([np.zeros(rate, np.float32), audio, np.zeros(rate, np.float32)])
    words = tiny.timed_words(padded, rate)
    assert utterance_errors(SENTENCE, " ".join(word for word, _, _ in words)).wer <= 0.2, words
    assert all(0.5 <= start <= end <= 1.5 + len(audio) / rate for _, start, end in words), words
    assert [start for _, start, _ in words] == sorted(start for _, start, _ in words)


def test_silence_transcribes_to_little_or_nothing(tiny):
    assert len(tiny.transcribe(np.zeros(16000 * 2, dtype=np.float32), 16000).split()) <= 2


def test_whisper_base_is_joined_from_its_two_wheels_once(tmp_path, monkeypatch, speech):
    monkeypatch.setenv("SONARE_CACHE", str(tmp_path))
    directory = base_model_dir()
    model = directory / "model.bin"
    assert directory == tmp_path / "whisper-base"
    assert {p.name for p in directory.iterdir()} == {
        "model.bin",
        "config.json",
        "tokenizer.json",
        "vocabulary.txt",
    }
    first_write = model.stat().st_mtime_ns
    assert base_model_dir() == directory and model.stat().st_mtime_ns == first_write  # not rebuilt
    base = WhisperTranscriber("whisper-base", beam_size=1)
    assert utterance_errors(SENTENCE, base.transcribe(*speech)).wer <= 0.2
