"""Residual pre-norm stacks of Mamba-2 mixers, the backbone of every Sonare model.

A stack carries one `BatchState` whose tensors are named `{layer}.conv` and `{layer}.ssm`, so a model's
whole streaming context stays one row per stream.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from sonare.ssm import cpu_step
from sonare.ssm.mamba2 import Mamba2, Mamba2Config, RMSNorm
from sonare.ssm.state import BatchState


def _compiled_inference(x: Tensor) -> bool:
    """CPU inference runs the compiled frame-by-frame path: faster than PyTorch's ops at every batch and length
    `benchmarks/stt_step.py` measures (one frame to 64 frames per row, 1 to 16 rows), since their fixed cost
    outweighs the arithmetic on inputs of this size."""
    return x.device.type == "cpu" and not torch.is_grad_enabled()


class SSMBlock(nn.Module):
    """x + Mamba2(RMSNorm(x)); in training, the mixer's output dropped out at rate `dropout` (0: never)."""

    def __init__(self, cfg: Mamba2Config, dropout: float = 0.0):
        super().__init__()
        self.norm = RMSNorm(cfg.d_model)
        self.mixer = Mamba2(cfg)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: Tensor, state: BatchState | None = None, lengths: Tensor | None = None
    ) -> tuple[Tensor, BatchState]:
        y, state = self.mixer(self.norm(x), state, lengths)
        return x + self.dropout(y), state

    def step(self, x: Tensor, state: BatchState) -> tuple[Tensor, BatchState]:
        y, state = self.mixer.step(self.norm(x), state)
        return x + y, state


class SSMStack(nn.Module):
    """n_layers SSM blocks and a final norm. Input and output: (B, L, D), or (B, D) for `step`. `dropout` is each
    block's residual dropout in training."""

    def __init__(self, cfg: Mamba2Config, n_layers: int, dropout: float = 0.0):
        super().__init__()
        self.cfg = cfg
        self.layers = nn.ModuleList(SSMBlock(cfg, dropout) for _ in range(n_layers))
        self.norm = RMSNorm(cfg.d_model)
        # Whether CPU inference multiplies by int8 roundings of the blocks' projections (sonare.ssm.cpu_step):
        # the STT loader turns it on; training and the PyTorch path never round.
        self.int8_projections = False

    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        return {
            f"{i}.{name}": shape
            for i, layer in enumerate(self.layers)
            for name, shape in layer.mixer.state_shapes().items()
        }

    def new_state(self, batch: int) -> BatchState:
        return BatchState.merge({str(i): layer.mixer.new_state(batch) for i, layer in enumerate(self.layers)})

    def forward(
        self, x: Tensor, state: BatchState | None = None, lengths: Tensor | None = None
    ) -> tuple[Tensor, BatchState]:
        if _compiled_inference(x):  # the same scan, less overhead
            return cpu_step.stack_steps(self, x, self.new_state(len(x)) if state is None else state, lengths)
        parts = {}
        for i, layer in enumerate(self.layers):
            x, parts[str(i)] = layer(x, None if state is None else state.part(str(i)), lengths)
        return self.norm(x), BatchState.merge(parts)

    def step(self, x: Tensor, state: BatchState) -> tuple[Tensor, BatchState]:
        if _compiled_inference(x):
            y, state = cpu_step.stack_steps(self, x[:, None], state)
            return y[:, 0], state
        parts = {}
        for i, layer in enumerate(self.layers):
            x, parts[str(i)] = layer.step(x, state.part(str(i)))
        return self.norm(x), BatchState.merge(parts)


def use_int8_projections(model: nn.Module) -> None:
    """Every SSM stack in `model` multiplies by int8 roundings of its projections in CPU inference."""
    for module in model.modules():
        if isinstance(module, SSMStack):
            module.int8_projections = True
