"""A manifest of real human speech for `sonare eval stt`: every transcribed recording that Debian's
`pocketsphinx-testdata` ships, 16 kHz, each set a section of its own:

- `librivox`: five public-domain read sentences from "Sense and Sensibility" (one reader, 71 words);
- `cards`: five short spoken card names ("eight of spades four of clubs seven of hearts"; 20 words).

    apt-get install pocketsphinx-testdata
    python -m sonare.stt.realspeech runs/realspeech
    sonare eval stt --manifest runs/realspeech/manifest.jsonl --asr sonare --asr whisper-tiny
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

TESTDATA = Path("/usr/share/pocketsphinx/test/data")
# section -> (folder, transcription file); the transcription lines read "<s> words </s> (clip)".
SETS = {"librivox": ("librivox", "transcription"), "cards": ("cards", "cards.transcription")}


def write_manifest(out_dir: str | Path, source: Path = TESTDATA) -> Path:
    """manifest.jsonl with one held-out record per clip (absolute audio paths)."""
    records = []
    for section, (folder, transcription) in SETS.items():
        listing = source / folder / transcription
        if not listing.exists():
            raise SystemExit(f"no {section} clips under {source}: apt-get install pocketsphinx-testdata")
        for line in listing.read_text().splitlines():
            match = re.fullmatch(r"<s>\s*(.*?)\s*</s> \((.+)\)", line.strip())
            if match:
                text, clip = match.groups()
                records.append(
                    {
                        "id": f"{section}-{clip}",
                        "audio": str(source / folder / f"{clip}.wav"),
                        "text": text,
                        "normalized": text,
                        "section": section,
                        "split": "heldout",
                    }
                )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in records))
    return manifest


if __name__ == "__main__":
    print(write_manifest(sys.argv[1] if len(sys.argv) > 1 else "runs/realspeech"))
