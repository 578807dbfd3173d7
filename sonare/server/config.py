"""Server configuration: one dataclass, filled from flags, `SONARE_*` environment variables and an
optional YAML or TOML file, in that order of precedence, over built-in defaults.

Inside a SageMaker container (detected from its environment or `/opt/ml/model`) the container
contract supplies the defaults instead: listen on 0.0.0.0 at `SAGEMAKER_BIND_TO_PORT` or 8080, load
models from `SM_MODEL_DIR` or `/opt/ml/model`, and trust SageMaker's own request authentication.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ENV_PREFIX = "SONARE_"
# Past a few hundred ms a gathered step delays partials and ends of turn more than it saves (docs/benchmarks.md).
MAX_STT_STEP_MS = 500
SAGEMAKER_MODEL_DIR = Path("/opt/ml/model")


class ConfigError(ValueError):
    """The configuration is invalid or unsafe; the message says which setting and why."""


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    # Accepted API keys. Empty means open: any credential, or none, is accepted.
    api_keys: tuple[str, ...] = ()
    # Set when an authenticating proxy sits in front, so listening publicly without keys is safe.
    behind_proxy: bool = False
    sagemaker: bool = False
    data_dir: Path = field(default_factory=lambda: Path.home() / ".local" / "share" / "sonare")
    model_dir: Path | None = None
    # Modules providing `load_default(model_dir=None)` (and, for TTS, `builtin_voices()`); "" disables one.
    tts_module: str = "sonare.tts"
    stt_module: str = "sonare.stt"
    tts_slots: int = 64
    stt_slots: int = 64
    # Audio a live STT stream gathers before each step (its base step; inside a turn half of it in a silence, and
    # twice it while the speaker talks when a step takes few streams), less compute for a little latency; None: the
    # recogniser's own
    # (`sonare.stt.stream.STEP_SECONDS`, 80 ms); 0 hears every chunk as it comes.
    stt_step_ms: int | None = None
    max_batch: int = 64
    threads: int | None = None  # intra-op threads of the inference thread; default: all cores but one
    # Seconds a SIGTERM waits for in-flight streams before the process exits.
    drain_timeout: float = 30.0
    log_level: str = "info"
    log_format: str = "json"  # json | text
    # Input limits that keep one client from exhausting the server.
    max_transcript_chars: int = 20_000
    max_upload_bytes: int = 50 * 1024 * 1024
    max_ws_message_bytes: int = 4 * 1024 * 1024
    ws_idle_timeout: float = 600.0
    # TTS text buffering when a request does not set max_buffer_delay_ms (the Cartesia default).
    default_buffer_delay_ms: int = 3000
    default_voice: str | None = None
    retry_after_s: int = 1

    def model_options(self, kind: str) -> dict[str, Any]:
        """Keyword arguments this configuration adds to model kind `kind`'s `load_default`."""
        if kind == "stt" and self.stt_step_ms is not None:
            return {"step_seconds": self.stt_step_ms / 1000}
        return {}

    def validate(self) -> None:
        if not 0 < self.port < 65536:
            raise ConfigError(f"port must be 1-65535, not {self.port}")
        for name in ("tts_slots", "stt_slots", "max_batch", "max_transcript_chars", "max_upload_bytes"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1")
        if self.stt_step_ms is not None and not 0 <= self.stt_step_ms <= MAX_STT_STEP_MS:
            raise ConfigError(f"stt_step_ms must be 0-{MAX_STT_STEP_MS}")
        if self.drain_timeout < 0:
            raise ConfigError("drain_timeout must not be negative")
        if self.log_format not in ("json", "text"):
            raise ConfigError("log_format must be 'json' or 'text'")
        if not 0 <= self.default_buffer_delay_ms <= 5000:
            raise ConfigError("default_buffer_delay_ms must be 0-5000")
        if any(not key for key in self.api_keys):
            raise ConfigError("api_keys must not contain empty keys")
        if not self.api_keys and not self.behind_proxy and not self.sagemaker and not is_loopback(self.host):
            raise ConfigError(
                f"refusing to listen on {self.host} without API keys: set api_keys (SONARE_API_KEYS or "
                "--api-key), or behind_proxy (--behind-proxy) if an authenticating proxy fronts the server"
            )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def in_sagemaker(env: Mapping[str, str]) -> bool:
    return "SAGEMAKER_BIND_TO_PORT" in env or "SM_MODEL_DIR" in env or SAGEMAKER_MODEL_DIR.is_dir()


def load_config(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_file: str | os.PathLike | None = None,
) -> ServerConfig:
    """Merge the sources (flags > environment > file > SageMaker defaults > built-in defaults).

    `flags` holds only the options the user actually gave (None values are ignored). The file comes
    from `config_file`, else `SONARE_CONFIG`.
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    if in_sagemaker(env):
        values.update(
            sagemaker=True,
            host="0.0.0.0",
            port=env.get("SAGEMAKER_BIND_TO_PORT", "8080"),
            model_dir=env.get("SM_MODEL_DIR", str(SAGEMAKER_MODEL_DIR)),
        )
    path = config_file or env.get(ENV_PREFIX + "CONFIG")
    if path:
        values.update(_read_file(Path(path)))
    for f in dataclasses.fields(ServerConfig):
        if ENV_PREFIX + f.name.upper() in env:
            values[f.name] = env[ENV_PREFIX + f.name.upper()]
    values.update({k: v for k, v in (flags or {}).items() if v is not None})
    config = ServerConfig(**{k: _coerce(k, v) for k, v in values.items()})
    config.validate()
    return config


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"config file {path} is not valid: {exc}") from exc
    data = data.get("server", data) if isinstance(data, dict) else data
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of settings")
    return data


_FIELD_TYPES = typing.get_type_hints(ServerConfig)


def _coerce(name: str, value: Any) -> Any:
    """Turn a string (environment) or parsed value (file) into the field's type."""
    if name not in _FIELD_TYPES:
        raise ConfigError(f"unknown setting {name!r}")
    kind = _FIELD_TYPES[name]
    optional = type(None) in typing.get_args(kind)
    if optional:
        if value is None or value == "":
            return None
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    try:
        if kind is bool:
            if isinstance(value, str):
                if value.lower() not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
                    raise ValueError(value)
                return value.lower() in ("1", "true", "yes", "on")
            return bool(value)
        if kind in (int, float):
            if isinstance(value, bool):
                raise ValueError(value)
            return kind(value)
        if kind is Path:
            return Path(value).expanduser()
        if typing.get_origin(kind) is tuple:
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(str(item).strip() for item in items if str(item).strip())
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name!r}: cannot use {value!r} as {kind}") from exc
