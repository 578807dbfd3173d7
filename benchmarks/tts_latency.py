"""Model-side TTS latency on one core: time to first audio and real-time factor, Sonare vs Piper in one run.

Time to first audio: from pushing the first piece of text (one short sentence, then end of input) to the first
audio chunk, a fresh stream each time. Real-time factor: wall time / audio duration for whole sentences.
Piper (the teacher, VITS on onnxruntime, one thread) is measured on the same sentences in the same process; it
synthesizes a sentence whole, so its first audio is its whole synthesis time.

    python benchmarks/tts_latency.py [--sentences 30] [--model-dir DIR]
    python benchmarks/tts_latency.py --no-piper --frames-per-step 4,16,24,32   # one Sonare row per step size
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=30)
    ap.add_argument("--model-dir", default=os.environ.get("SONARE_TTS_DIR"))
    ap.add_argument("--no-piper", action="store_true")
    ap.add_argument("--frames-per-step", help="comma-separated step sizes to compare (default: the shipped one)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)

    import sonare.tts.stream as tts_stream
    from sonare.text import generate_sentences
    from sonare.tts import load_default
    from sonare.tts.messages import AudioChunk, EndOfInput, SynthesisOptions, TextPiece, VoiceSpec

    sentences = generate_sentences(args.sentences, seed=1, split="heldout")
    model = load_default(args.model_dir)
    options = SynthesisOptions(VoiceSpec())
    short = [s for s in sentences if len(s.split()) <= 12] or sentences

    def first_audio(text: str) -> float:
        with torch.inference_mode():
            t0 = time.perf_counter()
            session = model.open(options)
            state = model.new_state(1)
            session.push(TextPiece(text))
            session.push(EndOfInput())
            while True:
                state, (events,) = model.step(state, [session])
                if any(isinstance(e, AudioChunk) for e in events):
                    return time.perf_counter() - t0

    rows = []
    steps = [int(v) for v in args.frames_per_step.split(",")] if args.frames_per_step else [tts_stream.FRAMES_PER_STEP]
    for frames_per_step in steps:
        tts_stream.FRAMES_PER_STEP = frames_per_step  # read by every step: a comparison knob, not a setting
        for s in short[:3]:  # warm-up
            first_audio(s)
        ttfa = [first_audio(s) for s in short]
        rtf, audio_s = [], 0.0
        for s in sentences:
            t0 = time.perf_counter()
            audio, _ = model.synthesize(s, options)
            rtf.append((time.perf_counter() - t0) / (len(audio) / model.sample_rate))
            audio_s += len(audio) / model.sample_rate
        rows.append(("sonare" if len(steps) == 1 else f"sonare/{frames_per_step}", ttfa, rtf))
    if not args.no_piper:
        from sonare.data.teachers import get_teacher

        piper = get_teacher("piper")
        piper.synthesize(short[0], "joe")
        p_ttfa, p_rtf = [], []
        for s in short:
            t0 = time.perf_counter()
            piper.synthesize(s, "joe")
            p_ttfa.append(time.perf_counter() - t0)
        for s in sentences:
            t0 = time.perf_counter()
            u = piper.synthesize(s, "joe")
            p_rtf.append((time.perf_counter() - t0) / u.duration)
        rows.append(("piper joe", p_ttfa, p_rtf))

    print(
        f"{len(short)} short sentences for first audio, {len(sentences)} sentences ({audio_s:.0f} s) for RTF; 1 thread"
    )
    print(f"{'engine':<10}{'TTFA p50 ms':>12}{'p90 ms':>9}{'p99 ms':>9}{'RTF p50':>9}{'RTF p90':>9}")
    for name, t, r in rows:
        print(
            f"{name:<10}{statistics.median(t) * 1e3:>12.1f}{pct(t, 0.9) * 1e3:>9.1f}{pct(t, 0.99) * 1e3:>9.1f}"
            f"{statistics.median(r):>9.3f}{pct(r, 0.9):>9.3f}"
        )
    if len(rows) == 2:
        print(
            f"ratio piper/sonare: TTFA p50 x{statistics.median(rows[1][1]) / statistics.median(ttfa):.1f}, "
            f"RTF p50 x{statistics.median(rows[1][2]) / statistics.median(rtf):.2f}"
        )


if __name__ == "__main__":
    main()
