"""Voice cloning against an independent speaker encoder (Resemblyzer) on speakers never used in training.

Held-out speakers: the corpus's held-out joe-derived speakers, flite `awb` variants and espeak-ng voices
(engines, accents and variants no training section uses), and the one real human speaker available here
(the LibriVox reader of Debian's `pocketsphinx-testdata`). Per speaker, about 10 s of its audio is the
clip to clone from, and a disjoint 10 s is the reference. The cloned voice then reads held-out sentences;
Resemblyzer embeds the cloned speech and every reference, and we report

  same          cosine(cloned speech, the same speaker's reference)     target: mean >= 0.75
  margin        same minus the mean cosine to the other speakers      target: mean >= 0.10
  margin_worst  same minus the highest cosine to any other speaker (held-out speakers that are variants
                of one voice, like the two flite awb speakers, bound this one)
  default   cosine(the default voice's speech, the reference): what cloning adds over not cloning
  ceiling   cosine(the clone clip itself, the reference): two recordings of one speaker

plus `noisy`: the same-speaker similarity when the clip to clone from carries babble noise at 15 dB SNR, and
`analysis_same` / `analysis_margin` / `analysis_noisy`: the same figures when the voice profile is measured
directly with WORLD (`sonare.voices.encoder.analyse`) instead of by the trained encoder, as a same-run
reference for what the training adds; the
time to clone a 10 s clip (median and p90 over all clips, one thread); first audio of a cloned voice against
the default voice on the same short sentences (p50, one thread); and, with --wer, the Whisper-base WER of
every cloned voice against the default voice on the same sentences.

    python benchmarks/clone_similarity.py [--corpus corpus/stt-bootstrap] [--wer] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

CLIP_SECONDS = 10.0
NOISY_SNR_DB = 15.0
SPEAKERS_PER_SECTION = {"heldout-joe-speakers": 4, "heldout-flite": 2, "heldout-espeak": 4}
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")


def take(clips: list[tuple[np.ndarray, int]], seconds: float) -> tuple[list[tuple[np.ndarray, int]], list]:
    """Split clips into a first part of about `seconds` and the rest."""
    total, n = 0.0, 0
    while n < len(clips) and total < seconds:
        total += len(clips[n][0]) / clips[n][1]
        n += 1
    return clips[:n], clips[n:]


def joined(clips: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int]:
    rate = clips[0][1]
    return np.concatenate([a for a, r in clips if r == rate]), rate


def held_out_speakers(corpus: Path) -> dict[str, list[tuple[np.ndarray, int]]]:
    from sonare.audio.io import load_audio
    from sonare.data.manifest import read_manifest

    by_speaker: dict[str, list] = defaultdict(list)
    section_of = {}
    for r in read_manifest(corpus / "manifest.jsonl"):
        if r["split"] == "heldout" and r["section"] in SPEAKERS_PER_SECTION:
            by_speaker[r["speaker"]].append(r)
            section_of[r["speaker"]] = r["section"]
    chosen: dict[str, list] = {}
    for section, count in SPEAKERS_PER_SECTION.items():
        # the speakers with the most audio, so both halves are about 10 s
        names = sorted((s for s in by_speaker if section_of[s] == section), key=lambda s: -len(by_speaker[s]))
        for name in names[:count]:
            records = sorted(by_speaker[name], key=lambda r: r["id"])
            chosen[name] = [load_audio(corpus / r["audio"]) for r in records]
    if LIBRIVOX.is_dir():
        chosen["librivox:reader"] = [load_audio(p) for p in sorted(LIBRIVOX.glob("*.wav"))]
    return chosen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="corpus/stt-bootstrap", help="a corpus with held-out speaker sections")
    ap.add_argument("--model-dir", default=os.environ.get("SONARE_TTS_DIR"))
    ap.add_argument("--sentences", type=int, default=3, help="held-out sentences each cloned voice reads")
    ap.add_argument("--wer", action="store_true", help="also Whisper-base WER of cloned voices vs the default")
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args()
    torch.set_num_threads(1)

    from sonare.eval.speaker import SpeakerEncoder as Resemblyzer
    from sonare.eval.speaker import cosine_similarity
    from sonare.text import generate_sentences
    from sonare.tts import builtin_voices, load_default
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.voices.encoder import SpeakerEncoder, analyse

    tts = load_default(args.model_dir)
    encoder = SpeakerEncoder(builtin_voices(args.model_dir))
    judge = Resemblyzer()
    sentences = generate_sentences(args.sentences, seed=7, split="heldout")
    speakers = held_out_speakers(Path(args.corpus))

    def speak(voice: VoiceSpec) -> list[np.ndarray]:
        return [tts.synthesize(s, SynthesisOptions(voice))[0] for s in sentences]

    def first_audio_ms(voice: VoiceSpec) -> float:
        """Median time to the first audio chunk over the sentences, one stream stepped directly."""
        from sonare.tts.messages import AudioChunk, EndOfInput, TextPiece

        times = []
        for text in sentences * 3:
            started = time.perf_counter()
            with torch.inference_mode():
                session, state = tts.open(SynthesisOptions(voice)), tts.new_state(1)
                session.push(TextPiece(text))
                session.push(EndOfInput())
                events: list = []
                while not any(isinstance(e, AudioChunk) for e in events):
                    state, (events,) = tts.step(state, [session])
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)

    default_audio = speak(VoiceSpec())
    default_emb = judge.embed(np.concatenate(default_audio), tts.sample_rate)
    from sonare.data.augment import add_noise

    clone_ms, refs, clones, ceilings, spoken, noisy = [], {}, {}, {}, {}, {}
    analysed, analysed_noisy = {}, {}

    def judged(embedding: np.ndarray) -> np.ndarray:
        return judge.embed(np.concatenate(speak(VoiceSpec(embedding=tuple(embedding.tolist())))), tts.sample_rate)

    for name, clips in speakers.items():
        clip_part, rest = take(clips, CLIP_SECONDS)
        ref_part, _ = take(rest, CLIP_SECONDS)
        clip, rate = joined(clip_part)
        started = time.perf_counter()
        embedding = encoder.embed(clip, rate)
        clone_ms.append((time.perf_counter() - started) * 1000 * CLIP_SECONDS / (len(clip) / rate))
        spoken[name] = speak(VoiceSpec(embedding=tuple(embedding.tolist())))
        refs[name] = judge.embed(*joined(ref_part))
        clones[name] = judge.embed(np.concatenate(spoken[name]), tts.sample_rate)
        ceilings[name] = cosine_similarity(judge.embed(clip, rate), refs[name])
        noisy_clip = add_noise(clip, "babble", NOISY_SNR_DB, seed=0)
        noisy[name] = judged(encoder.embed(noisy_clip, rate))
        analysed[name] = judged(encoder.adapt(analyse(clip, rate)))
        analysed_noisy[name] = judged(encoder.adapt(analyse(noisy_clip, rate)))

    rows = {}
    for name in speakers:
        same = cosine_similarity(clones[name], refs[name])
        others = [cosine_similarity(clones[name], refs[o]) for o in speakers if o != name]
        rows[name] = {
            "same": round(same, 3),
            "margin": round(same - statistics.mean(others), 3),
            "margin_worst": round(same - max(others), 3),
            "default": round(cosine_similarity(default_emb, refs[name]), 3),
            "ceiling": round(ceilings[name], 3),
            "noisy": round(cosine_similarity(noisy[name], refs[name]), 3),
            "analysis_same": round(cosine_similarity(analysed[name], refs[name]), 3),
            "analysis_margin": round(
                cosine_similarity(analysed[name], refs[name])
                - statistics.mean(cosine_similarity(analysed[name], refs[o]) for o in speakers if o != name),
                3,
            ),
            "analysis_noisy": round(cosine_similarity(analysed_noisy[name], refs[name]), 3),
        }
        print(f"{name:40s} " + "  ".join(f"{k} {v:.3f}" for k, v in rows[name].items()))
    summary = {k: round(statistics.mean(r[k] for r in rows.values()), 3) for k in next(iter(rows.values()))}
    summary["clone_ms_per_10s"] = {
        "p50": round(statistics.median(clone_ms), 1),
        "p90": round(float(np.percentile(clone_ms, 90)), 1),
    }
    cloned_voice = VoiceSpec(embedding=tuple(embedding.tolist()))  # the last speaker's clone
    summary["first_audio_ms"] = {"default": round(first_audio_ms(VoiceSpec()), 1)}
    summary["first_audio_ms"]["cloned"] = round(first_audio_ms(cloned_voice), 1)
    print(f"mean over {len(rows)} held-out speakers: {json.dumps(summary)}")

    if args.wer:
        from sonare.eval.asr import WhisperTranscriber
        from sonare.eval.wer import corpus_errors

        asr = WhisperTranscriber("whisper-base")

        def wer(pairs: list[tuple[str, np.ndarray]]) -> float:
            return corpus_errors((text, asr.transcribe(a, tts.sample_rate)) for text, a in pairs).wer

        summary["wer_default"] = round(wer(list(zip(sentences, default_audio, strict=True))), 4)
        summary["wer_cloned"] = round(wer([p for n in speakers for p in zip(sentences, spoken[n], strict=True)]), 4)
        print(f"Whisper-base WER: default {summary['wer_default']:.1%}, cloned voices {summary['wer_cloned']:.1%}")
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "speakers": rows}, indent=1))


if __name__ == "__main__":
    main()
