"""A small real streaming model for engine tests: an SSM stack mapping input frames to output frames."""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from sonare.ssm import BatchState, Mamba2Config, SSMStack

END = "end"


class FrameSession:
    def __init__(self, width: int):
        self.width = width
        self.frames: collections.deque[torch.Tensor] = collections.deque()
        self.closing = False

    def push(self, item: Any) -> None:
        if item == END:
            self.closing = True
            return
        frames = torch.as_tensor(item, dtype=torch.float64)
        if frames.ndim != 2 or frames.shape[1] != self.width:
            raise ValueError(f"expected frames of shape (n, {self.width})")
        self.frames.extend(frames)

    def ready(self, now: float) -> bool:
        return bool(self.frames)

    def deadline(self) -> float | None:
        return None

    def finished(self) -> bool:
        return self.closing and not self.frames


class FrameModel:
    name = "frames"

    def __init__(self, width: int = 16, layers: int = 2, seed: int = 0):
        torch.manual_seed(seed)
        self.width = width
        self.net = SSMStack(Mamba2Config(d_model=width, d_state=8, head_dim=8, chunk_size=8), layers).double()

    def new_state(self, slots: int) -> BatchState:
        return self.net.new_state(slots)

    def open(self, options: Mapping[str, Any]) -> FrameSession:
        return FrameSession(self.width)

    def step(self, state: BatchState, sessions: Sequence[FrameSession]) -> tuple[BatchState, list[list[Any]]]:
        x = torch.stack([s.frames.popleft() for s in sessions])
        y, state = self.net.step(x, state)
        return state, [[row] for row in y]
