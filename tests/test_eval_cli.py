"""`sonare eval` end to end on a tiny corpus written by the test."""

import json

import numpy as np
import pytest
from eval_clips import spoken_conversation

from sonare.audio.io import save_audio
from sonare.cli import main
from sonare.eval.turns import END_OF_TURN, HOLD


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A manifest with one held-out conversation and single-voice clips of two speakers."""
    from sonare.data.teachers import get_teacher

    root = tmp_path_factory.mktemp("corpus")
    audio, rate, pauses = spoken_conversation(
        ["Could you check my order", "from last week?", "Thanks a lot."],
        [(0.3, HOLD), (1.4, END_OF_TURN), (1.4, END_OF_TURN)],
    )
    save_audio(root / "audio" / "conv.wav", audio, rate)
    records = [
        {
            "id": "conv",
            "audio": "audio/conv.wav",
            "text": "Could you check my order from last week? Thanks a lot.",
            "pauses": [
                {"start": p.start, "end": p.end, "kind": p.kind} | ({"after_sentence": False} if p.kind == HOLD else {})
                for p in pauses
            ],
            "speaker": "espeak-en-us",
            "augment": {},
            "split": "heldout",
        }
    ]
    espeak = get_teacher("espeak")
    texts = [
        "The garden gate was left open.",
        "The children played in the park after school.",
        "Please call me back soon.",
    ]
    for voice in ("en-us", "en-us+f3"):
        for index, text in enumerate(texts):
            clip = espeak.synthesize(text, voice)
            name = f"{voice.replace('+', '_')}-{index}"
            save_audio(root / "audio" / f"{name}.wav", clip.audio, clip.sample_rate)
            records.append(
                {
                    "id": name,
                    "audio": f"audio/{name}.wav",
                    "text": text,
                    "normalized": text,
                    "speaker": f"espeak-{voice}",
                    "augment": {},
                    "split": "heldout",
                }
            )
    manifest = root / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in records))
    return manifest


def test_eval_without_a_subcommand_prints_help(capsys):
    assert main(["eval"]) == 2
    assert "tts" in capsys.readouterr().out


def test_eval_turns_writes_the_curve_and_the_best_setting(corpus, tmp_path, capsys):
    out = tmp_path / "turns.json"
    assert main(["eval", "turns", "--manifest", str(corpus), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "timer_ms" in printed and "all holds: best within 5%" in printed
    assert "pauses to think (mid-sentence holds): best within 5%" in printed  # the hold is labelled mid-sentence
    results = json.loads(out.read_text())
    assert results["command"].startswith("sonare") and results["settings"]["detector"] == "vad-timer"
    assert results["conversations"] == 1
    assert [row["timer_ms"] for row in results["curve"]] == list(range(100, 2001, 100))
    best = results["best"]["all holds"]
    # The 0.3 s hold must not be cut off and the 1.4 s ends must be caught.
    assert best["false_cutoffs"] == 0 and best["misses"] == 0
    assert best["timer_ms"] / 1000 <= best["latency_p50"] < 1.4
    assert results["best"]["pauses to think (mid-sentence holds)"] == best  # the only hold is mid-sentence


def test_eval_turns_hears_the_conversations_as_a_phone_call(corpus, tmp_path, capsys, monkeypatch):
    from sonare.eval import registry

    heard = []  # (rate, highest frequency with energy) of what the detector is given
    load = registry.load_turn_detector

    def recording(name):
        detector = load(name)
        detect = detector.detect

        def spy(audio, rate):
            spectrum = np.abs(np.fft.rfft(audio))
            heard.append((rate, np.fft.rfftfreq(len(audio), 1 / rate)[spectrum > spectrum.max() * 1e-3].max()))
            return detect(audio, rate)

        detector.detect = spy
        return detector

    monkeypatch.setattr(registry, "load_turn_detector", recording)
    out = tmp_path / "phone.json"
    assert main(["eval", "turns", "--manifest", str(corpus), "--phone", "mulaw", "--out", str(out), "--quiet"]) == 0
    [(rate, top)] = heard
    assert rate == 8000 and top < 4000  # a phone line's audio, not the 22 kHz teacher recording
    assert "vad-timer (phone, mulaw): 1 conversations" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["settings"]["phone"] == "mulaw"
    # Band-limited to 300-3400 Hz at 8 kHz through G.711, the speech still reads as speech and pauses as silence.
    best = results["best"]["all holds"]
    assert best["false_cutoffs"] == 0 and best["misses"] == 0 and best["latency_p50"] < 1.4


def test_eval_turns_pools_several_manifests(corpus, tmp_path):
    once, twice = tmp_path / "once.json", tmp_path / "twice.json"
    assert main(["eval", "turns", "--manifest", str(corpus), "--out", str(once), "--quiet"]) == 0
    assert main(["eval", "turns", "--manifest", str(corpus), str(corpus), "--out", str(twice), "--quiet"]) == 0
    one, two = json.loads(once.read_text()), json.loads(twice.read_text())
    assert two["conversations"] == 2 * one["conversations"]
    for a, b in zip(one["curve"], two["curve"], strict=True):
        assert (b["holds"], b["ends"], b["false_cutoffs"]) == (2 * a["holds"], 2 * a["ends"], 2 * a["false_cutoffs"])
        assert b["false_cutoff_rate"] == a["false_cutoff_rate"]


def test_eval_clone_from_a_manifest_separates_the_two_voices(corpus, tmp_path):
    out = tmp_path / "clone.json"
    assert main(["eval", "clone", "--manifest", str(corpus), "--out", str(out)]) == 0
    summary = json.loads(out.read_text())["summary"]
    assert summary["speakers"] == 2 and summary["same_pairs"] == 6  # conversations are left out
    assert summary["same_mean"] > summary["different_mean"]


def test_eval_clone_from_directory_pairs(corpus, tmp_path):
    audio_dir = corpus.parent / "audio"
    male, female = tmp_path / "male", tmp_path / "female"
    for directory, prefix in ((male, "en-us-"), (female, "en-us_f3-")):
        directory.mkdir()
        for path in audio_dir.glob(f"{prefix}*.wav"):
            (directory / path.name).write_bytes(path.read_bytes())
    out = tmp_path / "pairs.json"
    # Reference and "generated" are the same voice here, so similarity must beat the other speaker.
    assert (
        main(
            [
                "eval",
                "clone",
                "--pair",
                str(male),
                str(male),
                "--pair",
                str(female),
                str(female),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    pairs = json.loads(out.read_text())["pairs"]
    assert [p["clips"] for p in pairs] == [3, 3]
    assert all(p["similarity_mean"] > p["other_speakers_mean"] for p in pairs)


def test_eval_stt_on_manifest_clips_clean_and_noisy(corpus, tmp_path, capsys):
    out = tmp_path / "stt.json"
    argv = ["eval", "stt", "--manifest", str(corpus), "--asr", "whisper-tiny", "--beam", "1", "--limit", "4"]
    conditions = ["--snr", "10", "--noise", "pink", "--phone", "mulaw", "--reverb", "0.6"]
    assert main([*argv, *conditions, "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "pink@10dB" in printed and "phone-mulaw" in printed and "room-rt60-0.6s" in printed
    results = json.loads(out.read_text())
    summary = results["summary"]["whisper-tiny"]
    assert [summary[c]["clips"] for c in ("clean", "pink@10dB", "phone-mulaw", "room-rt60-0.6s")] == [4, 4, 4, 4]
    assert summary["clean"]["wer"] <= 0.3
    assert all("whisper-tiny/pink@10dB" in clip for clip in results["clips"])
    assert not any(clip["id"] == "conv" for clip in results["clips"])


def test_eval_tts_speaks_held_out_sentences(tmp_path, capsys):
    out = tmp_path / "tts.json"
    argv = ["eval", "tts", "--engine", "espeak", "--sentences", "2", "--asr", "whisper-tiny", "--beam", "1"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    assert "wer_whisper-tiny" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["settings"]["input"] == "normalized" and results["summary"]["sentences"] == 2
    assert not any(ch.isdigit() for u in results["utterances"] for ch in u["text"])  # spoken form
