import math
from pathlib import Path

import numpy as np
import pytest

from sonare.audio.resample import resample
from sonare.eval.registry import load_synthesizer, load_transcriber
from sonare.eval.stt_eval import SttClip, clean, evaluate_stt, noisy, phone, reverberant
from sonare.eval.tts_eval import evaluate_tts

SENTENCES = ["Seven ships sailed out at dawn.", "Please call me back before noon."]


@pytest.fixture(scope="module")
def tiny():
    return load_transcriber("whisper-tiny", beam_size=1)


@pytest.fixture(scope="module")
def espeak():
    return load_synthesizer("espeak")


def test_tts_evaluation_of_a_teacher(espeak, tiny):
    report = evaluate_tts(espeak, SENTENCES, {"whisper-tiny": tiny})
    summary = report.summary()
    assert summary["sentences"] == 2 and summary["silent_outputs"] == 0
    assert summary["wer_whisper-tiny"] <= 0.5  # espeak is robotic: on two sentences tiny.en misses a word or two
    assert 1.0 <= summary["dnsmos_ovrl"] <= 5.0
    assert 0 < summary["rtf"] < 1  # espeak is far faster than real time
    assert 0 < summary["ttfa_p50"] <= summary["ttfa_p90"]
    first = report.utterances[0].as_dict()
    assert first["text"] == SENTENCES[0] and "whisper-tiny" in first["transcripts"]


class Mute:
    """A synthesizer that fails to produce audio must be reported, not crash the evaluation."""

    sample_rate = 16000

    def stream(self, text):
        yield np.zeros(0, dtype=np.float32)


def test_tts_evaluation_reports_silent_outputs(tiny):
    summary = evaluate_tts(Mute(), SENTENCES[:1], {"whisper-tiny": tiny}).summary()
    assert summary["silent_outputs"] == 1 and summary["wer_whisper-tiny"] == 1.0
    assert math.isnan(summary["dnsmos_ovrl"])


def test_stt_evaluation_clean_and_in_noise(espeak, tiny):
    clips = []
    for index, text in enumerate(SENTENCES):
        audio = np.concatenate(list(espeak.stream(text)))
        clips.append(SttClip(str(index), audio, espeak.sample_rate, text, group=f"g{index}"))
    conditions = {"clean": clean, "white@-5dB": noisy("white", -5.0, seed=1)}
    report = evaluate_stt(tiny, clips, conditions)
    summary = report.summary()
    assert summary["clean"]["clips"] == 2 and summary["clean"]["wer"] <= 0.25
    assert summary["white@-5dB"]["wer"] > summary["clean"]["wer"]
    assert summary["clean"]["rtf"] > 0
    by_group = report.by_group()["clean"]
    assert list(by_group) == ["g0", "g1"] and by_group["g0"]["clips"] == 1
    assert sum(g["reference_words"] for g in by_group.values()) == summary["clean"]["reference_words"]
    # A phone call: 8 kHz, nothing above the telephone band.
    narrow, narrow_rate = phone("mulaw")(clips[0].audio, clips[0].sample_rate, 0)
    spectrum = np.abs(np.fft.rfft(narrow)) ** 2
    above = np.fft.rfftfreq(len(narrow), 1 / narrow_rate) > 3700
    assert narrow_rate == 8000 and spectrum[above].sum() < 0.01 * spectrum.sum()
    # The noise is seeded per clip: the same condition heard twice is identical.
    again = noisy("white", -5.0, seed=1)
    first, rate = again(clips[0].audio, clips[0].sample_rate, 0)
    assert rate == 16000 and np.array_equal(first, again(clips[0].audio, clips[0].sample_rate, 0)[0])
    # A room: same length at 16 kHz, each clip its own room, the same room every time a clip is heard.
    room = reverberant(0.8, 0.0, seed=3)
    wet, wet_rate = room(clips[0].audio, clips[0].sample_rate, 0)
    assert wet_rate == 16000 and len(wet) == len(first)
    assert np.array_equal(wet, room(clips[0].audio, clips[0].sample_rate, 0)[0])
    assert not np.array_equal(wet, room(clips[0].audio, clips[0].sample_rate, 1)[0])
    dry = resample(clips[0].audio, clips[0].sample_rate, 16000)
    assert np.abs(wet - dry).max() > 0.01


@pytest.mark.skipif(
    not all(
        Path(p).exists()
        for p in (
            "/usr/share/pocketsphinx/test/data",
            "/usr/share/sounds/alsa",
            "/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz",
            "/usr/share/ktuberling/sounds/en.soundtheme",
            "/usr/share/qabcs/abcs/en/abc1.json",
        )
    ),
    reason="needs pocketsphinx-testdata, alsa-utils, the Asterisk prompts, KTuberling's and qABCs's sounds "
    "(make system-deps)",
)
def test_real_speech_manifest_lists_every_transcribed_set(tmp_path, tiny):
    import soundfile as sf

    from sonare.data.manifest import read_manifest
    from sonare.data.recordings import read_recordings
    from sonare.stt.realspeech import write_manifest

    records = list(read_manifest(write_manifest(tmp_path)))
    sections = ("librivox", "cards", "alsa", "asterisk", "asterisk-words", "ktuberling", "qabcs")
    counts = {s: sum(r["section"] == s for r in records) for s in sections}
    # Noise.wav is not speech; nor are Asterisk's tones, silences and spoken letters, nor KTuberling's "ufo"
    assert counts == {
        "librivox": 5,
        "cards": 5,
        "alsa": 8,
        "asterisk": 369,
        "asterisk-words": 121,
        "ktuberling": 70,
        "qabcs": 130,
    }
    assert len(records) == sum(counts.values())
    by_id = {r["id"]: r for r in records}
    assert by_id["cards-005"]["text"] == "eight of spades four of clubs seven of hearts"
    assert by_id["alsa-Rear_Center"]["text"] == "rear center"
    # keypad symbols as the prompt speaks them, a note on a sound dropped
    assert by_id["asterisk-dictate-both_help"]["text"].startswith("press star to toggle pause, press pound to")
    assert by_id["asterisk-at-tone-time-exactly"]["text"] == "At the sound of the tone, the time will be exactly"
    assert by_id["asterisk-words-digits-h-12"]["text"] == "twelfth"
    assert (
        by_id["ktuberling-egypt_palmtree"]["text"] == "palm tree"
        and by_id["ktuberling-moustache"]["text"] == "moustache"
    )
    assert by_id["qabcs-ice_cream"]["text"] == "ice cream" and by_id["qabcs-yinyang"]["text"] == "yin yang"
    assert not any(r["id"].startswith(("asterisk-beep", "asterisk-words-letters")) for r in records)
    # four fifths of the prompts are the adaptation dataset, in the LJSpeech layout; everything else stays held out
    adaptation = [r for r in records if r["split"] == "train"]
    assert {r["section"] for r in adaptation} == {"asterisk"} and 0.7 < len(adaptation) / 369 < 0.9
    recorded = read_recordings(tmp_path / "asterisk-adaptation")
    assert sorted(f"asterisk-{r.id}" for r in recorded) == sorted(r["id"] for r in adaptation)
    assert all(r.wav.resolve() == Path(by_id[f"asterisk-{r.id}"]["audio"]) for r in recorded)
    assert {r.text for r in recorded} == {r["text"] for r in adaptation}
    assert (tmp_path / "asterisk-adaptation" / "text.txt").read_text().splitlines() == [r.text for r in recorded]
    # Real speech with its transcript: an independent recogniser reads most of it, at 16 and 48 kHz alike.
    clips = []
    for record in (by_id["cards-005"], by_id["alsa-Front_Left"]):
        audio, rate = sf.read(record["audio"], dtype="float32")
        clips.append(SttClip(record["id"], audio, rate, record["normalized"], record["section"]))
    assert evaluate_stt(tiny, clips, {"clean": clean}).summary()["clean"]["wer"] <= 0.5
