"""Loading shipped STT weights (`safetensors`), offline, from the package or a model directory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sonare.stt.model import STTModel

ASSET_DIR = Path(__file__).resolve().parent.parent / "assets" / "stt"
WEIGHTS_NAME = "stt.safetensors"


def load_model(directory: str | os.PathLike) -> tuple[STTModel, dict[str, str]]:
    """The `STTModel` in `stt.safetensors` in `directory` as trained (nothing rounded), and the file's metadata
    (config, turn thresholds)."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    from sonare.stt.model import STTConfig, STTModel

    weights = Path(directory) / WEIGHTS_NAME
    with safe_open(str(weights), framework="pt") as f:
        meta = f.metadata()
    model = STTModel(STTConfig(**json.loads(meta["config"])))
    model.load_state_dict(load_file(str(weights)))
    return model, meta


def load_from(directory: str | os.PathLike, language_model: bool = True, step_seconds: float | None = None):
    """An `STTStreamingModel` for inference from `stt.safetensors` in `directory` (`load_model`), decoding with the
    word language model `lm.safetensors` when the directory has one (and `language_model`), else greedily (faster,
    less accurate). With the language model its words weigh in on ends of turn, and the thresholds tuned with
    them, when it has them, replace the acoustic model's. Its CPU inference multiplies by int8 roundings of the
    encoder's projections (`sonare.ssm.use_int8_projections`). A live stream gathers `step_seconds` of audio a step
    (default `sonare.stt.stream.STEP_SECONDS`)."""
    from sonare.ssm import use_int8_projections
    from sonare.stt.beam import BeamSettings
    from sonare.stt.lm import LM_FILE, WordLM
    from sonare.stt.stream import STEP_SECONDS, STTStreamingModel
    from sonare.stt.turns import sentence_end_tiers

    model, meta = load_model(directory)
    use_int8_projections(model)
    lm_path = Path(directory) / LM_FILE
    lm = WordLM.load(lm_path) if language_model and lm_path.exists() else None
    beam = BeamSettings(**lm.decoding) if lm is not None else None
    end = lm.end_threshold if lm is not None and lm.end_threshold is not None else float(meta["end_threshold"])
    eager = lm.eager_threshold if lm is not None and lm.eager_threshold is not None else float(meta["eager_threshold"])
    # An eager end is a hint before the end: never surer than the end threshold in effect.
    eager = min(eager, end)
    tiers = sentence_end_tiers(lm.unsure_end if lm is not None else None)
    step = STEP_SECONDS if step_seconds is None else step_seconds
    return STTStreamingModel(model, eager, end, lm, beam, step, tiers)


def load_default(
    model_dir: str | os.PathLike | None = None, language_model: bool = True, step_seconds: float | None = None
):
    """The STT model in `model_dir` (a server's model directory for this kind), by default the bundled one."""
    return load_from(model_dir or ASSET_DIR, language_model, step_seconds)
