"""`sonare bench`: load over the real protocol, paced like real clients, measured as they see it.

TTS sessions send text word by word at a configurable rate (like an LLM's tokens) on `/tts/websocket` and
play the audio back in simulated real time: time to first audio (from the first text sent on the open socket,
as a client that keeps its socket open sees each request; the handshake is reported apart as `connect_s`),
and underruns (a chunk arriving after the playback buffer ran dry). STT sessions stream a clip in real time
on `/stt/websocket`, then finalize: time to the first partial and finalize-to-final latency. Sessions run
`--concurrency` at a time; the summary gives medians and percentiles, the gaps between audio chunks and
the real-time factor (wall time over audio time, text pacing included). `sweep` repeats the run at rising
concurrency and finds the knee: the highest level at which every session succeeds with no underrun."""

from __future__ import annotations

import asyncio
import base64
import csv
import json
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from sonare.eval.latency import percentiles

DEFAULT_TEXT = (
    "Thanks for calling. I can help you with your booking today, so let me look up the details "
    "and read them back to you."
)
STT_CHUNK_SECONDS = 0.1


@dataclass
class SessionResult:
    ok: bool
    error: str | None = None
    first_output_s: float | None = None  # TTS: first text sent to first audio; STT: first partial
    connect_s: float | None = None  # WebSocket handshake (clients keep a socket open across requests)
    final_s: float | None = None  # STT: finalize to final transcript
    audio_s: float = 0.0
    wall_s: float = 0.0
    underruns: int = 0
    gaps: list[float] = field(default_factory=list)  # TTS: seconds between consecutive audio chunks


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
    opened = time.monotonic()
    result = SessionResult(ok=False)
    async with websockets.connect(f"{cfg.url}/tts/websocket", additional_headers=_auth(cfg)) as ws:
        started = time.monotonic()  # the request: the first text goes out now
        result.connect_s = started - opened

        async def send_words() -> None:
            for word in cfg.text.split(" "):
                await ws.send(json.dumps(base | {"transcript": word + " ", "continue": True}))
                await asyncio.sleep(cfg.word_interval_s)
            await ws.send(json.dumps(base | {"transcript": "", "continue": False}))

        sender = asyncio.create_task(send_words())
        playback_ends = None  # when the simulated player runs out of audio
        last_chunk = started
        async for raw in ws:
            frame = json.loads(raw)
            now = time.monotonic()
            if frame["type"] == "chunk":
                seconds = len(base64.b64decode(frame["data"])) / 2 / cfg.sample_rate
                if playback_ends is None:
                    result.first_output_s = now - started
                    playback_ends = now
                else:
                    result.gaps.append(now - last_chunk)
                    if now > playback_ends:
                        result.underruns += 1
                last_chunk = now
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
    gaps = [g for r in ok for g in r.gaps]
    if gaps:
        summary["chunk_gap_s"] = _rounded_percentiles(gaps)
    rtf = [r.wall_s / r.audio_s for r in ok if r.audio_s > 0]
    if rtf:
        summary["rtf"] = _rounded_percentiles(rtf)
    for name in ("first_output_s", "final_s", "connect_s"):
        values = [getattr(r, name) for r in ok if getattr(r, name) is not None]
        if values:
            summary[name] = _rounded_percentiles(values)
    return summary


def _rounded_percentiles(values: list[float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in percentiles(values).items()}


def _auth(cfg: BenchConfig) -> dict[str, str]:
    return {"X-API-Key": cfg.api_key} if cfg.api_key else {}


def bench(cfg: BenchConfig) -> dict[str, Any]:
    t0 = time.monotonic()
    results = asyncio.run(run(cfg))
    return summarise(results, time.monotonic() - t0)


def sweep(cfg: BenchConfig, levels: list[int], rounds: int = 2) -> dict[str, Any]:
    """The same load at each concurrency level (level x rounds sessions each); the knee is the highest level
    before the first one with a failed session or an underrun."""
    rows = []
    for level in levels:
        summary = bench(replace(cfg, concurrency=level, sessions=level * rounds))
        rows.append({"concurrency": level, **summary})
    knee = None
    for row in rows:
        if row["succeeded"] < row["sessions"] or row["underruns"]:
            break
        knee = row["concurrency"]
    return {"mode": cfg.mode, "knee": knee, "levels": rows}


CSV_COLUMNS = ("concurrency", "sessions", "succeeded", "underruns", "first_p50", "first_p95", "first_p99")
CSV_COLUMNS += ("final_p50", "final_p95", "gap_p95", "rtf_p50")


def csv_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    def get(row: dict, key: str, q: str) -> float | str:
        return row.get(key, {}).get(q, "")

    return [
        {
            "concurrency": row["concurrency"],
            "sessions": row["sessions"],
            "succeeded": row["succeeded"],
            "underruns": row["underruns"],
            "first_p50": get(row, "first_output_s", "p50"),
            "first_p95": get(row, "first_output_s", "p95"),
            "first_p99": get(row, "first_output_s", "p99"),
            "final_p50": get(row, "final_s", "p50"),
            "final_p95": get(row, "final_s", "p95"),
            "gap_p95": get(row, "chunk_gap_s", "p95"),
            "rtf_p50": get(row, "rtf", "p50"),
        }
        for row in result["levels"]
    ]


def write_csv(result: dict[str, Any], path: str | Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(csv_rows(result))


def write_svg(result: dict[str, Any], path: str | Path) -> None:
    """A plain SVG chart: first-output latency p50 and p95 (ms) against concurrency, the knee marked."""
    rows = [r for r in csv_rows(result) if r["first_p50"] != ""]
    width, height, pad = 640, 360, 50
    levels = [r["concurrency"] for r in rows] or [1]
    top = max([r["first_p95"] for r in rows] + [0.001]) * 1000 * 1.1

    def x(level: float) -> float:
        return pad + (level - min(levels)) / max(1, max(levels) - min(levels)) * (width - 2 * pad)

    def y(ms: float) -> float:
        return height - pad - ms / top * (height - 2 * pad)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">concurrent sessions</text>',
        f'<text x="14" y="{pad - 14}">first {"audio" if result["mode"] == "tts" else "partial"} (ms)</text>',
        f'<text x="{pad - 6}" y="{y(top) + 4:.1f}" text-anchor="end">{top:.0f}</text>',
    ]
    for level in levels:
        parts.append(f'<text x="{x(level):.1f}" y="{height - pad + 16}" text-anchor="middle">{level}</text>')
    for key, colour in (("first_p50", "#1f77b4"), ("first_p95", "#d62728")):
        points = " ".join(f"{x(r['concurrency']):.1f},{y(r[key] * 1000):.1f}" for r in rows)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        label_y = pad + (0 if key == "first_p50" else 16)
        parts.append(f'<text x="{width - pad}" y="{label_y}" fill="{colour}" text-anchor="end">{key[6:]}</text>')
    if result["knee"] is not None:
        kx = x(result["knee"])
        parts.append(
            f'<line x1="{kx:.1f}" y1="{pad}" x2="{kx:.1f}" y2="{height - pad}" stroke="gray" stroke-dasharray="4"/>'
        )
        parts.append(f'<text x="{kx + 4:.1f}" y="{pad + 32}" fill="gray">knee ({result["knee"]})</text>')
    parts.append("</svg>")
    Path(path).write_text("\n".join(parts) + "\n")
