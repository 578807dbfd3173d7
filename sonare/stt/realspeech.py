"""A manifest of real human speech for `sonare eval stt`: the LibriVox clips Debian's `pocketsphinx-testdata`
ships (five public-domain read sentences from "Sense and Sensibility", 16 kHz, with transcripts).

    apt-get install pocketsphinx-testdata
    python -m sonare.stt.realspeech runs/librivox
    sonare eval stt --manifest runs/librivox/manifest.jsonl --asr sonare --asr whisper-tiny
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")


def write_manifest(out_dir: str | Path, source: Path = LIBRIVOX) -> Path:
    """manifest.jsonl with one held-out record per clip (absolute audio paths)."""
    if not (source / "transcription").exists():
        raise SystemExit(f"no LibriVox clips under {source}: apt-get install pocketsphinx-testdata")
    records = []
    for line in (source / "transcription").read_text().splitlines():
        match = re.fullmatch(r"<s> (.*) </s> \((.+)\)", line.strip())
        if match:
            text, clip = match.groups()
            records.append(
                {"id": clip, "audio": str(source / f"{clip}.wav"), "text": text, "normalized": text, "split": "heldout"}
            )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in records))
    return manifest


if __name__ == "__main__":
    print(write_manifest(sys.argv[1] if len(sys.argv) > 1 else "runs/librivox"))
