"""Predicted naturalness (DNSMOS) of derived-voice transforms, to choose a built-in voice's transform.

Each candidate is the default voice adapted by a speaker transform (pitch shift in semitones, pitch range
factor, formant ratio), composed with the default voice's calibration exactly as the export does
(`sonare.train.tts._shipped_voices`). Every candidate and the default voice speak the same held-out sentences
(`sonare eval tts`'s list, normalized, from its sentence `--skip` on: choosing on sentences after those an
evaluation reports keeps the choice from being fitted to them); the table gives each one's mean DNSMOS overall
and its paired difference from the default voice (mean and standard error over sentences), so a transform's cost
in naturalness is read against the voice it starts from rather than against run-to-run drift.

    python benchmarks/tts_voice_transforms.py --sentences 40 --candidate brook=3.6,0.83,1.12 \
        --candidate brook-mild=2.5,0.83,1.08 [--skip 400] [--model-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import torch


def _candidate(text: str) -> tuple[str, dict[str, float]]:
    name, _, numbers = text.partition("=")
    semitones, pitch_range, formant = (float(x) for x in numbers.split(","))
    return name, {"pitch_semitones": semitones, "pitch_range": pitch_range, "formant_ratio": formant}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=40)
    ap.add_argument("--candidate", action="append", type=_candidate, default=[], help="NAME=SEMITONES,RANGE,FORMANT")
    ap.add_argument("--skip", type=int, default=0, help="leave out the evaluation's first SKIP sentences")
    ap.add_argument("--model-dir", default=os.environ.get("SONARE_TTS_DIR"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(1)

    from sonare.eval.mos import dnsmos
    from sonare.text import generate_sentences
    from sonare.text.normalize import normalize
    from sonare.tts import load_default
    from sonare.tts.adapt import compose, from_transform
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.tts.weights import builtin_voices

    model = load_default(args.model_dir)
    default = next(v for v in builtin_voices(args.model_dir) if v["id"] == model.default_voice)
    d = model.model.cfg.d_speaker
    speaker, calibration = np.asarray(default["embedding"][:d]), np.asarray(default["embedding"][d:], np.float32)
    pivot = default["profile"]["median_lf0"]
    voices = {default["id"]: np.asarray(default["embedding"])}
    for name, transform in args.candidate:
        voices[name] = np.concatenate([speaker, compose(calibration, from_transform(pivot, **transform))])

    listed = generate_sentences(args.skip + args.sentences, seed=0, split="heldout")  # `sonare eval tts`'s list
    sentences = [normalize(s) for s in listed[args.skip :]]
    scores = {}
    for name, embedding in voices.items():
        options = SynthesisOptions(VoiceSpec(embedding=tuple(float(x) for x in embedding)))
        scores[name] = np.array([dnsmos(model.synthesize(s, options)[0], model.sample_rate).ovrl for s in sentences])
        print(f"{name}: {scores[name].mean():.3f}", flush=True)

    reference = scores[default["id"]]
    print(
        f"\n{len(sentences)} held-out sentences after the first {args.skip}, DNSMOS overall "
        f"(paired difference from {default['id']})"
    )
    print("| voice | transform | DNSMOS | difference | standard error |")
    print("|---|---|---:|---:|---:|")
    transforms = dict(args.candidate)
    for name, s in scores.items():
        diff = s - reference
        t = transforms.get(name)
        described = (
            f"{t['pitch_semitones']:+g} st, range x{t['pitch_range']:g}, formants x{t['formant_ratio']:g}" if t else "-"
        )
        se = diff.std(ddof=1) / np.sqrt(len(diff))
        print(f"| {name} | {described} | {s.mean():.3f} | {diff.mean():+.3f} | {se:.3f} |")
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "sentences": len(sentences),
                    "transforms": transforms,
                    "dnsmos": {k: v.tolist() for k, v in scores.items()},
                }
            )
        )


if __name__ == "__main__":
    main()
