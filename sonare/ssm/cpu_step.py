"""`SSMStack` inference on a CPU: the same arithmetic as `Mamba2`, frame by frame, compiled, far less overhead.

A live stream advances the stack one 40 ms frame (or a few) at a time on vectors of a few hundred numbers, where
the work is tiny and each operator's fixed cost dominates: about 5 µs per PyTorch op and 1-3 µs per NumPy op on
this hardware, and a Mamba-2 block is some fifty of them. Here each block is one call to a function compiled by
Numba (`_block_steps`): the pre-norm, the input projection, the causal convolution, the recurrence frame by frame,
the gate and the output projection in one pass over the block's arrays, the two projections over all rows at
once (a compiled loop for a few rows, BLAS for more). `SSMStack` runs this path for all CPU inference:
`benchmarks/stt_step.py` finds it faster than the PyTorch path at every batch and length it measures.

Weights are read through views of the module's parameters (no copy), except the two projections and the
convolution kernel, kept as transposed copies, so that every product and the convolution's loops read contiguous
rows. The copies are rebuilt when those weights change in place (their version counters), are replaced as a
whole (`.to()`: the final norm's storage address moves) or the stack's `int8_projections` changes.

With `stack.int8_projections` (the shipped STT model's loader sets it, `sonare.ssm.use_int8_projections`), the
projections are rounded to 8-bit integers with one scale per output, and both product paths compute with those
rounded weights, so a stream's output does not depend on how many frames each step brings. A live step reads
every block's projections once (15 MB in float32 for the STT encoder, more than this machine's caches keep
between steps), so a quarter of the bytes is most of the saving (docs/benchmarks.md, "CPU inference").

Numba compiles the block once per dtype and caches the machine code on disk (`cache=True`), so a later process
starts without compiling.

Shapes as in `sonare.ssm.mamba2`: x (B, L, D); conv state (B, conv_dim, K-1); ssm state (B, H, P, N).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba
import numpy as np
import scipy.linalg.cython_blas  # noqa: F401 - loads the BLAS Numba's np.dot calls (see _THREADPOOLS)
import torch
from threadpoolctl import ThreadpoolController
from torch import Tensor

from sonare.ssm.mamba2 import Mamba2Config
from sonare.ssm.state import BatchState

if TYPE_CHECKING:
    from sonare.ssm.stack import SSMStack

# Up to this many rows, a block's two projections run as a compiled loop instead of a BLAS call (`_product`).
SMALL_PRODUCT_ROWS = 16

# These products are too small to gain from threads, and a BLAS that spreads them over busy cores waits for its
# threads: they run on the calling thread. Numba's np.dot calls SciPy's BLAS, a library of its own beside NumPy's,
# imported above so that the controller finds it (a library loaded after the controller is made, it leaves alone).
_THREADPOOLS = ThreadpoolController()


@dataclass(frozen=True)
class _Layer:
    """One block's parameters: NumPy views, and the projections and convolution kernel as transposed copies."""

    cfg: Mamba2Config
    norm: np.ndarray  # (D,) the block's pre-norm
    norm_eps: float
    in_proj: tuple[np.ndarray, np.ndarray, np.ndarray]  # `_projection` of (2E + 2GN + H, D)
    conv_weight_t: np.ndarray  # (K, conv_dim)
    conv_bias: np.ndarray
    dt_bias: np.ndarray  # (H,)
    a_log: np.ndarray  # (H,)
    d: np.ndarray  # (H,)
    gate_norm: np.ndarray  # (E,)
    gate_eps: float
    out_proj: tuple[np.ndarray, np.ndarray, np.ndarray]  # `_projection` of (D, E)


def _projection(weight: np.ndarray, int8: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A projection's (out, in) weight as (dense, rows, scale) for `_product`: dense (in, out) the weights BLAS
    multiplies by, rows the compiled loop's (int8, or dense itself), scale (out,) with dense == rows * scale."""
    dense = np.ascontiguousarray(weight.T)
    if not int8:
        return dense, dense, np.ones(dense.shape[1], dense.dtype)
    scale = np.abs(dense).max(axis=0) / 127
    scale[scale == 0] = 1  # an all-zero output stays zero
    rows = np.round(dense / scale).astype(np.int8)
    return (rows * scale).astype(dense.dtype), rows, scale.astype(dense.dtype)


def _views(stack: SSMStack) -> tuple[list[_Layer], np.ndarray]:
    cached = getattr(stack, "_cpu_views", None)
    key = (stack.norm.weight.data_ptr(), stack.int8_projections)
    if cached is not None:
        cached_key, copied, version, layers, final_norm = cached
        if cached_key == key and version == sum(p._version for p in copied):
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
                in_proj=_projection(v(m.in_proj.weight), stack.int8_projections),
                conv_weight_t=transposed(m.conv_weight),
                conv_bias=v(m.conv_bias),
                dt_bias=v(m.dt_bias),
                a_log=v(m.A_log),
                d=v(m.D),
                gate_norm=v(m.norm.weight),
                gate_eps=m.norm.eps,
                out_proj=_projection(v(m.out_proj.weight), stack.int8_projections),
            )
        )
    copied = [
        w
        for block in stack.layers
        for w in (block.mixer.in_proj.weight, block.mixer.conv_weight, block.mixer.out_proj.weight)
    ]
    version = sum(p._version for p in copied)
    stack._cpu_views = (key, copied, version, layers, v(stack.norm.weight))
    return layers, v(stack.norm.weight)


@numba.njit(cache=True, nogil=True, fastmath=True)
def _product(a, dense, b_rows, b_scale):
    """a (R, K) @ dense (K, N), where dense == b_rows * b_scale (N,). For a live stream's few rows a plain loop,
    each row of b_rows scaled into the output rows (which LLVM vectorises, int8 rows widened on the way), then
    the columns scaled: it beats OpenBLAS, whose products of a few rows cost far more than their arithmetic (a
    live stream's encoder time fell by a quarter to a third, docs/benchmarks.md, "CPU inference"). Past
    SMALL_PRODUCT_ROWS rows, BLAS on dense."""
    rows, inner = a.shape
    if rows > SMALL_PRODUCT_ROWS:
        return np.dot(a, dense)
    out = np.zeros((rows, dense.shape[1]), a.dtype)
    for k in range(inner):
        b_row = b_rows[k]
        for r in range(rows):
            scale = a[r, k]
            out_row = out[r]
            for n in range(b_row.shape[0]):
                out_row[n] += scale * a.dtype.type(b_row[n])
    for r in range(rows):
        out_row = out[r]
        for n in range(b_scale.shape[0]):
            out_row[n] *= b_scale[n]
    return out


@numba.njit(cache=True, nogil=True, fastmath=True)
def _block_steps(
    h, norm, norm_eps, in_proj, conv_weight_t, conv_bias, dt_bias, a_log, d, gate_norm, gate_eps, out_proj,
    conv, ssm, lengths, n_groups, head_dim,
):  # fmt: skip
    """One residual block over L frames: h (B, L, D) -> h + Mamba2(RMSNorm(h)), and the conv and ssm states after
    each row's last valid frame (`lengths` (B,); frames at t >= lengths[b] leave the state as it was).

    Scalars stay in the arrays' precision (in Numba a float32 meeting an integer or a float64 becomes a float64),
    and the recurrence's inner loop runs over 1-D views, which LLVM vectorises (indexing the 4-D state inside it
    ran six times slower)."""
    zero, one = h.dtype.type(0.0), h.dtype.type(1.0)
    norm_eps, gate_eps = h.dtype.type(norm_eps), h.dtype.type(gate_eps)
    bsz, length, d_model = h.shape
    n_heads = a_log.shape[0]
    d_inner = n_heads * head_dim
    d_state = ssm.shape[3]
    kernel, conv_dim = conv_weight_t.shape
    carried = kernel - 1
    heads_per_group = n_heads // n_groups
    b_at, c_at, dt_at = d_inner, d_inner + n_groups * d_state, d_inner + conv_dim  # offsets in xBC and zxbcdt
    rate = np.exp(a_log)  # the decay over dt is exp(-dt * rate)

    rows = h.reshape(bsz * length, d_model)
    u = np.empty_like(rows)
    for r in range(bsz * length):  # the block's pre-norm
        total = zero
        for i in range(d_model):
            total += rows[r, i] * rows[r, i]
        scale = one / np.sqrt(total / h.dtype.type(d_model) + norm_eps)
        for i in range(d_model):
            u[r, i] = rows[r, i] * scale * norm[i]
    zxbcdt = _product(u, *in_proj)  # (B·L, E + conv_dim + H): the gate z, the conv input xBC, dt

    new_conv = np.empty_like(conv)
    new_ssm = ssm.copy()
    gated = np.empty((bsz * length, d_inner), h.dtype)
    xbc = np.empty(conv_dim, h.dtype)
    for b in range(bsz):
        for t in range(length):
            r = b * length + t
            # Causal depthwise conv over [the K-1 carried inputs, the new ones]: window position t + j.
            xbc[:] = conv_bias
            for j in range(kernel):
                weight = conv_weight_t[j]
                if t + j < carried:
                    for c in range(conv_dim):
                        xbc[c] += conv[b, c, t + j] * weight[c]
                else:
                    inputs = zxbcdt[r + j - carried, d_inner : d_inner + conv_dim]
                    for c in range(conv_dim):
                        xbc[c] += inputs[c] * weight[c]
            for c in range(conv_dim):
                xbc[c] = xbc[c] / (one + np.exp(-xbc[c]))  # silu
            y = gated[r]  # the SSM's output, gated in place below
            for head in range(n_heads):
                g = head // heads_per_group
                b_in = xbc[b_at + g * d_state : b_at + (g + 1) * d_state]
                c_out = xbc[c_at + g * d_state : c_at + (g + 1) * d_state]
                raw = zxbcdt[r, dt_at + head] + dt_bias[head]
                dt = raw if raw > 20 else np.log1p(np.exp(raw))  # softplus (PyTorch's threshold)
                if t >= lengths[b]:
                    dt = zero  # padding: decay 1 and no input, so the state passes through unchanged
                decay = np.exp(-dt * rate[head])
                states = new_ssm[b, head]
                for p in range(head_dim):
                    x = xbc[head * head_dim + p]
                    xdt = x * dt
                    row = states[p]
                    acc = zero
                    for n in range(d_state):
                        s = row[n] * decay + xdt * b_in[n]
                        row[n] = s
                        acc += s * c_out[n]
                    y[head * head_dim + p] = acc + x * d[head]
            total = zero
            for i in range(d_inner):  # gate by silu(z), then the gated norm
                z = zxbcdt[r, i]
                y[i] = y[i] * z / (one + np.exp(-z))
                total += y[i] * y[i]
            scale = one / np.sqrt(total / h.dtype.type(d_inner) + gate_eps)
            for i in range(d_inner):
                y[i] *= scale * gate_norm[i]
        for j in range(carried):  # the K-1 inputs ending at the row's last valid frame
            pos = lengths[b] + j
            if pos < carried:
                new_conv[b, :, j] = conv[b, :, pos]
            else:
                new_conv[b, :, j] = zxbcdt[b * length + pos - carried, d_inner : d_inner + conv_dim]
    out = rows + _product(gated, *out_proj)
    return out.reshape(bsz, length, d_model), new_conv, new_ssm


def _rms_norm(v: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return v / np.sqrt((v * v).sum(axis=-1, keepdims=True) / v.shape[-1] + eps) * weight


def stack_steps(
    stack: SSMStack, x: Tensor, state: BatchState, lengths: Tensor | None = None
) -> tuple[Tensor, BatchState]:
    """`stack(x, state, lengths)` computed frame by frame: x (B, L, D) -> (B, L, D) and the state after each
    row's last valid frame (frames at t >= lengths[b] do not touch it)."""
    layers, final_norm = _views(stack)
    h = np.ascontiguousarray(x.detach().numpy())
    bsz, length, _ = h.shape
    ends = np.full(bsz, length, np.int64) if lengths is None else lengths.numpy().astype(np.int64)
    new = {}
    with _THREADPOOLS.limit(limits=1, user_api="blas"):
        for i, w in enumerate(layers):
            h, conv, ssm = _block_steps(
                h, w.norm, w.norm_eps, w.in_proj, w.conv_weight_t, w.conv_bias, w.dt_bias, w.a_log, w.d,
                w.gate_norm, w.gate_eps, w.out_proj,
                np.ascontiguousarray(state[f"{i}.conv"].numpy()), np.ascontiguousarray(state[f"{i}.ssm"].numpy()),
                ends, w.cfg.n_groups, w.cfg.head_dim,
            )  # fmt: skip
            new[f"{i}.conv"], new[f"{i}.ssm"] = torch.from_numpy(conv), torch.from_numpy(ssm)
    out = _rms_norm(h, final_norm, stack.norm.eps)
    return torch.from_numpy(out), BatchState(new)
