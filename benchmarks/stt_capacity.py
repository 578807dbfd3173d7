"""STT capacity: how many live recognition streams one inference thread keeps up with, with and without the
word language model.

N streams each receive a tick of speech (held-out corpus clips, 16 kHz; a tick is the base step, `--step`, 80 ms
as shipped, or one 40 ms encoder frame with `--step 0`), as a live microphone would deliver it, the streams started
at different moments (up to 60 ms apart); the recogniser then steps, batched over the streams that have gathered
a step's audio, until none has (what the engine does: a step's frame budget may leave some for the next step;
inside a turn a stream gathers twice a step while the speaker talks, `sonare.stt.turns.step_after`). A stream
count is sustained when a tick's p95 compute time stays under the tick. The greedy decoder and streams with turn
detection off (base steps throughout, as every stream stepped before session 32) are measured in the same run as
references, so the ratios hold on a noisy machine.

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


def tick_times(
    model, audio: np.ndarray, rate: int, streams: int, seconds: float, turn_detection: bool = True
) -> np.ndarray:
    """Compute time of each tick (`period` seconds of audio to every stream) over `streams` live streams, each
    starting at a different offset into the audio and a different moment (0-60 ms into the first tick)."""
    from sonare.stt.messages import AudioIn, RecognitionOptions

    options = RecognitionOptions(sample_rate=rate, turn_detection=turn_detection)
    sessions = [model.open(options) for _ in range(streams)]
    state = model.new_state(streams)
    hop = int(rate * period(model))
    offsets = np.linspace(0, len(audio) - int(seconds * rate), streams, dtype=int) if streams > 1 else [0]
    starts = [offset + int(rate * 0.02) * (i % 4) for i, offset in enumerate(offsets)]
    for s, offset, start in zip(sessions, offsets, starts, strict=True):
        s.push(AudioIn(audio[offset:start]))
    times = []
    for k in range(int(seconds / period(model)) - 1):
        for s, start in zip(sessions, starts, strict=True):
            s.push(AudioIn(audio[start + k * hop : start + (k + 1) * hop]))
        began = time.perf_counter()
        while any(s.ready(0.0) for s in sessions):
            state, _ = model.step(state, sessions)
        times.append(time.perf_counter() - began)
    return np.array(times[5:])  # the first ticks include the resampler's and features' start-up


def period(model) -> float:
    """Seconds of audio a live stream brings each tick: its base step, at least one encoder frame."""
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
    beam = load_default(step_seconds=args.step)
    greedy = load_default(language_model=False, step_seconds=args.step)
    runs = {"beam + LM": (beam, True), "beam, base steps": (beam, False), "greedy": (greedy, True)}
    print(f"{'streams':>7} {'decoder':>16} {'tick p50 ms':>12} {'tick p95 ms':>12} {'ms/stream':>10} {'real time':>9}")
    for n in args.streams:
        for name, (model, turn_detection) in runs.items():
            with torch.inference_mode():
                t = tick_times(model, audio, rate, n, args.seconds, turn_detection) * 1e3
            p50, p95 = np.percentile(t, [50, 95])
            keeps_up = "yes" if p95 <= period(model) * 1e3 else "no"
            print(f"{n:>7} {name:>16} {p50:>12.2f} {p95:>12.2f} {p50 / n:>10.3f} {keeps_up:>9}", flush=True)


if __name__ == "__main__":
    main()
