"""One admitted TTS stream turned into protocol-level output: encoded audio, word timestamps and flush
acknowledgements, with flush ids, step times and the server's audio metrics. Every TTS transport
(WebSocket, bytes, SSE, SageMaker) reads its output through this."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from sonare.engine import Stream, StreamFailed
from sonare.server.audio_out import AudioOutput, OutputFormat, split_frames
from sonare.server.metrics import ServerMetrics
from sonare.server.service import stream_error
from sonare.tts.messages import AudioChunk, FlushDone, WordTimestamps

# Keeps each base64 WebSocket frame far below the 1 MiB that websockets clients accept.
MAX_CHUNK_BYTES = 32768


@dataclass
class Audio:
    data: bytes
    flush_id: int
    step_time_ms: float  # wall time the server spent producing this audio since the previous output


@dataclass
class Timestamps:
    words: list[str]
    start: list[float]
    end: list[float]
    flush_id: int


@dataclass
class FlushAck:
    flush_id: int


Output = Audio | Timestamps | FlushAck


class Synthesis:
    def __init__(
        self,
        stream: Stream,
        fmt: OutputFormat,
        metrics: ServerMetrics,
        route: str,
        started: float,
        timestamps: bool,
    ):
        self.stream = stream
        self.timestamps = timestamps  # the client asked for word timestamps
        self.audio = AudioOutput(fmt)
        self._metrics = metrics
        self._route = route
        self._started = started  # monotonic time the client asked for this speech
        self._first_audio = False
        self._flushes_done = 0
        self._seconds_counted = 0.0

    async def outputs(self) -> AsyncIterator[Output]:
        """Outputs in order; raises ApiError if the stream fails. The caller cancels the stream when done."""
        last = self._started
        try:
            async for event in self.stream:
                if isinstance(event, AudioChunk):
                    data = self.audio.push(event.pcm, event.sample_rate)
                    if data:
                        now = time.monotonic()
                        for piece in self._audio(data, (now - last) * 1000.0):
                            yield piece
                        last = now
                elif isinstance(event, WordTimestamps):
                    if event.words and self.timestamps:
                        yield Timestamps(list(event.words), list(event.start), list(event.end), self._flushes_done + 1)
                elif isinstance(event, FlushDone):
                    self._flushes_done = max(self._flushes_done, event.flush_id)
                    yield FlushAck(event.flush_id)
        except StreamFailed as exc:
            raise stream_error(exc) from exc
        tail = self.audio.finish()
        if tail:
            for piece in self._audio(tail, (time.monotonic() - last) * 1000.0):
                yield piece

    def _audio(self, data: bytes, step_time_ms: float) -> list[Audio]:
        if not self._first_audio:
            self._first_audio = True
            self._metrics.ttfa_seconds.labels(self._route).observe(time.monotonic() - self._started)
        self._metrics.audio_out_seconds.labels(self._route).inc(self.audio.seconds_out - self._seconds_counted)
        self._seconds_counted = self.audio.seconds_out
        # mp3 frames may be cut anywhere; PCM only between samples
        width = 1 if self.audio.format.container == "mp3" else self.audio.format.bytes_per_sample
        flush_id = self._flushes_done + 1
        return [Audio(piece, flush_id, step_time_ms) for piece in split_frames(data, MAX_CHUNK_BYTES, width)]
