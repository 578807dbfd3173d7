"""A causal, chunk-streaming harmonic-plus-noise vocoder: acoustic frames in, PCM out, one hop per frame.

Source-filter synthesis by weighted overlap-add (WOLA). Each frame renders a two-hop grain centred on the
frame's time: the excitation (a band-limited pulse train whose oscillator phase is carried in the stream
state, plus white noise) is windowed, shaped in the frequency domain by the frame's envelope split into
periodic and aperiodic parts, windowed again and overlap-added. Square-root Hann windows at 50% overlap sum
to one, so a steady frame reproduces its envelope exactly.

Output for frame j is the hop [(j-1)·HOP, j·HOP): one frame of latency (11.6 ms), no look-ahead.

State per stream (all fixed size): phase (1), last f0 (1), last hop of excitation (2, HOP), grain tail (HOP),
and a read position in a fixed table of Gaussian noise, so a stream's audio is a pure function of its frames
(reproducible, and identical whether it runs alone or batched).

Levels follow WORLD's conventions (see `sonare.tts.acoustic`): a harmonic at frequency f of a periodic
signal with fundamental f0 has amplitude 2·sqrt(sp(f)·f0/sr); white noise of variance s² has sp = s².
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from sonare.ssm.state import BatchState, zeros_state
from sonare.tts.acoustic import HOP, N_AP, N_ENV, SAMPLE_RATE, interpolation_matrix, mel_points

NOISE_TABLE = 1 << 18


class HarmonicNoiseVocoder:
    def __init__(self, sample_rate: int = SAMPLE_RATE, hop: int = HOP, dtype: torch.dtype = torch.float32):
        self.sample_rate, self.hop = sample_rate, hop
        n_fft = 2 * hop
        bins = np.arange(n_fft // 2 + 1) * sample_rate / n_fft
        self._env_to_bins = torch.tensor(interpolation_matrix(mel_points(N_ENV, sample_rate), bins).T, dtype=dtype)
        self._ap_to_bins = torch.tensor(interpolation_matrix(mel_points(N_AP, sample_rate), bins).T, dtype=dtype)
        self._window = torch.hann_window(n_fft, periodic=True, dtype=dtype).sqrt()
        self._ramp = torch.arange(1, hop + 1, dtype=dtype) / hop  # interpolation weights within a hop
        # 12 s of noise at 22.05 kHz: far longer than any pattern an ear could pick out of shaped aspiration
        self._noise = torch.randn(NOISE_TABLE, generator=torch.Generator().manual_seed(0), dtype=dtype)

    def to(self, device: torch.device | str) -> HarmonicNoiseVocoder:
        """Render on `device` (a GPU, for training what follows the vocoder); frames and states live there too."""
        for name in ("_env_to_bins", "_ap_to_bins", "_window", "_ramp", "_noise"):
            setattr(self, name, getattr(self, name).to(device))
        return self

    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"phase": (1,), "f0": (1,), "excitation": (2, self.hop), "tail": (self.hop,), "noise_at": (1,)}

    def new_state(self, batch: int) -> BatchState:
        return zeros_state(self.state_shapes(), batch, dtype=self._window.dtype, device=self._window.device)

    def run(self, frames: Tensor, state: BatchState, lengths: Tensor | None = None) -> tuple[Tensor, BatchState]:
        """frames: (B, F, FRAME_DIM), lengths (B,) valid frames per row (default: all) -> pcm (B, F·HOP) and the
        state after each row's last valid frame. All F frames render at once: per-op overhead, not arithmetic,
        is what a step costs on a CPU, so one pass over F frames costs about as much as one frame."""
        bsz, n, _ = frames.shape
        log_f0, voiced = frames[..., 0], frames[..., 1].clamp(0, 1)  # (B, F)
        log_env, log_ap = frames[..., 2 : 2 + N_ENV], frames[..., 2 + N_ENV :]
        f0 = log_f0.exp().clamp(30.0, self.sample_rate / 4)

        # Excitation: within each hop f0 glides from the previous frame's value (the first from the state's).
        prev_f0 = torch.cat([torch.where(state["f0"] > 0, state["f0"], f0[:, :1]), f0[:, :-1]], dim=1)
        f0_t = prev_f0[..., None] + (f0 - prev_f0)[..., None] * self._ramp  # (B, F, HOP)
        # Accumulated in float64 and wrapped: float32 loses the phase of high harmonics over a long chunk.
        increments = (2 * math.pi * f0_t.double() / self.sample_rate).reshape(bsz, n * self.hop)
        phase_t = torch.remainder(state["phase"].double() + torch.cumsum(increments, dim=1), 2 * math.pi)
        phase_t = phase_t.to(frames.dtype).reshape(bsz, n, self.hop)
        pulses = _band_limited_pulses(phase_t, torch.floor(self.sample_rate / 2 / f0_t))
        at = state["noise_at"].long()  # (B, 1)
        noise = self._noise[(at + torch.arange(n * self.hop, device=at.device)) % NOISE_TABLE].reshape(bsz, n, self.hop)
        excitation = torch.stack([pulses, noise], dim=2)  # (B, F, 2, HOP)

        # Grain j spans hops j-1 and j; the hop before the first comes from the state.
        previous = torch.cat([state["excitation"][:, None], excitation[:, :-1]], dim=1)
        grains = torch.cat([previous, excitation], dim=3) * self._window  # (B, F, 2, 2·HOP)
        spectra = torch.fft.rfft(grains)  # (B, F, 2, HOP+1)
        envelope = (log_env @ self._env_to_bins).exp()  # power, (B, F, HOP+1)
        aperiodic = (log_ap @ self._ap_to_bins).exp().clamp(0, 1)
        aperiodic = voiced[..., None] * aperiodic + (1 - voiced[..., None])  # unvoiced frames are all noise
        # Floored before the square root so gradients stay finite where a part is silent (training through the
        # vocoder); a power of 1e-20 is 200 dB below full scale, far below anything audible.
        periodic_gain = 2 * (envelope * f0[..., None] / self.sample_rate * (1 - aperiodic)).clamp_min(1e-20).sqrt()
        noise_gain = (envelope * aperiodic).clamp_min(1e-20).sqrt()
        shaped = spectra[:, :, 0] * _minimum_phase(periodic_gain) + spectra[:, :, 1] * noise_gain
        grain = torch.fft.irfft(shaped, n=2 * self.hop) * self._window  # (B, F, 2·HOP)

        tails = torch.cat([state["tail"][:, None], grain[:, :-1, self.hop :]], dim=1)
        pcm = (tails + grain[:, :, : self.hop]).reshape(bsz, n * self.hop)

        device = frames.device
        # (B,) each row's last valid frame
        last = (torch.full((bsz,), n, device=device) if lengths is None else lengths.to(device)) - 1
        rows = torch.arange(bsz, device=device)
        valid = (last >= 0)[:, None]
        last = last.clamp(min=0)
        consumed = ((last + 1) * self.hop)[:, None]
        phase_end = phase_t[rows, last, -1:]
        next_state = BatchState(
            {
                "phase": torch.where(valid, phase_end, state["phase"]),
                "f0": torch.where(valid, f0[rows, last][:, None], state["f0"]),
                "excitation": torch.where(valid[..., None], excitation[rows, last], state["excitation"]),
                "tail": torch.where(valid, grain[rows, last, self.hop :], state["tail"]),
                "noise_at": torch.where(valid, ((at + consumed) % NOISE_TABLE).to(frames.dtype), state["noise_at"]),
            }
        )
        return pcm, next_state

    def pending(self, state: BatchState) -> Tensor:
        """(B, HOP): the audio still owed after the last frame (the last grain's second half)."""
        return state["tail"]

    def render(self, frames: Tensor) -> Tensor:
        """Offline convenience: frames (T, FRAME_DIM) -> pcm (T·HOP,)."""
        pcm, _ = self.run(frames[None], self.new_state(1))
        return pcm[0]


def _band_limited_pulses(phase: Tensor, harmonics: Tensor) -> Tensor:
    """sum_{k=1..K} cos(k·phase): unit-amplitude harmonics up to K, by the Dirichlet kernel's closed form."""
    half = phase / 2
    denom = torch.sin(half)
    safe = denom.abs() > 1e-4
    ratio = torch.sin((harmonics + 0.5) * phase) / torch.where(safe, 2 * denom, torch.ones_like(denom))
    return torch.where(safe, ratio - 0.5, harmonics)


def _minimum_phase(gain: Tensor) -> Tensor:
    """The minimum-phase response with magnitude `gain` (..., bins), by folding the real cepstrum.

    Voiced speech is shaped by a causal vocal tract; a zero-phase filter would make symmetric, buzzy pulses.
    """
    n = 2 * (gain.shape[-1] - 1)
    cepstrum = torch.fft.irfft(torch.log(gain.clamp_min(1e-9)), n=n)
    fold = torch.zeros(n, dtype=gain.dtype, device=gain.device)
    fold[0] = fold[n // 2] = 1
    fold[1 : n // 2] = 2
    return torch.exp(torch.fft.rfft(cepstrum * fold))
