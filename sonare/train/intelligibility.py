"""An intelligibility loss for TTS training: how well a frozen recogniser reads the words in the model's frames.

The frame loss (L1 to the analysed teacher frames) pulls each frame toward the middle of what the teacher's
frames were there, and says nothing about whether a listener can still tell the sounds apart. This loss renders
the predicted frames through the vocoder (every step of it differentiable), measures the 16 kHz log-mel a
recogniser hears, and takes a frozen Sonare STT model's CTC loss against the clip's text: its gradient moves the
envelope and aperiodicity toward frames the words can be read from. Our own recogniser trains the voice here;
the voice is judged only by independent evaluators (Whisper, DNSMOS), never by this loss.

F0 is held (detached): a change of F0 shifts the phase of every sample after it, a gradient with no local
meaning. Voicing is the model's own decision, as at inference.

Shapes: B clips, T acoustic frames (HOP samples at 22.05 kHz each), D = FRAME_DIM, S target characters.
"""

from __future__ import annotations

import os

import torch
import torch.nn.functional as F
from torch import Tensor

from sonare.audio.features import SAMPLE_RATE as STT_RATE
from sonare.audio.features import log_mel, num_frames
from sonare.stt.model import SUBSAMPLING
from sonare.stt.vocab import encode
from sonare.stt.weights import load_model
from sonare.tts.acoustic import HOP, SAMPLE_RATE
from sonare.tts.vocoder import HarmonicNoiseVocoder


def text_targets(texts: list[str]) -> tuple[Tensor, Tensor]:
    """Texts -> CTC targets (B, S) zero-padded and their lengths (B,); 0 where the alphabet cannot spell one."""
    encoded = [encode(t) or [] for t in texts]
    targets = torch.zeros(len(texts), max(1, max(map(len, encoded))), dtype=torch.long)
    for i, ids in enumerate(encoded):
        targets[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
    return targets, torch.tensor([len(ids) for ids in encoded])


def to_recogniser_rate(pcm: Tensor) -> Tensor:
    """(B, N) audio at the TTS rate -> (B, N·16000/22050) at the recogniser's, band-limited by cutting the
    spectrum at the new Nyquist frequency (differentiable; the FFT treats each row as periodic, which joins a
    clip's silent end to its silent start or to the batch's zero padding)."""
    n = pcm.shape[-1]
    m = n * STT_RATE // SAMPLE_RATE
    return torch.fft.irfft(torch.fft.rfft(pcm)[..., : m // 2 + 1], n=m) * (m / n)


class RecogniserLoss:
    """A frozen STT model's CTC loss on rendered frames: `loss(frames, lengths, targets, target_lengths)`."""

    def __init__(self, stt_dir: str | os.PathLike, device: str = "cpu"):
        self.model, _ = load_model(stt_dir)
        self.model.eval().to(device)
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.vocoder = HarmonicNoiseVocoder().to(device)

    def __call__(self, frames: Tensor, lengths: Tensor, targets: Tensor, target_lengths: Tensor) -> Tensor:
        """frames (B, T, D) acoustic (denormalised, voicing 0/1), lengths (B,) valid frames; targets (B, S) and
        target_lengths (B,) from `text_targets` -> CTC loss per target character, averaged over the spellable
        clips."""
        frames = torch.cat([frames[..., :1].detach(), frames[..., 1:]], dim=-1)
        pcm, _ = self.vocoder.run(frames, self.vocoder.new_state(len(frames)), lengths)  # (B, T·HOP)
        samples = lengths * HOP
        pcm = pcm * (torch.arange(pcm.shape[1], device=pcm.device)[None] < samples[:, None])
        mel = log_mel(to_recogniser_rate(pcm))  # (B, M, 80)
        heard = torch.tensor(
            [num_frames(int(n) * STT_RATE // SAMPLE_RATE) // SUBSAMPLING for n in samples], device=mel.device
        )
        mel = mel[:, : int(heard.max()) * SUBSAMPLING]
        logits, _, _ = self.model(mel, lengths=heard)  # (B, L·R, V)
        spellable = target_lengths > 0
        if not spellable.any():
            return logits.sum() * 0.0
        logp = F.log_softmax(logits[spellable], dim=-1).transpose(0, 1)
        return F.ctc_loss(
            logp,
            targets[spellable],
            heard[spellable] * self.model.cfg.ctc_per_frame,
            target_lengths[spellable],
            zero_infinity=True,
        )
