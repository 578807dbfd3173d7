"""Speech that packages install, read from folders and from inside game archives, lands one folder per voice."""

import io
import zipfile

import numpy as np
import soundfile as sf

from sonare.audio.io import load_audio
from sonare.data.found_speech import MAX_SECONDS, collect

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
