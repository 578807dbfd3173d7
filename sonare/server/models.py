"""Which models the server runs and where they come from.

A model kind ("tts", "stt") is provided by a module exposing `load_default(model_dir=None, **options)`, which
returns a `StreamingModel`; the options are those the configuration sets for its kind (`ServerConfig.model_options`).
The TTS module also exposes `builtin_voices(model_dir=None)`, a list of dicts {id, name, description, gender,
language, embedding}. The modules are imported lazily and a missing one (not installed yet, no weights) is logged
and skipped: its routes answer 503 and the rest serve.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sonare.engine import StreamingModel
from sonare.server.config import ServerConfig

log = logging.getLogger(__name__)


@dataclass
class LoadedModels:
    models: dict[str, StreamingModel] = field(default_factory=dict)
    builtin_voices: list[dict[str, Any]] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # kind -> why it is not available


def model_sources(config: ServerConfig) -> dict[str, str]:
    """kind -> module name, for the kinds this configuration enables."""
    return {kind: module for kind, module in (("tts", config.tts_module), ("stt", config.stt_module)) if module}


def load_models(config: ServerConfig) -> LoadedModels:
    loaded = LoadedModels()
    for kind, module_name in model_sources(config).items():
        try:
            module = importlib.import_module(module_name)
            model_dir = _model_dir(config.model_dir, kind)
            where = {} if model_dir is None else {"model_dir": model_dir}
            model = module.load_default(**where, **config.model_options(kind))
            if kind == "tts":
                loaded.builtin_voices = list(module.builtin_voices(**where))
        except (ImportError, AttributeError, FileNotFoundError, OSError) as exc:
            loaded.missing[kind] = f"{type(exc).__name__}: {exc}"
            log.warning("no %s model: %s could not be loaded (%s); its routes answer 503", kind, module_name, exc)
            continue
        loaded.models[kind] = model
        log.info("loaded %s model %s from %s", kind, getattr(model, "name", "?"), module_name)
    for kind in ("tts", "stt"):
        if kind not in loaded.models and kind not in loaded.missing:
            loaded.missing[kind] = "disabled in the configuration"
    return loaded


def _model_dir(root: Path | None, kind: str) -> Path | None:
    """A model directory (e.g. SageMaker's /opt/ml/model) holds one subdirectory per kind, or one model."""
    if root is None or not root.is_dir():
        return None
    return root / kind if (root / kind).is_dir() else root
