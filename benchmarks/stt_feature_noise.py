"""How closely noise mixed into log-mel frames (`sonare.train.feature_noise`, what `noise_prob` trains on) reads as
the same noise mixed into the audio (`sonare.data.augment.add_noise`, what the corpus and the evaluator hear).

For held-out clips and each SNR: the mean absolute difference, in natural-log mel power, between the frames of the
noisy audio and the frames mixed from the clean clip's and the noise's own frames (the same stretch of noise), its
mean (a level bias), and for scale the difference between clean and noisy frames.

    python benchmarks/stt_feature_noise.py [--manifest corpus/default/manifest-heldout.jsonl] [--clips 20]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from sonare.audio.features import log_mel
from sonare.audio.io import load_audio
from sonare.data.augment import SAMPLE_RATE, add_noise, make_noise
from sonare.train.feature_noise import mix_noise, unit_power


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", default="corpus/default/manifest-heldout.jsonl")
    parser.add_argument("--clips", type=int, default=20)
    parser.add_argument("--kinds", nargs="+", default=["babble", "pink", "events"])
    parser.add_argument("--snrs", nargs="+", type=float, default=[0.0, 10.0, 20.0])
    args = parser.parse_args()
    manifest = Path(args.manifest)
    records = [json.loads(line) for line in manifest.read_text().splitlines()][: args.clips]
    print(f"{len(records)} clips of {manifest}; natural-log mel power, medians over clips")
    print(f"{'noise':8} {'SNR':>4} {'|mixed - heard|':>16} {'bias':>7} {'|clean - heard|':>16}")
    for kind in args.kinds:
        for snr in args.snrs:
            errors, biases, spans = [], [], []
            for i, r in enumerate(records):
                audio = load_audio(manifest.parent / r["audio"], SAMPLE_RATE)[0].astype(np.float32)
                clean = log_mel(audio).numpy()
                heard = log_mel(add_noise(audio, kind, snr, i).astype(np.float32)).numpy()
                noise = unit_power(log_mel(make_noise(kind, len(audio), i).astype(np.float32)))
                mixed = mix_noise(clean, noise, snr)  # from the noise's first frame, as the audio heard it
                errors.append(np.abs(mixed - heard).mean())
                biases.append((mixed - heard).mean())
                spans.append(np.abs(clean - heard).mean())
            print(f"{kind:8} {snr:4.0f} {np.median(errors):16.3f} {np.median(biases):7.3f} {np.median(spans):16.3f}")


if __name__ == "__main__":
    main()
