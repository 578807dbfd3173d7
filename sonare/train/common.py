"""Pieces every training recipe shares: which clips are held back, the learning-rate schedule, the running
average of the weights, crash-safe checkpoint writes, growing a trained model deeper and the rule that picks a turn
threshold."""

from __future__ import annotations

import math
import os
import zlib
from pathlib import Path

import torch

from sonare.eval.turns import TurnMetrics, best_operating_point, most_ends_within_budget, thinking_pause_cutoff_rate

# The false cut-off budget on pauses to think that recipes choose turn thresholds within: the target's 5% less a
# point. A held-back set of about 200 pauses to think measures a rate to about ±1.5 points, so a setting chosen at
# the budget's edge crosses it on unseen voices about as often as not (session 31: the shipped setting read 5.0%
# held back, 5.5% on a rebuild of the same corpus and 5.1% pooled held out; docs/benchmarks.md, STT).
RECIPE_MAX_FALSE_CUTOFF = 0.04


def load_deeper(model: torch.nn.Module, weights: dict[str, torch.Tensor], grown: dict[str, int]) -> None:
    """Load a shallower model's `weights` into `model`, whose SSM stacks named in `grown` (module path -> the
    source's layer count) have more layers. The source's layers keep their weights and the extra ones, stacked on
    top, start as identities (output projection zeroed, so each residual block adds nothing): a plateaued model
    grows deeper without losing what it has learnt."""
    new = tuple(
        f"{path}.layers.{i}." for path, n in grown.items() for i in range(n, len(model.get_submodule(path).layers))
    )
    missing, unexpected = model.load_state_dict(weights, strict=False)
    if unexpected or any(not k.startswith(new) for k in missing):
        raise SystemExit(f"the starting weights do not match the model: missing {missing}, unexpected {unexpected}")
    with torch.no_grad():
        for path, n in grown.items():
            for layer in model.get_submodule(path).layers[n:]:
                layer.mixer.out_proj.weight.zero_()


def is_held_back(item_id: str, fraction: float) -> bool:
    """Whether a training-split clip is held back from training for validation: a hash of its id, so the choice
    is the same in every run and in every tool that reads the corpus."""
    return zlib.crc32(item_id.encode()) % 10_000 < fraction * 10_000


def warmup_cosine(step: int, peak: float, warmup: int, steps: int, floor: float) -> float:
    """Linear warm-up to `peak`, then a cosine down to `floor * peak` at `steps`."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, steps - warmup))
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def chosen_threshold(curve: dict[float, TurnMetrics], max_false_cutoff: float) -> float:
    """The turn threshold a recipe exports, from its curve on held-back conversations: within the false cut-off
    budget on pauses to think, the soonest of the settings that detect most ends; where none does (the words
    weighing in hold back the ends they are unsure of), the one that detects the most, within the budget or as
    close to it as any comes. Pauses to think, since a hold after a complete sentence is heard exactly as an end
    until the speaker goes on (`sonare.eval.turns`)."""
    end = best_operating_point(curve, max_false_cutoff, thinking_pause_cutoff_rate)
    return end if end is not None else most_ends_within_budget(curve, max_false_cutoff, thinking_pause_cutoff_rate)


def save_atomic(obj: dict, path: Path) -> None:
    """Write a checkpoint so that a kill mid-write leaves the previous one intact."""
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def to_device(batch: dict[str, torch.Tensor], device: str) -> dict[str, torch.Tensor]:
    """A collated batch's tensors on the training device."""
    return {k: v.to(device) for k, v in batch.items()}


class WeightAverage:
    """An exponential moving average of a model's weights, updated after every optimiser step.

    Small batches on a few CPU cores make each step's weights noisy; their running average sits nearer the
    bottom of the valley than any one of them (Polyak averaging). The decay ramps up as (1 + n) / (10 + n) over
    the first updates, so the weights a run starts from fade out quickly instead of weighing for
    1 / (1 - decay) steps. Integer buffers are copied, not averaged."""

    def __init__(self, model: torch.nn.Module, decay: float, updates: int = 0):
        self.decay = decay
        self.updates = updates
        self.weights = {k: v.detach().clone() for k, v in model.state_dict().items()}

    @torch.no_grad()
    def update(self, model: torch.nn.Module) -> None:
        self.updates += 1
        keep = min(self.decay, (1 + self.updates) / (10 + self.updates))
        for name, value in model.state_dict().items():
            if value.is_floating_point():
                self.weights[name].lerp_(value.detach(), 1.0 - keep)
            else:
                self.weights[name].copy_(value)

    def state_dict(self) -> dict:
        return {"decay": self.decay, "updates": self.updates, "weights": self.weights}

    @classmethod
    def from_state(cls, model: torch.nn.Module, state: dict) -> WeightAverage:
        average = cls(model, state["decay"], state["updates"])
        average.weights = {k: v.to(average.weights[k].device) for k, v in state["weights"].items()}
        return average
