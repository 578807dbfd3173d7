"""How natural and how intelligible can the TTS be through its vocoder? DNSMOS (and, with --asr, Whisper WER) of
the teacher's audio and of resyntheses of it.

The default voice learns acoustic frames (`sonare.tts.acoustic`) from Piper joe and renders them with the
harmonic-plus-noise vocoder (`sonare.tts.vocoder`). Rendering the frames measured from the teacher's own audio
(perfect frames, measured with each envelope of `sonare.tts.acoustic.ENVELOPES`: WORLD's CheapTrick, what the
shipped voice learnt, and a smoothed power spectrum) gives the best a model could sound through that vocoder;
WORLD's own synthesis of WORLD's analysis is the reference parametric vocoder. The magnitude-swap row keeps the
teacher's STFT magnitudes and takes only the phase from our vocoder: the best a post-filter that corrects
magnitudes (and not phase) could reach. The shipped model speaking the same sentences (its own durations and
frames) is measured in the same run. Last, how each analysis reads plain white noise of a known level: how much
quieter the frames record noise (fricatives, breath) than it was.

    python benchmarks/vocoder_ceiling.py [--sentences 12] [--seed 3] [--asr whisper-base] [--f0-trackers dio harvest]
        [--envelopes cheaptrick smoothed-power]

Prints the mean DNSMOS (overall, signal, background, P.808) of each rendering, over held-out sentences, and with
--asr the corpus WER of each as `sonare eval tts` scores it (the sentences spoken after `sonare.text.normalize`).
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
import torch

N_FFT = 512  # magnitude-swap STFT: 23 ms windows, the vocoder's own grain length


def _world_resynthesis(audio: np.ndarray, f0_tracker: str) -> np.ndarray:
    import pyworld

    from sonare.tts.acoustic import FRAME_PERIOD_MS, SAMPLE_RATE, source_filter_parameters

    f0, sp, ap = source_filter_parameters(audio, f0_tracker)  # WORLD's own: CheapTrick's envelope
    return pyworld.synthesize(f0, sp, ap, SAMPLE_RATE, FRAME_PERIOD_MS).astype(np.float32)


def _teacher_magnitude_our_phase(teacher: np.ndarray, ours: np.ndarray) -> np.ndarray:
    window = torch.hann_window(N_FFT)

    def stft(x: np.ndarray) -> torch.Tensor:
        return torch.stft(torch.from_numpy(x), N_FFT, N_FFT // 4, window=window, return_complex=True)

    mixed = stft(teacher).abs() * torch.exp(1j * stft(ours).angle())
    return torch.istft(mixed, N_FFT, N_FFT // 4, window=window, length=len(teacher)).numpy()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=12)
    ap.add_argument("--seed", type=int, default=3, help="seed of the held-out sentence generator")
    ap.add_argument("--asr", help="also score each rendering's WER with this evaluator (e.g. whisper-base)")
    ap.add_argument(
        "--f0-trackers",
        nargs="+",
        default=["dio"],
        help="analyse with each of these (the first also feeds the magnitude swap); the training frames use dio",
    )
    ap.add_argument(
        "--envelopes",
        nargs="+",
        default=["cheaptrick", "smoothed-power"],
        help="measure the frames' envelope each of these ways (the first also feeds the magnitude swap)",
    )
    args = ap.parse_args()
    torch.set_num_threads(1)

    from sonare.data.teachers import get_teacher
    from sonare.eval.mos import dnsmos
    from sonare.eval.registry import DEFAULT_BEAM_SIZE, load_transcriber
    from sonare.eval.wer import WordErrors, utterance_errors
    from sonare.text import generate_sentences
    from sonare.text.normalize import normalize
    from sonare.tts import load_default
    from sonare.tts.acoustic import N_ENV, SAMPLE_RATE, analyze, mel_points
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.tts.vocoder import HarmonicNoiseVocoder

    teacher = get_teacher("piper")
    vocoder = HarmonicNoiseVocoder()
    model = load_default()
    asr = load_transcriber(args.asr, DEFAULT_BEAM_SIZE) if args.asr else None
    scores: dict[str, list[dict[str, float]]] = {}
    errors: dict[str, WordErrors] = {}
    for text in generate_sentences(args.sentences, seed=args.seed, split="heldout"):
        text = normalize(text)
        audio = teacher.synthesize(text, "joe").audio
        renderings = {"Piper joe (teacher)": audio}
        perfect = {}
        for tracker in args.f0_trackers:
            renderings[f"WORLD synthesis of its analysis, {tracker}"] = _world_resynthesis(audio, tracker)
            for envelope in args.envelopes:
                frames = torch.from_numpy(analyze(audio, f0_tracker=tracker, envelope=envelope))
                perfect[tracker, envelope] = vocoder.render(frames).numpy()[: len(audio)]
                renderings[f"Sonare vocoder, perfect frames, {tracker}, {envelope}"] = perfect[tracker, envelope]
        ours = perfect[args.f0_trackers[0], args.envelopes[0]]
        renderings["teacher magnitude + Sonare phase"] = _teacher_magnitude_our_phase(audio[: len(ours)], ours)
        renderings["Sonare model joe, its own frames"] = model.synthesize(text, SynthesisOptions(VoiceSpec("joe")))[0]
        for name, signal in renderings.items():
            scores.setdefault(name, []).append(dnsmos(signal, SAMPLE_RATE).as_dict())
            if asr:
                heard = asr.transcribe(np.asarray(signal, np.float32), SAMPLE_RATE)
                errors[name] = errors.get(name, WordErrors()) + utterance_errors(text, heard)

    noise = np.random.default_rng(0).normal(0.0, 0.01, 10 * SAMPLE_RATE)  # variance 1e-4: envelope log(1e-4)
    above = mel_points(N_ENV) > 1000.0
    for envelope in args.envelopes:
        read = analyze(noise, envelope=envelope)[20:-20, 2 : 2 + N_ENV].mean(0) - np.log(1e-4)
        print(
            f"{envelope} analysis of white noise: envelope read {-read[above].mean():.2f} low (log power) above 1 kHz"
        )

    print(f"{args.sentences} held-out sentences (seed {args.seed}), mean DNSMOS" + (f", WER {args.asr}" if asr else ""))
    print(f"{'rendering':<55} {'ovrl':>6} {'sig':>6} {'bak':>6} {'p808':>6}" + (f" {'WER':>7}" if asr else ""))
    for name, rows in scores.items():
        means = [statistics.fmean(r[m] for r in rows) for m in ("ovrl", "sig", "bak", "p808")]
        wer = f" {errors[name].wer:7.1%}" if asr else ""
        print(f"{name:<55} " + " ".join(f"{v:6.2f}" for v in means) + wer)


if __name__ == "__main__":
    main()
