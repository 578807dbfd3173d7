"""Where a TTS checkpoint's frames moved from another's: the same sentences, in the first checkpoint's durations.

    python benchmarks/tts_frame_shift.py checkpoints/tts-joe-more.pt checkpoints/tts-joe-heard-fresh.pt

Both speak `--sentences` fresh training-split sentences (`sonare.train.intelligibility.FreshTexts`) as the default
voice's speaker, each in the phoneme durations the first predicts, so frame t is the same sound in both. Printed,
over the first's voiced and unvoiced frames: the mean and mean absolute change of the envelope (natural log, its
64 channels in 8 groups, low to high frequency) and of the log aperiodicity (8 bands), and how often voicing flips.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from sonare.tts.acoustic import N_ENV


def main() -> None:
    from sonare.train.intelligibility import FreshTexts, rounded_durations
    from sonare.train.tts import resumed_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", help="checkpoint (full or slim) whose durations both speak in")
    ap.add_argument("second", help="checkpoint of the same lineage (the same speaker table)")
    ap.add_argument("--speaker", default="piper:joe")
    ap.add_argument("--sentences", type=int, default=8)
    ap.add_argument("--seed", type=int, default=99)
    args = ap.parse_args()

    torch.set_num_threads(1)
    ckpts = [torch.load(p, map_location="cpu", weights_only=False) for p in (args.first, args.second)]
    first, second = (resumed_model(c, {}).eval() for c in ckpts)
    ids, _ = FreshTexts(set(), args.sentences, seed=args.seed, pool=20 * args.sentences).draw()
    speaker_ids = torch.full((len(ids),), ckpts[0]["speakers"][args.speaker])
    with torch.no_grad():
        h = first.encode(ids, first.speakers(speaker_ids))
        durations = rounded_durations(first, h, ids)
        n = int(durations.sum(1).max())
        a = first.denormalize(first.decode_aligned(h, first.speakers(speaker_ids), durations, n))
        h2 = second.encode(ids, second.speakers(speaker_ids))
        b = second.denormalize(second.decode_aligned(h2, second.speakers(speaker_ids), durations, n))
    valid = torch.arange(n)[None] < durations.sum(1)[:, None]
    voiced = a[..., 1] > 0.5
    np.set_printoptions(precision=3, suppress=True)
    for name, rows in (("voiced", valid & voiced), ("unvoiced", valid & ~voiced)):
        change = (b - a)[rows]
        envelope = change[:, 2 : 2 + N_ENV].reshape(-1, 8, N_ENV // 8)
        flips = (a[..., 1][rows] != b[..., 1][rows]).float().mean()
        print(f"{name} frames: {int(rows.sum())}, voicing flips {flips:.3f}")
        print(f"  envelope mean change   {envelope.mean((0, 2)).numpy()}")
        print(f"  envelope mean |change| {envelope.abs().mean((0, 2)).numpy()}")
        print(f"  aperiodicity mean change   {change[:, 2 + N_ENV :].mean(0).numpy()}")
        print(f"  aperiodicity mean |change| {change[:, 2 + N_ENV :].abs().mean(0).numpy()}")


if __name__ == "__main__":
    main()
