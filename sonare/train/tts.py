"""The TTS training recipe: `sonare train tts --config configs/tts-default.yaml`.

Reproducible (seeded, config-driven), resumable (an atomic checkpoint every `checkpoint_every` steps; rerunning
the same command continues from it), with a progress bar, a JSON-lines log of losses, and validation audio and
metrics written as it trains. `--export` writes the shipped artefacts: safetensors weights and a voices file.
"""

from __future__ import annotations

import copy
import json
import os
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from sonare.recipe import read_recipe
from sonare.train.common import is_held_back, load_deeper, save_atomic, to_device, warmup_cosine
from sonare.train.intelligibility import FreshTexts, RecogniserLoss, spoken_freely, text_targets
from sonare.tts.adapt import compose, from_transform, identity
from sonare.tts.dataset import Example, load_examples, load_frames
from sonare.tts.model import TTSConfig, TTSModel

if TYPE_CHECKING:
    from sonare.voices.encoder import VoiceProfile


@dataclass
class TTSTrainConfig:
    manifests: list[str]
    run_dir: str = "runs/tts"
    teachers: list[str] | None = None  # restrict to these teacher engines
    f0_tracker: str = "dio"  # WORLD's F0 tracker for the training frames (`sonare.tts.acoustic.F0_TRACKERS`)
    envelope: str = "cheaptrick"  # how their envelope is measured (`sonare.tts.acoustic.ENVELOPES`)
    model: dict = field(default_factory=dict)  # TTSConfig fields other than vocab_size / n_speakers
    batch_frames: int = 6000  # frames per batch (sum over utterances)
    steps: int = 20000
    lr: float = 2e-3
    warmup: int = 500
    lr_floor: float = 0.05  # the cosine ends at lr * lr_floor
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    duration_weight: float = 0.5
    voicing_weight: float = 0.2
    # A frozen recogniser (an STT model directory) whose CTC loss on the rendered frames joins the loss, weighted
    # by `asr_weight` (`sonare.train.intelligibility`); none: the frame losses alone.
    asr_critic: str | None = None
    asr_weight: float = 0.1
    # Sentences per step the default voice speaks from fresh text (`FreshTexts`) in its own durations for the
    # critic, beside the training clips; their loss ("heard_fresh") is weighted by `asr_weight` too. 0: none.
    asr_fresh_texts: int = 0
    asr_hold_aperiodicity: bool = False  # the critic moves the envelope alone (F0 is always held)
    val_fraction: float = 0.03
    val_every: int = 1000
    checkpoint_every: int = 250
    val_sentences: list[str] = field(default_factory=list)
    threads: int = 2
    workers: int = 2
    seed: int = 0
    device: str = "cpu"  # where the training steps run ("cuda" on a GPU); validation audio is made on the CPU
    # Built-in voices to export: id -> {speaker (a corpus speaker), name, description, gender, language, and
    # optionally transform: {pitch_semitones, pitch_range, formant_ratio} applied to that speaker}
    voices: dict = field(default_factory=dict)
    default_voice: str = ""
    # Rows in the speaker table: speakers that appear in the corpus later (a build still running) join on resume.
    max_speakers: int = 64
    # Where a fresh run_dir starts from: a committed slim checkpoint (weights, speakers, step; no optimizer), so
    # training continues across machines that do not share run_dir.
    resume_from: str | None = None

    def __post_init__(self) -> None:
        if self.asr_fresh_texts and not self.asr_critic:
            raise SystemExit("asr_fresh_texts needs asr_critic: fresh sentences are heard by the critic")

    @staticmethod
    def load(path: str | os.PathLike) -> TTSTrainConfig:
        return TTSTrainConfig(**read_recipe(path))

    def frames_dir(self) -> Path:
        """The run's cache of analysed frames, named by F0 tracker and envelope: a changed analysis never trains on
        another's frames."""
        return Path(self.run_dir) / f"frames-{self.f0_tracker}-{self.envelope}"


def recipe_examples(cfg: TTSTrainConfig, progress: bool = True) -> list[Example]:
    """Every training-split clip of the recipe's manifests, its frames analysed into the run's cache first."""
    return load_examples(
        cfg.manifests,
        cfg.frames_dir(),
        teachers=cfg.teachers,
        workers=cfg.workers,
        progress=progress,
        f0_tracker=cfg.f0_tracker,
        envelope=cfg.envelope,
    )


def validation_set(examples: list[Example], cfg: TTSTrainConfig) -> list[Example]:
    """The held-back clips validation measures: the first 64 the id hash sets aside, in manifest order, so runs
    on the same first manifest are compared on the same clips."""
    return [e for e in examples if is_held_back(e.id, cfg.val_fraction)][:64]


def make_batches(examples: list[Example], batch_frames: int, rng: random.Random) -> list[list[Example]]:
    """Length-sorted buckets under a frame budget, in random order: little padding, varied batches."""
    ordered = sorted(examples, key=lambda e: e.n_frames + rng.random())
    batches: list[list[Example]] = []
    current: list[Example] = []
    for ex in ordered:  # ascending, so `ex` is the longest of its batch
        if current and ex.n_frames * (len(current) + 1) > batch_frames:
            batches.append(current)
            current = []
        current.append(ex)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def collate(batch: list[Example], speakers: dict[str, int]) -> dict[str, torch.Tensor]:
    n = max(len(e.ids) for e in batch)
    t = max(e.n_frames for e in batch)
    ids = torch.zeros(len(batch), n, dtype=torch.long)
    durations = torch.zeros(len(batch), n, dtype=torch.long)
    frames = torch.zeros(len(batch), t, load_frames(batch[0]).shape[1])
    frame_mask = torch.zeros(len(batch), t, dtype=torch.bool)
    for i, e in enumerate(batch):
        ids[i, : len(e.ids)] = torch.from_numpy(e.ids)
        durations[i, : len(e.ids)] = torch.from_numpy(e.durations)
        frames[i, : e.n_frames] = torch.from_numpy(load_frames(e))
        frame_mask[i, : e.n_frames] = True
    targets, target_lengths = text_targets([e.text for e in batch])
    return {
        "ids": ids,
        "durations": durations,
        "frames": frames,
        "frame_mask": frame_mask,
        "id_mask": ids != 0,
        "speakers": torch.tensor([speakers[e.speaker] for e in batch]),
        "targets": targets,
        "target_lengths": target_lengths,
    }


def frame_statistics(examples: list[Example], limit: int = 400) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and std per channel over (a sample of) the training frames; voicing stays a raw 0/1 target."""
    sample = torch.from_numpy(np.concatenate([load_frames(e) for e in examples[:limit]]))
    mean, std = sample.mean(0), sample.std(0).clamp(min=1e-3)
    mean[1], std[1] = 0.0, 1.0
    return mean, std


def losses(
    model: TTSModel, batch: dict[str, torch.Tensor], cfg: TTSTrainConfig, critic: RecogniserLoss | None = None
) -> dict[str, torch.Tensor]:
    log_dur, out = model(batch["ids"], batch["speakers"], batch["durations"], batch["frames"].shape[1])
    target = (batch["frames"] - model.frame_mean) / model.frame_std
    fm = batch["frame_mask"][..., None].float()
    spectral = ((out - target).abs() * fm)[..., [0, *range(2, out.shape[-1])]].sum() / (fm.sum() * (out.shape[-1] - 1))
    voicing = F.binary_cross_entropy_with_logits(out[..., 1], batch["frames"][..., 1], reduction="none") * fm[..., 0]
    voicing = voicing.sum() / fm.sum()
    im = batch["id_mask"].float()
    duration = ((log_dur - torch.log1p(batch["durations"].float())) ** 2 * im).sum() / im.sum()
    total = spectral + cfg.voicing_weight * voicing + cfg.duration_weight * duration
    parts = {"spectral": spectral, "voicing": voicing, "duration": duration}
    if critic is not None:
        parts["heard"] = critic(
            model.denormalize(out), batch["frame_mask"].sum(1), batch["targets"], batch["target_lengths"]
        )
        total = total + cfg.asr_weight * parts["heard"]
    return {"loss": total, **parts}


def fresh_text_loss(model: TTSModel, fresh: FreshTexts, speaker: int, critic: RecogniserLoss) -> torch.Tensor:
    """The critic's loss on a draw of fresh sentences spoken by speaker row `speaker`."""
    device = next(model.parameters()).device
    ids, texts = fresh.draw()
    frames, lengths = spoken_freely(model, ids.to(device), torch.full((len(ids),), speaker, device=device))
    targets, target_lengths = text_targets(texts)
    return critic(model.denormalize(frames), lengths, targets.to(device), target_lengths.to(device))


def default_speaker(cfg: TTSTrainConfig, speakers: dict[str, int]) -> int:
    """The speaker-table row of the recipe's default voice."""
    name = cfg.voices.get(cfg.default_voice, {}).get("speaker", cfg.default_voice)
    if name not in speakers:
        raise SystemExit(f"the default voice's speaker {name!r} is not in the corpus")
    return speakers[name]


def _extend_speakers(known: dict[str, int], examples: list[Example], rows: int) -> dict[str, int]:
    """Give each new speaker the next free row of the speaker table (rows beyond `rows` are left out)."""
    speakers = dict(known)
    for name in sorted({e.speaker for e in examples} - set(speakers)):
        if len(speakers) < rows:
            speakers[name] = len(speakers)
    return speakers


def resumed_model(ckpt: dict, model_overrides: dict) -> TTSModel:
    """The checkpoint's model, grown where the recipe asks for more encoder or decoder layers than it has (the
    source's layers kept, the new ones on top starting as identities: `load_deeper`); a run's own checkpoint
    already has the recipe's depth."""
    source = TTSConfig(**ckpt["model_config"])
    text_layers = model_overrides.get("text_layers", source.text_layers)
    frame_layers = model_overrides.get("frame_layers", source.frame_layers)
    if text_layers < source.text_layers or frame_layers < source.frame_layers:
        raise SystemExit("the recipe asks for fewer layers than its starting checkpoint has: models grow, not shrink")
    model = TTSModel(replace(source, text_layers=text_layers, frame_layers=frame_layers))
    load_deeper(model, ckpt["model"], {"encoder.ssm": source.text_layers, "decoder.ssm": source.frame_layers})
    return model


def train(cfg: TTSTrainConfig, progress: bool = True) -> Path:
    from tqdm import tqdm

    from sonare.text.inventory import vocab_size

    torch.set_num_threads(cfg.threads)
    torch.set_flush_denormal(True)
    run = Path(cfg.run_dir)
    (run / "val").mkdir(parents=True, exist_ok=True)
    examples = recipe_examples(cfg, progress)
    if not examples:
        raise SystemExit("no TTS examples found in the manifests")
    train_set = [e for e in examples if not is_held_back(e.id, cfg.val_fraction)]
    val_set = validation_set(examples, cfg)

    ckpt_path = run / "checkpoint.pt"
    start = ckpt_path if ckpt_path.exists() else Path(cfg.resume_from) if cfg.resume_from else None
    if start is not None and start.exists():
        ckpt = torch.load(start, map_location="cpu", weights_only=False)
        speakers = _extend_speakers(ckpt["speakers"], examples, ckpt["model_config"]["n_speakers"])
        model = resumed_model(ckpt, cfg.model)
        step = ckpt["step"]
    else:
        torch.manual_seed(cfg.seed)
        speakers = _extend_speakers({}, examples, cfg.max_speakers)
        model = TTSModel(TTSConfig(vocab_size=vocab_size(), n_speakers=cfg.max_speakers, **cfg.model))
        model.frame_mean, model.frame_std = frame_statistics(train_set)
        ckpt, step = None, 0
    train_set = [e for e in train_set if e.speaker in speakers]
    model.to(cfg.device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    # A model grown past its checkpoint has parameters the saved optimizer never saw: it starts afresh.
    if ckpt is not None and "optimizer" in ckpt and model.cfg.to_dict() == ckpt["model_config"]:
        opt.load_state_dict(ckpt["optimizer"])
    critic = RecogniserLoss(cfg.asr_critic, cfg.device, cfg.asr_hold_aperiodicity) if cfg.asr_critic else None
    fresh = None
    if cfg.asr_fresh_texts:
        fresh = FreshTexts({e.text for e in examples}, cfg.asr_fresh_texts, seed=cfg.seed + step)
        fresh_speaker = default_speaker(cfg, speakers)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"TTS: {len(train_set)} train / {len(val_set)} val utterances, {len(speakers)} speakers, {n_params:,} params")

    rng = random.Random(cfg.seed + step)
    batches: list[list[Example]] = []
    log = open(run / "log.jsonl", "a")  # noqa: SIM115 - appended to for the whole run
    bar = tqdm(total=cfg.steps, initial=step, desc="tts", disable=not progress)
    model.train()
    t_last = time.time()
    while step < cfg.steps:
        if not batches:
            batches = make_batches(train_set, cfg.batch_frames, rng)
        batch = to_device(collate(batches.pop(), speakers), cfg.device)
        lr = warmup_cosine(step, cfg.lr, cfg.warmup, cfg.steps, floor=cfg.lr_floor)
        for group in opt.param_groups:
            group["lr"] = lr
        parts = losses(model, batch, cfg, critic)
        if fresh is not None:
            parts["heard_fresh"] = fresh_text_loss(model, fresh, fresh_speaker, critic)
            parts["loss"] = parts["loss"] + cfg.asr_weight * parts["heard_fresh"]
        opt.zero_grad(set_to_none=True)
        parts["loss"].backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        step += 1
        bar.update(1)
        bar.set_postfix({k: f"{v.item():.3f}" for k, v in parts.items()})
        if step % 50 == 0:
            rec = {"step": step, "lr": lr, "sec_per_step": (time.time() - t_last) / 50}
            rec.update({k: round(v.item(), 5) for k, v in parts.items()})
            log.write(json.dumps(rec) + "\n")
            log.flush()
            t_last = time.time()
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            save_atomic(
                {
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "step": step,
                    "speakers": speakers,
                    "model_config": model.cfg.to_dict(),
                },
                ckpt_path,
            )
        if step % cfg.val_every == 0 or step == cfg.steps:
            record = validate(model, val_set, speakers, cfg, run, step, critic)
            log.write(json.dumps(record) + "\n")
            log.flush()
            model.train()
    bar.close()
    return ckpt_path


@torch.no_grad()
def validation_loss(
    model: TTSModel,
    val_set: list[Example],
    speakers: dict[str, int],
    cfg: TTSTrainConfig,
    critic: RecogniserLoss | None = None,
) -> dict[str, float]:
    """The training losses over the held-back clips, in eval mode, averaged per clip."""
    model.eval()
    totals: dict[str, float] = {}
    for i in range(0, len(val_set), 8):
        batch = to_device(collate(val_set[i : i + 8], speakers), cfg.device)
        for k, v in losses(model, batch, cfg, critic).items():
            totals[k] = totals.get(k, 0.0) + v.item() * len(val_set[i : i + 8])
    return {k: round(v / max(1, len(val_set)), 5) for k, v in totals.items()}


@torch.no_grad()
def validate(
    model: TTSModel,
    val_set: list[Example],
    speakers: dict[str, int],
    cfg: TTSTrainConfig,
    run: Path,
    step: int,
    critic: RecogniserLoss | None = None,
) -> dict:
    """Held-back loss, and audio of the validation sentences through the streaming path."""
    from sonare.audio.io import save_audio
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.tts.stream import TTSStreamingModel

    record = {"step": step, "validation": validation_loss(model, val_set, speakers, cfg, critic)}
    model = copy.deepcopy(model).cpu() if cfg.device != "cpu" else model  # the streaming path runs on the CPU
    unadapted = torch.from_numpy(identity())
    voices = {vid: torch.cat([emb, unadapted]) for vid, emb in _voice_table(model, speakers, cfg).items()}
    streaming = TTSStreamingModel(model, voices, cfg.default_voice or next(iter(voices)))
    for j, text in enumerate(cfg.val_sentences):
        audio, _ = streaming.synthesize(text, SynthesisOptions(VoiceSpec(id=streaming.default_voice)))
        save_audio(run / "val" / f"step{step:06d}-{j}.wav", audio, streaming.sample_rate)
    print(f"step {step}: validation {record['validation']}")
    return record


def _voice_table(model: TTSModel, speakers: dict[str, int], cfg: TTSTrainConfig) -> dict[str, torch.Tensor]:
    table = model.speakers.weight.detach()
    if cfg.voices:
        return {vid: table[speakers[v["speaker"]]].clone() for vid, v in cfg.voices.items() if v["speaker"] in speakers}
    return {name: table[i].clone() for name, i in speakers.items()}


def save_slim_checkpoint(cfg: TTSTrainConfig, path: str | os.PathLike) -> Path:
    """The run's latest checkpoint without optimizer state (a quarter of the size), for `resume_from`."""
    ckpt = torch.load(Path(cfg.run_dir) / "checkpoint.pt", map_location="cpu", weights_only=False)
    ckpt.pop("optimizer", None)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_atomic(ckpt, path)
    return path


def export(cfg: TTSTrainConfig, out_dir: str | os.PathLike) -> Path:
    """Write the shipped artefacts: `tts.safetensors` (weights + config in metadata) and `voices.json`."""
    from safetensors.torch import save_file

    ckpt = torch.load(Path(cfg.run_dir) / "checkpoint.pt", map_location="cpu", weights_only=False)
    model = TTSModel(TTSConfig(**ckpt["model_config"]))
    model.load_state_dict(ckpt["model"])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.contiguous() for k, v in model.state_dict().items() if not k.startswith("speakers.")}
    metadata = {"config": json.dumps(model.cfg.to_dict()), "step": str(ckpt["step"])}
    save_file(tensors, out / "tts.safetensors", metadata=metadata)
    voices = _shipped_voices(cfg, model, _voice_table(model, ckpt["speakers"], cfg))
    (out / "voices.json").write_text(json.dumps({"default": cfg.default_voice or voices[0]["id"], "voices": voices}))
    return out


def _shipped_voices(cfg: TTSTrainConfig, model: TTSModel, table: dict[str, torch.Tensor]) -> list[dict]:
    """voices.json entries: each voice's embedding (speaker vector + adaptation) and metadata.

    A voice without a `transform` is its speaker as trained, calibrated to its teacher's profile (`_calibrated`),
    with its profile measured on its teacher audio (what cloning adapts from). A voice with a `transform` is that
    calibrated speaker adapted by the transform (`sonare.tts.adapt.from_transform`), so derived voices reuse the
    speaker with the most training data."""
    from sonare.voices.encoder import corpus_profile, teacher_clips

    profiles, calibrations = {}, {}
    voices = []
    for vid, emb in table.items():
        meta = cfg.voices.get(vid, {"name": vid, "description": "", "gender": "", "language": "en", "speaker": vid})
        speaker = meta.get("speaker", vid)
        if speaker not in profiles:
            clips = teacher_clips(cfg.manifests, speaker)
            profiles[speaker] = corpus_profile(clips)
            calibrations[speaker] = _calibrated(model, emb, clips, profiles[speaker])
        entry = {"id": vid, **{k: v for k, v in meta.items() if k not in ("speaker", "transform")}}
        adaptation = calibrations[speaker]
        if "transform" in meta:
            adaptation = compose(adaptation, from_transform(profiles[speaker].median_lf0, **meta["transform"]))
        else:
            entry["profile"] = profiles[speaker].to_json()
        entry["embedding"] = np.concatenate([emb.numpy(), adaptation]).tolist()
        voices.append(entry)
    return voices


def _calibrated(
    model: TTSModel, speaker: torch.Tensor, clips: list[tuple[np.ndarray, int, str]], teacher: VoiceProfile
) -> np.ndarray:
    """The calibration of a trained speaker (`sonare.voices.encoder.calibration`): the model speaks the texts of
    its teacher's clips, and its profile is measured as the teacher's was. A model that does not yet speak well
    enough to be measured (an early or smoke run) ships uncalibrated."""
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.tts.stream import TTSStreamingModel
    from sonare.voices.encoder import MAX_CLIP_SECONDS, CloneError, analyse, calibration

    streaming = TTSStreamingModel(model, {"v": torch.cat([speaker, torch.from_numpy(identity())])}, "v")
    options = SynthesisOptions(VoiceSpec("v"))
    audio = np.concatenate([streaming.synthesize(text, options)[0] for _, _, text in clips])
    try:
        spoken = analyse(audio[: int(MAX_CLIP_SECONDS * streaming.sample_rate)], streaming.sample_rate)
    except CloneError as e:
        print(f"voice not calibrated: the model's speech cannot be measured ({e})")
        return identity()
    return calibration(spoken, teacher)
