"""The trained speaker encoder: a clip -> the voice profile (pitch level and spread, average spectral envelope).

Measuring a profile directly (`sonare.voices.encoder.analyse`: WORLD's pitch tracker and envelope) is exact on
clean speech but drifts with what real clips carry: background noise fills the envelope's valleys, a room
smears it, a telephone band hides its top, and ten seconds is a small sample of a voice. This network is
trained (`sonare train voices`) to predict, from a short clip heard through such conditions, the profile that
the same analysis measures on a minute of that speaker's clean speech. Its output feeds the same adaptation
as before (`SpeakerEncoder.adapt`), so the TTS model is unchanged.

Input, per 20 ms frame of 16 kHz audio: the 80 log-mel bins of the STT front end (two 10 ms frames averaged)
and WORLD's DIO pitch track (log F0 and a voiced flag): pitch is what a mel spectrum shows least precisely.

    features (B, T, 82) -> input norm -> Linear -> (B, T, C)
    3 x residual [depthwise conv k=5 (dilation 1, 2, 4) -> GELU -> pointwise Linear] + LayerNorm   (B, T, C)
    attentive statistics pooling over valid frames: weighted mean and std                          (B, 2C)
    MLP -> (B, 2 + N_ENV): median log F0, log-F0 spread, log envelope (each de-normalised)
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sonare.audio.features import N_MELS, log_mel
from sonare.tts.acoustic import F0_CEIL, F0_FLOOR, N_ENV

SAMPLE_RATE = 16000
FRAME_MS = 20.0  # profiles are averages: a coarse frame rate keeps cloning fast
# DIO's default (0.1) calls many voiced frames unvoiced at this frame rate; at 0.2 its voicing and median
# pitch agree with Harvest's (20x slower) on every teacher engine of the corpus. Decimating by 4 inside DIO
# leaves voicing and median pitch unchanged (within 1 Hz) at a sixth of the cost.
DIO_RANGE = 0.2
DIO_SPEED = 4
FEATURE_DIM = N_MELS + 2
PROFILE_DIM = 2 + N_ENV  # median log F0, log-F0 spread, envelope
BANDWIDTH_HZ = SAMPLE_RATE / 2  # the network hears 16 kHz audio: the envelope above 8 kHz is inferred, not heard
ASSET_PATH = Path(__file__).resolve().parent.parent / "assets" / "voices" / "encoder.safetensors"


def pitch_track(x: np.ndarray, rate: int) -> tuple[np.ndarray, np.ndarray]:
    """float64 audio -> WORLD's F0 (Hz, 0 where unvoiced) every FRAME_MS and the frame times (s)."""
    import pyworld

    f0, times = pyworld.dio(
        x, rate, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_MS, allowed_range=DIO_RANGE, speed=DIO_SPEED
    )
    return pyworld.stonemask(x, f0, times, rate), times


def clip_features(audio16: np.ndarray) -> tuple[Tensor, np.ndarray]:
    """16 kHz mono audio -> (features (T, FEATURE_DIM) float32, DIO F0 per frame (T,) in Hz, 0 unvoiced)."""
    x = np.asarray(audio16, np.float64)
    x = x / max(np.abs(x).max(), 1e-9) * 0.5  # the level is not part of a voice
    mel = log_mel(x.astype(np.float32))  # (2T', 80), 10 ms frames
    t = mel.shape[0] // 2
    mel = mel[: 2 * t].reshape(t, 2, N_MELS).mean(1)
    f0, _ = pitch_track(x, SAMPLE_RATE)
    # DIO's frame k is centred at k * 20 ms; log-mel frame i spans [20 i, 20 i + 35) ms: centre about 20 i + 17.
    f0 = np.pad(f0[1 : t + 1], (0, max(0, t - len(f0) + 1)))[:t]
    voiced = f0 > 0
    lf0 = np.where(voiced, np.log(np.maximum(f0, 1.0)), 0.0)
    extra = torch.from_numpy(np.stack([lf0, voiced.astype(np.float64)], 1).astype(np.float32))
    return torch.cat([mel, extra], 1), f0


@dataclass
class ProfileNetConfig:
    channels: int = 128
    blocks: int = 3
    kernel: int = 5
    hidden: int = 256


class ProfileNet(nn.Module):
    def __init__(self, config: ProfileNetConfig):
        super().__init__()
        self.config = c = config
        # Input and output statistics of the training bank: the network works on standardised numbers.
        self.register_buffer("feature_mean", torch.zeros(FEATURE_DIM))
        self.register_buffer("feature_std", torch.ones(FEATURE_DIM))
        self.register_buffer("profile_mean", torch.zeros(PROFILE_DIM))
        self.register_buffer("profile_std", torch.ones(PROFILE_DIM))
        self.input = nn.Linear(FEATURE_DIM, c.channels)
        self.convs = nn.ModuleList(
            nn.Conv1d(
                c.channels, c.channels, c.kernel, padding=2**i * (c.kernel // 2), dilation=2**i, groups=c.channels
            )
            for i in range(c.blocks)  # depthwise, dilations 1, 2, 4: 29 frames (0.6 s) of context
        )
        self.mixes = nn.ModuleList(nn.Linear(c.channels, c.channels) for _ in range(c.blocks))
        self.norms = nn.ModuleList(nn.LayerNorm(c.channels) for _ in range(c.blocks))
        self.attention = nn.Linear(c.channels, 1)
        self.head = nn.Sequential(nn.Linear(2 * c.channels, c.hidden), nn.GELU(), nn.Linear(c.hidden, PROFILE_DIM))

    def forward(self, features: Tensor, valid: Tensor) -> Tensor:
        """features (B, T, FEATURE_DIM), valid (B, T) bool -> profiles (B, PROFILE_DIM) in natural units."""
        h = self.input((features - self.feature_mean) / self.feature_std)  # (B, T, C)
        for conv, mix, norm in zip(self.convs, self.mixes, self.norms, strict=True):
            h = norm(h + mix(F.gelu(conv(h.transpose(1, 2)).transpose(1, 2))))
        h = h * valid[..., None]
        scores = self.attention(h).squeeze(-1).masked_fill(~valid, float("-inf"))  # (B, T)
        w = scores.softmax(-1)[..., None]
        mean = (w * h).sum(1)  # (B, C)
        std = ((w * h.square()).sum(1) - mean.square()).clamp(min=1e-6).sqrt()
        return self.head(torch.cat([mean, std], -1)) * self.profile_std + self.profile_mean

    def profile(self, features: Tensor) -> Tensor:
        """One clip's features (T, FEATURE_DIM) -> its profile (PROFILE_DIM,)."""
        valid = torch.ones(1, features.shape[0], dtype=torch.bool)
        with torch.inference_mode():
            return self(features[None], valid)[0]


def save_profile_net(model: ProfileNet, path: str | os.PathLike, metadata: dict) -> None:
    from safetensors.torch import save_file

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(path), metadata={"config": json.dumps(asdict(model.config)), **metadata})


def load_profile_net(path: str | os.PathLike = ASSET_PATH) -> ProfileNet:
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(path), framework="pt") as f:
        config = ProfileNetConfig(**json.loads(f.metadata()["config"]))
    model = ProfileNet(config)
    model.load_state_dict(load_file(str(path)))
    return model.eval()
