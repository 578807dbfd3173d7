"""A manifest of real human speech for `sonare eval stt`: every transcribed recording that Debian packages put on
this machine, each set a section of its own:

- `librivox` (pocketsphinx-testdata): five public-domain read sentences from "Sense and Sensibility", one
  reader, 16 kHz, 71 words;
- `cards` (pocketsphinx-testdata): five short spoken card names ("eight of spades four of clubs seven of
  hearts"), 16 kHz, 21 words;
- `alsa` (alsa-utils): the eight speaker-test announcements ("front left", "rear center", ...), 48 kHz, 16
  words; each file is named after what it says.

    apt-get install pocketsphinx-testdata alsa-utils
    python -m sonare.stt.realspeech runs/realspeech
    sonare eval stt --manifest runs/realspeech/manifest.jsonl --asr sonare --asr whisper-tiny
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

POCKETSPHINX = Path("/usr/share/pocketsphinx/test/data")
ALSA = Path("/usr/share/sounds/alsa")
# pocketsphinx-testdata's sets: folder -> transcription file, whose lines read "<s> words </s> (clip)".
TRANSCRIBED = {"librivox": "transcription", "cards": "cards.transcription"}


def _transcribed(folder: Path, listing: str) -> list[tuple[str, Path, str]]:
    clips = []
    for line in (folder / listing).read_text().splitlines():
        match = re.fullmatch(r"<s>\s*(.*?)\s*</s> \((.+)\)", line.strip())
        if match:
            text, clip = match.groups()
            clips.append((clip, folder / f"{clip}.wav", text))
    return clips


def _announcements(folder: Path) -> list[tuple[str, Path, str]]:
    """speaker-test's channel names, which each file says (Noise.wav is noise)."""
    return [(p.stem, p, p.stem.replace("_", " ").lower()) for p in sorted(folder.glob("*_*.wav"))]


def write_manifest(out_dir: str | Path, pocketsphinx: Path = POCKETSPHINX, alsa: Path = ALSA) -> Path:
    """manifest.jsonl with one held-out record per clip (absolute audio paths)."""
    if not all((pocketsphinx / folder / listing).exists() for folder, listing in TRANSCRIBED.items()):
        raise SystemExit(f"no transcribed clips under {pocketsphinx}: apt-get install pocketsphinx-testdata")
    if not list(alsa.glob("*_*.wav")):
        raise SystemExit(f"no speaker-test clips under {alsa}: apt-get install alsa-utils")
    sets = {section: _transcribed(pocketsphinx / section, listing) for section, listing in TRANSCRIBED.items()}
    sets["alsa"] = _announcements(alsa)
    records = [
        {
            "id": f"{section}-{clip}",
            "audio": str(path),
            "text": text,
            "normalized": text,
            "section": section,
            "split": "heldout",
        }
        for section, clips in sets.items()
        for clip, path, text in clips
    ]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in records))
    return manifest


if __name__ == "__main__":
    print(write_manifest(sys.argv[1] if len(sys.argv) > 1 else "runs/realspeech"))
