"""Does sharpening the TTS envelope in time make the default voice clearer? A global-variance-style post-filter:
each envelope channel's deviation from its own local mean over time (a causal running mean, or a centred moving
average) is scaled by a gain, and the sentences are rendered with and without it from the same frames.

Parametric speech trained on a mean-squared loss comes out smoothed over time (weak stop bursts, blurred
transitions); widening the trajectories back is the classic remedy. Whisper base WER and DNSMOS of each variant,
the unchanged frames (the shipped voice as `sonare eval tts` hears it) as the paired reference:

    python benchmarks/tts_temporal_postfilter.py --sentences 200 --shard 0/2 --out A.json   # shards run in parallel
    python benchmarks/tts_temporal_postfilter.py --sentences 200 --shard 1/2 --out B.json
    python benchmarks/tts_temporal_postfilter.py --summarize A.json B.json
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import sentence_shards  # benchmarks/, this script's folder
import torch
from torch import Tensor

GAINS = (1.3, 1.6)


def causal_mean(x: Tensor, frames: int) -> Tensor:
    """Exponential running mean over time (time constant `frames`), x: (T, C)."""
    out, acc = torch.empty_like(x), x[0]
    for t in range(len(x)):
        acc = acc + (x[t] - acc) / frames
        out[t] = acc
    return out


def centred_mean(x: Tensor, half: int) -> Tensor:
    """Moving average over 2·half + 1 frames, edges repeated, x: (T, C)."""
    padded = torch.cat([x[:1].repeat(half, 1), x, x[-1:].repeat(half, 1)])
    return padded.unfold(0, 2 * half + 1, 1).mean(-1)


def variants() -> dict[str, Callable[[Tensor], Tensor]]:
    from sonare.tts.acoustic import N_ENV

    env = slice(2, 2 + N_ENV)

    def sharpened(mean: Callable[[Tensor], Tensor], gain: float) -> Callable[[Tensor], Tensor]:
        def change(frames: Tensor) -> Tensor:
            local = mean(frames[:, env])
            out = frames.clone()
            out[:, env] = local + gain * (frames[:, env] - local)
            return out

        return change

    table: dict[str, Callable[[Tensor], Tensor]] = {"unchanged": lambda frames: frames}
    for gain in GAINS:
        table[f"causal, 4 frames, x{gain}"] = sharpened(lambda x: causal_mean(x, 4), gain)
        table[f"centred, 5 frames, x{gain}"] = sharpened(lambda x: centred_mean(x, 2), gain)
        table[f"centred, 9 frames, x{gain}"] = sharpened(lambda x: centred_mean(x, 4), gain)
    return table


def measure(sentences: int, shard: int, shards: int) -> dict[str, dict[str, float]]:
    from sonare.eval.mos import dnsmos
    from sonare.eval.registry import DEFAULT_BEAM_SIZE, load_transcriber
    from sonare.eval.wer import WordErrors, utterance_errors
    from sonare.text import generate_sentences
    from sonare.text.normalize import normalize
    from sonare.tts import load_default
    from sonare.tts.acoustic import SAMPLE_RATE
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.tts.vocoder import HarmonicNoiseVocoder

    model, vocoder = load_default(), HarmonicNoiseVocoder()
    captured: list[Tensor] = []
    run = model.vocoder.run

    def capturing(frames: Tensor, state, lengths=None):  # one stream: row 0
        captured.append(frames[0, : None if lengths is None else int(lengths[0])].clone())
        return run(frames, state, lengths)

    model.vocoder.run = capturing
    asr = load_transcriber("whisper-base", DEFAULT_BEAM_SIZE)
    table = variants()
    errors = {name: WordErrors() for name in table}
    mos: dict[str, list[float]] = {name: [] for name in table}
    for text in list(generate_sentences(sentences, seed=0, split="heldout"))[shard::shards]:
        text = normalize(text)
        captured.clear()
        model.synthesize(text, SynthesisOptions(VoiceSpec("joe")))
        frames = torch.cat(captured)
        for name, change in table.items():
            audio = vocoder.render(change(frames)).numpy().astype(np.float32)
            errors[name] = errors[name] + utterance_errors(text, asr.transcribe(audio, SAMPLE_RATE))
            mos[name].append(dnsmos(audio, SAMPLE_RATE).ovrl)
    return {
        name: {"errors": errors[name].errors, "words": errors[name].reference_words, "dnsmos": mos[name]}
        for name in table
    }


def summarize(paths: list[str]) -> None:
    shards = [json.loads(Path(p).read_text()) for p in paths]
    print(f"{'variant':<26} {'WER':>7} {'DNSMOS':>7}")
    for name in shards[0]:
        errors = sum(s[name]["errors"] for s in shards)
        words = sum(s[name]["words"] for s in shards)
        mos = [m for s in shards for m in s[name]["dnsmos"]]
        print(f"{name:<26} {errors / words:7.2%} {np.mean(mos):7.3f}")


if __name__ == "__main__":
    sentence_shards.run(measure, summarize)
