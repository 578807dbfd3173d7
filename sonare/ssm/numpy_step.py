"""`SSMStack` inference on a CPU over a few frames, in NumPy: the same arithmetic as `Mamba2`, less overhead.

A live stream advances the stack one 40 ms frame (or a few) at a time on vectors of a few hundred numbers, where
the work is tiny and each operator's fixed cost dominates: about 5 µs per PyTorch op against about 1 µs per
NumPy op on this hardware, and the chunked scan runs many more ops than a plain recurrence. `SSMStack` runs this
path for one frame per row at any batch and for up to `NUMPY_MAX_ROWS` rows (batch x frames) in all
(`benchmarks/stt_step.py` measures both): the projections as one product over all rows, then the recurrence
frame by frame.

Weights are read through views of the module's parameters (no copy), except the two projections, kept as
transposed copies, so that every product reads a C-contiguous matrix, for one row as for many.
The copies are rebuilt when the projections change in place (their version counters) or are replaced as a
whole (`.to()`: the final norm's storage address moves).

Shapes as in `sonare.ssm.mamba2`: x (B, L, D); conv state (B, conv_dim, K-1); ssm state (B, H, P, N).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from threadpoolctl import ThreadpoolController
from torch import Tensor

from sonare.ssm.mamba2 import Mamba2Config
from sonare.ssm.state import BatchState

if TYPE_CHECKING:
    from sonare.ssm.stack import SSMStack

# These products are too small to gain from threads, and a BLAS that spreads them over busy cores waits for its
# threads: NumPy's BLAS runs them on the calling thread.
_THREADPOOLS = ThreadpoolController()


@dataclass(frozen=True)
class _Layer:
    """One block's parameters: NumPy views, and the projections as transposed copies."""

    cfg: Mamba2Config
    norm: np.ndarray  # (D,) the block's pre-norm
    norm_eps: float
    in_proj_t: np.ndarray  # (D, 2E + 2GN + H)
    conv_weight: np.ndarray  # (conv_dim, K)
    conv_bias: np.ndarray
    dt_bias: np.ndarray  # (H,)
    a_log: np.ndarray  # (H,)
    d: np.ndarray  # (H, 1)
    gate_norm: np.ndarray  # (E,)
    gate_eps: float
    out_proj_t: np.ndarray  # (E, D)


def _views(stack: SSMStack) -> tuple[list[_Layer], np.ndarray]:
    cached = getattr(stack, "_numpy_views", None)
    if cached is not None:
        pointer, projections, version, layers, final_norm = cached
        if pointer == stack.norm.weight.data_ptr() and version == sum(p._version for p in projections):
            return layers, final_norm

    def v(t: Tensor) -> np.ndarray:
        return t.detach().numpy()

    def transposed(t: Tensor) -> np.ndarray:
        return np.ascontiguousarray(v(t).T)

    layers = []
    for block in stack.layers:
        m = block.mixer
        layers.append(
            _Layer(
                cfg=m.cfg,
                norm=v(block.norm.weight),
                norm_eps=block.norm.eps,
                in_proj_t=transposed(m.in_proj.weight),
                conv_weight=v(m.conv_weight),
                conv_bias=v(m.conv_bias),
                dt_bias=v(m.dt_bias),
                a_log=v(m.A_log),
                d=v(m.D)[:, None],
                gate_norm=v(m.norm.weight),
                gate_eps=m.norm.eps,
                out_proj_t=transposed(m.out_proj.weight),
            )
        )
    projections = [w for block in stack.layers for w in (block.mixer.in_proj.weight, block.mixer.out_proj.weight)]
    version = sum(p._version for p in projections)
    stack._numpy_views = (stack.norm.weight.data_ptr(), projections, version, layers, v(stack.norm.weight))
    return layers, v(stack.norm.weight)


def _silu(v: np.ndarray) -> np.ndarray:
    return v / (1 + np.exp(-v))


def _rms_norm(v: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return v / np.sqrt((v * v).sum(axis=-1, keepdims=True) / v.shape[-1] + eps) * weight


def _mixer_steps(
    w: _Layer, u: np.ndarray, conv: np.ndarray, ssm: np.ndarray, lengths: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    """L Mamba-2 frames: u (B, L, D) normalised input -> y (B, L, D), the conv and ssm states after each row's
    last valid frame. `lengths` (B,) marks a padded tail per row (None: every frame is valid)."""
    c = w.cfg
    e, gn, h, k = c.d_inner, c.n_groups * c.d_state, c.n_heads, c.d_conv
    bsz, length, _ = u.shape
    zxbcdt = (u.reshape(bsz * length, -1) @ w.in_proj_t).reshape(bsz, length, -1)
    z, xbc, dt = zxbcdt[..., :e], zxbcdt[..., e : e + c.conv_dim], zxbcdt[..., e + c.conv_dim :]

    window = np.concatenate([conv, xbc.transpose(0, 2, 1)], axis=2)  # (B, conv_dim, K-1+L)
    mixed = w.conv_bias[:, None] + sum(window[:, :, j : j + length] * w.conv_weight[:, j : j + 1] for j in range(k))
    xbc = _silu(mixed.transpose(0, 2, 1))  # (B, L, conv_dim)
    x = xbc[..., :e].reshape(bsz, length, h, c.head_dim)
    b = xbc[..., e : e + gn].reshape(bsz, length, c.n_groups, c.d_state)
    cm = xbc[..., e + gn :].reshape(bsz, length, c.n_groups, c.d_state)
    if c.n_groups > 1:  # each group's B and C serve H / G consecutive heads
        b, cm = (np.repeat(t, h // c.n_groups, axis=2) for t in (b, cm))

    dt = np.logaddexp(0, dt + w.dt_bias)  # softplus, (B, L, H)
    if lengths is not None:  # dt = 0 on padding: decay 1 and no input, so the state passes through unchanged
        dt = dt * (np.arange(length)[None, :] < lengths[:, None])[..., None]
    decay = np.exp(-dt * np.exp(w.a_log))
    xdt = dt[..., None] * x  # (B, L, H, P)
    y = np.empty_like(x)
    for t in range(length):  # the plain recurrence: for a few frames cheaper than the chunked form
        ssm = ssm * decay[:, t, :, None, None] + xdt[:, t, :, :, None] * b[:, t, :, None, :]
        y[:, t] = np.matmul(ssm, cm[:, t, :, :, None])[..., 0]
    y = y + x * w.d  # (B, L, H, P)
    y = _rms_norm(y.reshape(bsz, length, e) * _silu(z), w.gate_norm, w.gate_eps)
    out = (y.reshape(bsz * length, e) @ w.out_proj_t).reshape(bsz, length, -1)
    if lengths is None:
        new_conv = window[:, :, length:]
    else:  # the K-1 inputs ending at each row's last valid frame
        new_conv = np.stack([window[i, :, n : n + k - 1] for i, n in enumerate(lengths.tolist())])
    return out, new_conv, ssm


def stack_steps(
    stack: SSMStack, x: Tensor, state: BatchState, lengths: Tensor | None = None
) -> tuple[Tensor, BatchState]:
    """`stack(x, state, lengths)` computed in NumPy, frame by frame: x (B, L, D) -> (B, L, D) and the state
    after each row's last valid frame (frames at t >= lengths[b] do not touch it)."""
    layers, final_norm = _views(stack)
    h = x.detach().numpy()
    bsz, length, _ = h.shape
    ends = lengths.numpy() if lengths is not None and bool((lengths < length).any()) else None
    new = {}
    with _THREADPOOLS.limit(limits=1, user_api="blas"):
        for i, w in enumerate(layers):
            u = _rms_norm(h, w.norm, w.norm_eps)
            y, conv, ssm = _mixer_steps(w, u, state[f"{i}.conv"].numpy(), state[f"{i}.ssm"].numpy(), ends)
            h = h + y
            new[f"{i}.conv"], new[f"{i}.ssm"] = torch.from_numpy(np.ascontiguousarray(conv)), torch.from_numpy(ssm)
    out = _rms_norm(h, final_norm, stack.norm.eps)
    return torch.from_numpy(out), BatchState(new)
