"""Festival voices from Debian (`festival` with `festvox-kallpc16k`, `festvox-kdlpc16k`,
`festvox-us-slt-hts`): two diphone voices and an HTS voice.

Festival is driven with a small Scheme script per utterance that synthesises the text, saves the
wave and prints every segment with its end time (CMU/radio phones, see `cmu`).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from sonare.audio.io import load_audio
from sonare.data.teachers import Utterance
from sonare.data.teachers.cmu import parse_segments

VOICES = {
    "kal": "voice_kal_diphone",
    "ked": "voice_ked_diphone",
    "slt_hts": "voice_cmu_us_slt_arctic_hts",
}
SAMPLE_RATE = 16000
_SCRIPT = """({voice})
(Parameter.set 'Duration_Stretch {stretch:.4f})
(set! utt (Utterance Text "{text}"))
(utt.synth utt)
(utt.save.wave utt "{wav}" 'riff)
(mapcar (lambda (s) (format t "%s:%f\\n" (item.name s) (item.feat s "end")))
        (utt.relation.items utt 'Segment))
"""


class FestivalTeacher:
    name = "festival"
    sample_rate = SAMPLE_RATE

    def __init__(self) -> None:
        binary = shutil.which("festival")
        if binary is None:
            raise RuntimeError("festival is not installed (Debian package `festival`)")
        self._binary = binary
        self._voices = [name for name, command in VOICES.items() if self._installed(command)]

    def _installed(self, command: str) -> bool:
        result = subprocess.run([self._binary, "--batch", f"({command})"], capture_output=True, text=True, check=False)
        return result.returncode == 0 and "SIOD ERROR" not in result.stderr + result.stdout

    def voices(self) -> list[str]:
        return list(self._voices)

    def synthesize(self, text: str, voice: str = "kal", rate: float = 1.0) -> Utterance:
        if voice not in self._voices:
            raise ValueError(f"festival voice {voice!r} is not installed; have {self._voices}")
        safe = text.replace("\\", " ").replace('"', " ")
        with tempfile.TemporaryDirectory(prefix="sonare-festival-") as tmp:
            wav = Path(tmp) / "out.wav"
            script = Path(tmp) / "say.scm"
            script.write_text(_SCRIPT.format(voice=VOICES[voice], stretch=1.0 / rate, text=safe, wav=wav))
            result = subprocess.run([self._binary, "--batch", str(script)], capture_output=True, text=True, check=True)
            audio, sample_rate = load_audio(wav, SAMPLE_RATE)
        return Utterance(audio, sample_rate, parse_segments(result.stdout), None)
