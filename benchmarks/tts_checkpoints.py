"""Validation loss of TTS checkpoints on one recipe's held-back clips, so that checkpoints from different runs
(whose logs validated on other machines' renderings of the corpus) are compared on the same audio.

    python benchmarks/tts_checkpoints.py --config configs/tts-joe-more.yaml checkpoints/tts-joe-large.pt \
        checkpoints/tts-joe-more.pt

The clips are the recipe's validation set (`sonare.train.tts.validation_set`), their frames measured into the
recipe's run directory as training would. A recipe with a recogniser (`asr_critic`) reports what it hears too,
and one with `asr_fresh_texts` also what it hears of 64 fresh sentences (the same for every checkpoint) spoken
by the default voice in its own durations ("heard_fresh").
"""

from __future__ import annotations

import argparse

import torch

FRESH_SEED = 12345  # the same sentences for every checkpoint: none a corpus clip speaks (a run may have drawn some)


def main() -> None:
    from sonare.train.intelligibility import FreshTexts, RecogniserLoss
    from sonare.train.tts import (
        TTSTrainConfig,
        default_speaker,
        fresh_text_loss,
        recipe_examples,
        validation_loss,
        validation_set,
    )
    from sonare.tts.model import TTSConfig, TTSModel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, help="the TTS recipe whose validation clips to use")
    ap.add_argument("checkpoints", nargs="+", help="checkpoints (full or slim) to measure")
    args = ap.parse_args()

    torch.set_num_threads(1)
    cfg = TTSTrainConfig.load(args.config)
    examples = recipe_examples(cfg)
    val_set = validation_set(examples, cfg)
    critic = RecogniserLoss(cfg.asr_critic) if cfg.asr_critic else None
    print(f"{len(val_set)} validation clips of {args.config}")
    for path in args.checkpoints:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
        model = TTSModel(TTSConfig(**ckpt["model_config"]))
        model.load_state_dict(ckpt["model"])
        parts = validation_loss(model, val_set, ckpt["speakers"], cfg, critic)
        if cfg.asr_fresh_texts:  # a recipe with fresh sentences has a critic (TTSTrainConfig refuses one without)
            model.eval()
            fresh = FreshTexts({e.text for e in examples}, per_step=8, seed=FRESH_SEED)
            speaker = default_speaker(cfg, ckpt["speakers"])
            with torch.no_grad():
                draws = [fresh_text_loss(model, fresh, speaker, critic).item() for _ in range(8)]
            parts["heard_fresh"] = sum(draws) / len(draws)
        print(f"{path}  step {ckpt['step']}  " + "  ".join(f"{k} {v:.4f}" for k, v in parts.items()))


if __name__ == "__main__":
    main()
