"""Is real speech a channel away from what the recogniser knows? Each held-out real clip's log-mel mean over its
speech frames is moved towards the training mean (the model's `feat_mean`) by a share alpha before the encoder
(per-utterance cepstral mean matching, the classic channel normalisation), and read greedily:

    python -m sonare.stt.realspeech runs/realspeech
    python benchmarks/stt_mean_matching.py [--stt-dir sonare/assets/stt] [--alphas 0 0.5 1]

Prints greedy WER per alpha over the held-out clips, the Asterisk voice and the other voices apart.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

SPEECH_WITHIN = 6.0  # frames whose mean log-mel is within this (natural log) of the loudest count as speech


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stt-dir", default="sonare/assets/stt")
    ap.add_argument("--manifest", default="runs/realspeech/manifest.jsonl")
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.0, 0.5, 1.0])
    args = ap.parse_args()
    torch.set_num_threads(1)

    from sonare.audio.features import SAMPLE_RATE, log_mel
    from sonare.audio.io import load_audio
    from sonare.audio.resample import resample
    from sonare.eval.wer import corpus_errors
    from sonare.stt.decode import GreedyDecoder, transcript
    from sonare.stt.model import SUBSAMPLING
    from sonare.stt.weights import load_model

    model, _ = load_model(args.stt_dir)
    model.eval()
    records = [json.loads(line) for line in Path(args.manifest).read_text().splitlines()]
    pairs: dict[tuple[float, str], list[tuple[str, str]]] = {}
    for record in (r for r in records if r["split"] == "heldout"):
        audio, rate = load_audio(record["audio"])
        if rate != SAMPLE_RATE:
            audio = resample(audio, rate, SAMPLE_RATE)
        mel = log_mel(audio)
        mel = mel[: len(mel) // SUBSAMPLING * SUBSAMPLING]
        level = mel.mean(1)
        shift = mel[level > level.max() - SPEECH_WITHIN].mean(0) - model.feat_mean
        group = "Asterisk voice" if record["section"].startswith("asterisk") else "other voices"
        for alpha in args.alphas:
            with torch.no_grad():
                logits, _, _ = model(mel[None] - alpha * shift)
            heard = transcript(GreedyDecoder(model.cfg.ctc_frame_seconds), torch.log_softmax(logits[0], -1).numpy())
            for key in ((alpha, "all"), (alpha, group)):
                pairs.setdefault(key, []).append((record["normalized"], heard))
    print(f"{'alpha':>5} {'clips':>8} {'group':<15} {'greedy WER':>10}")
    for (alpha, group), rows in sorted(pairs.items()):
        print(f"{alpha:5.2f} {len(rows):8d} {group:<15} {corpus_errors(rows).wer:10.1%}")


if __name__ == "__main__":
    main()
