"""`sonare bench`: load over the real protocol, paced like real clients, measured as they see it.

TTS sessions send text word by word at a configurable rate (like an LLM's tokens) on
`/tts/websocket` and play the audio back in simulated real time: time to first audio, and underruns
(a chunk arriving after the playback buffer ran dry). STT sessions stream a clip in real time on
`/stt/websocket`, then finalize: time to the first partial and finalize-to-final latency. Sessions run
`--concurrency` at a time; the summary gives medians and percentiles.
"""

from __future__ import annotations

import asyncio
import base64
import json
import statistics
import time
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_TEXT = (
    "Thanks for calling. I can help you with your booking today, so let me look up the details "
    "and read them back to you."
)
STT_CHUNK_SECONDS = 0.1


@dataclass
class SessionResult:
    ok: bool
    error: str | None = None
    first_output_s: float | None = None  # TTS: first audio; STT: first partial
    final_s: float | None = None  # STT: finalize to final transcript
    audio_s: float = 0.0
    wall_s: float = 0.0
    underruns: int = 0


@dataclass
class BenchConfig:
    url: str  # ws://host:port
    mode: str = "tts"
    sessions: int = 8
    concurrency: int = 4
    api_key: str | None = None
    text: str = DEFAULT_TEXT
    voice: str | None = None
    sample_rate: int = 16000
    word_interval_s: float = 0.05
    clip: np.ndarray | None = None  # STT input, float32 mono at `sample_rate`


async def tts_session(cfg: BenchConfig) -> SessionResult:
    import websockets

    context = uuid.uuid4().hex
    base: dict[str, Any] = {
        "context_id": context,
        "model_id": "sonare",
        "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": cfg.sample_rate},
        "max_buffer_delay_ms": 0,
    }
    if cfg.voice:
        base["voice"] = {"mode": "id", "id": cfg.voice}
    started = time.monotonic()
    result = SessionResult(ok=False)
    async with websockets.connect(f"{cfg.url}/tts/websocket", additional_headers=_auth(cfg)) as ws:

        async def send_words() -> None:
            for word in cfg.text.split(" "):
                await ws.send(json.dumps(base | {"transcript": word + " ", "continue": True}))
                await asyncio.sleep(cfg.word_interval_s)
            await ws.send(json.dumps(base | {"transcript": "", "continue": False}))

        sender = asyncio.create_task(send_words())
        playback_ends = None  # when the simulated player runs out of audio
        async for raw in ws:
            frame = json.loads(raw)
            now = time.monotonic()
            if frame["type"] == "chunk":
                seconds = len(base64.b64decode(frame["data"])) / 2 / cfg.sample_rate
                if playback_ends is None:
                    result.first_output_s = now - started
                    playback_ends = now
                elif now > playback_ends:
                    result.underruns += 1
                playback_ends = max(playback_ends, now) + seconds
                result.audio_s += seconds
            elif frame["type"] == "error":
                result.error = f"{frame.get('status_code')} {frame.get('message')}"
                break
            elif frame["type"] == "done":
                result.ok = True
                break
        sender.cancel()
    result.wall_s = time.monotonic() - started
    return result


async def stt_session(cfg: BenchConfig) -> SessionResult:
    import websockets

    assert cfg.clip is not None
    query = f"model=sonare&encoding=pcm_s16le&sample_rate={cfg.sample_rate}"
    pcm = (np.clip(cfg.clip, -1, 1) * 32767).astype("<i2").tobytes()
    step = int(STT_CHUNK_SECONDS * cfg.sample_rate) * 2
    started = time.monotonic()
    result = SessionResult(ok=False, audio_s=len(cfg.clip) / cfg.sample_rate)
    async with websockets.connect(f"{cfg.url}/stt/websocket?{query}", additional_headers=_auth(cfg)) as ws:
        finalized_at: list[float] = []

        async def stream_audio() -> None:
            for i, offset in enumerate(range(0, len(pcm), step)):
                await ws.send(pcm[offset : offset + step])
                # real-time pacing against the clock, not against sleep drift
                await asyncio.sleep(max(0.0, started + (i + 1) * STT_CHUNK_SECONDS - time.monotonic()))
            finalized_at.append(time.monotonic())
            await ws.send("finalize")

        sender = asyncio.create_task(stream_audio())
        async for raw in ws:
            message = json.loads(raw)
            now = time.monotonic()
            if message["type"] == "transcript" and result.first_output_s is None:
                result.first_output_s = now - started
            elif message["type"] == "flush_done" and finalized_at:
                result.final_s = now - finalized_at[0]
                result.ok = True
                await ws.send("close")
            elif message["type"] == "error":
                result.error = f"{message.get('status_code')} {message.get('message')}"
                break
            elif message["type"] == "done":
                break
        sender.cancel()
    result.wall_s = time.monotonic() - started
    return result


async def run(cfg: BenchConfig) -> list[SessionResult]:
    from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

    gate = asyncio.Semaphore(cfg.concurrency)
    session = tts_session if cfg.mode == "tts" else stt_session

    async def one() -> SessionResult:
        async with gate:
            try:
                return await session(cfg)
            except InvalidStatus as exc:  # the handshake was answered with an HTTP status (429/503: refused)
                return SessionResult(ok=False, error=f"{exc.response.status_code} handshake refused")
            except ConnectionClosed as exc:  # 1013/1012/1001 are refusals; anything else a broken stream
                code = exc.rcvd.code if exc.rcvd else 1006
                return SessionResult(ok=False, error=f"close {code} {exc.rcvd.reason if exc.rcvd else ''}".strip())
            except (OSError, ValueError, WebSocketException) as exc:  # connection refused, bad frames
                return SessionResult(ok=False, error=f"{type(exc).__name__}: {exc}")

    return list(await asyncio.gather(*(one() for _ in range(cfg.sessions))))


def summarise(results: list[SessionResult], wall_s: float) -> dict[str, Any]:
    ok = [r for r in results if r.ok]
    summary: dict[str, Any] = {
        "sessions": len(results),
        "succeeded": len(ok),
        "errors": sorted({r.error for r in results if r.error}),
        "wall_s": round(wall_s, 3),
        "audio_s": round(sum(r.audio_s for r in ok), 3),
        "underruns": sum(r.underruns for r in ok),
    }
    for name in ("first_output_s", "final_s"):
        values = [getattr(r, name) for r in ok if getattr(r, name) is not None]
        if values:
            summary[name] = percentiles(values)
    return summary


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 4)

    return {"p50": round(statistics.median(ordered), 4), "p90": at(0.9), "p99": at(0.99), "max": at(1.0)}


def _auth(cfg: BenchConfig) -> dict[str, str]:
    return {"X-API-Key": cfg.api_key} if cfg.api_key else {}


def bench(cfg: BenchConfig) -> dict[str, Any]:
    t0 = time.monotonic()
    results = asyncio.run(run(cfg))
    return summarise(results, time.monotonic() - t0)
