"""Streaming-input checks for the TTS: seams at piece boundaries, and speed control.

Seams: each held-out sentence is fed one word at a time; at every piece boundary (located with the word
timestamps) the largest sample-to-sample step within ±2 ms is compared with the same statistic at the word
starts of the same sentence synthesized whole (the reference: word onsets without any seam; plosives and
voicing onsets make them sharper than the average point) and at random points. A seam would show as boundary
steps larger than the whole sentence's word starts.

Speed: total duration at speed 0.5, 1 and 2; duration should scale with 1/speed.

    python benchmarks/tts_pieces.py [--sentences 40] [--model-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=40)
    ap.add_argument("--model-dir", default=os.environ.get("SONARE_TTS_DIR"))
    args = ap.parse_args()
    torch.set_num_threads(1)

    from sonare.text import generate_sentences
    from sonare.tts import load_default
    from sonare.tts.messages import AudioChunk, SynthesisOptions, VoiceSpec, WordTimestamps

    model = load_default(args.model_dir)
    sentences = generate_sentences(args.sentences, seed=2, split="heldout")
    rng = np.random.default_rng(0)
    sr = model.sample_rate
    window = int(0.002 * sr)

    def largest_steps(audio: np.ndarray, times: list[float]) -> list[float]:
        steps = np.abs(np.diff(audio))
        points = [int(t * sr) for t in times]
        return [steps[i - window : i + window].max() for i in points if window <= i < len(steps) - window]

    boundary, whole, inside = [], [], []
    options = SynthesisOptions(VoiceSpec(), word_timestamps=True)
    for text in sentences:
        pieces = [w + " " for w in text.split()]
        events = list(model.stream(pieces, options))
        audio = np.concatenate([e.pcm for e in events if isinstance(e, AudioChunk)])
        starts = [t for e in events if isinstance(e, WordTimestamps) for t in e.start][1:]
        boundary += largest_steps(audio, starts)
        inside += largest_steps(audio, list(rng.uniform(0, len(audio) / sr, size=len(starts))))
        reference, words = model.synthesize(text, options)
        whole += largest_steps(reference, [t for w in words for t in w.start][1:])
    print(f"{len(sentences)} held-out sentences fed word by word; {len(boundary)} piece boundaries")
    for name, values in (
        ("at piece boundaries", boundary),
        ("at word starts, whole sentences", whole),
        ("at random points", inside),
    ):
        print(f"  largest step within 2 ms, {name}: median {statistics.median(values):.4f}, "
              f"p95 {np.percentile(values, 95):.4f}")  # fmt: skip
    ratio = np.percentile(boundary, 95) / np.percentile(whole, 95)
    print(f"  ratio boundary / whole-sentence word start (p95): {ratio:.2f}")

    durations = {}
    for speed in (0.5, 1.0, 2.0):
        total = 0
        for text in sentences[:20]:
            audio, _ = model.synthesize(text, SynthesisOptions(VoiceSpec(), speed=speed))
            total += len(audio)
        durations[speed] = total / sr
    for speed in (0.5, 2.0):
        ratio = durations[speed] / durations[1.0]
        print(f"speed {speed}: duration x{ratio:.3f} (ideal x{1 / speed:.3f}, error {abs(ratio * speed - 1):.1%})")


if __name__ == "__main__":
    main()
