"""A causal neural refiner after the harmonic-plus-noise vocoder: it corrects the magnitude and phase of each grain.

The parametric vocoder (`sonare.tts.vocoder`) renders every frame from a band-limited pulse train shaped by a
minimum-phase filter from 72 numbers per frame. The teacher's audio holds detail those frames cannot (rendering
its own STFT magnitudes with the vocoder's phase gains 0.35 DNSMOS, benchmarks/vocoder_ceiling.py). The refiner
learns a correction from the teacher's audio (`sonare.train.refiner`). Per frame j it

  1. takes the vocoder's last two hops of PCM as one grain X_j (square-root Hann window, 2·HOP samples),
  2. reads log|X_j| together with the frame itself through a stack of causal ConvNeXt blocks (no look-ahead),
  3. multiplies X_j by a complex gain exp(Δm + iΔφ) per bin, interpolated from `points` values evenly spaced
     in frequency: a gain that is smooth across bins is a short filter, so the circular convolution it makes
     of the grain does not wrap audible echoes around it (per-bin gains lowered DNSMOS when trained; so did
     correcting the magnitude alone), and
  4. overlap-adds the inverse transform with the same window (the windows' squares sum to one).

The output layer starts at zero, so an untrained refiner reproduces the vocoder exactly. Output for frame j is
one hop behind the vocoder's: the hop [(j-2)·HOP, (j-1)·HOP) of the frames' timeline.

Shapes: frames (B, F, FRAME_DIM), vocoder PCM (B, F·HOP) -> PCM (B, F·HOP). State per stream, all fixed size:
the vocoder's previous hop (HOP), the grain tail still to overlap (HOP), the last frame (FRAME_DIM, to close
the stream with) and each block's last KERNEL-1 inputs.
"""

from __future__ import annotations

import json
import os

import torch
from torch import Tensor, nn

from sonare.ssm.state import BatchState, zeros_state
from sonare.tts.acoustic import FRAME_DIM, HOP
from sonare.tts.vocoder import HarmonicNoiseVocoder

BINS = HOP + 1  # rfft bins of a 2·HOP grain


class CausalConvNeXtBlock(nn.Module):
    """Depthwise causal conv over frames, then a position-wise MLP, with a residual connection."""

    def __init__(self, dim: int, kernel: int, expansion: int = 3):
        super().__init__()
        self.kernel = kernel
        self.depthwise = nn.Conv1d(dim, dim, kernel, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, expansion * dim)
        self.down = nn.Linear(expansion * dim, dim)

    def forward(self, x: Tensor, history: Tensor) -> Tensor:
        """x (B, F, D), history (B, KERNEL-1, D): the inputs before x -> (B, F, D)."""
        h = self.depthwise(torch.cat([history, x], dim=1).transpose(1, 2)).transpose(1, 2)  # (B, F, D)
        return x + self.down(nn.functional.gelu(self.up(self.norm(h))))


class VocoderRefiner(nn.Module):
    def __init__(self, dim: int = 256, layers: int = 4, kernel: int = 7, points: int = 32):
        super().__init__()
        if not 2 <= points <= BINS:
            raise ValueError(f"points must be between 2 and {BINS}")
        self.dim, self.layers, self.kernel, self.points = dim, layers, kernel, points
        # (points, BINS): linear interpolation from `points` evenly spaced bins to all of them
        idx = torch.linspace(0, points - 1, BINS)
        lo = idx.floor().long().clamp(max=points - 2)
        frac = idx - lo
        interp = torch.zeros(points, BINS)
        interp[lo, torch.arange(BINS)] = 1 - frac
        interp[lo + 1, torch.arange(BINS)] += frac
        self.register_buffer("interp", interp, persistent=False)
        self.inp = nn.Linear(BINS + FRAME_DIM, dim)
        self.inp_norm = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(CausalConvNeXtBlock(dim, kernel) for _ in range(layers))
        self.out_norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, 2 * points)  # Δm and Δφ at the points
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)
        self.register_buffer("window", torch.hann_window(2 * HOP, periodic=True).sqrt(), persistent=False)

    def config(self) -> dict[str, int]:
        return {"dim": self.dim, "layers": self.layers, "kernel": self.kernel, "points": self.points}

    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        shapes: dict[str, tuple[int, ...]] = {"previous": (HOP,), "tail": (HOP,), "frame": (FRAME_DIM,)}
        for i in range(self.layers):
            shapes[f"conv{i}"] = (self.kernel - 1, self.dim)
        return shapes

    def new_state(self, batch: int) -> BatchState:
        return zeros_state(self.state_shapes(), batch, dtype=self.window.dtype, device=self.window.device)

    def forward(
        self, frames: Tensor, pcm: Tensor, state: BatchState, lengths: Tensor | None = None
    ) -> tuple[Tensor, BatchState]:
        """frames (B, F, FRAME_DIM), the vocoder's pcm for them (B, F·HOP), lengths (B,) valid frames per row
        (default: all) -> refined pcm (B, F·HOP) and the state after each row's last valid frame."""
        bsz, n, _ = frames.shape
        hops = pcm.reshape(bsz, n, HOP)
        previous = torch.cat([state["previous"][:, None], hops[:, :-1]], dim=1)
        grains = torch.cat([previous, hops], dim=2) * self.window  # (B, F, 2·HOP)
        spectra = torch.fft.rfft(grains)  # (B, F, BINS)

        x = self.inp_norm(self.inp(torch.cat([torch.log(spectra.abs() + 1e-5), frames], dim=-1)))  # (B, F, D)
        padded_inputs = []
        for i, block in enumerate(self.blocks):
            padded_inputs.append(torch.cat([state[f"conv{i}"], x], dim=1))  # (B, KERNEL-1+F, D)
            x = block(x, state[f"conv{i}"])
        gains = self.out(self.out_norm(x)).unflatten(-1, (2, self.points)) @ self.interp  # (B, F, 2, BINS)
        delta_mag, delta_phase = gains.unbind(dim=-2)
        refined = spectra * torch.polar(torch.exp(delta_mag.clamp(max=4.0)), delta_phase)
        out = torch.fft.irfft(refined, n=2 * HOP) * self.window  # (B, F, 2·HOP)

        tails = torch.cat([state["tail"][:, None], out[:, :-1, HOP:]], dim=1)
        audio = (tails + out[:, :, :HOP]).reshape(bsz, n * HOP)

        device = frames.device
        lengths = torch.full((bsz,), n, device=device) if lengths is None else lengths.to(device)
        rows, last = torch.arange(bsz, device=device), (lengths - 1).clamp(min=0)
        valid = lengths > 0
        # a row's history is the KERNEL-1 block inputs up to and including its last valid frame
        window = lengths[:, None] + torch.arange(self.kernel - 1, device=device)  # (B, KERNEL-1) into padded inputs
        updates = {"previous": hops[rows, last], "tail": out[rows, last, HOP:], "frame": frames[rows, last]}
        for i, padded in enumerate(padded_inputs):
            updates[f"conv{i}"] = padded[rows[:, None], window]
        next_state = BatchState(
            {k: torch.where(valid.view(-1, *[1] * (v.dim() - 1)), v, state[k]) for k, v in updates.items()}
        )
        return audio, next_state


class RefinedVocoder:
    """The harmonic-plus-noise vocoder followed by the refiner, behind the vocoder's streaming interface."""

    def __init__(self, refiner: VocoderRefiner):
        self.vocoder = HarmonicNoiseVocoder()
        self.refiner = refiner.eval()

    def new_state(self, batch: int) -> BatchState:
        return BatchState.merge({"hn": self.vocoder.new_state(batch), "refiner": self.refiner.new_state(batch)})

    def run(self, frames: Tensor, state: BatchState, lengths: Tensor | None = None) -> tuple[Tensor, BatchState]:
        """frames (B, F, FRAME_DIM) -> pcm (B, F·HOP), one hop behind the plain vocoder's, and the new state."""
        pcm, hn = self.vocoder.run(frames, state.part("hn"), lengths)
        refined, refiner = self.refiner(frames, pcm, state.part("refiner"), lengths)
        return refined, BatchState.merge({"hn": hn, "refiner": refiner})

    def pending(self, state: BatchState) -> Tensor:
        """(B, 2·HOP): the audio still owed after the last frame. The vocoder still owes its last grain's second
        half: two more refiner passes, over that half and then over silence (both with the last frame), complete
        the hop the refiner has only half overlapped and then that last half."""
        frame, refiner = state["refiner.frame"][:, None], state.part("refiner")
        owed = self.vocoder.pending(state.part("hn"))
        out = []
        for pcm in (owed, torch.zeros_like(owed)):
            audio, refiner = self.refiner(frame, pcm, refiner)
            out.append(audio)
        return torch.cat(out, dim=1)


def load_refined_vocoder(path: str | os.PathLike) -> RefinedVocoder:
    """A `RefinedVocoder` from exported weights (`sonare train refiner --export`)."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(path), framework="pt") as f:
        config = json.loads(f.metadata()["config"])
    refiner = VocoderRefiner(**config)
    refiner.load_state_dict(load_file(str(path)))
    return RefinedVocoder(refiner)
