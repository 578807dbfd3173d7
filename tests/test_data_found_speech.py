"""Speech that packages install, read from folders and from inside game archives, lands one folder per voice."""

import io
import zipfile

import numpy as np
import pytest
import soundfile as sf

from sonare.audio.io import load_audio
from sonare.data.found_speech import MAX_SECONDS, SILENCE_MARGIN, collect, trim_silence

RATE = 22050


def ogg(seconds: float) -> bytes:
    buffer = io.BytesIO()
    tone = 0.2 * np.sin(2 * np.pi * 220 * np.arange(int(seconds * RATE)) / RATE)
    sf.write(buffer, tone, RATE, format="OGG")
    return buffer.getvalue()


def test_folders_and_archives_become_one_folder_per_voice(tmp_path):
    root = tmp_path / "root"
    pack = root / "usr/share/games/hedgewars/Data/Sounds/voices/Pirate"
    pack.mkdir(parents=True)
    (pack / "Ahoy.ogg").write_bytes(ogg(0.7))
    robot = root / "usr/share/games/hedgewars/Data/Sounds/voices/Robot"  # processed past human: not gathered
    robot.mkdir(parents=True)
    (robot / "Beep.ogg").write_bytes(ogg(0.5))
    archive = root / "usr/share/games/warzone2100/base.wz"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as wz:
        wz.writestr("audio/tutorial/tut1.ogg", ogg(2.0))
        wz.writestr("audio/taunts/taunt2/haha2.ogg", ogg(0.8))
        wz.writestr("audio/tutorial/scene.ogg", ogg(MAX_SECONDS + 1))  # a whole scene: too long
        wz.writestr("audio/nexus/laugh1.ogg", ogg(0.8))  # a processed voice: not gathered
    out = tmp_path / "out"
    counts = collect(out, root)
    assert counts == {"hedgewars-data": 1, "warzone2100-data": 2}
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.wav"))
    assert written == [
        "hedgewars-Pirate/Ahoy.wav",
        "warzone2100-taunt2/audio_taunts_taunt2_haha2.wav",
        "warzone2100-tutorial/audio_tutorial_tut1.wav",
    ]
    audio, rate = load_audio(out / "warzone2100-tutorial/audio_tutorial_tut1.wav")
    assert rate == RATE and abs(len(audio) / rate - 2.0) < 0.01


def test_digital_silence_padding_is_cut_to_a_margin_and_silent_clips_are_dropped(tmp_path):
    line = 0.2 * np.sin(2 * np.pi * 220 * np.arange(RATE) / RATE).astype(np.float32)
    padded = np.concatenate([np.zeros(RATE // 2, np.float32), line, np.zeros(10 * RATE, np.float32)])
    trimmed = trim_silence(padded, RATE)
    assert len(trimmed) / RATE == pytest.approx(1.0 + 2 * SILENCE_MARGIN, abs=0.01)
    assert len(trim_silence(line, RATE)) == len(line)
    assert len(trim_silence(np.zeros(RATE, np.float32), RATE)) == 0
    root = tmp_path / "root"
    units = root / "usr/share/games/boswars/units/tank"
    units.mkdir(parents=True)
    sf.write(units / "ready.wav", np.concatenate([line, np.zeros(int(MAX_SECONDS) * RATE, np.float32)]), RATE)
    sf.write(units / "hiss.wav", np.zeros(RATE, np.float32), RATE)
    counts = collect(tmp_path / "out", root)
    assert counts == {"boswars-data": 1}  # padded past MAX_SECONDS, yet one line of speech; the silent clip dropped
    audio, rate = load_audio(tmp_path / "out/boswars-units/tank_ready.wav")
    assert len(audio) / rate == pytest.approx(1.0 + SILENCE_MARGIN, abs=0.01)
