"""Loading shipped TTS weights (`safetensors`) and the built-in voices, offline, from the package or a model dir."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

ASSET_DIR = Path(__file__).resolve().parent.parent / "assets" / "tts"


def builtin_voices(model_dir: str | os.PathLike | None = None) -> list[dict]:
    """The voices shipped with the weights: {id, name, description, gender, language, embedding}."""
    return json.loads((Path(model_dir or ASSET_DIR) / "voices.json").read_text())["voices"]


def load_default(model_dir: str | os.PathLike | None = None):
    """A `TTSStreamingModel` from `tts.safetensors` + `voices.json` in `model_dir` (default: the bundled ones),
    rendering through the neural refiner when the directory has one (`refiner.safetensors`): it is trained on
    one teacher's audio, so a model trained on other recordings ships without it."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    from sonare.tts.model import TTSConfig, TTSModel
    from sonare.tts.refiner import load_refined_vocoder
    from sonare.tts.stream import TTSStreamingModel

    directory = Path(model_dir or ASSET_DIR)
    weights = directory / "tts.safetensors"
    with safe_open(str(weights), framework="pt") as f:
        config = TTSConfig(**json.loads(f.metadata()["config"]))
    model = TTSModel(config)
    missing, unexpected = model.load_state_dict(load_file(str(weights)), strict=False)
    if unexpected or [k for k in missing if not k.startswith("speakers.")]:
        raise ValueError(f"{weights} does not match the model: missing {missing}, unexpected {unexpected}")
    meta = json.loads((directory / "voices.json").read_text())
    voices = {v["id"]: torch.tensor(v["embedding"], dtype=torch.float32) for v in meta["voices"]}
    refiner = directory / "refiner.safetensors"
    vocoder = load_refined_vocoder(refiner) if refiner.exists() else None
    return TTSStreamingModel(model, voices, meta["default"], vocoder)
