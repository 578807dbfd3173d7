"""The streaming recogniser: causal subsampling, a causal SSM encoder, a CTC head and a turn head.

Shapes: B batch, T log-mel frames (10 ms), L encoder frames (40 ms, L = T // 4), M mel bins (80),
C subsampler channels, F1 = 39 and F2 = 19 frequency positions after each strided conv, D d_model,
V vocabulary (CTC alphabet with blank), R CTC frames per encoder frame (`ctc_per_frame`).

    log-mel (B, T, M) -> normalise -> Subsampler (B, L, D) -> SSMStack (B, L, D) -> ctc (B, L·R, V)
                                                                                 -> turn (B, L, 2)

Conversational English runs at 12-20 letters a second (spaces included), fast speech more, and CTC needs a
frame per letter plus a blank between doubled letters: at 25 CTC frames a second (R = 1) fast speech leaves it
no room. R > 1 splits each encoder frame into R CTC frames of 40/R ms through a wider head, at no cost to the
encoder.

Every part is causal with zero look-ahead: encoder frame k sees log-mel frames up to 4k + 3, so it is
ready as soon as its 40 ms have been heard. The turn head reads the same encoder state as the CTC head,
so its decision "the speaker has finished" is made from what was said (the words so far, e.g. a trailing
"and") and how (intonation, the pause), not from silence alone. Its two logits are:

    end:    the turn is over (trained to rise over the first ~200 ms of an end-of-turn pause, stay low in
            hold pauses and during speech)
    speech: someone is speaking in this frame (for turn start and resume)

The whole streaming context is a fixed-size BatchState: the SSM state of every layer and the last input
row of each strided convolution.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sonare.audio.features import HOP, N_MELS, SAMPLE_RATE, WINDOW
from sonare.ssm import BatchState, Mamba2Config, SSMStack, zeros_state
from sonare.stt.vocab import VOCAB_SIZE

SUBSAMPLING = 4
FRAME_SECONDS = 0.01 * SUBSAMPLING
TURN_END, TURN_SPEECH = 0, 1  # channels of the turn head


def heard_seconds(log_mel_frames: int) -> float:
    """Audio a stream must have received before its first `log_mel_frames` frames exist."""
    return ((log_mel_frames - 1) * HOP + WINDOW) / SAMPLE_RATE if log_mel_frames else 0.0


def frame_time(k: int) -> float:
    """When encoder frame k is ready: the end of the audio it has heard, in seconds from the stream start."""
    return heard_seconds(SUBSAMPLING * (k + 1))


@dataclass(frozen=True)
class STTConfig:
    channels: int = 64
    d_model: int = 256
    n_layers: int = 8
    d_state: int = 32
    head_dim: int = 32
    expand: int = 2
    chunk_size: int = 16  # SSD chunk: streaming steps are short, and 16 also trains fastest on CPU
    dropout: float = 0.1  # on the subsampled features, in training
    block_dropout: float = 0.0  # on each encoder block's output before its residual sum, in training
    ctc_per_frame: int = 1  # R: CTC frames per encoder frame
    vocab_size: int = VOCAB_SIZE
    n_mels: int = N_MELS

    @property
    def ctc_frame_seconds(self) -> float:
        return FRAME_SECONDS / self.ctc_per_frame

    def ssm_config(self) -> Mamba2Config:
        return Mamba2Config(
            d_model=self.d_model,
            d_state=self.d_state,
            head_dim=self.head_dim,
            expand=self.expand,
            chunk_size=self.chunk_size,
        )

    def to_dict(self) -> dict:
        return asdict(self)


def _strided(n: int) -> int:
    """Positions left by a kernel-3, stride-2 convolution without padding."""
    return (n - 3) // 2 + 1


class Subsampler(nn.Module):
    """Two causal 3x3 convolutions, stride 2 in time and frequency, then a projection to d_model.

    In time each convolution sees the last row of its previous input (carried as state) and two new rows,
    so an even number of new rows gives exactly half as many outputs and a stream cut anywhere on a
    multiple of four log-mel frames gives the same outputs as the whole signal.
    """

    def __init__(self, cfg: STTConfig):
        super().__init__()
        self.cfg = cfg
        c = cfg.channels
        self.f1 = _strided(cfg.n_mels)
        self.f2 = _strided(self.f1)
        self.conv1 = nn.Conv2d(1, c, kernel_size=3, stride=2)
        self.conv2 = nn.Conv2d(c, c, kernel_size=3, stride=2)
        self.proj = nn.Linear(c * self.f2, cfg.d_model)

    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"in1": (1, 1, self.cfg.n_mels), "in2": (self.cfg.channels, 1, self.f1)}

    def forward(self, x: Tensor, state: BatchState, lengths: Tensor) -> tuple[Tensor, BatchState]:
        """x: (B, 4L, M), lengths (B,) in encoder frames -> (B, L, D) and the state after each row's end."""
        x1 = torch.cat([state["in1"], x.unsqueeze(1)], dim=2)  # (B, 1, 1 + 4L, M)
        h1 = F.silu(self.conv1(x1))  # (B, C, 2L, F1)
        x2 = torch.cat([state["in2"], h1], dim=2)  # (B, C, 1 + 2L, F1)
        h2 = F.silu(self.conv2(x2))  # (B, C, L, F2)
        out = self.proj(h2.permute(0, 2, 1, 3).flatten(2))  # (B, L, D)
        # The carried rows are the last valid input of each convolution: x1 row 4L_b, x2 row 2L_b.
        rows = torch.arange(x.shape[0], device=x.device)
        new = BatchState(
            {"in1": x1[rows, :, SUBSAMPLING * lengths][:, :, None], "in2": x2[rows, :, 2 * lengths][:, :, None]}
        )
        return out, new


class STTModel(nn.Module):
    def __init__(self, cfg: STTConfig):
        super().__init__()
        self.cfg = cfg
        self.register_buffer("feat_mean", torch.zeros(cfg.n_mels))
        self.register_buffer("feat_std", torch.ones(cfg.n_mels))
        self.subsample = Subsampler(cfg)
        self.dropout = nn.Dropout(cfg.dropout)
        self.encoder = SSMStack(cfg.ssm_config(), cfg.n_layers, cfg.block_dropout)
        self.ctc = nn.Linear(cfg.d_model, cfg.vocab_size * cfg.ctc_per_frame)
        self.turn = nn.Linear(cfg.d_model, 2)

    def new_state(self, batch: int) -> BatchState:
        p = self.ctc.weight
        sub = zeros_state(self.subsample.state_shapes(), batch, dtype=p.dtype, device=p.device)
        return BatchState.merge({"sub": sub, "enc": self.encoder.new_state(batch)})

    def forward(
        self, mel: Tensor, state: BatchState | None = None, lengths: Tensor | None = None
    ) -> tuple[Tensor, Tensor, BatchState]:
        """mel: (B, 4L, M) log-mel; lengths (B,) valid encoder frames per row (default: all).

        Returns CTC logits (B, L·R, V), turn logits (B, L, 2) and the state after each row's last valid frame.
        """
        h, state = self.encode(mel, state, lengths)
        return self.ctc_logits(h), self.turn(h), state

    def ctc_logits(self, h: Tensor) -> Tensor:
        """Encoder output (B, L, D) -> CTC logits (B, L·R, V): encoder frame k gives CTC frames kR .. kR + R - 1."""
        bsz, length, _ = h.shape
        return self.ctc(h).reshape(bsz, length * self.cfg.ctc_per_frame, self.cfg.vocab_size)

    def ctc_loss(self, logits: Tensor, lengths: Tensor, targets: Tensor, target_lengths: Tensor) -> Tensor:
        """CTC loss per target character, averaged over the rows with text (target_lengths > 0): logits (B, L·R, V),
        lengths (B,) valid encoder frames, targets (ΣS,) every row's symbols concatenated. A row without text (a
        crop whose words are unknown) adds nothing and holds no symbols; with none, a zero that still
        back-propagates."""
        spelled = target_lengths > 0
        if not spelled.any():
            return logits.sum() * 0.0
        logp = F.log_softmax(logits[spelled], dim=-1).transpose(0, 1)  # (L·R, B', V)
        frames = lengths[spelled] * self.cfg.ctc_per_frame
        return F.ctc_loss(logp, targets, frames, target_lengths[spelled], zero_infinity=True)

    def encode(
        self, mel: Tensor, state: BatchState | None = None, lengths: Tensor | None = None
    ) -> tuple[Tensor, BatchState]:
        """mel: (B, 4L, M) -> encoder output (B, L, D) and the state after each row's last valid frame."""
        bsz, t, _ = mel.shape
        if t % SUBSAMPLING:
            raise ValueError(f"the number of log-mel frames ({t}) must be a multiple of {SUBSAMPLING}")
        if state is None:
            state = self.new_state(bsz)
        if lengths is None:
            lengths = torch.full((bsz,), t // SUBSAMPLING, dtype=torch.long, device=mel.device)
        x = (mel - self.feat_mean) / self.feat_std
        x, sub = self.subsample(x, state.part("sub"), lengths)
        h, enc = self.encoder(self.dropout(x), state.part("enc"), lengths)
        return h, BatchState.merge({"sub": sub, "enc": enc})
