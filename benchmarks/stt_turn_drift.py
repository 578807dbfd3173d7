"""How far a stage's end-of-turn outputs moved from another model's: the mean KL divergence per encoder frame of the
reference's turn outputs (end and speech probabilities) from each model's, on batches of a recipe's training clips
drawn and augmented as the recipe draws them (seeded, so every model reads the same frames), over all batches and
over the batches that hold a conversation. The quantity `turn_teacher` holds down in training
(`sonare.train.stt.turn_divergence`).

    python benchmarks/stt_turn_drift.py --recipe configs/stt-words.yaml --reference models/stt-answers \
        models/stt-words models/stt-words-keepturn [--batches 30]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np
import torch

from sonare.stt.weights import load_model
from sonare.train.stt import STTTrainConfig, collate, load_data, make_batches, turn_divergence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="model directories (stt.safetensors)")
    parser.add_argument("--recipe", required=True, help="an STT recipe whose training clips are read")
    parser.add_argument("--reference", required=True, help="the model directory the others are measured from")
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(2)
    cfg = STTTrainConfig.load(args.recipe)
    train, _ = load_data(cfg, Path(cfg.run_dir))
    reference = load_model(args.reference)[0].eval()
    models = {name: load_model(name)[0].eval() for name in args.models}
    batches = make_batches(train, cfg.batch_frames, cfg.max_frames, random.Random(args.seed))[: args.batches]
    rng = np.random.default_rng(args.seed)
    every: dict[str, list[float]] = {name: [] for name in models}
    conversations: dict[str, list[float]] = {name: [] for name in models}
    with torch.no_grad():
        for indices in batches:
            items = [train[i] for i in indices]
            batch = collate(items, reference, cfg, rng)
            for name, model in models.items():
                logits = model.turn(model.encode(batch["mel"], lengths=batch["lengths"])[0])
                kl = turn_divergence(logits, reference, batch).item()
                every[name].append(kl)
                if any(u.pauses for u in items):
                    conversations[name].append(kl)
    print(f"mean KL per frame from {args.reference}, {len(batches)} batches of {args.recipe}'s training clips")
    for name in models:
        talk = conversations[name]
        with_talk = f"{np.mean(talk):.4f} ({len(talk)} batches)" if talk else "none drawn"
        print(f"  {name:40} all {np.mean(every[name]):.4f}   with a conversation {with_talk}")


if __name__ == "__main__":
    main()
