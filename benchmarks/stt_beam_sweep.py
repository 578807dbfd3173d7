"""The beam search's width against accuracy and CPU: the shipped recogniser decoding the held-out clips, clean and
in babble, at each `BeamSettings` override given.

Every setting decodes the same clips as `sonare eval stt` (clean single-speaker held-out clips; babble at 10 dB
SNR seeded per clip as its `--snr 10` does), whole files on one thread. CPU is this process's CPU time in
transcription (features, encoder and decoder; not the noise mixing) over the audio's length, so settings compare
within one run even on a busy machine. `--held-back` decodes instead the clips the training recipe holds back
from training (`sonare.train.common.is_held_back`, as training decides), to check a choice made on held-out clips. Each
row also counts the reference words the language model does not know and how many of them were transcribed.

    python benchmarks/stt_beam_sweep.py --manifest corpus/default/manifest.jsonl beam=12,margin=1e9 beam=48,margin=9
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections import Counter
from pathlib import Path

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("settings", nargs="+", help="comma-separated BeamSettings fields, e.g. beam=48,margin=9")
    parser.add_argument("--manifest", type=Path, default=Path("corpus/default/manifest.jsonl"))
    parser.add_argument("--snr", type=float, default=10.0, help="babble level against the speech, dB")
    parser.add_argument("--held-back", action="store_true", help="the clips held back from training, not held out")
    parser.add_argument("--out", type=Path, help="write the results here (JSON)")
    args = parser.parse_args()
    torch.set_num_threads(1)

    from sonare.data.manifest import load_record_audio, split_records
    from sonare.eval.stt_eval import clean, noisy
    from sonare.eval.wer import WordErrors, normalize_for_wer, utterance_errors
    from sonare.stt import load_default
    from sonare.train.common import is_held_back
    from sonare.train.stt import STTTrainConfig

    stt = load_default()
    if args.held_back:
        fraction = STTTrainConfig.val_fraction
        records = [r for r in split_records(args.manifest, "train") if is_held_back(r["id"], fraction)]
    else:
        records = split_records(args.manifest, "heldout")
    records = [r for r in records if "pauses" not in r and not r.get("augment")]
    clips = [(load_record_audio(args.manifest, r), r["normalized"]) for r in records]
    seconds = sum(len(audio) / rate for (audio, rate), _ in clips)
    conditions = {"clean": clean, f"babble@{args.snr:g}dB": noisy("babble", args.snr, 0)}
    heard = {
        name: [condition(audio, rate, i) for i, ((audio, rate), _) in enumerate(clips)]
        for name, condition in conditions.items()
    }
    shipped = stt.beam
    results = []
    for spec in args.settings:
        fields = dict(part.split("=") for part in spec.split(","))
        stt.beam = dataclasses.replace(shipped, **{k: type(getattr(shipped, k))(v) for k, v in fields.items()})
        row = {"settings": dataclasses.asdict(stt.beam)}
        for name, inputs in heard.items():
            start = time.process_time()
            hypotheses = [stt.transcribe(audio, rate) for audio, rate in inputs]
            cpu = time.process_time() - start
            errors = sum(
                (utterance_errors(text, h) for (_, text), h in zip(clips, hypotheses, strict=True)), WordErrors()
            )
            unknown = found = 0
            for (_, text), hypothesis in zip(clips, hypotheses, strict=True):
                said = Counter(normalize_for_wer(hypothesis))
                for word in normalize_for_wer(text):
                    if word not in stt.lm.words:
                        unknown += 1
                        found += said[word] > 0
                        said[word] -= 1
            row[name] = {
                "wer": round(errors.wer, 4),
                "cpu_rtf": round(cpu / seconds, 4),
                "unknown_words": unknown,
                "unknown_words_transcribed": found,
            }
        results.append(row)
        print(
            spec,
            " | ".join(
                f"{name}: WER {row[name]['wer']:.4f}, CPU RTF {row[name]['cpu_rtf']:.4f}, unknown words "
                f"{row[name]['unknown_words_transcribed']}/{row[name]['unknown_words']}"
                for name in heard
            ),
        )
    if args.out:
        summary = {"clips": len(clips), "held_back": args.held_back, "results": results}
        args.out.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
