"""The STT training recipe: `sonare train stt --config configs/stt-default.yaml`.

Reproducible (seeded, config-driven) and resumable: an atomic checkpoint every `checkpoint_minutes` (and at
validations); rerunning the same command continues from it. A progress bar, a JSON-lines log of losses, and
validation records: WER of greedy decoding (scored by `sonare.eval.wer`) on a slice of the training split held
back by id hash and on the corpus's held-out split (speakers, voices and sentences never trained on), and
turn metrics (`sonare.eval.turns`: false cut-offs on hold pauses, latency after true ends) of the turn head
at a grid of thresholds. The thresholds shipped with the model are chosen on the held-back training slice,
never on the held-out split, by their false cut-offs on pauses to think (mid-sentence holds) where the
conversations label them. `--export` writes safetensors weights with the config and thresholds. With
`ema_decay`, the weights validated, kept and exported are a running average of the trained ones.

Losses: CTC over characters, the turn head's end and speech labels, cross-entropy of an auxiliary phoneme head
(kept in the checkpoint, not exported) against the corpus's phoneme alignments, with `turn_teacher` the
divergence of the turn head's outputs from a frozen model's, and with `consistency_weight` the divergence of the
CTC posteriors of a second, frequency-warped reading of the batch from the first's.
"""

from __future__ import annotations

import copy
import json
import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from sonare.audio.features import warp_log_mel
from sonare.data.augment import NOISE_KINDS, available_noise_kinds
from sonare.recipe import read_recipe
from sonare.stt.dataset import Utterance, load_source
from sonare.stt.model import FRAME_SECONDS, SUBSAMPLING, TURN_END, TURN_SPEECH, STTConfig, STTModel
from sonare.stt.turns import DEFAULT_TIERS, SentenceEndTiers
from sonare.text.inventory import PAD_ID
from sonare.train.common import (
    RECIPE_MAX_FALSE_CUTOFF,
    WeightAverage,
    chosen_threshold,
    is_held_back,
    load_deeper,
    save_atomic,
    to_device,
    warmup_cosine,
)
from sonare.train.feature_noise import mix_noise, noise_bank

if TYPE_CHECKING:
    from sonare.stt.beam import BeamDecoder

IGNORE = -100  # frame without a phoneme label
TRAINING_ONLY_FIELDS = ("dropout", "block_dropout")  # STTConfig fields a continuation may change
EAGER_FALSE_CUTOFF = 0.2  # an eager end is a speculative hint: it may be wrong more often than an end
LOG_POWER_PER_DB = math.log(10) / 10  # log-mel frames hold natural-log power: a gain of g dB adds g * this


@dataclass
class STTTrainConfig:
    sources: list[str]  # corpus manifests, transcribed-audio manifests or LibriSpeech-style folders
    # How many times a source's training utterances enter each pass over the data (source -> count, 1 when not
    # named): weights a small source of voices the others lack without dropping the ones that keep the model
    # from forgetting. The copies go into different batches (make_batches).
    source_repeats: dict[str, int] = field(default_factory=dict)
    run_dir: str = "runs/stt"
    teachers_out: list[str] = field(default_factory=list)  # teachers never trained on
    model: dict = field(default_factory=dict)  # STTConfig fields
    batch_frames: int = 20000  # log-mel frames per batch, padding included
    max_frames: int = 3000  # longer utterances are cropped to a random window (30 s)
    steps: int = 12000
    lr: float = 2e-3
    warmup: int = 300
    weight_decay: float = 0.01
    grad_clip: float = 5.0
    # Above 0: validate, keep as best and export a running average of the weights with this decay per step
    # (`WeightAverage`), the raw weights validated beside it; 0: the raw weights.
    ema_decay: float = 0.0
    end_weight: float = 0.5
    # Keep the turn head as the run starts (its weights frozen, its losses still on): the encoder then learns to
    # keep feeding the head what it reads, so a stage that adapts the acoustics keeps the head's end-of-turn
    # behaviour, which was trained on more conversations than the stage sees.
    freeze_turn_head: bool = False
    # Hold the turn head's outputs (end and speech probabilities) on every frame trained to those of this frozen
    # model (a directory with stt.safetensors, usually the stage's starting weights): their KL divergence times
    # `turn_teacher_weight` joins the loss. A frozen head alone still let a stage's encoder move its ends, since the
    # encoder feeds the head new features wherever no label pins them down (docs/benchmarks.md, STT, sessions 43-44).
    turn_teacher: str | None = None
    turn_teacher_weight: float = 30.0
    speech_weight: float = 0.2
    # Frame-level phoneme targets from the corpus alignments, through an auxiliary head that only training
    # uses: a dense signal at every frame that teaches the encoder acoustics far faster than CTC alone.
    phone_weight: float = 0.3
    # A run that starts from weights without a phoneme head (an export) first fits a fresh head to the frozen encoder.
    phone_head_fit_steps: int = 150
    phone_head_fit_lr: float = 3e-3
    init_from: str | None = None  # weights to start from when the run has no checkpoint (see initial_weights)
    gain_db: float = 12.0  # random level change per utterance, +- dB
    # Vocal-tract length perturbation: every frequency of an utterance scaled by a factor drawn from this range
    # (sonare.audio.features.warp_log_mel); [1, 1] leaves the frames as they are.
    warp_factor: list[float] = field(default_factory=lambda: [1.0, 1.0])
    # Microphone and room colouring: a smooth random gain curve across the band, up to +- this many dB per
    # utterance (`random_colouring`); 0 leaves the spectrum as the teacher rendered it.
    colouring_db: float = 0.0
    # Noise mixed into the frames (`sonare.train.feature_noise`): with this probability an utterance hears one of
    # `noise_kinds` (the data factory's generators) at an SNR drawn from `noise_snr_db`, fresh every pass, where
    # the corpus's noisy copies are rendered once; 0 leaves the frames as the corpus holds them.
    noise_prob: float = 0.0
    noise_kinds: list[str] = field(default_factory=lambda: list(NOISE_KINDS))
    noise_snr_db: list[float] = field(default_factory=lambda: [0.0, 20.0])
    # Warp consistency: with a weight above 0 each batch is read twice, the second time with every utterance's
    # frequencies scaled by a factor drawn from `consistency_warp` (`warp_log_mel`); both readings learn the text
    # (their CTC losses averaged) and the divergence of their CTC posteriors (`ctc_divergence`) times the weight
    # joins the loss. The shipped recogniser's reading of an unseen voice hangs on small spectral differences: of
    # ten warped readings of each held-out clip the best has a third fewer errors (docs/benchmarks.md, STT, session
    # 55). A second encoder pass per step.
    consistency_weight: float = 0.0
    consistency_warp: list[float] = field(default_factory=lambda: [0.88, 1.14])
    freq_masks: int = 2
    freq_mask_bins: int = 12
    time_masks: int = 2
    time_mask_frames: int = 30
    # Tempo: with this probability an utterance is heard faster or slower by a factor drawn from `tempo_range`
    # (above 1: faster), its frames resampled in time (pitch and spectrum kept) and its frame labels following,
    # fresh every pass: each teacher speaks at its own rate, where people speed up and slow down.
    tempo_prob: float = 0.0
    tempo_range: list[float] = field(default_factory=lambda: [0.85, 1.15])
    # Opening silence: with this probability a whole utterance starts up to `lead_silence_s` later, after its own
    # first 40 ms repeated (speech labels 0), since a live stream opens before its speaker talks and the corpus
    # keeps only 0.2 s before the first word (docs/benchmarks.md, STT, session 41).
    lead_silence_prob: float = 0.0
    lead_silence_s: float = 0.0
    val_fraction: float = 0.03
    val_turn_fraction: float = 0.12
    val_limit: int = 200  # utterances per validation set
    val_every: int = 500
    checkpoint_minutes: float = 5.0
    max_false_cutoff: float = RECIPE_MAX_FALSE_CUTOFF
    threads: int = 1
    seed: int = 0
    device: str = "cpu"  # where the training steps and validation passes run ("cuda" on a GPU)

    @staticmethod
    def load(path: str | os.PathLike) -> STTTrainConfig:
        return STTTrainConfig(**read_recipe(path))


def make_batches(items: list[Utterance], batch_frames: int, max_frames: int, rng: random.Random) -> list[list[int]]:
    """Length-sorted buckets of indices under a frame budget, in random order. An utterance listed k times (a
    repeated source) goes into k different batches: its second listing is bucketed with the other second
    listings, and so on."""
    listings: dict[int, int] = {}
    layers: list[list[int]] = []
    for i, item in enumerate(items):
        copy = listings.get(id(item), 0)
        listings[id(item)] = copy + 1
        if copy == len(layers):
            layers.append([])
        layers[copy].append(i)
    batches = []
    for layer in layers:
        order = sorted(layer, key=lambda i: min(len(items[i].mel), max_frames) + rng.random())
        current: list[int] = []
        for i in order:  # ascending, so item i is the longest of its batch
            if current and min(len(items[i].mel), max_frames) * (len(current) + 1) > batch_frames:
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
    rng.shuffle(batches)
    return batches


def collate(
    batch: list[Utterance], model: STTModel, cfg: STTTrainConfig, rng: np.random.Generator | None
) -> dict[str, torch.Tensor]:
    """Padded tensors; with `rng`, random crops of long items, opening silences, tempo changes, noise, level
    changes and SpecAugment masks."""
    crops, leads, spans = [], [], []
    limit = cfg.max_frames // SUBSAMPLING
    longest_lead = round(cfg.lead_silence_s / FRAME_SECONDS)
    for u in batch:
        n = u.n_frames
        if rng is None or n <= limit:
            crops.append((0, n))
        else:
            start = int(rng.integers(0, n - limit + 1))
            crops.append((start, start + limit))
        opens = rng is not None and n <= limit and longest_lead > 0 and rng.random() < cfg.lead_silence_prob
        leads.append(int(rng.integers(1, longest_lead + 1)) if opens else 0)
        a, b = crops[-1]
        retimed = rng is not None and cfg.tempo_prob > 0 and rng.random() < cfg.tempo_prob
        spans.append(max(1, round((b - a) / rng.uniform(*cfg.tempo_range))) if retimed else b - a)
    lengths = torch.tensor([m + k for m, k in zip(spans, leads, strict=True)])
    t = int(lengths.max()) * SUBSAMPLING
    mean = model.feat_mean.cpu().numpy()
    mel = np.broadcast_to(mean, (len(batch), t, mean.size)).copy()
    speech = torch.full((len(batch), t // SUBSAMPLING), math.nan)
    end = torch.full((len(batch), t // SUBSAMPLING), math.nan)
    phones = torch.full((len(batch), t // SUBSAMPLING), IGNORE, dtype=torch.long)
    targets, target_lengths = [], []
    for i, (u, (a, b), k, m) in enumerate(zip(batch, crops, leads, spans, strict=True)):
        x = retimed_frames(u.mel[a * SUBSAMPLING : b * SUBSAMPLING].astype(np.float32), m * SUBSAMPLING)
        x = np.concatenate([np.tile(x[:SUBSAMPLING], (k, 1)), x])  # k = 0 leaves it as it is
        if rng is not None:
            x = _augment(x, mean, cfg, rng)
        mel[i, : len(x)] = x
        source = a + _nearest_frames(b - a, m)  # the frame each label comes from
        speech[i, :k] = 0.0
        speech[i, k : k + m] = torch.from_numpy(u.speech[source])
        end[i, k : k + m] = torch.from_numpy(u.end[source])
        if u.phones is not None:
            phones[i, :k] = PAD_ID
            phones[i, k : k + m] = torch.from_numpy(u.phones[source])
        cropped = (a, b) != (0, u.n_frames)
        # A cropped window's words are unknown, so only its turn labels train.
        targets.append(torch.from_numpy(u.target) if not cropped else torch.zeros(0, dtype=torch.long))
        target_lengths.append(0 if cropped else len(u.target))
    out = {
        "mel": torch.from_numpy(mel),
        "lengths": lengths,
        "targets": torch.cat(targets),
        "target_lengths": torch.tensor(target_lengths),
        "speech": speech,
        "end": end,
        "phones": phones,
    }
    if rng is not None and cfg.consistency_weight > 0:
        warped = mel.copy()
        for i, n in enumerate(lengths.tolist()):
            frames = n * SUBSAMPLING
            warped[i, :frames] = warp_log_mel(mel[i, :frames], rng.uniform(*cfg.consistency_warp))
        out["mel_warped"] = torch.from_numpy(warped)
    return out


def retimed_frames(x: np.ndarray, n: int) -> np.ndarray:
    """Frames x (T, n_mels) resampled to n frames, each interpolated linearly between its two nearest: the same
    speech at another tempo, its pitch and spectrum kept (n = T returns x)."""
    if n == len(x):
        return x
    position = np.clip((np.arange(n) + 0.5) * len(x) / n - 0.5, 0, len(x) - 1)
    below = np.minimum(position.astype(int), len(x) - 2) if len(x) > 1 else np.zeros(n, dtype=int)
    frac = (position - below)[:, None].astype(np.float32)
    return x[below] * (1 - frac) + x[np.minimum(below + 1, len(x) - 1)] * frac


def _nearest_frames(t: int, n: int) -> np.ndarray:
    """For each of n retimed frames, the one of the t original frames it falls in."""
    return np.minimum(((np.arange(n) + 0.5) * t / n).astype(int), t - 1)


def _augment(x: np.ndarray, mean: np.ndarray, cfg: STTTrainConfig, rng: np.random.Generator) -> np.ndarray:
    if cfg.noise_prob > 0 and rng.random() < cfg.noise_prob:
        bank = noise_bank(tuple(available_noise_kinds(cfg.noise_kinds)), cfg.seed)
        noise = bank[int(rng.integers(len(bank)))]
        x = mix_noise(x, noise, rng.uniform(*cfg.noise_snr_db), start=int(rng.integers(len(noise))))
    x = x + rng.uniform(-cfg.gain_db, cfg.gain_db) * LOG_POWER_PER_DB  # a level change shifts log power
    if cfg.warp_factor != [1.0, 1.0]:
        x = warp_log_mel(x, rng.uniform(*cfg.warp_factor))
    if cfg.colouring_db > 0:
        x = x + random_colouring(rng, x.shape[1], cfg.colouring_db) * LOG_POWER_PER_DB
    for _ in range(cfg.freq_masks):
        w = int(rng.integers(0, cfg.freq_mask_bins + 1))
        f0 = int(rng.integers(0, x.shape[1] - w + 1))
        x[:, f0 : f0 + w] = mean[f0 : f0 + w]
    for _ in range(cfg.time_masks):
        w = int(rng.integers(0, min(cfg.time_mask_frames, len(x) // 10) + 1))
        t0 = int(rng.integers(0, len(x) - w + 1))
        x[t0 : t0 + w] = mean
    return x


def random_colouring(rng: np.random.Generator, n_bins: int, max_db: float) -> np.ndarray:
    """A smooth gain curve in dB over `n_bins` mel bins, within +- `max_db`: a tilt and two broad bumps.

    Every teacher renders a clean, flat channel, where real recordings come through microphones and rooms
    whose response rises and falls across the band. A gain in dB adds to log power, so on log-mel frames the
    colouring is a curve added to every frame; the first three cosines across the band keep it as broad as
    such responses are.
    """
    position = np.linspace(0.0, np.pi, n_bins)
    weights = rng.uniform(-1.0, 1.0, size=3) / np.arange(1, 4)  # broader components may move further
    curve = sum(w * np.cos((k + 1) * position) for k, w in enumerate(weights))
    return (max_db * curve / max(np.abs(curve).max(), 1.0)).astype(np.float32)


def losses(
    model: STTModel,
    phone_head: torch.nn.Linear,
    batch: dict[str, torch.Tensor],
    cfg: STTTrainConfig,
    turn_teacher: STTModel | None = None,
) -> dict[str, torch.Tensor]:
    h, _ = model.encode(batch["mel"], lengths=batch["lengths"])
    ctc_logits, turn_logits = model.ctc_logits(h), model.turn(h)
    ctc = model.ctc_loss(ctc_logits, batch["lengths"], batch["targets"], batch["target_lengths"])
    consistency = None
    if "mel_warped" in batch:  # the second, warped reading (`consistency_weight`)
        warped_logits = model.ctc_logits(model.encode(batch["mel_warped"], lengths=batch["lengths"])[0])
        warped_ctc = model.ctc_loss(warped_logits, batch["lengths"], batch["targets"], batch["target_lengths"])
        ctc = (ctc + warped_ctc) / 2
        consistency = ctc_divergence(ctc_logits, warped_logits, batch["lengths"] * model.cfg.ctc_per_frame)
    valid = valid_frames(batch, turn_logits.shape[1])
    end = _masked_bce(turn_logits[..., TURN_END], batch["end"], valid)
    speech = _masked_bce(turn_logits[..., TURN_SPEECH], batch["speech"], valid)
    phone = phone_loss(phone_head, h, batch["phones"])
    total = ctc + cfg.end_weight * end + cfg.speech_weight * speech + cfg.phone_weight * phone
    parts = {"ctc": ctc, "end": end, "speech": speech, "phone": phone}
    if consistency is not None:
        parts["consistency"] = consistency
        total = total + cfg.consistency_weight * consistency
    if turn_teacher is not None:
        parts["turn_kl"] = turn_divergence(turn_logits, turn_teacher, batch)
        total = total + cfg.turn_teacher_weight * parts["turn_kl"]
    return {"loss": total, **parts}


def ctc_divergence(a: torch.Tensor, b: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Mean over valid CTC frames of KL(a -> b) + KL(b -> a) between two readings' CTC logits (B, L·R, V), each
    direction pulling only its second reading towards the first (detached), so neither reading is pulled towards
    the other's mistakes any more than the other way round; `lengths` (B,) valid CTC frames."""
    valid = torch.arange(a.shape[1], device=a.device)[None, :] < lengths[:, None]
    p, q = F.log_softmax(a[valid], -1), F.log_softmax(b[valid], -1)
    forward = F.kl_div(q, p.detach(), log_target=True, reduction="sum")
    backward = F.kl_div(p, q.detach(), log_target=True, reduction="sum")
    return (forward + backward) / max(1, int(valid.sum()))


def valid_frames(batch: dict[str, torch.Tensor], n_frames: int) -> torch.Tensor:
    """(B, n_frames) True on the encoder frames of each utterance, False on padding."""
    lengths = batch["lengths"]
    return torch.arange(n_frames, device=lengths.device)[None, :] < lengths[:, None]


def turn_divergence(turn_logits: torch.Tensor, teacher: STTModel, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean KL divergence, over the batch's valid frames, of `teacher`'s turn outputs (end and speech, Bernoulli) on
    the batch from those given by `turn_logits` (B, L, 2): 0 where they agree, whatever the teacher's own
    uncertainty. The teacher runs without gradients."""
    with torch.no_grad():
        teacher_logits = teacher.turn(teacher.encode(batch["mel"], lengths=batch["lengths"])[0])
    valid = valid_frames(batch, turn_logits.shape[1])
    logits, expected = turn_logits[valid], teacher_logits[valid]
    target = torch.sigmoid(expected)
    return F.binary_cross_entropy_with_logits(logits, target) - F.binary_cross_entropy_with_logits(expected, target)


def phone_loss(phone_head: torch.nn.Linear, h: torch.Tensor, phones: torch.Tensor) -> torch.Tensor:
    """Frame-level phoneme cross-entropy of encoder output h (B, L, D) against phones (B, L)."""
    # Padding frames carry IGNORE already; a batch without any alignment contributes nothing.
    labelled = phones != IGNORE
    return F.cross_entropy(phone_head(h[labelled]), phones[labelled]) if labelled.any() else h.sum() * 0.0


def _masked_bce(logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    mask = valid & ~torch.isnan(target)
    if not mask.any():
        return logits.sum() * 0.0
    return F.binary_cross_entropy_with_logits(logits[mask], target[mask])


def feature_statistics(items: list[Utterance], limit: int = 500) -> tuple[torch.Tensor, torch.Tensor]:
    sample = np.concatenate([u.mel for u in items[:: max(1, len(items) // limit)]]).astype(np.float64)
    return torch.from_numpy(sample.mean(0)).float(), torch.from_numpy(sample.std(0)).float().clamp(min=1e-2)


def fit_ctc(items: list[Utterance], ctc_per_frame: int) -> list[Utterance]:
    """The utterances with more CTC frames than letters. The fastest speech fits only when each encoder frame
    gives several CTC frames."""
    return [u for u in items if u.n_frames * ctc_per_frame > len(u.target)]


def load_data(cfg: STTTrainConfig, run: Path) -> tuple[list[Utterance], dict[str, list[Utterance]]]:
    unknown = sorted(set(cfg.source_repeats) - set(cfg.sources))
    if unknown:
        raise SystemExit(f"source_repeats names a source that is not in sources: {unknown[0]}")
    train, held_back, heldout = [], [], []
    for source in cfg.sources:
        items = load_source(source, "train", run / "features", cfg.teachers_out)
        items = fit_ctc(items, cfg.model.get("ctc_per_frame", 1))
        # Conversations are few and each has several pauses: a larger share of them picks the turn thresholds.
        held = [is_held_back(u.id, cfg.val_turn_fraction if u.pauses else cfg.val_fraction) for u in items]
        train += [u for u, h in zip(items, held, strict=True) if not h] * cfg.source_repeats.get(source, 1)
        held_back += [u for u, h in zip(items, held, strict=True) if h]
        heldout += load_source(source, "heldout", run / "features")
    # Validation clips are those a model with one CTC frame per encoder frame can spell, whatever this model's
    # frames: runs of either kind are then scored on the same clips.
    held_back = fit_ctc(held_back, 1)
    heldout = fit_ctc(heldout, 1)
    rng = random.Random(cfg.seed)
    sets = {
        "val": held_back,
        "heldout": [u for u in heldout if u.pauses is None and not u.source.endswith("augmented")],
        "heldout-augmented": [u for u in heldout if u.source.endswith("augmented")],
        "heldout-turns": [u for u in heldout if u.pauses is not None],
    }
    sets = {k: rng.sample(v, min(len(v), cfg.val_limit)) for k, v in sets.items() if v}
    # Every held-back conversation, not the few sampled among the clips: the turn thresholds are chosen on these.
    turns = [u for u in held_back if u.pauses is not None]
    if turns:
        sets["val-turns"] = turns
    return train, sets


def initial_weights(source: str, model_overrides: dict) -> tuple[STTModel, dict | None]:
    """A model from a run's checkpoint or best.pt, or from an exported model directory (stt.safetensors), and the
    source run's trained phoneme head (None when it has none: an export or best.pt).

    A recipe may ask for more encoder layers than the source has: the source's layers keep their weights and
    the extra layers, stacked on top, start as identities (`load_deeper`). It may also ask for more CTC frames
    per encoder frame (`ctc_per_frame`) than a source with one: each of the R frames starts as a copy of the
    source's, and since CTC merges repeated letters the model still reads exactly as before. Its dropout rates
    (`TRAINING_ONLY_FIELDS`) are its own, whatever the source trained with.
    """
    from sonare.stt.weights import load_model

    if Path(source).is_dir():
        start, phone_head = load_model(source)[0], None
    else:
        saved = torch.load(source, map_location="cpu", weights_only=False)
        start, phone_head = STTModel(STTConfig(**saved["model_config"])), saved.get("phone_head")
        start.load_state_dict(saved["model"])
    rates = {k: model_overrides[k] for k in TRAINING_ONLY_FIELDS if k in model_overrides}
    n_layers = model_overrides.get("n_layers", start.cfg.n_layers)
    per = model_overrides.get("ctc_per_frame", start.cfg.ctc_per_frame)
    if (n_layers, per) == (start.cfg.n_layers, start.cfg.ctc_per_frame) and not rates:
        return start, phone_head
    if n_layers < start.cfg.n_layers:
        raise SystemExit(f"init_from has {start.cfg.n_layers} encoder layers; a model can grow, not shrink")
    if per != start.cfg.ctc_per_frame and start.cfg.ctc_per_frame != 1:
        raise SystemExit(f"init_from has {start.cfg.ctc_per_frame} CTC frames per encoder frame; only 1 can split")
    model = STTModel(replace(start.cfg, n_layers=n_layers, ctc_per_frame=per, **rates))
    weights = start.state_dict()
    if per != start.cfg.ctc_per_frame:  # the source has one CTC frame per encoder frame: R copies of it
        weights["ctc.weight"] = weights["ctc.weight"].repeat(per, 1)
        weights["ctc.bias"] = weights["ctc.bias"].repeat(per)
    load_deeper(model, weights, {"encoder": start.cfg.n_layers})
    return model, phone_head


def train(cfg: STTTrainConfig, progress: bool = True) -> Path:
    from tqdm import tqdm

    torch.set_num_threads(cfg.threads)
    torch.set_flush_denormal(True)
    run = Path(cfg.run_dir)
    run.mkdir(parents=True, exist_ok=True)
    train_set, val_sets = load_data(cfg, run)
    if not train_set:
        raise SystemExit("no STT training utterances in the sources")

    from sonare.text.inventory import vocab_size

    ckpt_path = run / "checkpoint.pt"
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=False) if ckpt_path.exists() else None
    torch.manual_seed(cfg.seed)
    if ckpt is not None:
        model = STTModel(STTConfig(**ckpt["model_config"]))
        model.load_state_dict(ckpt["model"])
        step, best, head_state = ckpt["step"], ckpt.get("best"), ckpt.get("phone_head")
    elif cfg.init_from:
        model, head_state = initial_weights(cfg.init_from, cfg.model)  # feature statistics included
        step, best = 0, None
        print(f"STT: starting from the weights of {cfg.init_from}")
    else:
        model = STTModel(STTConfig(**cfg.model))
        model.feat_mean, model.feat_std = feature_statistics(train_set)
        step, best, head_state = 0, None, None
    phone_head = torch.nn.Linear(model.cfg.d_model, vocab_size())
    if head_state is not None:
        # A continued run keeps its trained phoneme head: a fresh one would pull the encoder off course at first.
        phone_head.load_state_dict(head_state)
    model.to(cfg.device)
    phone_head.to(cfg.device)
    if head_state is None and cfg.init_from and cfg.phone_weight > 0:
        # A source without a phoneme head (an export or best.pt): fit one to the frozen encoder first, since a
        # fresh head would pull the encoder off course just as above.
        fit_phone_head(model, phone_head, train_set, cfg, progress)
    model.turn.requires_grad_(not cfg.freeze_turn_head)
    turn_teacher = None
    if cfg.turn_teacher:
        from sonare.stt.weights import load_model

        turn_teacher = load_model(cfg.turn_teacher)[0].to(cfg.device).eval().requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad] + list(phone_head.parameters())
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    if ckpt is not None:
        opt.load_state_dict(ckpt["optimizer"])
    average = None
    if cfg.ema_decay > 0:
        saved = ckpt.get("average") if ckpt is not None else None
        average = WeightAverage.from_state(model, saved) if saved else WeightAverage(model, cfg.ema_decay)
    hours = sum(len(u.mel) for u in train_set) / 360_000
    n_params = sum(p.numel() for p in model.parameters())
    sizes = ", ".join(f"{k} {len(v)}" for k, v in val_sets.items())
    print(f"STT: {len(train_set)} train utterances ({hours:.2f} h); validation: {sizes}; {n_params:,} params")

    def checkpoint() -> None:
        state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step, "best": best}
        state["phone_head"] = phone_head.state_dict()
        if average is not None:
            state["average"] = average.state_dict()
        save_atomic({**state, "model_config": model.cfg.to_dict()}, ckpt_path)

    py_rng = random.Random(cfg.seed + step)
    np_rng = np.random.default_rng([cfg.seed, step])
    batches: list[list[int]] = []
    log = open(run / "log.jsonl", "a")  # noqa: SIM115 - appended to for the whole run
    bar = tqdm(total=cfg.steps, initial=step, desc="stt", disable=not progress, mininterval=5)
    model.train()
    t_last, t_ckpt = time.time(), time.time()
    while step < cfg.steps:
        if not batches:
            batches = make_batches(train_set, cfg.batch_frames, cfg.max_frames, py_rng)
        batch = to_device(collate([train_set[i] for i in batches.pop()], model, cfg, np_rng), cfg.device)
        for group in opt.param_groups:
            group["lr"] = warmup_cosine(step, cfg.lr, cfg.warmup, cfg.steps, floor=0.02)
        parts = losses(model, phone_head, batch, cfg, turn_teacher)
        opt.zero_grad(set_to_none=True)
        parts["loss"].backward()
        torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        opt.step()
        if average is not None:
            average.update(model)
        step += 1
        bar.update(1)
        bar.set_postfix({k: f"{v.item():.3f}" for k, v in parts.items()}, refresh=False)
        if step % 25 == 0:
            rec = {
                "step": step,
                "lr": round(warmup_cosine(step, cfg.lr, cfg.warmup, cfg.steps, floor=0.02), 6),
                "sec_per_step": round((time.time() - t_last) / 25, 3),
            }
            rec.update({k: round(v.item(), 4) for k, v in parts.items()})
            log.write(json.dumps(rec) + "\n")
            log.flush()
            t_last = time.time()
        if step % cfg.val_every == 0 or step == cfg.steps:
            kept = model
            if average is not None:
                kept = copy.deepcopy(model)
                kept.load_state_dict(average.weights)
            record = validate(kept, val_sets, cfg, step)
            if average is not None:
                record["raw"] = {k: v for k, v in validate(model, val_sets, cfg, step).items() if k != "step"}
            log.write(json.dumps(record) + "\n")
            log.flush()
            if "val" in record and (best is None or record["val"]["wer"] <= best["wer"]):
                best = {"step": step, "wer": record["val"]["wer"]}
                torch.save(
                    {"model": kept.state_dict(), "model_config": model.cfg.to_dict(), "best": best}, run / "best.tmp"
                )
                os.replace(run / "best.tmp", run / "best.pt")
            model.train()
            checkpoint()
            t_ckpt = time.time()
        elif time.time() - t_ckpt > cfg.checkpoint_minutes * 60:
            checkpoint()
            t_ckpt = time.time()
    bar.close()
    return ckpt_path


def fit_phone_head(
    model: STTModel, phone_head: torch.nn.Linear, items: list[Utterance], cfg: STTTrainConfig, progress: bool = True
) -> None:
    """Train `phone_head` alone on the encoder's outputs (no gradient reaches the model) for `phone_head_fit_steps`
    batches of aligned utterances, so that its first gradients into a trained encoder are not a random head's."""
    from tqdm import tqdm

    aligned = [u for u in items if u.phones is not None]
    if not aligned:
        return
    rng = random.Random(cfg.seed)
    batches: list[list[int]] = []
    opt = torch.optim.AdamW(phone_head.parameters(), lr=cfg.phone_head_fit_lr)
    model.eval()
    bar = tqdm(range(cfg.phone_head_fit_steps), desc="phone head", disable=not progress, mininterval=5)
    for _ in bar:
        if not batches:
            batches = make_batches(aligned, cfg.batch_frames, cfg.max_frames, rng)
        idx = batches.pop()
        batch = to_device(collate([aligned[i] for i in idx], model, cfg, None), cfg.device)
        with torch.no_grad():
            h, _ = model.encode(batch["mel"], lengths=batch["lengths"])
        loss = phone_loss(phone_head, h, batch["phones"])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        bar.set_postfix({"phone": f"{loss.item():.3f}"}, refresh=False)
    model.train()


@torch.no_grad()
def model_outputs(model: STTModel, items: list[Utterance], cfg: STTTrainConfig):
    """Per utterance: CTC log-probabilities (L·R, V) and (end, speech) probabilities (L, 2), in batches of similar
    length."""
    model.eval()
    order = sorted(range(len(items)), key=lambda i: len(items[i].mel))
    results: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for chunk in range(0, len(order), 16):
        idx = order[chunk : chunk + 16]
        batch = collate([items[i] for i in idx], model, cfg, None)
        ctc, turn, _ = model(batch["mel"].to(cfg.device), lengths=batch["lengths"].to(cfg.device))
        logp, probs = torch.log_softmax(ctc, -1).cpu(), torch.sigmoid(turn).cpu()
        for r, i in enumerate(idx):
            n = int(batch["lengths"][r])
            results[i] = (logp[r, : n * model.cfg.ctc_per_frame].numpy(), probs[r, :n].numpy())
    return [results[i] for i in range(len(items))]


def greedy_text(logp: np.ndarray, frame_seconds: float) -> str:
    """The words of greedy decoding of CTC log-probabilities (frames, V), frames `frame_seconds` long."""
    from sonare.stt.decode import GreedyDecoder, transcript

    return transcript(GreedyDecoder(frame_seconds), logp)


def turn_curve(
    items: list[Utterance],
    outputs,
    new_decoder: Callable[[], BeamDecoder] | None = None,
    tiers: SentenceEndTiers = DEFAULT_TIERS,
) -> dict:
    """Turn metrics per end threshold, scored by the independent turn evaluator: the head alone, or with
    `new_decoder` the words weighing in as they do in a stream, by `tiers` (a fresh decoder per conversation; the
    language model is trained after the acoustic model, so this recipe's own validation has only the head). Each
    end is heard at the end of the shipped live step that heard it, as `sonare eval turns` hears it."""
    from sonare.eval.turns import Pause, TurnOutcomes, score_fires, summarize
    from sonare.stt.stream import STEP_SECONDS
    from sonare.stt.turns import THRESHOLDS, turn_fires

    curve = {}
    for threshold in THRESHOLDS:
        pooled = TurnOutcomes()
        for u, (logp, probs) in zip(items, outputs, strict=True):
            decoder = new_decoder() if new_decoder is not None else None
            fires = turn_fires(
                probs, min(threshold, 0.5), threshold, decoder, logp, step_seconds=STEP_SECONDS, tiers=tiers
            )
            seconds = len(u.mel) * 0.01
            pooled.extend(score_fires([Pause.from_dict(p) for p in u.pauses], fires, seconds))
        curve[threshold] = summarize(pooled)
    return curve


def turn_thresholds(curve: dict, max_false_cutoff: float) -> dict[str, float]:
    """The tracker's thresholds from a turn curve on held-back conversations (the head's alone, or with the words
    weighing in): the end threshold by the recipes' rule (`chosen_threshold`), the eager one the soonest within a
    looser budget, never above the end."""
    from sonare.eval.turns import best_operating_point, thinking_pause_cutoff_rate

    end = chosen_threshold(curve, max_false_cutoff)
    eager = best_operating_point(curve, EAGER_FALSE_CUTOFF, thinking_pause_cutoff_rate)
    return {"eager_threshold": min(eager if eager is not None else end, end), "end_threshold": end}


def validate(model: STTModel, val_sets: dict[str, list[Utterance]], cfg: STTTrainConfig, step: int) -> dict:
    from sonare.eval.wer import corpus_errors

    record: dict = {"step": step}
    seconds = model.cfg.ctc_frame_seconds
    for name, items in val_sets.items():
        outputs = model_outputs(model, items, cfg)
        errors = corpus_errors(
            (u.text, greedy_text(logp, seconds)) for u, (logp, _) in zip(items, outputs, strict=True)
        )
        result: dict = {"wer": round(errors.wer, 4), "utterances": len(items)}
        turns = [(u, o) for u, o in zip(items, outputs, strict=True) if u.pauses]
        if turns:
            curve = turn_curve([u for u, _ in turns], [o for _, o in turns])
            result["thresholds"] = turn_thresholds(curve, cfg.max_false_cutoff)
            end = result["thresholds"]["end_threshold"]
            result["turns"] = {k: round(v, 4) for k, v in curve[end].as_dict().items()}
        record[name] = result
    print(f"step {step}: " + json.dumps({k: v for k, v in record.items() if k != "step"}))
    return record


def export(cfg: STTTrainConfig, out_dir: str | os.PathLike) -> Path:
    """Write `stt.safetensors` (weights; config and turn thresholds in metadata) from the best checkpoint.

    The turn thresholds are tuned here, for exactly these weights, on the held-back training conversations
    (never the held-out split); without any, the tracker's defaults are kept."""
    from safetensors.torch import save_file

    from sonare.stt.turns import EAGER_THRESHOLD, END_THRESHOLD

    run = Path(cfg.run_dir)
    best_or_last = run / "best.pt" if (run / "best.pt").exists() else run / "checkpoint.pt"
    ckpt = torch.load(best_or_last, map_location="cpu", weights_only=False)
    best = ckpt.get("best") or {}
    weights = ckpt["average"]["weights"] if "average" in ckpt else ckpt["model"]  # a checkpoint: its average
    model = STTModel(STTConfig(**ckpt["model_config"]))
    model.load_state_dict(weights)
    _, val_sets = load_data(cfg, run)
    held_back = {"val-turns": val_sets["val-turns"]} if "val-turns" in val_sets else {}
    step = best.get("step", ckpt.get("step"))
    thresholds = validate(model, held_back, cfg, step).get("val-turns", {}).get("thresholds", {}) if held_back else {}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metadata = {
        "config": json.dumps(ckpt["model_config"]),
        "step": str(step),
        "eager_threshold": str(thresholds.get("eager_threshold", EAGER_THRESHOLD)),
        "end_threshold": str(thresholds.get("end_threshold", END_THRESHOLD)),
    }
    save_file({k: v.contiguous() for k, v in weights.items()}, out / "stt.safetensors", metadata=metadata)
    return out
