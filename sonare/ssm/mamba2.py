"""Mamba-2 (state-space duality) in pure PyTorch, with three paths that agree.

    forward(x)               chunked scan for training and prefill, any length
    forward(x, state)        the same scan starting from, and returning, carried state (streaming chunks)
    step(x_t, state)         one frame, O(1) in the length of what came before

Notation (shapes): B batch, L length, D d_model, E d_inner = expand * D, H heads, P head dim (E = H * P),
G groups of B/C projections, N state size, K conv kernel, Q chunk length, C_ number of chunks.

Per head h the layer is the selective state-space recurrence

    s_t = exp(dt_t * A_h) * s_{t-1} + dt_t * x_t B_t^T        s_t: (P, N)
    y_t = s_t C_t + D_h * x_t

with x, B, C coming from a causal depthwise convolution over the input projection, and dt from a softplus.
The chunked form computes the same recurrence as matrix products inside a chunk (the "dual" quadratic form)
and a short recurrence over chunk states between chunks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sonare.ssm.state import BatchState, zeros_state


@dataclass(frozen=True)
class Mamba2Config:
    d_model: int
    d_state: int = 32
    d_conv: int = 4
    expand: int = 2
    head_dim: int = 32
    n_groups: int = 1
    chunk_size: int = 64
    dt_min: float = 1e-3
    dt_max: float = 1e-1
    a_init_range: tuple[float, float] = (1.0, 16.0)

    @property
    def d_inner(self) -> int:
        return self.expand * self.d_model

    @property
    def n_heads(self) -> int:
        if self.d_inner % self.head_dim:
            raise ValueError(f"d_inner={self.d_inner} is not a multiple of head_dim={self.head_dim}")
        return self.d_inner // self.head_dim

    @property
    def conv_dim(self) -> int:
        return self.d_inner + 2 * self.n_groups * self.d_state


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.weight.shape, self.weight, self.eps)  # one fused op: x / rms(x) * weight


class Mamba2(nn.Module):
    """One Mamba-2 mixer. State: conv (B, conv_dim, K-1) last inputs, ssm (B, H, P, N)."""

    def __init__(self, cfg: Mamba2Config):
        super().__init__()
        self.cfg = cfg
        e, g, n, h = cfg.d_inner, cfg.n_groups, cfg.d_state, cfg.n_heads
        # One projection yields the gate z (E), the conv input xBC (E + 2GN) and dt (H).
        self.in_proj = nn.Linear(cfg.d_model, 2 * e + 2 * g * n + h, bias=False)
        self.conv_weight = nn.Parameter(torch.empty(cfg.conv_dim, cfg.d_conv))
        self.conv_bias = nn.Parameter(torch.zeros(cfg.conv_dim))
        nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))

        # dt starts log-uniform in [dt_min, dt_max]: slow and fast heads from the first step.
        dt = torch.exp(torch.rand(h) * (math.log(cfg.dt_max) - math.log(cfg.dt_min)) + math.log(cfg.dt_min)).clamp(
            min=1e-4
        )
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))  # inverse softplus
        self.A_log = nn.Parameter(torch.log(torch.empty(h).uniform_(*cfg.a_init_range)))
        self.D = nn.Parameter(torch.ones(h))
        self.norm = RMSNorm(e)
        self.out_proj = nn.Linear(e, cfg.d_model, bias=False)

    # -- state -------------------------------------------------------------------------------------------

    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        c = self.cfg
        return {"conv": (c.conv_dim, c.d_conv - 1), "ssm": (c.n_heads, c.head_dim, c.d_state)}

    def new_state(self, batch: int) -> BatchState:
        p = self.in_proj.weight
        return zeros_state(self.state_shapes(), batch, dtype=p.dtype, device=p.device)

    # -- shared pieces -----------------------------------------------------------------------------------

    def _split_projection(self, zxbcdt: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        c = self.cfg
        return torch.split(zxbcdt, [c.d_inner, c.conv_dim, c.n_heads], dim=-1)

    def _split_conv_output(self, xbc: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        c = self.cfg
        x, b, cm = torch.split(xbc, [c.d_inner, c.n_groups * c.d_state, c.n_groups * c.d_state], dim=-1)
        lead = x.shape[:-1]
        return (
            x.reshape(*lead, c.n_heads, c.head_dim),
            b.reshape(*lead, c.n_groups, c.d_state),
            cm.reshape(*lead, c.n_groups, c.d_state),
        )

    def _heads_per_group(self, t: Tensor) -> Tensor:
        """(..., G, N) -> (..., H, N): each group's B or C is shared by H / G heads."""
        if self.cfg.n_groups == 1:
            return t.expand(*t.shape[:-2], self.cfg.n_heads, t.shape[-1])  # a view: no copy
        return t.repeat_interleave(self.cfg.n_heads // self.cfg.n_groups, dim=-2)

    def _gate_and_project(self, y: Tensor, z: Tensor) -> Tensor:
        return self.out_proj(self.norm(y * F.silu(z)))

    # -- path 1 and 2: chunked forward, optionally carrying state -----------------------------------------

    def forward(
        self, u: Tensor, state: BatchState | None = None, lengths: Tensor | None = None
    ) -> tuple[Tensor, BatchState]:
        """u: (B, L, D) -> y: (B, L, D) and the state after each row's last valid frame.

        `lengths` (B,) marks a padded tail per row: frames at t >= lengths[b] do not touch the state (their
        outputs are meaningless). Without it every frame is valid.
        """
        c = self.cfg
        bsz, seqlen, _ = u.shape
        if state is None:
            state = self.new_state(bsz)
        if lengths is None:
            lengths = torch.full((bsz,), seqlen, dtype=torch.long, device=u.device)

        z, xbc, dt = self._split_projection(self.in_proj(u))

        # Causal depthwise conv over [carried K-1 inputs, new inputs], time-major: K shifted multiply-adds cost
        # less than conv1d (forward and backward) on these shapes and need no transposes.
        xbc_t = torch.cat([state["conv"].transpose(1, 2), xbc], dim=1)  # (B, K-1+L, conv_dim)
        weight = self.conv_weight.t()  # (K, conv_dim)
        xbc_conv = self.conv_bias + xbc_t[:, :seqlen] * weight[0]
        for k in range(1, c.d_conv):
            xbc_conv = torch.addcmul(xbc_conv, xbc_t[:, k : k + seqlen], weight[k])
        xbc_conv = F.silu(xbc_conv)  # (B, L, conv_dim)
        # The new conv state is the K-1 inputs ending at each row's last valid frame.
        window = lengths[:, None] + torch.arange(c.d_conv - 1, device=u.device)[None, :]  # (B, K-1)
        new_conv = torch.gather(xbc_t, 1, window[:, :, None].expand(-1, -1, c.conv_dim)).transpose(1, 2)

        x, b, cm = self._split_conv_output(xbc_conv)
        valid = torch.arange(seqlen, device=u.device)[None, :] < lengths[:, None]  # (B, L)
        dt = F.softplus(dt + self.dt_bias) * valid[..., None]  # dt = 0 freezes the state on padding
        a = -torch.exp(self.A_log)

        y, new_ssm = ssd_chunked(x, dt, a, b, cm, state["ssm"], c.chunk_size)
        y = y + x * self.D[:, None]
        y = y.reshape(bsz, seqlen, c.d_inner)
        return self._gate_and_project(y, z), BatchState({"conv": new_conv.contiguous(), "ssm": new_ssm})

    # -- path 3: one frame --------------------------------------------------------------------------------

    def step(self, u: Tensor, state: BatchState) -> tuple[Tensor, BatchState]:
        """u: (B, D) one frame per row -> y: (B, D) and the next state."""
        c = self.cfg
        z, xbc, dt = self._split_projection(self.in_proj(u))

        window = torch.cat([state["conv"], xbc.unsqueeze(2)], dim=2)  # (B, conv_dim, K)
        xbc_conv = F.silu((window * self.conv_weight).sum(-1) + self.conv_bias)
        x, b, cm = self._split_conv_output(xbc_conv)  # (B, H, P), (B, G, N), (B, G, N)
        b, cm = self._heads_per_group(b), self._heads_per_group(cm)  # (B, H, N)

        dt = F.softplus(dt + self.dt_bias)  # (B, H)
        decay = torch.exp(dt * -torch.exp(self.A_log))  # (B, H)
        ssm = state["ssm"] * decay[..., None, None] + (dt[..., None] * x)[..., None] * b[:, :, None, :]
        y = torch.matmul(ssm, cm.unsqueeze(-1)).squeeze(-1) + x * self.D[:, None]  # (B, H, P)
        y = self._gate_and_project(y.reshape(u.shape[0], c.d_inner), z)
        return y, BatchState({"conv": window[:, :, 1:], "ssm": ssm})


def ssd_chunked(
    x: Tensor, dt: Tensor, a: Tensor, b: Tensor, c: Tensor, initial: Tensor, chunk: int
) -> tuple[Tensor, Tensor]:
    """The SSD scan.

    x: (B, L, H, P)  dt: (B, L, H)  a: (H,) negative  b, c: (B, L, G, N)  initial: (B, H, P, N)
    returns y: (B, L, H, P) (without the D skip) and the final state (B, H, P, N).

    Heads are split as (G, R) with R = H / G heads per group, so each group's C.B products are computed once
    and shared by its R heads rather than repeated per head.
    """
    bsz, seqlen, h, p = x.shape
    g, n = b.shape[-2:]
    r = h // g
    # A streaming step is shorter than a chunk: one chunk of exactly its length gives the same result without
    # paying for the padding (the quadratic form grows with the chunk's square).
    chunk = max(1, min(chunk, seqlen))
    pad = (-seqlen) % chunk
    if pad:  # zero dt on padding: decay 1 and no input, so the state passes through unchanged
        x, dt, b, c = (F.pad(t, (0, 0) * (t.dim() - 2) + (0, pad)) for t in (x, dt, b, c))
    n_chunks = x.shape[1] // chunk

    x = x.reshape(bsz, n_chunks, chunk, g, r, p)  # (B, C_, Q, G, R, P)
    dt = dt.reshape(bsz, n_chunks, chunk, g, r)
    b = b.reshape(bsz, n_chunks, chunk, g, n)  # (B, C_, Q, G, N)
    c = c.reshape(bsz, n_chunks, chunk, g, n)
    xdt = x * dt[..., None]
    log_decay = torch.cumsum((dt * a.reshape(g, r)).permute(0, 3, 4, 1, 2), dim=-1)  # (B, G, R, C_, Q)

    # Inside a chunk: y_i = sum_{j<=i} (C_i . B_j) exp(cum_i - cum_j) dt_j x_j.
    causal = torch.ones(chunk, chunk, dtype=torch.bool, device=x.device).tril()
    diff = log_decay[..., :, None] - log_decay[..., None, :]  # (B, G, R, C_, Q, Q)
    decay_matrix = torch.exp(diff.masked_fill(~causal, -math.inf))
    scores = torch.einsum("bcign,bcjgn->bgcij", c, b)[:, :, None] * decay_matrix  # (B, G, R, C_, Q, Q)
    y = torch.einsum("bgrcij,bcjgrp->bcigrp", scores, xdt)

    # Each chunk's own contribution to the state at its end.
    to_end = torch.exp(log_decay[..., -1:] - log_decay)  # (B, G, R, C_, Q)
    chunk_states = torch.einsum("bcjgn,bgrcj,bcjgrp->bcgrpn", b, to_end, xdt)  # (B, C_, G, R, P, N)
    chunk_decay = torch.exp(log_decay[..., -1])  # (B, G, R, C_)

    # Between chunks: a short recurrence carries the state in, and its effect on each output. (unbind, not
    # indexing: its backward is one stack, where each index would fill a full-size zero gradient.)
    entering = []
    s = initial.reshape(bsz, g, r, p, n)
    for state_k, decay_k in zip(chunk_states.unbind(1), chunk_decay.unbind(-1), strict=True):
        entering.append(s)
        s = s * decay_k[..., None, None] + state_k
    entering = torch.stack(entering, dim=1)  # (B, C_, G, R, P, N)
    y = y + torch.einsum("bcign,bcgrpn,bgrci->bcigrp", c, entering, torch.exp(log_decay))

    y = y.reshape(bsz, n_chunks * chunk, h, p)[:, :seqlen]
    return y, s.reshape(bsz, h, p, n)
