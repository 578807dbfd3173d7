"""The end-of-turn head alone, on a trained recogniser: `sonare train turn --config configs/turn-default.yaml`.

The STT recipe trains the turn head with the encoder, on whatever conversations its corpora hold, in hours. This
recipe retrains only the head of a recogniser that is already trained: its encoder and CTC head stay as they
are, so its words do not change, nor the beam search tuned for them. A frozen encoder gives each conversation
the same outputs at every step, so they are computed once (float16, `encoded.pt` in the run directory) and a
step is the head's pass over cached frames: thousands of steps take minutes on one core.

1. Data: the conversations (records with labelled pauses) of the sources' training split. Those the STT recipe
   holds back (`is_held_back` at its `val_turn_fraction`) choose the thresholds and are never trained on.
2. Training: a fresh head (`STTModel.turn`: end and speech logits from each encoder frame) learns on random
   windows of the conversations with dropout on the encoder outputs, against the STT recipe's labels and loss
   weights (`sonare.stt.dataset.turn_labels`). Resumable: a checkpoint every few minutes and at each validation
   (head-alone turn metrics on the held-back conversations, in `log.jsonl`).
3. Export (`--export DIR`): `stt.safetensors` with the new head and the head-alone thresholds chosen for it
   (`sonare.train.stt.turn_thresholds`), and, when the recogniser has a language model, `lm.safetensors` with
   the end and eager-end thresholds re-chosen with the words weighing in (`sonare.train.lm.tune_turn_thresholds`),
   its text and beam settings unchanged. `--retune` exports `stt_dir`'s own head with its thresholds chosen anew,
   no training.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from sonare.recipe import read_recipe
from sonare.stt.dataset import Utterance, load_corpus
from sonare.stt.model import TURN_END, TURN_SPEECH, STTModel
from sonare.train.common import is_held_back, save_atomic, warmup_cosine
from sonare.train.stt import STTTrainConfig, turn_curve, turn_thresholds

Conversation = tuple[str, Utterance]  # (source manifest, conversation)


@dataclass
class TurnTrainConfig:
    sources: list[str]  # corpus manifests with conversations
    stt_dir: str = "sonare/assets/stt"  # the trained recogniser whose head this retrains
    run_dir: str = "runs/turn"
    steps: int = 2000
    lr: float = 1e-3
    warmup: int = 100
    weight_decay: float = 0.01
    batch: int = 8  # windows of conversations per step
    window_frames: int = 512  # encoder frames per window (20 s)
    dropout: float = 0.1  # on the encoder outputs the head reads
    end_weight: float = STTTrainConfig.end_weight
    speech_weight: float = STTTrainConfig.speech_weight
    val_every: int = 500
    checkpoint_minutes: float = 5.0
    max_false_cutoff: float = STTTrainConfig.max_false_cutoff
    # How sure the head must be where the words may end a sentence but likely do not (`SentenceEndTiers.
    # unsure_end`), for a head that needs its own; stored with the language model (None: keep the recogniser's).
    unsure_end: float | None = None
    # The STT recipe's share: the conversations its encoder never trained on choose the thresholds here too.
    val_turn_fraction: float = STTTrainConfig.val_turn_fraction
    threads: int = 1
    seed: int = 0

    @staticmethod
    def load(path: str | os.PathLike) -> TurnTrainConfig:
        return TurnTrainConfig(**read_recipe(path))


def load_conversations(cfg: TurnTrainConfig) -> tuple[list[Conversation], list[Conversation]]:
    """(training, held-back) conversations of the sources, each with its source, held back by id as the STT
    recipe holds them back."""
    train, held_back = [], []
    for source in cfg.sources:
        for u in load_corpus(source, "train", task="turn"):
            if u.pauses is not None:
                (held_back if is_held_back(u.id, cfg.val_turn_fraction) else train).append((source, u))
    return train, held_back


def encoder_fingerprint(model: STTModel) -> str:
    """A digest of every weight but the turn head's: what the cached outputs and a run's head depend on."""
    digest = hashlib.sha1()
    for name, tensor in sorted(model.state_dict().items()):
        if not name.startswith("turn."):
            digest.update(name.encode())
            digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


def _check_run(saved: dict, fingerprint: str, what: str) -> None:
    if saved.get("encoder") != fingerprint:
        raise SystemExit(f"the run's {what} come from another encoder than stt_dir's: give this recipe a new run_dir")


@torch.no_grad()
def encoder_outputs(
    model: STTModel, fingerprint: str, items: list[Conversation], run: Path, progress: bool
) -> list[torch.Tensor]:
    """The frozen encoder's output (L, D) per conversation, float16, from the run's cache where it has them (cached
    for the encoder of `fingerprint`, `encoder_fingerprint(model)`)."""
    from tqdm import tqdm

    path = run / "encoded.pt"
    saved = torch.load(path) if path.exists() else {"encoder": fingerprint, "outputs": {}}
    _check_run(saved, fingerprint, "cached encoder outputs")
    cache: dict[str, torch.Tensor] = saved["outputs"]
    keys = [f"{source}:{u.id}" for source, u in items]  # ids repeat across corpora
    model.eval()
    missing = [i for i, k in enumerate(keys) if k not in cache]
    last_save = time.time()
    for i in tqdm(missing, desc="encoder", disable=not progress or not missing, mininterval=5):
        h, _ = model.encode(torch.from_numpy(items[i][1].mel.astype(np.float32))[None])
        cache[keys[i]] = h[0].half()
        if time.time() - last_save > 120:
            save_atomic(saved, path)
            last_save = time.time()
    if missing:
        save_atomic(saved, path)
    return [cache[k] for k in keys]


def _window(
    u: Utterance, h: torch.Tensor, length: int, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    start = int(rng.integers(0, max(1, len(h) - length + 1)))
    stop = start + length
    return h[start:stop].float(), torch.from_numpy(u.end[start:stop]), torch.from_numpy(u.speech[start:stop])


def batch_of_windows(
    items: list[Conversation], outputs: list[torch.Tensor], cfg: TurnTrainConfig, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random windows (B, W, D) of encoder outputs with their end and speech labels (B, W), NaN-padded."""
    chosen = [_window(items[i][1], outputs[i], cfg.window_frames, rng) for i in rng.integers(0, len(items), cfg.batch)]
    width = max(len(h) for h, _, _ in chosen)
    h = torch.zeros(len(chosen), width, chosen[0][0].shape[1])
    end = torch.full((len(chosen), width), float("nan"))
    speech = torch.full((len(chosen), width), float("nan"))
    for b, (x, e, s) in enumerate(chosen):
        h[b, : len(x)], end[b, : len(x)], speech[b, : len(x)] = x, e, s
    return h, end, speech


def _bce(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    known = ~torch.isnan(target)
    return F.binary_cross_entropy_with_logits(logits[known], target[known]) if known.any() else logits.sum() * 0.0


def head_curve(head: torch.nn.Linear, items: list[Conversation], outputs: list[torch.Tensor]) -> dict:
    """Head-alone turn metrics per end threshold on these conversations (`turn_curve`)."""
    with torch.no_grad():
        probs = [torch.sigmoid(head(h.float())).numpy() for h in outputs]
    return turn_curve([u for _, u in items], [(np.empty(0), p) for p in probs])


def train(cfg: TurnTrainConfig, progress: bool = True) -> Path:
    from tqdm import tqdm

    from sonare.stt.weights import load_model

    torch.set_num_threads(cfg.threads)
    run = Path(cfg.run_dir)
    run.mkdir(parents=True, exist_ok=True)
    model, _ = load_model(cfg.stt_dir)
    train_set, held_back = load_conversations(cfg)
    if not train_set:
        raise SystemExit("no training conversations in the sources (are their corpora built, features cached?)")
    fingerprint = encoder_fingerprint(model)
    outputs = encoder_outputs(model, fingerprint, train_set + held_back, run, progress)
    train_out, back_out = outputs[: len(train_set)], outputs[len(train_set) :]
    hours = sum(len(h) for h in train_out) * 0.04 / 3600
    print(f"turn: {len(train_set)} training conversations ({hours:.2f} h), {len(held_back)} held back")

    # A fresh head, seeded: the same recipe gives the same head whichever head the recogniser came with (the
    # problem is a logistic regression on fixed features, so the run converges from anywhere).
    torch.manual_seed(cfg.seed)
    head = model.turn = torch.nn.Linear(model.cfg.d_model, 2)
    opt = torch.optim.AdamW(head.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    ckpt_path = run / "checkpoint.pt"
    step = 0
    if ckpt_path.exists():
        ckpt = torch.load(ckpt_path, weights_only=False)
        _check_run(ckpt, fingerprint, "checkpoint's head and optimiser")
        head.load_state_dict(ckpt["head"])
        opt.load_state_dict(ckpt["optimizer"])
        step = ckpt["step"]

    def checkpoint() -> None:
        state = {"head": head.state_dict(), "optimizer": opt.state_dict(), "step": step, "encoder": fingerprint}
        save_atomic(state, ckpt_path)

    rng = np.random.default_rng([cfg.seed, step])
    torch.manual_seed(cfg.seed + step)
    log = open(run / "log.jsonl", "a")  # noqa: SIM115 - appended to for the whole run
    bar = tqdm(total=cfg.steps, initial=step, desc="turn head", disable=not progress, mininterval=5)
    t_ckpt = time.time()
    while step < cfg.steps:
        h, end, speech = batch_of_windows(train_set, train_out, cfg, rng)
        logits = head(F.dropout(h, cfg.dropout, training=True))
        parts = {"end": _bce(logits[..., TURN_END], end), "speech": _bce(logits[..., TURN_SPEECH], speech)}
        loss = cfg.end_weight * parts["end"] + cfg.speech_weight * parts["speech"]
        for group in opt.param_groups:
            group["lr"] = warmup_cosine(step, cfg.lr, cfg.warmup, cfg.steps, floor=0.02)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        bar.update(1)
        bar.set_postfix({k: f"{v.item():.3f}" for k, v in parts.items()}, refresh=False)
        if step % 50 == 0:
            log.write(json.dumps({"step": step, **{k: round(v.item(), 4) for k, v in parts.items()}}) + "\n")
        if (step % cfg.val_every == 0 or step == cfg.steps) and held_back:
            curve = head_curve(head, held_back, back_out)
            thresholds = turn_thresholds(curve, cfg.max_false_cutoff)
            at_end = curve[thresholds["end_threshold"]].as_dict()
            record = {"step": step, "thresholds": thresholds, "turns": {k: round(v, 4) for k, v in at_end.items()}}
            print(f"step {step}: " + json.dumps(record))
            log.write(json.dumps(record) + "\n")
            checkpoint()
            t_ckpt = time.time()
        elif time.time() - t_ckpt > cfg.checkpoint_minutes * 60:
            checkpoint()
            t_ckpt = time.time()
        log.flush()
    bar.close()
    checkpoint()
    return ckpt_path


def export(cfg: TurnTrainConfig, out_dir: str | os.PathLike, retune: bool = False) -> Path:
    """The recogniser of `stt_dir` with the trained head, its thresholds chosen on the held-back conversations;
    with `retune`, with its own head as it is (no run needed): its thresholds chosen anew, as after new
    conversations were built or the tracker's rules changed."""
    from safetensors.torch import save_file

    from sonare.stt.beam import BeamSettings
    from sonare.stt.lm import LM_FILE, WordLM
    from sonare.stt.weights import load_model
    from sonare.train.lm import tune_turn_thresholds

    torch.set_num_threads(cfg.threads)
    run = Path(cfg.run_dir)
    run.mkdir(parents=True, exist_ok=True)  # the cache of encoder outputs
    model, meta = load_model(cfg.stt_dir)
    fingerprint = encoder_fingerprint(model)
    if not retune:
        if not (run / "checkpoint.pt").exists():
            raise SystemExit(f"no checkpoint in {run}: train first, or --retune for stt_dir's own head")
        ckpt = torch.load(run / "checkpoint.pt", weights_only=False)
        _check_run(ckpt, fingerprint, "checkpoint's head")
        model.turn.load_state_dict(ckpt["head"])
        meta = {**meta, "turn_head_step": str(ckpt["step"])}
    _, held_back = load_conversations(cfg)
    if not held_back:
        raise SystemExit("no held-back conversations in the sources to choose the thresholds on")
    outputs = encoder_outputs(model, fingerprint, held_back, run, False)
    thresholds = turn_thresholds(head_curve(model.turn, held_back, outputs), cfg.max_false_cutoff)
    lm_path = Path(cfg.stt_dir) / LM_FILE
    lm = WordLM.load(lm_path) if lm_path.exists() else None
    if lm is not None:
        lm.unsure_end = cfg.unsure_end if cfg.unsure_end is not None else lm.unsure_end
        stt_cfg = STTTrainConfig(sources=cfg.sources, max_false_cutoff=cfg.max_false_cutoff, threads=cfg.threads)
        conversations = [u for _, u in held_back]
        with_words, _ = tune_turn_thresholds(model, lm, BeamSettings(**lm.decoding), conversations, stt_cfg)
        lm.end_threshold, lm.eager_threshold = with_words["end_threshold"], with_words["eager_threshold"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metadata = {**meta, **{k: str(v) for k, v in thresholds.items()}}
    weights = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(weights, out / "stt.safetensors", metadata=metadata)
    if lm is not None:
        lm.save(out / LM_FILE)
    with_words = (
        f", with the words end {lm.end_threshold}, eager {lm.eager_threshold}, unsure tier {lm.unsure_end}"
        if lm is not None
        else ""
    )
    print(f"turn: head thresholds {thresholds}{with_words}")
    return out
