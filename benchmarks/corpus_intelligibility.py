"""How well an independent recogniser reads each section of a corpus, augmented copies included: does a recipe's
copying (noise, rooms, speaker transforms) leave the speech intelligible? (`sonare eval stt` scores only clean
single-speaker clips, so it cannot say.)

    python benchmarks/corpus_intelligibility.py corpus/stt-asterisk-speakers --clips 40

Prints Whisper's WER over the first `--clips` utterances of each section (conversations left out).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sonare.data.manifest import MANIFEST_NAME, load_record_audio, read_manifest
from sonare.eval.asr import WhisperTranscriber
from sonare.eval.wer import corpus_errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--clips", type=int, default=40, help="utterances per section, the first in the manifest")
    parser.add_argument("--asr", default="whisper-base", choices=["whisper-base", "whisper-tiny"])
    parser.add_argument("--beam", type=int, default=1)
    args = parser.parse_args()
    manifest = args.corpus / MANIFEST_NAME
    by_section: dict[str, list[dict]] = {}
    for record in read_manifest(manifest):
        if "pauses" not in record:
            by_section.setdefault(record["section"], []).append(record)
    asr = WhisperTranscriber(args.asr, beam_size=args.beam)
    print(f"{'section':24s} {'clips':>5s} {'WER':>6s}")
    for section, records in by_section.items():
        pairs = [(r["normalized"], asr.transcribe(*load_record_audio(manifest, r))) for r in records[: args.clips]]
        print(f"{section:24s} {len(pairs):5d} {corpus_errors(pairs).wer:6.1%}", flush=True)


if __name__ == "__main__":
    main()
