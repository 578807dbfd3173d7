"""Parsing TTS generation requests (WebSocket messages and HTTP bodies) into checked values.

Unknown fields are ignored (clients add fields over time); known fields of the wrong type or out of
range are refused with a message naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sonare.server.audio_out import (
    CONTAINERS,
    ENCODINGS,
    MAX_RATE,
    MIN_RATE,
    MP3_BIT_RATES,
    MP3_RATES,
    OutputFormat,
)
from sonare.server.errors import ApiError, invalid
from sonare.tts.messages import SynthesisOptions, VoiceSpec
from sonare.voices.library import VoiceLibrary

# The deprecated `speed` presets of older API versions.
SPEED_PRESETS = {"slowest": 0.6, "slow": 0.8, "normal": 1.0, "fast": 1.25, "fastest": 1.5}
SPEED_RANGE = (0.5, 2.0)
VOLUME_RANGE = (0.0, 2.0)
MAX_EMBEDDING = 4096
MAX_CONTEXT_ID = 256


@dataclass(frozen=True)
class VoiceRef:
    id: str | None = None
    embedding: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Control:
    """The per-message part of a request: what to do with a context."""

    context_id: str | None
    transcript: str
    more: bool  # `continue`
    flush: bool
    cancel: bool


@dataclass(frozen=True)
class Settings:
    """What the first message of a context (or an HTTP request) fixes for the whole utterance."""

    voice: VoiceRef | None
    output_format: OutputFormat
    language: str
    speed: float
    volume: float
    add_timestamps: bool
    max_buffer_delay_ms: int | None


def parse_control(msg: Any, max_chars: int) -> Control:
    if not isinstance(msg, Mapping):
        raise invalid("each message must be a JSON object")
    context_id = _optional(msg, "context_id", str)
    if context_id is not None and not 0 < len(context_id) <= MAX_CONTEXT_ID:
        raise invalid(f"context_id must be 1-{MAX_CONTEXT_ID} characters")
    transcript = _optional(msg, "transcript", str) or ""
    if len(transcript) > max_chars:
        raise invalid(f"transcript is longer than {max_chars} characters")
    return Control(
        context_id=context_id,
        transcript=transcript,
        more=bool(_optional(msg, "continue", bool)),
        flush=bool(_optional(msg, "flush", bool)),
        cancel=bool(_optional(msg, "cancel", bool)),
    )


def parse_settings(msg: Mapping[str, Any], containers: tuple[str, ...] = CONTAINERS) -> Settings:
    _optional(msg, "model_id", str)  # every model id maps to the loaded model, but it must be a string
    config = _optional(msg, "generation_config", Mapping) or {}
    speed = _speed(msg, config)
    volume = _optional(config, "volume", float, "generation_config.volume")
    if volume is not None and not VOLUME_RANGE[0] <= volume <= VOLUME_RANGE[1]:
        raise invalid(f"generation_config.volume must be between {VOLUME_RANGE[0]} and {VOLUME_RANGE[1]}")
    delay = _optional(msg, "max_buffer_delay_ms", int)
    if delay is not None and not 0 <= delay <= 5000:
        raise invalid("max_buffer_delay_ms must be between 0 and 5000")
    return Settings(
        voice=_voice(msg.get("voice")),
        output_format=_output_format(msg.get("output_format"), containers),
        language=_language(msg),
        speed=speed,
        volume=1.0 if volume is None else volume,
        add_timestamps=bool(_optional(msg, "add_timestamps", bool)),
        max_buffer_delay_ms=delay,
    )


def synthesis_options(
    settings: Settings, voices: VoiceLibrary, default_voice: Callable[[], VoiceSpec]
) -> SynthesisOptions:
    """Resolve the voice against the library and build the model's options."""
    ref = settings.voice
    if ref is None:
        spec = default_voice()
    elif ref.id is not None:
        voice = voices.get(ref.id)
        if voice is None:
            raise ApiError(404, "voice_not_found", f"no voice with id {ref.id!r}", title="Voice not found")
        spec = VoiceSpec(id=voice.id, embedding=tuple(voice.embedding.tolist()))
    else:
        assert ref.embedding is not None
        if voices.embedding_dim is not None and len(ref.embedding) != voices.embedding_dim:
            expected, given = voices.embedding_dim, len(ref.embedding)
            raise invalid(f"voice.embedding must have {expected} values for this model, not {given}")
        spec = VoiceSpec(embedding=ref.embedding)
    return SynthesisOptions(
        voice=spec,
        language=settings.language,
        speed=settings.speed,
        volume=settings.volume,
        word_timestamps=settings.add_timestamps,
    )


# -- fields -----------------------------------------------------------------------------------------------


def _optional(msg: Mapping[str, Any], key: str, kind: type, label: str | None = None) -> Any:
    """The value of `key` checked against `kind`, or None when absent or null. JSON numbers: an int is
    accepted where a float is expected, a float with no fraction where an int is, a bool for neither."""
    value = msg.get(key)
    if value is None:
        return None
    label = label or key
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise invalid(f"{label} must be a number")
        return float(value)
    if kind is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(f"{label} must be an integer")
        return value
    if not isinstance(value, kind):
        raise invalid(f"{label} must be {_KIND_NAMES.get(kind, kind.__name__)}")
    return value


_KIND_NAMES = {str: "a string", bool: "true or false", Mapping: "an object", list: "a list"}


def _speed(msg: Mapping[str, Any], config: Mapping[str, Any]) -> float:
    speed = _optional(config, "speed", float, "generation_config.speed")
    if speed is None:
        preset = msg.get("speed")
        if preset is None:
            return 1.0
        if isinstance(preset, str):
            if preset.lower() not in SPEED_PRESETS:
                raise invalid(f"speed must be one of {', '.join(SPEED_PRESETS)}")
            return SPEED_PRESETS[preset.lower()]
        speed = _optional(msg, "speed", float)
    if not SPEED_RANGE[0] <= speed <= SPEED_RANGE[1]:
        raise invalid(f"speed must be between {SPEED_RANGE[0]} and {SPEED_RANGE[1]}")
    return speed


def _voice(value: Any) -> VoiceRef | None:
    if value is None:
        return None
    if isinstance(value, str):
        if not value:
            raise invalid("voice id must not be empty")
        return VoiceRef(id=value)
    if not isinstance(value, Mapping):
        raise invalid("voice must be an id string or an object")
    mode = value.get("mode", "embedding" if "embedding" in value and "id" not in value else "id")
    if mode == "id":
        voice_id = value.get("id")
        if not isinstance(voice_id, str) or not voice_id:
            raise invalid("voice.id must be a non-empty string")
        return VoiceRef(id=voice_id)
    if mode == "embedding":
        embedding = value.get("embedding")
        if not isinstance(embedding, list) or not 0 < len(embedding) <= MAX_EMBEDDING:
            raise invalid(f"voice.embedding must be a list of 1-{MAX_EMBEDDING} numbers")
        if any(isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x) for x in embedding):
            raise invalid("voice.embedding must hold only finite numbers")
        return VoiceRef(embedding=tuple(float(x) for x in embedding))
    raise invalid("voice.mode must be 'id' or 'embedding'")


def _output_format(value: Any, containers: tuple[str, ...]) -> OutputFormat:
    if not isinstance(value, Mapping):
        raise invalid("output_format is required: {container, encoding, sample_rate}")
    container = value.get("container", "raw")
    if container not in containers:
        raise invalid(f"output_format.container must be one of {', '.join(containers)}")
    rate = _optional(value, "sample_rate", int, "output_format.sample_rate")
    if rate is None:
        raise invalid("output_format.sample_rate is required")
    if container == "mp3":
        if rate not in MP3_RATES:
            raise invalid(f"output_format.sample_rate for mp3 must be one of {', '.join(map(str, MP3_RATES))}")
        bit_rate = _optional(value, "bit_rate", int, "output_format.bit_rate") or 128000
        if bit_rate not in MP3_BIT_RATES:
            raise invalid(f"output_format.bit_rate must be one of {', '.join(map(str, MP3_BIT_RATES))}")
        return OutputFormat("mp3", "pcm_s16le", rate, bit_rate)
    if not MIN_RATE <= rate <= MAX_RATE:
        raise invalid(f"output_format.sample_rate must be between {MIN_RATE} and {MAX_RATE}")
    encoding = value.get("encoding")
    if encoding not in ENCODINGS:
        raise invalid(f"output_format.encoding must be one of {', '.join(ENCODINGS)}")
    return OutputFormat(container, encoding, rate)


def _language(msg: Mapping[str, Any]) -> str:
    """ISO-639-1 from `language` (regional tags like en-US reduced to the base) or `locale`."""
    value = _optional(msg, "language", str) or _optional(msg, "locale", str) or "en"
    base = value.replace("_", "-").split("-")[0].lower()
    if not base.isalpha() or not 2 <= len(base) <= 3:
        raise invalid(f"language {value!r} is not an ISO-639 code")
    return base
