"""The Sonare TTS acoustic model: phonemes in, acoustic frames out, streaming by construction.

    phoneme ids (B, N) ──► PhonemeEncoder (causal SSM, read LOOKAHEAD phonemes late) ──► h (B, N, d_text)
    h ──► DurationPredictor ──► log frames per phoneme (B, N)
    h repeated by duration, + where-in-the-phoneme features ──► FrameDecoder (causal SSM) ──► frames (B, T, FRAME_DIM)

Everything is causal except a fixed look-ahead of LOOKAHEAD phonemes: phoneme i is represented by the encoder
output after it has read phoneme i + LOOKAHEAD. So speech can start as soon as the first few phonemes of text are
known, and a stream's whole context is the encoder's and decoder's SSM states.

A speaker embedding (d_speaker) conditions both the encoder and the decoder. Built-in voices are rows of a learned
table; cloned voices are embeddings produced by the speaker encoder in `sonare.voices`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sonare.ssm import BatchState, Mamba2Config, SSMStack
from sonare.tts.acoustic import FRAME_DIM

POSITION_FEATURES = 4  # see `position_features`


@dataclass(frozen=True)
class TTSConfig:
    vocab_size: int
    n_speakers: int
    d_speaker: int = 64
    d_text: int = 192
    text_layers: int = 4
    lookahead: int = 3
    d_frame: int = 256
    frame_layers: int = 4
    d_state: int = 32
    head_dim: int = 32
    frame_dim: int = FRAME_DIM

    def to_dict(self) -> dict:
        return asdict(self)


def frame_features(offset: Tensor, duration: Tensor) -> Tensor:
    """Where a frame sits in its phoneme: offset and duration in frames (any shape) -> (..., POSITION_FEATURES):
    progress, frames left (both as fractions), log duration, and a first-frame flag."""
    dur = duration.clamp(min=1).to(torch.float32)
    off = offset.to(torch.float32)
    return torch.stack([off / dur, (dur - off - 1) / dur, torch.log(dur) / 3.0, (off == 0).float()], dim=-1)


def position_features(durations: Tensor, max_frames: int) -> tuple[Tensor, Tensor]:
    """Expand phonemes to frames: durations (B, N) -> (index (B, T) of each frame's phoneme, frame_features
    (B, T, POSITION_FEATURES)). Frames beyond a row's total belong to its last phoneme (mask them)."""
    bsz, n = durations.shape
    ends = torch.cumsum(durations, dim=1)
    frames = torch.arange(max_frames, device=durations.device).expand(bsz, -1).contiguous()
    index = torch.searchsorted(ends, frames, right=True).clamp(max=n - 1)
    start = torch.gather(ends - durations, 1, index)
    return index, frame_features(frames - start, torch.gather(durations, 1, index))


class PhonemeEncoder(nn.Module):
    def __init__(self, cfg: TTSConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_text)
        self.speaker = nn.Linear(cfg.d_speaker, cfg.d_text)
        self.ssm = SSMStack(Mamba2Config(cfg.d_text, d_state=cfg.d_state, head_dim=cfg.head_dim), cfg.text_layers)

    def forward(
        self, ids: Tensor, speaker: Tensor, state: BatchState | None = None, lengths: Tensor | None = None
    ) -> tuple[Tensor, BatchState]:
        """ids: (B, N), speaker: (B, d_speaker) -> outputs (B, N, d_text) (not yet shifted by the look-ahead)."""
        x = self.embed(ids) + self.speaker(speaker)[:, None, :]
        return self.ssm(x, state, lengths)


class DurationPredictor(nn.Module):
    def __init__(self, cfg: TTSConfig):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(cfg.d_text, 256), nn.SiLU(), nn.Linear(256, 1))

    def forward(self, h: Tensor) -> Tensor:
        """h: (..., d_text) -> log(1 + frames) (...)."""
        return self.net(h).squeeze(-1)


class FrameDecoder(nn.Module):
    def __init__(self, cfg: TTSConfig):
        super().__init__()
        self.inp = nn.Linear(cfg.d_text + POSITION_FEATURES, cfg.d_frame)
        self.speaker = nn.Linear(cfg.d_speaker, cfg.d_frame)
        self.ssm = SSMStack(Mamba2Config(cfg.d_frame, d_state=cfg.d_state, head_dim=cfg.head_dim), cfg.frame_layers)
        self.out = nn.Linear(cfg.d_frame, cfg.frame_dim)

    def forward(
        self, cond: Tensor, speaker: Tensor, state: BatchState | None = None, lengths: Tensor | None = None
    ) -> tuple[Tensor, BatchState]:
        """cond: (B, T, d_text + POSITION_FEATURES) -> frames (B, T, frame_dim)."""
        x = self.inp(cond) + self.speaker(speaker)[:, None, :]
        y, state = self.ssm(x, state, lengths)
        return self.out(y), state


class TTSModel(nn.Module):
    def __init__(self, cfg: TTSConfig):
        super().__init__()
        self.cfg = cfg
        self.speakers = nn.Embedding(cfg.n_speakers, cfg.d_speaker)
        nn.init.normal_(self.speakers.weight, std=1.0 / math.sqrt(cfg.d_speaker))
        self.encoder = PhonemeEncoder(cfg)
        self.durations = DurationPredictor(cfg)
        self.decoder = FrameDecoder(cfg)
        # Frame statistics (set from the training corpus) so the decoder predicts unit-scale targets.
        self.register_buffer("frame_mean", torch.zeros(cfg.frame_dim))
        self.register_buffer("frame_std", torch.ones(cfg.frame_dim))

    def encode(self, ids: Tensor, speaker: Tensor) -> Tensor:
        """Whole-sequence encoding with the look-ahead applied: (B, N) -> (B, N, d_text).

        Rows are padded with PAD (id 0), and `lookahead` more PADs follow, so the last phonemes of every row
        see the same future as at the end of a stream, where the session pushes the same PADs."""
        k = self.cfg.lookahead
        h, _ = self.encoder(F.pad(ids, (0, k)), speaker)
        return h[:, k:]

    def forward(self, ids: Tensor, speaker_ids: Tensor, durations: Tensor, n_frames: int) -> tuple[Tensor, Tensor]:
        """Teacher-forced training pass.

        ids (B, N), speaker_ids (B,), durations (B, N) ground-truth frames -> (predicted log durations (B, N),
        normalised frames (B, T, frame_dim))."""
        speaker = self.speakers(speaker_ids)
        h = self.encode(ids, speaker)
        return self.durations(h), self.decode_aligned(h, speaker, durations, n_frames)

    def decode_aligned(self, h: Tensor, speaker: Tensor, durations: Tensor, n_frames: int) -> Tensor:
        """Encoder outputs h (B, N, d_text) held for the given durations (B, N), decoded with speaker vectors
        (B, d_speaker) -> normalised frames (B, n_frames, frame_dim)."""
        index, feats = position_features(durations, n_frames)
        cond = torch.cat([torch.gather(h, 1, index[..., None].expand(-1, -1, h.shape[-1])), feats], dim=-1)
        frames, _ = self.decoder(cond, speaker)
        return frames

    def denormalize(self, frames: Tensor) -> Tensor:
        """Model outputs -> acoustic frames, voicing decided as analysis measures it (1 or 0).

        Channel 1 is a voicing logit trained with cross-entropy. Its probability is not a mix: rendered as one,
        an uncertain voiced frame (p < 0.3 in 9% of voiced frames) becomes mostly noise, and speech turns
        hoarse (DNSMOS 2.29 with the probability, 2.89 with the decision; docs/benchmarks.md)."""
        out = frames * self.frame_std + self.frame_mean
        voiced = (frames[..., 1:2] > 0).to(out.dtype)
        return torch.cat([out[..., :1], voiced, out[..., 2:]], dim=-1)
