#!/usr/bin/env python3
"""Speech from a Sonare SageMaker endpoint with response streaming: audio arrives while it is synthesised.

`InvokeEndpointWithResponseStream` sends the body to the container's `POST /invocations`; a JSON body with
a `transcript` is the Cartesia `/tts/bytes` request, and the raw PCM comes back in PayloadParts as the
server produces it.

    python deploy/sagemaker/client_response_stream.py --endpoint sonare --text "Hello there." --out hello.wav
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import wave
from dataclasses import dataclass, field


def tts_request(text: str, voice: str | None = None, sample_rate: int = 24000) -> dict:
    """The `/tts/bytes` request body, asking for raw 16-bit PCM so every byte is playable as it arrives."""
    body: dict = {
        "model_id": "sonare",
        "transcript": text,
        "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": sample_rate},
    }
    if voice:
        body["voice"] = {"mode": "id", "id": voice}
    return body


@dataclass
class PcmCollector:
    """Gathers streamed PCM, keeping a sample split across two parts whole, and times the first audio."""

    sample_rate: int
    started: float = field(default_factory=time.monotonic)
    first_audio_s: float | None = None
    pcm: bytearray = field(default_factory=bytearray)

    def feed(self, part: bytes) -> None:
        if part and self.first_audio_s is None:
            self.first_audio_s = time.monotonic() - self.started
        self.pcm += part

    @property
    def seconds(self) -> float:
        return len(self.pcm) // 2 / self.sample_rate

    def write_wav(self, path: str) -> None:
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(self.sample_rate)
            w.writeframes(bytes(self.pcm[: len(self.pcm) // 2 * 2]))


def synthesize(runtime, endpoint: str, text: str, voice: str | None, sample_rate: int) -> PcmCollector:
    collector = PcmCollector(sample_rate)
    response = runtime.invoke_endpoint_with_response_stream(
        EndpointName=endpoint,
        ContentType="application/json",
        Body=json.dumps(tts_request(text, voice, sample_rate)),
    )
    for event in response["Body"]:
        if "PayloadPart" in event:
            collector.feed(event["PayloadPart"]["Bytes"])
        elif "ModelStreamError" in event or "InternalStreamFailure" in event:
            raise RuntimeError(f"the stream failed: {event}")
    return collector


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--voice")
    p.add_argument("--sample-rate", type=int, default=24000)
    p.add_argument("--region")
    p.add_argument("--out", default="speech.wav")
    args = p.parse_args(argv)
    import boto3

    runtime = boto3.Session(region_name=args.region).client("sagemaker-runtime")
    result = synthesize(runtime, args.endpoint, args.text, args.voice, args.sample_rate)
    result.write_wav(args.out)
    print(f"{result.seconds:.2f} s of audio in {args.out}; first audio after {result.first_audio_s:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
