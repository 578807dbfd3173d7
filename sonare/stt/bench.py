"""Streaming benchmarks of the shipped recogniser: partial latency and real-time factor.

    python -m sonare.stt.bench --manifest corpus/default/manifest.jsonl [--limit 50] [--out FILE]

Word timestamps: finals' word times against the manifest's, where the word counts agree.
Partial latency: clips are streamed in 20 ms chunks; a reference word (manifest word timings) counts as shown
when the first partial (or final) with at least that many words is emitted, and its latency is the audio time
of that emission (what the client had sent, so audio the stream gathers for its next step counts) minus the
word's end. RTF: compute time over audio time, one thread, single stream, for live 20 ms chunks and live 100 ms
chunks (a common client's packet), both with turn detection on (the default, which sizes a live stream's steps
inside turns), and whole files; and for reference, 20 ms chunks with turn detection off (base steps throughout,
as every stream stepped before session 32). Each clip is streamed once unmeasured first (warm caches, as on a
server that has run a while). Compute time is this thread's CPU time (torch runs on one thread here), so the
figure is time on one core even on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

CHUNK_SECONDS = 0.02
CLIENT_CHUNK_SECONDS = 0.1


def partial_latencies(
    model,
    audio: np.ndarray,
    rate: int,
    words: list[dict],
    chunk_seconds: float = CHUNK_SECONDS,
    turn_detection: bool = True,
) -> tuple[list[float], float]:
    """Per reference word, seconds from its end to its first appearance; and the compute time spent."""
    from sonare.stt.messages import AudioIn, EndOfAudio, RecognitionOptions, Transcript

    session = model.open(RecognitionOptions(sample_rate=rate, turn_detection=turn_detection))
    state = model.new_state(1)
    step = int(rate * chunk_seconds)
    shown: list[float] = []  # audio time at which the i-th word was first shown
    committed = 0  # words in finals so far
    compute = 0.0
    sent = 0  # samples sent
    chunks = [audio[i : i + step] for i in range(0, len(audio), step)]
    for chunk in [*chunks, None]:
        sent += 0 if chunk is None else len(chunk)
        start = time.thread_time()
        session.push(AudioIn(chunk) if chunk is not None else EndOfAudio())
        events = []
        while session.ready(0.0):
            state, (out,) = model.step(state, [session])
            events += out
        compute += time.thread_time() - start
        for e in events:
            if isinstance(e, Transcript):
                count = committed + len(e.text.split())
                while len(shown) < count:
                    shown.append(sent / rate)
                if e.is_final:
                    committed = count
    latencies = [shown[i] - w["end"] for i, w in enumerate(words) if i < len(shown)]
    return latencies, compute


def main(argv: list[str] | None = None) -> int:
    from sonare.audio.io import load_audio
    from sonare.data.manifest import read_manifest
    from sonare.stt import load_default
    from sonare.stt.messages import RecognitionOptions, Transcript

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, required=True)
    parser.add_argument("--split", default="heldout")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--model-dir", help="weights directory (default: the shipped model)")
    parser.add_argument("--step", type=float, help="seconds of audio a live stream gathers a step (default: shipped)")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    model = load_default(args.model_dir, step_seconds=args.step)
    records = [
        r
        for r in read_manifest(args.manifest)
        if r["split"] == args.split and "pauses" not in r and not r.get("augment") and r.get("words")
    ][: args.limit]
    latencies, live_compute, client_compute, file_compute, seconds = [], 0.0, 0.0, 0.0, 0.0
    base_compute = 0.0
    starts: list[float] = []  # word timestamp errors (ours - reference), seconds
    ends: list[float] = []
    for i, r in enumerate(records):
        audio, rate = load_audio(args.manifest.parent / r["audio"])
        # Unmeasured first: a clip's first pass fills the language model's caches with its words, as a server's
        # are filled by the streams before; then the two 20 ms passes in turn, each first on every other clip.
        partial_latencies(model, audio, rate, r["words"])
        for turn_detection in (True, False) if i % 2 == 0 else (False, True):
            found, compute = partial_latencies(model, audio, rate, r["words"], turn_detection=turn_detection)
            if turn_detection:
                latencies += found
                live_compute += compute
            else:
                base_compute += compute
        client_compute += partial_latencies(model, audio, rate, r["words"], CLIENT_CHUNK_SECONDS)[1]
        start = time.thread_time()
        events = list(model.stream([audio], RecognitionOptions(sample_rate=rate, turn_detection=False)))
        file_compute += time.thread_time() - start
        words = [w for e in events if isinstance(e, Transcript) and e.is_final for w in e.words]
        if len(words) == len(r["words"]):  # timestamps are compared where the word sequence lines up
            starts += [w.start - ref["start"] for w, ref in zip(words, r["words"], strict=True)]
            ends += [w.end - ref["end"] for w, ref in zip(words, r["words"], strict=True)]
        seconds += len(audio) / rate
    result = {
        "clips": len(records),
        "step_seconds": model.step_seconds,
        "words": len(latencies),
        "partial_latency_p50": float(np.percentile(latencies, 50)),
        "partial_latency_p90": float(np.percentile(latencies, 90)),
        "rtf_live_20ms_chunks": live_compute / seconds,
        "rtf_live_100ms_chunks": client_compute / seconds,
        "rtf_live_20ms_chunks_base_steps": base_compute / seconds,
        "rtf_whole_file": file_compute / seconds,
        "timestamp_words": len(starts),
        "word_start_error_median": float(np.median(starts)) if starts else None,
        "word_start_abs_error_p50": float(np.median(np.abs(starts))) if starts else None,
        "word_end_error_median": float(np.median(ends)) if ends else None,
        "word_end_abs_error_p50": float(np.median(np.abs(ends))) if ends else None,
        "command": "python -m sonare.stt.bench " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
