"""An intelligibility loss for TTS training: how well a frozen recogniser reads the words in the model's frames.

The frame loss (L1 to the analysed teacher frames) pulls each frame toward the middle of what the teacher's
frames were there, and says nothing about whether a listener can still tell the sounds apart. This loss renders
the predicted frames through the vocoder (every step of it differentiable), measures the 16 kHz log-mel a
recogniser hears, and takes a frozen Sonare STT model's CTC loss against the clip's text: its gradient moves the
envelope and aperiodicity toward frames the words can be read from. Our own recogniser trains the voice here;
the voice is judged only by independent evaluators (Whisper, DNSMOS), never by this loss.

F0 is held (detached): a change of F0 shifts the phase of every sample after it, a gradient with no local
meaning. Voicing is the model's own decision, as at inference. The aperiodicity can be held too
(`hold_aperiodicity`), so that the loss moves the envelope alone.

The recogniser was trained on the corpus the voice learns from, so on those clips it reads the words from memory as
much as from the frames (in session 49's stage its loss on them fell to a third of the held-back clips' within 150
steps). `FreshTexts` gives it sentences no clip speaks, spoken in the model's own durations as at inference
(`spoken_freely`): there its loss still says what a listener would miss.

Shapes: B clips, T acoustic frames (HOP samples at 22.05 kHz each), D = FRAME_DIM, S target characters,
N phoneme ids.
"""

from __future__ import annotations

import os
import random

import torch
from torch import Tensor

from sonare.audio.features import SAMPLE_RATE as STT_RATE
from sonare.audio.features import log_mel, num_frames
from sonare.stt.model import SUBSAMPLING
from sonare.stt.vocab import encode
from sonare.stt.weights import load_model
from sonare.text import encode as encode_phonemes
from sonare.text import generate_sentences, normalize, phonemize
from sonare.text.sentences import canonical
from sonare.tts.acoustic import FRAME_DIM, HOP, N_ENV, SAMPLE_RATE
from sonare.tts.model import TTSModel
from sonare.tts.vocoder import HarmonicNoiseVocoder


def text_targets(texts: list[str]) -> tuple[Tensor, Tensor]:
    """Texts -> CTC targets, every text's symbols concatenated (ΣS,), and their lengths (B,); a text the
    alphabet cannot spell has length 0 and no symbols (as the STT recipe's batches)."""
    encoded = [encode(t) or [] for t in texts]
    targets = torch.tensor([i for ids in encoded for i in ids], dtype=torch.long)
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

    def __init__(self, stt_dir: str | os.PathLike, device: str = "cpu", hold_aperiodicity: bool = False):
        # Channels the loss does not move: F0 always; the aperiodicity too when asked, so it moves the envelope alone.
        self.held = torch.zeros(FRAME_DIM, dtype=torch.bool, device=device)
        self.held[0] = True
        self.held[2 + N_ENV :] = hold_aperiodicity
        self.model, _ = load_model(stt_dir)
        self.model.eval().to(device)
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.vocoder = HarmonicNoiseVocoder().to(device)

    def __call__(self, frames: Tensor, lengths: Tensor, targets: Tensor, target_lengths: Tensor) -> Tensor:
        """frames (B, T, D) acoustic (denormalised, voicing 0/1), lengths (B,) valid frames; targets (ΣS,) and
        target_lengths (B,) from `text_targets` -> CTC loss per target character, averaged over the spellable
        clips."""
        frames = torch.where(self.held, frames.detach(), frames)
        pcm, _ = self.vocoder.run(frames, self.vocoder.new_state(len(frames)), lengths)  # (B, T·HOP)
        samples = lengths * HOP
        pcm = pcm * (torch.arange(pcm.shape[1], device=pcm.device)[None] < samples[:, None])
        mel = log_mel(to_recogniser_rate(pcm))  # (B, M, 80)
        heard = torch.tensor(
            [num_frames(int(n) * STT_RATE // SAMPLE_RATE) // SUBSAMPLING for n in samples], device=mel.device
        )
        mel = mel[:, : int(heard.max()) * SUBSAMPLING]
        logits, _, _ = self.model(mel, lengths=heard)  # (B, L·R, V)
        return self.model.ctc_loss(logits, heard, targets, target_lengths)


class FreshTexts:
    """Training-split sentences no corpus clip speaks, drawn `per_step` at a time: (ids (B, N) zero-padded,
    normalised texts). Held-out sentences never appear: `generate_sentences` keeps the splits apart."""

    def __init__(self, recorded: set[str], per_step: int, seed: int, pool: int = 20000):
        known = {canonical(t) for t in recorded}
        self.sentences = [s for s in generate_sentences(pool, seed=seed) if canonical(s) not in known]
        self.per_step = per_step
        self.rng = random.Random(seed)

    def draw(self) -> tuple[Tensor, list[str]]:
        texts = [normalize(s) for s in self.rng.sample(self.sentences, self.per_step)]
        encoded = [encode_phonemes(phonemize(t))[0] for t in texts]
        ids = torch.zeros(len(texts), max(map(len, encoded)), dtype=torch.long)
        for i, row in enumerate(encoded):
            ids[i, : len(row)] = torch.tensor(row)
        return ids, texts


def spoken_freely(model: TTSModel, ids: Tensor, speaker_ids: Tensor) -> tuple[Tensor, Tensor]:
    """The model speaking ids (B, N) (zero-padded) in the durations it predicts, each rounded to whole frames
    -> (normalised frames (B, T, D), valid frames (B,)). Gradients reach the frames through the encoder and
    decoder; the rounded durations carry none."""
    speaker = model.speakers(speaker_ids)
    h = model.encode(ids, speaker)
    durations = rounded_durations(model, h, ids)
    lengths = durations.sum(1).clamp(min=1)
    return model.decode_aligned(h, speaker, durations, int(lengths.max())), lengths


def rounded_durations(model: TTSModel, h: Tensor, ids: Tensor) -> Tensor:
    """Encoder outputs h (B, N, d_text) of ids (B, N) -> whole frames per id (B, N), 0 for padding."""
    return torch.expm1(model.durations(h).detach()).clamp(min=0).round().long() * (ids != 0)
