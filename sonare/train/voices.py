"""The speaker encoder's recipe: `sonare train voices --config configs/voices-default.yaml`.

Targets: per training speaker of the corpus (every teacher voice and speaker transform of the train split),
the WORLD profile (`sonare.voices.encoder.analyse`) of up to a minute of its clean speech. Inputs: clips of
3-15 s of the same speaker cut from that speech, padded with silence, band-limited, and heard through the data
factory's rooms, noises, telephone codecs and levels (`sonare.data.augment`). A bank of such clips is rendered
once into the run directory (resumable, one file per speaker, in parallel); training then reads it from
memory and adds vocal-tract-length warps on the fly (the mel axis and pitch of the input, the envelope and
pitch of the target, moved together), so that 160 speakers become a continuum of them.

A slice of the training speakers (by name hash) is held back for validation; the corpus's held-out speakers
are never read here (they are the benchmark's, `benchmarks/clone_similarity.py`). Validation reports the
network's errors next to those of the direct analysis of the same noisy clips. Resumable from checkpoints;
`--export` writes `encoder.safetensors` with its validation figures.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from sonare.audio.features import F_MAX, F_MIN, N_MELS
from sonare.recipe import read_recipe
from sonare.train.common import save_atomic, warmup_cosine
from sonare.tts.acoustic import hz_to_mel, mel_points, mel_to_hz
from sonare.tts.adapt import warp_envelope
from sonare.voices.profile_net import (
    BANDWIDTH_HZ,
    SAMPLE_RATE,
    ProfileNet,
    ProfileNetConfig,
    clip_features,
    save_profile_net,
)

SEMITONE = math.log(2.0) / 12


@dataclass
class VoicesTrainConfig:
    manifests: list[str]
    run_dir: str = "runs/voices"
    model: dict = field(default_factory=dict)  # ProfileNetConfig fields
    target_seconds: float = 60.0  # clean speech per speaker that defines its profile
    clips_per_speaker: int = 40
    clip_seconds: tuple[float, float] = (3.0, 15.0)
    edge_silence_seconds: float = 1.0  # at most this much silence before and after, half the clips
    band_limit_prob: float = 0.15  # heard at 8 kHz (a phone line's bandwidth) and upsampled
    acoustic: dict = field(default_factory=dict)  # sonare.data.augment.sample_acoustic options
    warp_prob: float = 0.7
    warp_range: tuple[float, float] = (0.87, 1.15)  # vocal-tract-length ratios
    crop_frames: tuple[int, int] = (150, 750)  # 3-15 s windows of the bank's clips per step
    batch: int = 32
    steps: int = 6000
    lr: float = 2e-3
    warmup: int = 200
    weight_decay: float = 0.01
    val_fraction: float = 0.08
    val_every: int = 500
    checkpoint_minutes: float = 3.0
    workers: int = 2
    threads: int = 2
    seed: int = 0

    @staticmethod
    def load(path: str | os.PathLike) -> VoicesTrainConfig:
        return VoicesTrainConfig(**read_recipe(path))


# ---- the bank of clips ------------------------------------------------------------------------------


def training_speakers(manifests: list[str]) -> dict[str, list[Path]]:
    """Speaker -> its clean (not augmented) single-speaker utterances of the train split, in corpus order."""
    from sonare.data.manifest import read_manifest

    speakers: dict[str, list[Path]] = defaultdict(list)
    for manifest in manifests:
        for r in read_manifest(manifest):
            if r["split"] == "train" and not r.get("augment") and not r.get("pauses"):
                speakers[r["speaker"]].append(Path(manifest).parent / r["audio"])
    return dict(speakers)


def is_validation(speaker: str, fraction: float) -> bool:
    return zlib.crc32(speaker.encode()) % 10_000 < fraction * 10_000


def _render_speaker(job: tuple[str, list[str], VoicesTrainConfig, str, bool]) -> tuple[str, bool]:
    """Render one speaker's clips into `out` (an .npz) -> (speaker, False if its clean speech has no profile)."""
    speaker, paths, cfg, out, with_analysis = job
    from sonare.audio.io import load_audio
    from sonare.audio.resample import resample
    from sonare.data.augment import apply_acoustic, sample_acoustic
    from sonare.voices.encoder import MAX_CLIP_SECONDS, CloneError, analyse

    torch.set_num_threads(1)
    rng = np.random.default_rng(zlib.crc32(speaker.encode()) + cfg.seed)
    utterances, rate, total = [], None, 0.0
    for path in paths:
        audio, r = load_audio(path)
        if rate is not None and r != rate:
            continue
        rate = r
        utterances.append(audio)
        total += len(audio) / rate
        if total >= cfg.target_seconds:
            break
    try:
        target = analyse(np.concatenate(utterances)[: int(MAX_CLIP_SECONDS * rate)], rate)
    except CloneError:
        return speaker, False

    features, analysed = [], []
    for _ in range(cfg.clips_per_speaker):
        clip = _cut_clip(utterances, rate, rng, cfg)
        clip16 = resample(clip, rate, SAMPLE_RATE)
        if rng.random() < cfg.band_limit_prob:
            clip16 = resample(resample(clip16, SAMPLE_RATE, 8000), 8000, SAMPLE_RATE)
        clip16 = apply_acoustic(clip16, sample_acoustic(rng, cfg.acoustic))
        features.append(clip_features(clip16)[0].numpy().astype(np.float16))
        if with_analysis:  # the direct analysis of the same clip, for validation's comparison
            try:
                p = analyse(clip16, SAMPLE_RATE)
                analysed.append([p.median_lf0, p.spread_lf0, *p.envelope])
            except CloneError:
                analysed.append([np.nan] * (2 + len(target.envelope)))
    lengths = np.array([len(f) for f in features])
    tmp = Path(out).with_suffix(".tmp")  # a kill mid-write must not leave a bank file that looks complete
    with tmp.open("wb") as f:
        np.savez(
            f,
            speaker=np.array(speaker),
            features=np.concatenate(features),
            lengths=lengths,
            target=np.array([target.median_lf0, target.spread_lf0, *target.envelope], np.float32),
            bandwidth=np.float32(target.bandwidth_hz),
            analysed=np.array(analysed, np.float32),
        )
    os.replace(tmp, out)
    return speaker, True


def _cut_clip(utterances: list[np.ndarray], rate: int, rng: np.random.Generator, cfg: VoicesTrainConfig) -> np.ndarray:
    """3-15 s of consecutive utterances with short pauses, sometimes with silence at either end."""
    seconds = rng.uniform(*cfg.clip_seconds)
    pieces, total, i = [], 0, int(rng.integers(len(utterances)))
    while total < seconds * rate:
        pieces += [utterances[i % len(utterances)], np.zeros(int(rng.uniform(0.1, 0.6) * rate), np.float32)]
        total += len(pieces[-2]) + len(pieces[-1])
        i += 1
    clip = np.concatenate(pieces)[: int(seconds * rate)]
    if rng.random() < 0.5:
        edges = [np.zeros(int(rng.uniform(0, cfg.edge_silence_seconds) * rate), np.float32) for _ in range(2)]
        clip = np.concatenate([edges[0], clip, edges[1]])
    return clip.astype(np.float32)


def build_bank(cfg: VoicesTrainConfig, progress: bool = True) -> list[Path]:
    """Render (or finish rendering) every training speaker's clips; the bank's files in speaker order."""
    from tqdm import tqdm

    bank = Path(cfg.run_dir) / "bank"
    bank.mkdir(parents=True, exist_ok=True)
    speakers = training_speakers(cfg.manifests)
    files = {s: bank / f"{zlib.crc32(s.encode()):08x}.npz" for s in sorted(speakers)}
    skipped = bank / "skipped.json"
    skip = set(json.loads(skipped.read_text())) if skipped.exists() else set()
    jobs = [
        (s, [str(p) for p in speakers[s]], cfg, str(files[s]), is_validation(s, cfg.val_fraction))
        for s in files
        if not files[s].exists() and s not in skip
    ]
    if jobs:
        with get_context("spawn").Pool(cfg.workers) as pool:
            done = pool.imap_unordered(_render_speaker, jobs)
            for speaker, profiled in tqdm(done, total=len(jobs), desc="voice clips", disable=not progress):
                if not profiled:
                    skip.add(speaker)
                    skipped.write_text(json.dumps(sorted(skip)))
    return [f for s, f in files.items() if f.exists()]


# ---- training ----------------------------------------------------------------------------------------


@dataclass
class SpeakerClips:
    name: str
    clips: list[np.ndarray]  # (T, FEATURE_DIM) float16 each
    target: np.ndarray  # (PROFILE_DIM,)
    bandwidth: float
    analysed: np.ndarray  # (clips, PROFILE_DIM) direct analysis of each clip (validation speakers only)


def load_bank(files: list[Path]) -> list[SpeakerClips]:
    out = []
    for f in files:
        z = np.load(f)
        clips = np.split(z["features"], np.cumsum(z["lengths"])[:-1])
        out.append(SpeakerClips(str(z["speaker"]), clips, z["target"], float(z["bandwidth"]), z["analysed"]))
    return out


def warp_features(features: torch.Tensor, ratio: torch.Tensor) -> torch.Tensor:
    """features (B, T, FEATURE_DIM), ratio (B,) -> spectra with formants and harmonics scaled by `ratio`.

    The warped spectrum at frequency f is the original's at f / ratio (read off the mel bins by linear
    interpolation, the top bin held beyond the band); the pitch track moves by log(ratio) where voiced.
    """
    # Centres of the STT front end's mel filters, evenly spaced on the same (HTK) mel scale.
    centres_mel = np.linspace(hz_to_mel(F_MIN), hz_to_mel(F_MAX), N_MELS + 2)[1:-1]
    source_mel = hz_to_mel(mel_to_hz(centres_mel)[None, :] / ratio.numpy()[:, None])  # (B, N_MELS)
    step = centres_mel[1] - centres_mel[0]
    pos = torch.from_numpy((source_mel - centres_mel[0]) / step).float().clamp(0, N_MELS - 1)
    lo = pos.floor().long().clamp(max=N_MELS - 2)
    frac = (pos - lo)[:, None, :]
    lo = lo[:, None, :].expand(-1, features.shape[1], -1)
    mel = features[..., :N_MELS]
    mel = mel.gather(2, lo) * (1 - frac) + mel.gather(2, lo + 1) * frac
    lf0, voiced = features[..., N_MELS], features[..., N_MELS + 1]
    lf0 = lf0 + voiced * ratio.log()[:, None]
    return torch.cat([mel, lf0[..., None], voiced[..., None]], -1)


def make_batch(
    speakers: list[SpeakerClips], cfg: VoicesTrainConfig, rng: random.Random, warp: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """-> features (B, T, D), valid (B, T), targets (B, PROFILE_DIM), target envelope mask (B, N_ENV)."""
    picks = [rng.choice(speakers) for _ in range(cfg.batch)]
    crops = []
    for s in picks:
        clip = rng.choice(s.clips)
        n = min(len(clip), rng.randint(*cfg.crop_frames))
        start = rng.randint(0, len(clip) - n)
        crops.append(torch.from_numpy(clip[start : start + n].astype(np.float32)))
    t = max(len(c) for c in crops)
    features = torch.stack([F.pad(c, (0, 0, 0, t - len(c))) for c in crops])
    valid = torch.arange(t)[None, :] < torch.tensor([len(c) for c in crops])[:, None]
    targets = torch.from_numpy(np.stack([s.target for s in picks]))
    bandwidth = torch.tensor([min(s.bandwidth, BANDWIDTH_HZ) for s in picks])
    ratio = torch.ones(cfg.batch)
    if warp:
        draw = torch.tensor([rng.random() < cfg.warp_prob for _ in picks])
        lo, hi = (math.log(r) for r in cfg.warp_range)
        ratio = torch.where(draw, torch.tensor([math.exp(rng.uniform(lo, hi)) for _ in picks]), ratio)
        features = warp_features(features, ratio)
        env = warp_envelope(targets[:, None, 2:].double(), ratio.log().double())[:, 0].float()
        targets = torch.cat([targets[:, :1] + ratio.log()[:, None], targets[:, 1:2], env], 1)
    # Envelope points the target speaker's audio covered after the warp, and that a 16 kHz clip can show.
    heard = torch.from_numpy(mel_points(targets.shape[1] - 2).astype(np.float32))[None, :]
    env_mask = heard < torch.minimum(bandwidth * ratio, torch.full_like(bandwidth, BANDWIDTH_HZ))[:, None] * 0.95
    return features, valid, targets, env_mask


def profile_errors(pred: torch.Tensor, target: torch.Tensor, env_mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per clip: median pitch error (semitones), spread error (ratio, log), envelope shape RMSE (log power).

    Envelope shape: each side minus its own mean over the heard band, as the adaptation uses it."""
    m = env_mask.float()
    n = m.sum(1).clamp(min=1)

    def centred(env: torch.Tensor) -> torch.Tensor:
        return env - (env * m).sum(1, keepdim=True) / n[:, None]

    shape_se = ((centred(pred[:, 2:]) - centred(target[:, 2:])).square() * m).sum(1) / n
    return {
        "pitch_st": (pred[:, 0] - target[:, 0]).abs() / SEMITONE,
        "spread": (pred[:, 1].clamp(min=1e-3).log() - target[:, 1].clamp(min=1e-3).log()).abs(),
        "envelope": shape_se.sqrt(),
    }


def loss_fn(pred: torch.Tensor, target: torch.Tensor, env_mask: torch.Tensor) -> torch.Tensor:
    e = profile_errors(pred, target, env_mask)
    # Comparable scales: a semitone of pitch, 10% of spread, 0.3 log-power of envelope shape.
    return (
        F.smooth_l1_loss(e["pitch_st"], torch.zeros_like(e["pitch_st"]))
        + (e["spread"] / 0.1).mean()
        + (e["envelope"] / 0.3).mean()
    )


def _statistics(model: ProfileNet, speakers: list[SpeakerClips]) -> None:
    feats = np.concatenate([c for s in speakers for c in s.clips[:4]]).astype(np.float64)
    model.feature_mean.copy_(torch.from_numpy(feats.mean(0)))
    model.feature_std.copy_(torch.from_numpy(feats.std(0)).clamp(min=1e-2))
    targets = np.stack([s.target for s in speakers]).astype(np.float64)
    model.profile_mean.copy_(torch.from_numpy(targets.mean(0)))
    model.profile_std.copy_(torch.from_numpy(targets.std(0)).clamp(min=1e-2))


def validate(model: ProfileNet, speakers: list[SpeakerClips]) -> dict[str, float]:
    """Network vs direct analysis on every bank clip of the validation speakers, whole clips, no warp."""
    model.eval()
    preds, targets, masks, analysed = [], [], [], []
    with torch.inference_mode():
        for s in speakers:
            for clip, direct in zip(s.clips, s.analysed, strict=True):
                preds.append(model.profile(torch.from_numpy(clip.astype(np.float32))))
                targets.append(torch.from_numpy(s.target))
                analysed.append(torch.from_numpy(direct))
                bw = min(s.bandwidth, BANDWIDTH_HZ) * 0.95
                masks.append(torch.from_numpy(mel_points(len(s.target) - 2) < bw))
    model.train()
    target, mask = torch.stack(targets), torch.stack(masks)
    out = {}
    for name, pred in (("net", torch.stack(preds)), ("analysis", torch.stack(analysed))):
        ok = ~pred.isnan().any(1)
        for k, v in profile_errors(pred[ok], target[ok], mask[ok]).items():
            out[f"{name}_{k}"] = round(float(v.median()), 4)
            out[f"{name}_{k}_p90"] = round(float(v.quantile(0.9)), 4)
        out[f"{name}_clips"] = int(ok.sum())
    return out


def train(cfg: VoicesTrainConfig, progress: bool = True) -> Path:
    from tqdm import tqdm

    torch.set_num_threads(cfg.threads)
    run = Path(cfg.run_dir)
    files = build_bank(cfg, progress)
    bank = load_bank(files)
    train_set = [s for s in bank if not is_validation(s.name, cfg.val_fraction)]
    val_set = [s for s in bank if is_validation(s.name, cfg.val_fraction)]
    print(f"voices: {len(train_set)} training speakers, {len(val_set)} validation speakers")

    ckpt_path = run / "checkpoint.pt"
    model = ProfileNet(ProfileNetConfig(**cfg.model))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    step = 0
    if ckpt_path.exists():
        ckpt = torch.load(ckpt_path, weights_only=False)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        step = ckpt["step"]
    else:
        _statistics(model, train_set)
    rng = random.Random(cfg.seed * 1_000_003 + step)
    torch.manual_seed(cfg.seed + step)

    def checkpoint() -> None:
        save_atomic({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step}, ckpt_path)

    log = (run / "log.jsonl").open("a")
    bar = tqdm(total=cfg.steps, initial=step, desc="voices", disable=not progress)
    last_save, recent = time.monotonic(), []
    while step < cfg.steps:
        for group in opt.param_groups:
            group["lr"] = warmup_cosine(step, cfg.lr, cfg.warmup, cfg.steps, 0.05)
        features, valid, targets, env_mask = make_batch(train_set, cfg, rng, warp=True)
        loss = loss_fn(model(features, valid), targets, env_mask)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        recent.append(loss.item())
        bar.update(1)
        if step % 50 == 0:
            bar.set_postfix(loss=f"{np.mean(recent):.3f}")
            log.write(json.dumps({"step": step, "loss": float(np.mean(recent))}) + "\n")
            recent = []
        if step % cfg.val_every == 0 or step == cfg.steps:
            metrics = validate(model, val_set)
            log.write(json.dumps({"step": step, "val": metrics}) + "\n")
            log.flush()
            bar.write(f"step {step}: {metrics}")
            checkpoint()
            last_save = time.monotonic()
        elif time.monotonic() - last_save > cfg.checkpoint_minutes * 60:
            checkpoint()
            last_save = time.monotonic()
    bar.close()
    checkpoint()
    return ckpt_path


def export(cfg: VoicesTrainConfig, out: str | os.PathLike) -> Path:
    """The latest checkpoint -> `encoder.safetensors`, with its validation figures in the metadata."""
    ckpt = torch.load(Path(cfg.run_dir) / "checkpoint.pt", weights_only=False)
    model = ProfileNet(ProfileNetConfig(**cfg.model))
    model.load_state_dict(ckpt["model"])
    bank = load_bank(build_bank(cfg, progress=False))
    metrics = validate(model, [s for s in bank if is_validation(s.name, cfg.val_fraction)])
    path = Path(out) / "encoder.safetensors"
    save_profile_net(model, path, {"step": str(ckpt["step"]), "validation": json.dumps(metrics)})
    return path
