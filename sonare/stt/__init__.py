"""Streaming speech-to-text with native end-of-turn detection (see sonare/stt/model.py and stream.py)."""

from sonare.stt.weights import load_default, load_from

__all__ = ["load_default", "load_from"]
