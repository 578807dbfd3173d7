#!/usr/bin/env python3
"""Streaming TTS over a Sonare SageMaker endpoint's bidirectional stream: text in as it is written, audio out.

`InvokeEndpointWithBidirectionalStream` (HTTP/2, port 8443) reaches the container's WebSocket
`/invocations-bidirectional-stream`; each request PayloadPart becomes one WebSocket message and each
message back one response PayloadPart. The messages are the Cartesia TTS WebSocket protocol (a query
`protocol=stt` or `protocol=stt-turns` selects the STT ones instead).

Needs Python 3.12+ and `pip install aws-sdk-sagemaker-runtime-http2` (AWS's HTTP/2 SDK; boto3 has no
bidirectional streams). Credentials come from the environment as for any AWS SDK.

    python deploy/sagemaker/client_bidirectional.py --endpoint sonare --region us-east-1 \\
        --text "Thanks for calling, how can I help?" --out reply.wav
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import time
import uuid
import wave
from dataclasses import dataclass, field


def context_messages(text: str, sample_rate: int = 24000, voice: str | None = None) -> list[str]:
    """One TTS context: the text word by word (as an LLM produces it), then the end of input."""
    base: dict = {
        "context_id": uuid.uuid4().hex,
        "model_id": "sonare",
        "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": sample_rate},
        "max_buffer_delay_ms": 0,
    }
    if voice:
        base["voice"] = {"mode": "id", "id": voice}
    words = [base | {"transcript": word + " ", "continue": True} for word in text.split()]
    return [json.dumps(m) for m in [*words, base | {"transcript": "", "continue": False}]]


@dataclass
class TtsFrames:
    """Reads the server's JSON messages for one context: audio chunks, then `done` (or an error)."""

    started: float = field(default_factory=time.monotonic)
    pcm: bytearray = field(default_factory=bytearray)
    first_audio_s: float | None = None
    done: bool = False
    error: str | None = None

    def feed(self, message: bytes | str) -> None:
        frame = json.loads(message)
        if frame["type"] == "chunk":
            if self.first_audio_s is None:
                self.first_audio_s = time.monotonic() - self.started
            self.pcm += base64.b64decode(frame["data"])
        elif frame["type"] == "error":
            # 429 (every slot busy) and 503 (instance draining) are refusals before any audio: retry.
            self.error = f"{frame.get('status_code')} {frame.get('message')}"
            self.done = True
        elif frame["type"] == "done":
            self.done = True


async def speak(endpoint: str, region: str, text: str, voice: str | None, sample_rate: int, word_interval: float):
    from aws_sdk_sagemaker_runtime_http2.client import SageMakerRuntimeHTTP2Client
    from aws_sdk_sagemaker_runtime_http2.config import Config
    from aws_sdk_sagemaker_runtime_http2.models import (
        InvokeEndpointWithBidirectionalStreamInput,
        RequestPayloadPart,
        RequestStreamEventPayloadPart,
        ResponseStreamEventPayloadPart,
    )

    client = SageMakerRuntimeHTTP2Client(
        config=Config(region=region, endpoint_uri=f"https://runtime.sagemaker.{region}.amazonaws.com:8443")
    )
    stream = await client.invoke_endpoint_with_bidirectional_stream(
        InvokeEndpointWithBidirectionalStreamInput(endpoint_name=endpoint, model_query_string="protocol=tts")
    )
    frames = TtsFrames()

    async def send() -> None:
        for message in context_messages(text, sample_rate, voice):
            part = RequestPayloadPart(bytes_=message.encode(), data_type="UTF8", completion_state="COMPLETE")
            await stream.input_stream.send(RequestStreamEventPayloadPart(value=part))
            await asyncio.sleep(word_interval)

    sender = asyncio.create_task(send())
    _, output = await stream.await_output()
    while not frames.done:
        event = await output.receive()
        if event is None:
            break
        if isinstance(event, ResponseStreamEventPayloadPart) and event.value.bytes_:
            frames.feed(event.value.bytes_)
        elif not isinstance(event, ResponseStreamEventPayloadPart):
            raise RuntimeError(f"the stream failed: {event}")
    await sender
    await stream.input_stream.close()
    return frames


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint", required=True)
    p.add_argument("--region", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--voice")
    p.add_argument("--sample-rate", type=int, default=24000)
    p.add_argument("--word-interval", type=float, default=0.05, help="seconds between words sent")
    p.add_argument("--out", default="reply.wav")
    args = p.parse_args(argv)
    frames = asyncio.run(speak(args.endpoint, args.region, args.text, args.voice, args.sample_rate, args.word_interval))
    if frames.error:
        print(f"refused or failed: {frames.error}", file=sys.stderr)
        return 1
    with wave.open(args.out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(args.sample_rate)
        w.writeframes(bytes(frames.pcm))
    seconds = len(frames.pcm) / 2 / args.sample_rate
    print(f"{seconds:.2f} s of audio in {args.out}; first audio after {frames.first_audio_s:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
