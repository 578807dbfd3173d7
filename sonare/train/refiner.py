"""The vocoder refiner's training recipe: `sonare train refiner --config configs/refiner-default.yaml`.

The refiner (`sonare.tts.refiner.VocoderRefiner`) runs after the harmonic-plus-noise vocoder, which renders
acoustic frames of the teacher's clips (measured from its audio, or predicted by a TTS model under teacher
forcing), and learns to make that audio match the teacher's: a multi-resolution log-mel L1 loss, and from step
`adversarial_from` on (if set) a GAN in the HiFi-GAN manner sized for CPU cores, whose discriminators judge 0.4 s
excerpts of teacher against refined audio period by period (multi-period) and on spectrograms at three
resolutions (multi-resolution), with least-squares adversarial and feature-matching losses. Resumable (an atomic
checkpoint every few minutes); validation scores held-back clips with DNSMOS, the independent naturalness
predictor, and keeps the best step.
"""

from __future__ import annotations

import json
import random
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sonare.recipe import read_recipe
from sonare.ssm.state import BatchState
from sonare.train.common import save_atomic
from sonare.tts.acoustic import HOP, SAMPLE_RATE, interpolation_matrix, mel_points
from sonare.tts.refiner import VocoderRefiner
from sonare.tts.vocoder import HarmonicNoiseVocoder

# The refiner's output lags the frames by two hops: one in the vocoder, one in its own overlap-add.
OUTPUT_LAG = 2 * HOP


@dataclass
class RefinerTrainConfig:
    manifests: list[str]
    frames_dir: str  # the cache of analysed frames, shared with the TTS recipe (unused with `tts_model`)
    run_dir: str = "runs/refiner"
    speaker: str = "piper:joe"  # train on this speaker's untransformed clips
    # A TTS model directory: train on the frames it predicts for `voice` given each clip's phonemes and durations
    # (teacher forcing), the frames the refiner will meet at synthesis, instead of frames measured from the audio.
    tts_model: str | None = None
    voice: str = "joe"
    clips: int = 3000  # clips held in memory
    val_clips: int = 8
    model: dict = field(default_factory=dict)  # VocoderRefiner arguments
    batch: int = 16
    segment_frames: int = 40  # frames per excerpt, the first `warm_frames` only prime the causal state
    warm_frames: int = 8
    steps: int = 6000
    lr: float = 3e-4
    # The step from which the discriminators join the mel loss (None: never; the mel loss alone is about ten
    # times cheaper a step), so the GAN can start from a refiner that already follows the teacher's spectrum.
    adversarial_from: int | None = None
    mel_weight: float = 45.0
    feature_weight: float = 2.0
    val_every: int = 500
    checkpoint_minutes: float = 4.0
    # Stop early, validated and saved, after this many minutes in the loop: a leased GPU's time is fixed, and a
    # run cut off by its lease loses everything since the last checkpoint.
    max_minutes: float | None = None
    threads: int = 2
    seed: int = 0
    device: str = "cpu"  # where the refiner and discriminators train ("cuda" on a GPU)

    @classmethod
    def load(cls, path: str) -> RefinerTrainConfig:
        return cls(**read_recipe(path))


# ---- data ------------------------------------------------------------------------------------------------


@dataclass
class Clip:
    frames: np.ndarray  # (T, FRAME_DIM)
    audio: np.ndarray  # (samples,) float32 at SAMPLE_RATE


def load_clips(cfg: RefinerTrainConfig, progress: bool = True) -> tuple[list[Clip], list[Clip]]:
    """The speaker's clean (TTS) clips, split by a hash of the clip id into train and validation, with the frames
    `cfg.tts_model` predicts for them, or else frames measured from their audio (those the TTS recipe has not
    cached yet are measured first, into the same cache)."""
    from tqdm import tqdm

    from sonare.audio.io import load_audio
    from sonare.data.manifest import read_manifest
    from sonare.tts.dataset import cache_frames

    chosen = []
    for manifest in cfg.manifests:
        root = Path(manifest).parent
        for rec in read_manifest(manifest):
            if rec["speaker"] == cfg.speaker and rec["split"] == "train" and "tts" in rec.get("tasks", ["tts"]):
                audio_path = root / rec["audio"]
                chosen.append((zlib.crc32(rec["id"].encode()), rec["id"], audio_path, rec))
    chosen = sorted(chosen)[: cfg.clips + cfg.val_clips]  # a stable, id-determined choice across resumes
    if len(chosen) < cfg.val_clips + 1:
        raise SystemExit(f"only {len(chosen)} training clips of {cfg.speaker} in {cfg.manifests}")
    if cfg.tts_model:
        predict = teacher_forced_frames(cfg.tts_model, cfg.voice)
        frames = [predict(rec) for *_, rec in tqdm(chosen, desc="teacher-forced frames", disable=not progress)]
    else:
        cache = Path(cfg.frames_dir)
        cache.mkdir(parents=True, exist_ok=True)
        paths = cache_frames([audio for _, _, audio, _ in chosen], cache, cfg.threads, progress)
        frames = [np.load(path) for path in paths]
    clips = []
    for (_, _, audio_path, _), clip_frames in zip(chosen, frames, strict=True):
        audio, rate = load_audio(audio_path)
        if rate != SAMPLE_RATE:
            raise SystemExit(f"{audio_path}: {rate} Hz, the refiner trains at {SAMPLE_RATE} Hz")
        clips.append(Clip(clip_frames, audio.astype(np.float32)))
    return clips[cfg.val_clips :], clips[: cfg.val_clips]


def teacher_forced_frames(model_dir: str, voice: str) -> Callable[[dict], np.ndarray]:
    """A function from a manifest record to the frames the TTS model in `model_dir` predicts for it in `voice`,
    its phonemes held for the durations aligned to the clip's audio: (T, FRAME_DIM) on the audio's timeline."""
    from sonare.tts import load_default
    from sonare.tts.adapt import adapt_frames
    from sonare.tts.dataset import token_ids_and_durations

    tts = load_default(model_dir)
    if voice not in tts.voices:
        raise SystemExit(f"{model_dir} has no voice {voice!r}")
    d = tts.model.cfg.d_speaker
    speaker, adaptation = tts.voices[voice][None, :d], tts.voices[voice][None, d:]

    @torch.no_grad()
    def predict(rec: dict) -> np.ndarray:
        ids, durations = token_ids_and_durations(rec["phonemes"], rec["phones"], rec["duration"])
        h = tts.model.encode(torch.from_numpy(ids)[None], speaker)
        out = tts.model.decode_aligned(h, speaker, torch.from_numpy(durations)[None], int(durations.sum()))
        return adapt_frames(tts.model.denormalize(out), adaptation)[0].numpy()

    return predict


def sample_batch(clips: list[Clip], cfg: RefinerTrainConfig, rng: random.Random) -> tuple[Tensor, Tensor]:
    """-> frames (B, segment_frames, FRAME_DIM) and the teacher audio the refined output should match over the
    frames after the warm-up, (B, (segment_frames - warm_frames)·HOP)."""
    n, warm = cfg.segment_frames, cfg.warm_frames
    frames, audio = [], []
    while len(frames) < cfg.batch:
        clip = clips[rng.randrange(len(clips))]
        usable = min(len(clip.frames), len(clip.audio) // HOP) - n
        if usable <= 0:
            continue
        s = rng.randrange(usable)
        frames.append(clip.frames[s : s + n])
        begin = (s + warm) * HOP - OUTPUT_LAG
        audio.append(clip.audio[begin : begin + (n - warm) * HOP])
    return torch.from_numpy(np.stack(frames)), torch.from_numpy(np.stack(audio))


def render(
    refiner: VocoderRefiner, vocoder: HarmonicNoiseVocoder, frames: Tensor, generator: torch.Generator
) -> Tensor:
    """Frames (B, F, FRAME_DIM) through the vocoder (random starting phase) and the refiner, both on the refiner's
    device -> (B, F·HOP) there."""
    device = refiner.window.device
    frames = frames.to(device)
    state = vocoder.new_state(frames.shape[0])
    phase = torch.rand(frames.shape[0], 1, generator=generator) * 2 * torch.pi
    state = BatchState({**dict(state.items()), "phase": phase.to(device)})
    with torch.no_grad():
        pcm, _ = vocoder.run(frames, state)
    refined, _ = refiner(frames, pcm, refiner.new_state(frames.shape[0]))
    return refined


# ---- losses ----------------------------------------------------------------------------------------------

MEL_RESOLUTIONS = ((512, 128, 64), (1024, 256, 80), (2048, 512, 96))  # (n_fft, hop, mel bands)


class MultiResolutionMel(nn.Module):
    def __init__(self):
        super().__init__()
        for i, (n_fft, _, n_mels) in enumerate(MEL_RESOLUTIONS):
            bins = np.arange(n_fft // 2 + 1) * SAMPLE_RATE / n_fft
            # linear interpolation on the mel scale: triangular filters centred on evenly spaced mel points
            fb = interpolation_matrix(mel_points(n_mels), bins).astype(np.float32)
            self.register_buffer(f"fb{i}", torch.from_numpy(fb), persistent=False)
            self.register_buffer(f"win{i}", torch.hann_window(n_fft), persistent=False)

    def forward(self, fake: Tensor, real: Tensor) -> Tensor:
        loss = fake.new_zeros(())
        for i, (n_fft, hop, _) in enumerate(MEL_RESOLUTIONS):
            fb, win = getattr(self, f"fb{i}"), getattr(self, f"win{i}")

            def mel(x: Tensor, n_fft: int = n_fft, hop: int = hop, fb: Tensor = fb, win: Tensor = win) -> Tensor:
                spec = torch.stft(x, n_fft, hop, window=win, return_complex=True).abs().square()
                return torch.log(spec.transpose(1, 2) @ fb + 1e-7)

            loss = loss + F.l1_loss(mel(fake), mel(real))
        return loss / len(MEL_RESOLUTIONS)


def layer_outputs(convs: nn.ModuleList, post: nn.Module, x: Tensor) -> list[Tensor]:
    """A discriminator's activations layer by layer (for feature matching), its verdict last."""
    features = []
    for conv in convs:
        x = F.leaky_relu(conv(x), 0.1)
        features.append(x)
    features.append(post(x))
    return features


class PeriodDiscriminator(nn.Module):
    """Judges the waveform folded into rows of `period` samples: periodic structure such as pitch pulses."""

    def __init__(self, period: int, channels: tuple[int, ...] = (16, 32, 64, 64)):
        super().__init__()
        self.period = period
        convs, c_in = [], 1
        for i, c in enumerate(channels):
            stride = (3, 1) if i < len(channels) - 1 else (1, 1)
            convs.append(nn.utils.parametrizations.weight_norm(nn.Conv2d(c_in, c, (5, 1), stride, padding=(2, 0))))
            c_in = c
        self.convs = nn.ModuleList(convs)
        self.post = nn.utils.parametrizations.weight_norm(nn.Conv2d(c_in, 1, (3, 1), padding=(1, 0)))

    def forward(self, x: Tensor) -> list[Tensor]:
        b, t = x.shape
        x = F.pad(x, (0, (-t) % self.period), mode="reflect").view(b, 1, -1, self.period)
        return layer_outputs(self.convs, self.post, x)


class ResolutionDiscriminator(nn.Module):
    """Judges a log-magnitude spectrogram at one STFT resolution: spectral texture, noise and smearing."""

    def __init__(self, n_fft: int, channels: int = 16):
        super().__init__()
        self.n_fft = n_fft
        self.register_buffer("window", torch.hann_window(n_fft), persistent=False)
        wn = nn.utils.parametrizations.weight_norm
        self.convs = nn.ModuleList(
            [
                wn(nn.Conv2d(1, channels, (3, 9), stride=(1, 2), padding=(1, 4))),
                wn(nn.Conv2d(channels, channels, (3, 9), stride=(1, 2), padding=(1, 4))),
                wn(nn.Conv2d(channels, channels, (3, 9), stride=(1, 2), padding=(1, 4))),
                wn(nn.Conv2d(channels, channels, (3, 3), padding=(1, 1))),
            ]
        )
        self.post = wn(nn.Conv2d(channels, 1, (3, 3), padding=(1, 1)))

    def forward(self, x: Tensor) -> list[Tensor]:
        spec = torch.stft(x, self.n_fft, self.n_fft // 4, window=self.window, return_complex=True).abs()
        x = torch.log(spec + 1e-5).transpose(1, 2)[:, None]  # (B, 1, frames, bins)
        return layer_outputs(self.convs, self.post, x)


class Discriminators(nn.Module):
    def __init__(self):
        super().__init__()
        self.members = nn.ModuleList(
            [PeriodDiscriminator(p) for p in (2, 3, 5, 7, 11)] + [ResolutionDiscriminator(n) for n in (256, 512, 1024)]
        )

    def forward(self, x: Tensor) -> list[list[Tensor]]:
        return [member(x) for member in self.members]


def discriminator_loss(real: list[list[Tensor]], fake: list[list[Tensor]]) -> Tensor:
    return sum(((r[-1] - 1) ** 2).mean() + (f[-1] ** 2).mean() for r, f in zip(real, fake, strict=True))


def generator_losses(real: list[list[Tensor]], fake: list[list[Tensor]]) -> tuple[Tensor, Tensor]:
    adversarial = sum(((f[-1] - 1) ** 2).mean() for f in fake)
    matching = sum(
        F.l1_loss(ff, rf.detach())
        for r, f in zip(real, fake, strict=True)
        for rf, ff in zip(r[:-1], f[:-1], strict=True)
    )
    return adversarial, matching


# ---- loop ------------------------------------------------------------------------------------------------


def validate(refiner: VocoderRefiner, vocoder: HarmonicNoiseVocoder, clips: list[Clip]) -> dict[str, float]:
    """Mean DNSMOS overall of whole validation clips, refined and straight from the vocoder."""
    from sonare.eval.mos import dnsmos

    refiner.eval()
    scores: dict[str, list[float]] = {"refined": [], "vocoder": []}
    with torch.no_grad():
        for clip in clips:
            frames = torch.from_numpy(clip.frames)[None].to(refiner.window.device)
            pcm, _ = vocoder.run(frames, vocoder.new_state(1))
            refined, _ = refiner(frames, pcm, refiner.new_state(1))
            scores["vocoder"].append(dnsmos(pcm[0].cpu().numpy(), SAMPLE_RATE).ovrl)
            scores["refined"].append(dnsmos(refined[0].cpu().numpy(), SAMPLE_RATE).ovrl)
    refiner.train()
    return {k: round(float(np.mean(v)), 4) for k, v in scores.items()}


def train(cfg: RefinerTrainConfig, progress: bool = True) -> Path:
    from tqdm import tqdm

    torch.set_num_threads(cfg.threads)
    torch.set_flush_denormal(True)
    run = Path(cfg.run_dir)
    run.mkdir(parents=True, exist_ok=True)
    train_clips, val_clips = load_clips(cfg, progress)
    print(f"refiner: {len(train_clips)} train / {len(val_clips)} validation clips of {cfg.speaker}")

    torch.manual_seed(cfg.seed)
    refiner, discriminators, mel_loss = VocoderRefiner(**cfg.model), Discriminators(), MultiResolutionMel()
    vocoder = HarmonicNoiseVocoder().to(cfg.device)  # no weights: it renders the refiner's input under no_grad
    for module in (refiner, discriminators, mel_loss):
        module.to(cfg.device)
    opt_g = torch.optim.AdamW(refiner.parameters(), lr=cfg.lr, betas=(0.8, 0.99))
    opt_d = torch.optim.AdamW(discriminators.parameters(), lr=cfg.lr, betas=(0.8, 0.99))
    step, best = 0, None
    ckpt_path = run / "checkpoint.pt"
    if ckpt_path.exists():
        ckpt = torch.load(ckpt_path, map_location=cfg.device, weights_only=False)
        refiner.load_state_dict(ckpt["refiner"])
        discriminators.load_state_dict(ckpt["discriminators"])
        opt_g.load_state_dict(ckpt["opt_g"])
        opt_d.load_state_dict(ckpt["opt_d"])
        step, best = ckpt["step"], ckpt.get("best")
    print(
        f"refiner: {sum(p.numel() for p in refiner.parameters()):,} params, "
        f"discriminators {sum(p.numel() for p in discriminators.parameters()):,}"
    )

    def save() -> None:
        save_atomic(
            {
                "step": step,
                "best": best,
                "config": refiner.config(),
                "refiner": refiner.state_dict(),
                "discriminators": discriminators.state_dict(),
                "opt_g": opt_g.state_dict(),
                "opt_d": opt_d.state_dict(),
            },
            ckpt_path,
        )

    rng = random.Random(cfg.seed + step)
    generator = torch.Generator().manual_seed(cfg.seed + step)
    log = open(run / "log.jsonl", "a")  # noqa: SIM115 - appended to for the whole run
    bar = tqdm(total=cfg.steps, initial=step, desc="refiner", disable=not progress)
    started = last_save = time.time()
    while step < cfg.steps:
        frames, real = sample_batch(train_clips, cfg, rng)
        real = real.to(cfg.device)
        fake = render(refiner, vocoder, frames, generator)[:, cfg.warm_frames * HOP :]

        mel = mel_loss(fake, real)
        parts = {"mel": mel.item()}
        g_loss = cfg.mel_weight * mel
        if cfg.adversarial_from is not None and step >= cfg.adversarial_from:
            d_loss = discriminator_loss(discriminators(real), discriminators(fake.detach()))
            opt_d.zero_grad(set_to_none=True)
            d_loss.backward()
            opt_d.step()
            adversarial, matching = generator_losses(discriminators(real), discriminators(fake))
            g_loss = g_loss + adversarial + cfg.feature_weight * matching
            parts.update(adv=adversarial.item(), fm=matching.item(), d=d_loss.item())
        opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        torch.nn.utils.clip_grad_norm_(refiner.parameters(), 10.0)
        opt_g.step()
        step += 1
        bar.update(1)
        bar.set_postfix({k: f"{v:.3f}" for k, v in parts.items()})
        if step % 50 == 0:
            log.write(json.dumps({"step": step, **{k: round(v, 4) for k, v in parts.items()}}) + "\n")
            log.flush()
        out_of_time = cfg.max_minutes is not None and time.time() - started > cfg.max_minutes * 60
        if step % cfg.val_every == 0 or step == cfg.steps or out_of_time:
            scores = validate(refiner, vocoder, val_clips)
            log.write(json.dumps({"step": step, "val_dnsmos": scores}) + "\n")
            log.flush()
            tqdm.write(f"step {step}: validation DNSMOS {scores}")
            if best is None or scores["refined"] > best["refined"]:
                best = {"step": step, **scores}
                save_atomic(
                    {"step": step, "scores": scores, "config": refiner.config(), "refiner": refiner.state_dict()},
                    run / "best.pt",
                )
            save()
            last_save = time.time()
            if out_of_time:
                tqdm.write(f"stopped at step {step}: max_minutes {cfg.max_minutes} reached")
                break
        elif time.time() - last_save > cfg.checkpoint_minutes * 60:
            save()
            last_save = time.time()
    bar.close()
    save()
    return run / "best.pt"


def export(cfg: RefinerTrainConfig, out_dir: str) -> Path:
    """The best step's weights as safetensors, with the architecture in the file's metadata, if that step
    beat the vocoder alone on validation."""
    from safetensors.torch import save_file

    ckpt = torch.load(Path(cfg.run_dir) / "best.pt", map_location="cpu", weights_only=False)
    scores = ckpt["scores"]
    if scores["refined"] <= scores["vocoder"]:
        # shipping it would make every voice sound worse than the vocoder alone
        raise SystemExit(f"not exported: the best step ({ckpt['step']}) scores {scores}, no better than the vocoder")
    out = Path(out_dir) / "refiner.safetensors"
    tensors = {k: v.contiguous() for k, v in ckpt["refiner"].items()}
    save_file(tensors, out, metadata={"config": json.dumps(ckpt["config"]), "step": str(ckpt["step"])})
    return out
