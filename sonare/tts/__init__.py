"""Streaming text-to-speech: the acoustic model, the streaming vocoder, and the engine-facing session."""

from sonare.tts.weights import ASSET_DIR, builtin_voices, load_default

__all__ = ["ASSET_DIR", "builtin_voices", "load_default"]
