"""The three SSM paths agree: chunked forward, streamed pieces with carried state, and single steps."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sonare.ssm import BatchState, Mamba2, Mamba2Config, SSMStack, cpu_step, use_int8_projections

TOL64 = 1e-10
# The documented float32 tolerance: the chunked and stepwise orders round differently; 2e-4 absolute on outputs
# of unit scale over 120 frames (the observed worst case is about 1e-6).
TOL32 = 2e-4


def make_stack(seed: int = 0, chunk: int = 8, layers: int = 2, dtype=torch.float64, groups: int = 1) -> SSMStack:
    torch.manual_seed(seed)
    cfg = Mamba2Config(d_model=16, d_state=8, head_dim=8, n_groups=groups, chunk_size=chunk)
    return SSMStack(cfg, layers).to(dtype)


def run_steps(model: SSMStack, x: torch.Tensor, state: BatchState) -> tuple[torch.Tensor, BatchState]:
    outs = []
    for t in range(x.shape[1]):
        y, state = model.step(x[:, t], state)
        outs.append(y)
    return torch.stack(outs, 1), state


def run_pieces(model, x, cuts, state=None):
    outs, start = [], 0
    for end in [*cuts, x.shape[1]]:
        if end > start:
            y, state = model(x[:, start:end], state)
            outs.append(y)
            start = end
    return torch.cat(outs, 1), state


def max_diff(a: BatchState, b: BatchState) -> float:
    return max((a[k] - b[k]).abs().max().item() for k in a)


@pytest.mark.parametrize("groups", [1, 2])
def test_forward_equals_steps_float64(groups):
    model = make_stack(groups=groups)
    x = torch.randn(3, 37, 16, dtype=torch.float64)
    y_fwd, s_fwd = model(x)
    y_step, s_step = run_steps(model, x, model.new_state(3))
    assert (y_fwd - y_step).abs().max() < TOL64
    assert max_diff(s_fwd, s_step) < TOL64


@settings(max_examples=20, deadline=None)
@given(
    length=st.integers(1, 70),
    chunk=st.sampled_from([1, 4, 8, 16, 64]),
    cuts=st.lists(st.integers(0, 70), max_size=6),
    seed=st.integers(0, 3),
)
def test_streamed_pieces_equal_forward(length, chunk, cuts, seed):
    model = make_stack(seed=seed, chunk=chunk)
    x = torch.randn(2, length, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    y_fwd, s_fwd = model(x)
    y_pcs, s_pcs = run_pieces(model, x, sorted({c for c in cuts if 0 < c < length}))
    assert (y_fwd - y_pcs).abs().max() < TOL64
    assert max_diff(s_fwd, s_pcs) < TOL64


def test_prefill_then_steps_equals_forward():
    model = make_stack(chunk=16)
    x = torch.randn(2, 50, 16, dtype=torch.float64)
    y_fwd, _ = model(x)
    y_pre, state = model(x[:, :33])
    y_rest, _ = run_steps(model, x[:, 33:], state)
    assert (torch.cat([y_pre, y_rest], 1) - y_fwd).abs().max() < TOL64


def test_gradients_match_between_paths():
    model = make_stack(chunk=4)
    x = torch.randn(2, 13, 16, dtype=torch.float64)
    w = torch.randn(2, 13, 16, dtype=torch.float64)

    def grads(fn):
        model.zero_grad()
        xi = x.clone().requires_grad_(True)
        (fn(xi) * w).sum().backward()
        return [xi.grad.clone()] + [p.grad.clone() for p in model.parameters()]

    g_fwd = grads(lambda xi: model(xi)[0])
    g_step = grads(lambda xi: run_steps(model, xi, model.new_state(2))[0])
    g_pcs = grads(lambda xi: run_pieces(model, xi, [5, 6, 11])[0])
    for a, b, c in zip(g_fwd, g_step, g_pcs, strict=True):
        assert (a - b).abs().max() < TOL64
        assert (a - c).abs().max() < TOL64


def test_float32_within_documented_tolerance():
    torch.manual_seed(1)
    for seed in range(2):
        model = make_stack(seed=seed, chunk=16, dtype=torch.float32)
        x = torch.randn(2, 120, 16)
        y_fwd, _ = model(x)
        y_step, _ = run_steps(model, x, model.new_state(2))
        assert (y_fwd - y_step).abs().max() < TOL32


@settings(max_examples=12, deadline=None)
@given(lengths=st.lists(st.integers(0, 30), min_size=1, max_size=4), chunk=st.sampled_from([4, 8, 64]))
def test_padded_tail_leaves_state_untouched(lengths, chunk):
    model = make_stack(chunk=chunk)
    total = 30
    x = torch.randn(len(lengths), total, 16, dtype=torch.float64)
    start = model(torch.randn(len(lengths), 5, 16, dtype=torch.float64))[1]  # a non-zero carried state
    _, s_padded = model(x, start, torch.tensor(lengths))
    for row, n in enumerate(lengths):
        row_state = start.gather(torch.tensor([row]))
        if n:
            _, row_state = model(x[row : row + 1, :n], row_state)
        assert max_diff(s_padded.gather(torch.tensor([row])), row_state) < TOL64


def test_state_rows_gather_scatter_reset():
    model = make_stack()
    state = model.new_state(4)
    _, filled = model(torch.randn(4, 9, 16, dtype=torch.float64), state)
    state.scatter_(torch.arange(4), filled)
    rows = torch.tensor([2, 0])
    picked = state.gather(rows)
    assert max_diff(picked, filled.gather(rows)) == 0
    state.reset_(torch.tensor([1]))
    assert all(state[k][1].abs().max() == 0 for k in state)
    assert all(state[k][0].abs().max() > 0 for k in state)
    # a row's stream continues identically whether it runs alone or in a gathered batch
    x = torch.randn(2, 16, dtype=torch.float64)
    y_batch, _ = model.step(x, picked)
    y_alone, _ = model.step(x[1:], state.gather(torch.tensor([0])))
    assert (y_batch[1:] - y_alone).abs().max() < TOL64


def test_state_size_is_independent_of_length():
    model = make_stack()
    short = model(torch.randn(1, 10, 16, dtype=torch.float64))[1]
    long = model(torch.randn(1, 2000, 16, dtype=torch.float64))[1]
    assert short.nbytes_per_row() == long.nbytes_per_row() > 0


def test_single_mixer_paths_agree():
    torch.manual_seed(0)
    mixer = Mamba2(Mamba2Config(d_model=8, d_state=4, head_dim=4, chunk_size=3)).double()
    x = torch.randn(1, 10, 8, dtype=torch.float64)
    y, _ = mixer(x)
    state = mixer.new_state(1)
    for t in range(10):
        yt, state = mixer.step(x[:, t], state)
        assert (yt - y[:, t]).abs().max() < TOL64


@pytest.mark.parametrize("groups,batch", [(1, 1), (1, 3), (2, 1), (2, 3)])
def test_cpu_inference_step_equals_the_torch_step(groups, batch):
    """Without autograd on a CPU, `step` runs the compiled path (sonare.ssm.cpu_step) at any batch; it must compute
    the same."""
    for dtype, tol in ((torch.float64, TOL64), (torch.float32, TOL32)):
        model = make_stack(groups=groups, dtype=dtype)
        x = torch.randn(batch, 25, 16, dtype=dtype)
        y_torch, s_torch = run_steps(model, x, model.new_state(batch))  # autograd on: the PyTorch path
        with torch.no_grad():
            y_cpu, s_cpu = run_steps(model, x, model.new_state(batch))
            # the dispatch really took the compiled path: bit for bit what it computes
            y_direct, _ = cpu_step.stack_steps(model, x[:, :1], model.new_state(batch))
        assert torch.equal(y_direct[:, 0], y_cpu[:, 0]) and not torch.equal(y_torch[:, 0], y_cpu[:, 0])
        assert (y_torch - y_cpu).abs().max() < tol and max_diff(s_torch, s_cpu) < tol
        assert y_cpu.dtype == dtype and all(s_cpu[k].dtype == dtype for k in s_cpu)


@settings(max_examples=15, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 8), min_size=1, max_size=4),
    frames=st.integers(1, 8),
    groups=st.sampled_from([1, 2]),
)
def test_cpu_inference_frames_equal_the_chunked_scan(lengths, frames, groups):
    """A few frames per row with a padded tail each: the compiled recurrence against the chunked scan."""
    model = make_stack(groups=groups, chunk=4)
    lengths = torch.tensor(lengths).clamp(max=frames)
    batch = len(lengths)
    start = model(torch.randn(batch, 5, 16, dtype=torch.float64))[1]  # a non-zero carried state
    x = torch.randn(batch, frames, 16, dtype=torch.float64)
    y_scan, s_scan = model(x, start, lengths)  # autograd on: the PyTorch path
    with torch.no_grad():
        y_cpu, s_cpu = model(x, start, lengths)
        y_direct, _ = cpu_step.stack_steps(model, x, start, lengths)
    assert torch.equal(y_direct, y_cpu)  # the dispatch took the compiled path
    valid = torch.arange(frames)[None, :] < lengths[:, None]
    assert ((y_scan - y_cpu).abs() * valid[..., None]).max() < TOL64
    assert max_diff(s_scan, s_cpu) < TOL64


def test_cpu_inference_takes_the_compiled_path_for_long_and_wide_inputs():
    """Any batch and length: the compiled path, equal to the chunked scan (autograd on: the PyTorch path)."""
    model = make_stack()
    for shape in ((1, 70, 16), (40, 1, 16), (3, 33, 16)):
        x = torch.randn(*shape, dtype=torch.float64)
        y_scan, s_scan = model(x)
        with torch.no_grad():
            y, s = model(x)
            direct, _ = cpu_step.stack_steps(model, x, model.new_state(len(x)))
        assert torch.equal(y, direct)
        assert (y - y_scan).abs().max() < TOL64 and max_diff(s, s_scan) < TOL64


def test_cpu_inference_step_follows_new_weights():
    model, other = make_stack(seed=0), make_stack(seed=1)
    x, state = torch.randn(2, 16, dtype=torch.float64), model.new_state(2)
    with torch.no_grad():
        model.step(x, state)
        model.load_state_dict(other.state_dict())  # copied into the same storage
        assert torch.allclose(model.step(x, state)[0], other.step(x, state)[0], atol=TOL64)
        y64 = model.step(x, state)[0]
        model.float()  # parameters replaced by new tensors
        y32 = model.step(x.float(), state.to(torch.float32))[0]
        assert y32.dtype == torch.float32 and torch.allclose(y32.double(), y64, atol=1e-5)


@pytest.mark.parametrize("rows", [1, 3, cpu_step.SMALL_PRODUCT_ROWS, cpu_step.SMALL_PRODUCT_ROWS + 1, 40])
@pytest.mark.parametrize("int8", [False, True])
def test_cpu_block_projection_equals_the_matrix_product(rows, int8):
    """The blocks' projections: a compiled loop up to SMALL_PRODUCT_ROWS rows, BLAS past it; both the product
    with the weights as the stack keeps them (rounded to int8 or not)."""
    rng = np.random.default_rng(rows)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        a, weight = rng.standard_normal((rows, 24)).astype(dtype), rng.standard_normal((56, 24)).astype(dtype)
        dense, b_rows, scale = cpu_step._projection(weight, int8)
        assert b_rows.dtype == (np.int8 if int8 else dtype) and np.array_equal(dense, (b_rows * scale).astype(dtype))
        # rounding moves each weight by at most half a step of its output's scale
        assert np.abs(dense - weight.T).max() <= (0.5 * scale.max() * (1 + 1e-6) if int8 else 0)
        out = cpu_step._product(a, dense, b_rows, scale)
        assert out.dtype == dtype and out.shape == (rows, 56)
        assert np.abs(out - a @ dense).max() < tol * np.abs(a @ dense).max()


def test_int8_projections_round_the_projections_alike_at_every_step_size():
    """With int8 projections a stream's output is the same whether it steps frame by frame or past
    SMALL_PRODUCT_ROWS frames at once (BLAS), close to the unrounded stack's, and the flag rebuilds the copies."""
    model = make_stack(dtype=torch.float32)
    x = torch.randn(1, 3 * cpu_step.SMALL_PRODUCT_ROWS, 16)
    with torch.no_grad():
        exact, _ = model(x)
        use_int8_projections(model)
        assert model.int8_projections
        whole, whole_state = model(x)
        steps, step_state = run_steps(model, x, model.new_state(1))
    assert (whole - steps).abs().max() < TOL32 and max_diff(whole_state, step_state) < TOL32
    error = (whole - exact).abs().max()
    assert 0 < error < 0.05 * exact.abs().max()
