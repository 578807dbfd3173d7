"""flite (CMU) through its command-line program, from the Debian `flite` package.

`flite -psdur` prints each segment with its end time; the segments are CMU phones, which are
written here as the IPA that espeak-ng en-us uses for the same sounds so that
`sonare.data.timings` can carry them over to the shared phonemes. Pauses ("pau") are dropped.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from sonare.audio.io import load_audio
from sonare.data.teachers import Timing, Utterance

CMU_TO_IPA = {
    "aa": "ɑː", "ae": "æ", "ah": "ʌ", "ao": "ɔː", "aw": "aʊ", "ax": "ə", "axr": "ɚ", "ay": "aɪ",
    "b": "b", "ch": "tʃ", "d": "d", "dh": "ð", "dx": "ɾ", "eh": "ɛ", "er": "ɜː", "ey": "eɪ",
    "f": "f", "g": "ɡ", "hh": "h", "ih": "ɪ", "iy": "iː", "jh": "dʒ", "k": "k", "l": "l", "m": "m",
    "n": "n", "ng": "ŋ", "ow": "oʊ", "oy": "ɔɪ", "p": "p", "r": "ɹ", "s": "s", "sh": "ʃ", "t": "t",
    "th": "θ", "uh": "ʊ", "uw": "uː", "v": "v", "w": "w", "y": "j", "z": "z", "zh": "ʒ",
}  # fmt: skip

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


def parse_segments(output: str) -> list[Timing]:
    """`pau:0.164 hh:0.255 ...` (segment:end time) into IPA-labelled spans, pauses dropped."""
    phones = []
    previous_end = 0.0
    for item in output.split():
        name, _, end_text = item.rpartition(":")
        try:
            end = float(end_text)
        except ValueError:
            continue
        if name in CMU_TO_IPA:
            phones.append(Timing(CMU_TO_IPA[name], previous_end, end))
        previous_end = end
    return phones
