"""The recogniser's word language model: `sonare train lm --config configs/lm-default.yaml --export DIR`.

1. Text, in spoken form (`sonare.text.normalize`, then the CTC alphabet's word rules): sentences from the
   project's generator (training split only: a held-out sentence never enters the model), the WordNet usage
   examples of the training split, and any text files of the team's own (one sentence per line: product
   names, domain phrases). Duplicates are kept: frequency is what the model learns.
2. An interpolated Kneser-Ney trigram model of it (`sonare.stt.lm`).
3. The beam search settings (LM weight, word bonus) tuned for one acoustic model, on the STT recipe's
   held-back training clips (never the held-out split): the grid point with the lowest WER.
4. The turn tracker's end and eager-end thresholds with the words weighing in (`sonare.stt.turns`: the
   sentence-end check holds ends and eager ends the head alone would declare), on the recipe's held-back
   conversations, by the acoustic recipe's rule (`sonare.train.stt.turn_thresholds`).

It writes `lm.safetensors` into the STT model directory; rerun it whenever the acoustic model changes, since
the best weights depend on how sure that model is of its letters.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sonare.recipe import read_recipe
from sonare.stt.beam import BeamDecoder, BeamSettings
from sonare.stt.decode import transcript
from sonare.stt.lm import LM_FILE, WordLM

if TYPE_CHECKING:
    from sonare.stt.dataset import Utterance
    from sonare.stt.model import STTModel
    from sonare.train.stt import STTTrainConfig


@dataclass
class LMTrainConfig:
    generated_sentences: int = 100_000
    # Lone answers ("Tuesday.", "42."; sonare.text.sentences' "answers" style) beside them: how often a turn is one
    # value and nothing else, which whole sentences never say.
    generated_answers: int = 0
    generated_words: int = 0  # lone words ("Umbrella.", the "words" style): a turn can be one word of any kind
    seed: int = 1
    wordnet: bool = True
    text_files: list[str] = field(default_factory=list)
    # How many times each line of text_files counts: a domain's few sentences among hundreds of thousands of
    # generated ones. Word triples seen once are dropped (`WordLM.train`), so a phrase must repeat to stay.
    text_repeat: int = 1
    discount: float = 0.75
    stt_recipe: str | None = "configs/stt-default.yaml"  # its held-back training clips tune the beam
    tune_clips: int = 100
    alphas: list[float] = field(default_factory=lambda: [0.5, 0.7, 0.9, 1.1])
    betas: list[float] = field(default_factory=lambda: [1.5, 3.0, 4.5, 6.0])
    beam: int = BeamSettings.beam
    margin: float = BeamSettings.margin

    @staticmethod
    def load(path: str | os.PathLike) -> LMTrainConfig:
        return LMTrainConfig(**read_recipe(path))


def training_text(cfg: LMTrainConfig) -> list[str]:
    """The model's sentences in spoken form."""
    from sonare.stt.vocab import written_to_spoken
    from sonare.text.corpus import corpus_sentences
    from sonare.text.sentences import generate_sentences, split_of

    sentences = generate_sentences(cfg.generated_sentences, seed=cfg.seed, split="train")
    if cfg.generated_answers:
        sentences += generate_sentences(cfg.generated_answers, seed=cfg.seed, split="train", style="answers")
    if cfg.generated_words:
        sentences += generate_sentences(cfg.generated_words, seed=cfg.seed, split="train", style="words")
    if cfg.wordnet:
        sentences += [s for s in corpus_sentences() if split_of(s) == "train"]
    for path in cfg.text_files:
        sentences += Path(path).read_text(encoding="utf-8").splitlines() * cfg.text_repeat
    spoken = (written_to_spoken(s) for s in sentences)
    return [s for s in spoken if s]


def tune(
    lm: WordLM, cfg: LMTrainConfig, stt_dir: str | os.PathLike
) -> tuple[BeamSettings, dict[str, float] | None, dict]:
    """The grid's best beam settings for the acoustic model in `stt_dir`, the turn thresholds with them (None
    without held-back conversations), and what was measured."""
    import torch

    from sonare.eval.wer import corpus_errors
    from sonare.stt.weights import load_from
    from sonare.train.stt import STTTrainConfig, greedy_text, load_data, model_outputs

    stt_cfg = STTTrainConfig.load(cfg.stt_recipe)
    _, val_sets = load_data(stt_cfg, Path(stt_cfg.run_dir))
    items = val_sets.get("val", [])[: cfg.tune_clips]
    if not items:
        raise FileNotFoundError(f"no held-back training clips from {cfg.stt_recipe} (is its corpus built?)")
    torch.set_num_threads(stt_cfg.threads)
    model = load_from(stt_dir).model
    logps = [logp for logp, _ in model_outputs(model, items, stt_cfg)]
    seconds = model.cfg.ctc_frame_seconds

    def wer(decode) -> float:
        return corpus_errors((u.text, decode(logp)) for u, logp in zip(items, logps, strict=True)).wer

    def greedy(logp) -> str:
        return greedy_text(logp, seconds)

    def beam_text(settings: BeamSettings):
        def decode(logp) -> str:
            return transcript(BeamDecoder(lm, settings, seconds), logp)

        return decode

    report = {"clips": len(items), "greedy_wer": round(wer(greedy), 4), "grid": []}
    best: tuple[float, BeamSettings] | None = None
    for alpha in cfg.alphas:
        for beta in cfg.betas:
            settings = BeamSettings(alpha=alpha, beta=beta, beam=cfg.beam, margin=cfg.margin)
            score = wer(beam_text(settings))
            report["grid"].append({"alpha": alpha, "beta": beta, "wer": round(score, 4)})
            print(f"LM: alpha {alpha} beta {beta}: held-back WER {score:.4f}")
            if best is None or score < best[0]:
                best = (score, settings)
    report["beam_wer"] = round(best[0], 4)
    thresholds = None
    if "val-turns" in val_sets:
        thresholds, report["turns"] = tune_turn_thresholds(model, lm, best[1], val_sets["val-turns"], stt_cfg)
    return best[1], thresholds, report


def tune_turn_thresholds(
    model: STTModel, lm: WordLM, settings: BeamSettings, items: list[Utterance], stt_cfg: STTTrainConfig
) -> tuple[dict[str, float], dict]:
    """The end and eager-end thresholds with the beam's sentence-end check weighing in (by the language model's
    tiers), on held-back conversations (`turn_thresholds`), and the metrics at each."""
    from sonare.stt.turns import sentence_end_tiers
    from sonare.train.stt import model_outputs, turn_curve, turn_thresholds

    seconds = model.cfg.ctc_frame_seconds
    outputs = model_outputs(model, items, stt_cfg)
    curve = turn_curve(items, outputs, lambda: BeamDecoder(lm, settings, seconds), sentence_end_tiers(lm.unsure_end))
    thresholds = turn_thresholds(curve, stt_cfg.max_false_cutoff)
    metrics = {name: {k: round(v, 4) for k, v in curve[t].as_dict().items()} for name, t in thresholds.items()}
    print(f"LM: thresholds with the words {thresholds} on {len(items)} held-back conversations: {metrics}")
    return thresholds, {"conversations": len(items), **thresholds, "metrics": metrics}


def train_lm(cfg: LMTrainConfig, out_dir: str | os.PathLike) -> Path:
    start = time.time()
    text = training_text(cfg)
    lm = WordLM.train(text, cfg.discount)
    print(f"LM: {len(text)} sentences, {len(lm.vocab)} words, {len(lm.trigrams)} trigrams kept")
    out = Path(out_dir) / LM_FILE
    previous = WordLM.load(out) if out.exists() else None
    # The middle sentence-end tier is chosen for the acoustic model's head (`sonare train turn`): it stays.
    lm.unsure_end = previous.unsure_end if previous is not None else None
    try:
        if not cfg.stt_recipe:
            raise FileNotFoundError("no stt_recipe to tune the beam with")
        settings, thresholds, report = tune(lm, cfg, out_dir)
        thresholds = thresholds or {}
        lm.end_threshold, lm.eager_threshold = thresholds.get("end_threshold"), thresholds.get("eager_threshold")
        print(f"LM: held-back WER greedy {report['greedy_wer']:.4f} -> beam {report['beam_wer']:.4f}")
    except FileNotFoundError as missing:
        # New words for a model whose beam was tuned before: the settings stay valid for a similar text.
        decoding = previous.decoding if previous is not None else {}
        settings = BeamSettings(**{**decoding, "beam": cfg.beam, "margin": cfg.margin})
        if previous is not None:
            lm.end_threshold, lm.eager_threshold = previous.end_threshold, previous.eager_threshold
        print(f"LM: not tuned ({missing}); keeping {'the previous' if decoding else 'default'} beam settings")
    lm.decoding = asdict(settings)
    lm.save(out)
    print(f"LM: wrote {out} in {time.time() - start:.0f} s")
    return out
