"""`sonare say` on the shipped weights: a file, raw PCM on stdout, text from stdin, speed, and bad input."""

from __future__ import annotations

import io

import numpy as np
import pytest

from sonare.audio.io import load_audio
from sonare.cli import main

TEXT = "Your table for four is ready."


def _rms(audio: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(audio))))


def test_say_writes_a_wav_of_speech(tmp_path):
    out = tmp_path / "hello.wav"
    assert main(["say", TEXT, "-o", str(out)]) == 0
    audio, rate = load_audio(str(out))
    assert 1.0 < len(audio) / rate < 4.0  # six words
    assert _rms(audio) > 0.01


def test_say_streams_the_same_speech_as_raw_pcm(tmp_path, capsysbinary):
    out = tmp_path / "hello.wav"
    assert main(["say", TEXT, "-o", str(out), "--raw"]) == 0
    pcm = np.frombuffer(capsysbinary.readouterr().out, dtype="<i2")
    audio, _ = load_audio(str(out))
    assert len(pcm) == len(audio)
    assert np.abs(pcm / 32767.0 - audio).max() < 1e-3


def test_say_reads_stdin_and_honours_speed(tmp_path, monkeypatch):
    lengths = {}
    for speed in (1.0, 2.0):
        monkeypatch.setattr("sys.stdin", io.StringIO("Thank you for calling.\nHow can I help you today?\n"))
        out = tmp_path / f"speed{speed}.wav"
        assert main(["say", "-o", str(out), "--speed", str(speed)]) == 0
        lengths[speed] = len(load_audio(str(out))[0])
    assert lengths[2.0] / lengths[1.0] == pytest.approx(0.5, abs=0.06)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["say", TEXT, "-o", "x.wav", "--voice", "nobody"], "no voice 'nobody'"),
        (["say", TEXT, "-o", "x.wav", "--speed", "3"], "speed must be between 0.5 and 2.0"),
        (["say", TEXT], "choose an output"),
    ],
)
def test_say_refuses_bad_input_with_a_clear_message(argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match=message):
        main(argv)
    assert not (tmp_path / "x.wav").exists()
