"""flite (CMU) through its command-line program, from the Debian `flite` package.

`flite -psdur` prints each segment with its end time, in CMU phones (see `cmu`).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from sonare.audio.io import load_audio
from sonare.data.teachers import Utterance
from sonare.data.teachers.cmu import parse_segments

# Voices built into the Debian binary; awb_time is a limited-domain (clock) voice and excluded.
VOICES = ("kal", "kal16", "awb", "rms", "slt")
SAMPLE_RATE = 16000


class FliteTeacher:
    name = "flite"
    sample_rate = SAMPLE_RATE

    def __init__(self) -> None:
        binary = shutil.which("flite")
        if binary is None:
            raise RuntimeError("flite is not installed (Debian package `flite`)")
        self._binary = binary

    def voices(self) -> list[str]:
        return list(VOICES)

    def synthesize(self, text: str, voice: str = "slt", rate: float = 1.0) -> Utterance:
        if voice not in VOICES:
            raise ValueError(f"flite has no voice {voice!r}")
        with tempfile.TemporaryDirectory(prefix="sonare-flite-") as tmp:
            wav = Path(tmp) / "out.wav"
            result = subprocess.run(
                [self._binary, "-voice", voice, "--setf", f"duration_stretch={1.0 / rate:.4f}",
                 "-psdur", "-t", text, "-o", str(wav)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            audio, sample_rate = load_audio(wav, SAMPLE_RATE)
        return Utterance(audio, sample_rate, parse_segments(result.stdout), None)
