"""Pieces every training recipe shares: which clips are held back, the learning-rate schedule and crash-safe
checkpoint writes."""

from __future__ import annotations

import math
import os
import zlib
from pathlib import Path

import torch


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


def save_atomic(obj: dict, path: Path) -> None:
    """Write a checkpoint so that a kill mid-write leaves the previous one intact."""
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def to_device(batch: dict[str, torch.Tensor], device: str) -> dict[str, torch.Tensor]:
    """A collated batch's tensors on the training device."""
    return {k: v.to(device) for k, v in batch.items()}
