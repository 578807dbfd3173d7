"""The streaming engine: slots of per-stream state, one inference thread, batched steps, admission."""

from sonare.engine.engine import Engine, EngineClosed, EngineFull, Stream, StreamFailed
from sonare.engine.metrics import EngineMetrics
from sonare.engine.model import Session, StreamingModel

__all__ = [
    "Engine",
    "EngineClosed",
    "EngineFull",
    "EngineMetrics",
    "Session",
    "Stream",
    "StreamFailed",
    "StreamingModel",
]
