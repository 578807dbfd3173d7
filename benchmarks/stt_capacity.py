"""STT capacity: how many live recognition streams one inference thread keeps up with, with and without the
word language model.

N streams each receive a step's speech (held-out corpus clips, 16 kHz; the audio a stream gathers a step,
`--step`, 80 ms as shipped, or one 40 ms encoder frame with `--step 0`) every step's time, as a live microphone
would deliver it; the recogniser then takes one batched step over all N (what the engine does). A stream count is
sustained when the step's p95 compute time stays under the audio it consumed. The greedy decoder is measured in
the same run as the reference, so the ratio holds on a noisy machine.

    python benchmarks/stt_capacity.py --streams 1 8 16 32 [--seconds 8] [--threads 1] [--step 0]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

FRAME_S = 0.04


def speech(manifest: str, seconds: float, rate: int) -> np.ndarray:
    """Held-out clips joined end to end, at `rate`, at least `seconds` long."""
    from sonare.audio.io import load_audio
    from sonare.audio.resample import resample

    parts, total = [], 0
    with open(manifest) as f:
        for line in f:
            record = json.loads(line)
            if record["split"] != "heldout" or "conversation" in record["section"]:
                continue
            audio, sr = load_audio(f"{manifest.rsplit('/', 1)[0]}/{record['audio']}")
            parts.append(resample(audio, sr, rate))
            total += len(parts[-1])
            if total >= seconds * rate:
                break
    return np.concatenate(parts)


def step_times(model, audio: np.ndarray, rate: int, streams: int, seconds: float) -> np.ndarray:
    """Compute time of each step (`period` seconds of audio) over `streams` live streams (each starting at a
    different offset)."""
    from sonare.stt.messages import AudioIn, RecognitionOptions

    sessions = [model.open(RecognitionOptions(sample_rate=rate)) for _ in range(streams)]
    state = model.new_state(streams)
    hop = int(rate * period(model))
    offsets = np.linspace(0, len(audio) - int(seconds * rate), streams, dtype=int) if streams > 1 else [0]
    times = []
    for k in range(int(seconds / period(model))):
        for s, offset in zip(sessions, offsets, strict=True):
            s.push(AudioIn(audio[offset + k * hop : offset + (k + 1) * hop]))
        start = time.perf_counter()
        state, _ = model.step(state, sessions)
        times.append(time.perf_counter() - start)
    return np.array(times[5:])  # the first steps include the resampler's and features' start-up


def period(model) -> float:
    """Seconds of audio a live stream brings each step: what it gathers, at least one encoder frame."""
    return max(model.step_seconds, FRAME_S)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 8, 16, 32])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--manifest", default="corpus/heldout/manifest.jsonl")
    parser.add_argument("--step", type=float, help="seconds of audio a stream gathers a step (default: shipped)")
    args = parser.parse_args()

    from sonare.stt import load_default

    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    rate = 16000
    audio = speech(args.manifest, args.seconds * 2, rate)
    decoders = {
        "beam + LM": load_default(step_seconds=args.step),
        "greedy": load_default(language_model=False, step_seconds=args.step),
    }
    print(f"{'streams':>7} {'decoder':>10} {'step p50 ms':>12} {'step p95 ms':>12} {'ms/stream':>10} {'real time':>9}")
    for n in args.streams:
        for name, model in decoders.items():
            with torch.inference_mode():
                t = step_times(model, audio, rate, n, args.seconds) * 1e3
            p50, p95 = np.percentile(t, [50, 95])
            keeps_up = "yes" if p95 <= period(model) * 1e3 else "no"
            print(f"{n:>7} {name:>10} {p50:>12.2f} {p95:>12.2f} {p50 / n:>10.3f} {keeps_up:>9}", flush=True)


if __name__ == "__main__":
    main()
