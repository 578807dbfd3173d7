"""How the default voice's frames and speech differ from its teacher's, and what changing them does to DNSMOS.

1. Teacher forcing (needs the default corpus's joe-clean section): the shipped model predicts frames for
   `--clips` training clips of Piper joe, on the clips' own phonemes and durations, and they are compared with
   the frames analysed from the clips' audio: how uncertain the voicing probability is in frames analysis calls
   voiced, and the spread of log F0 over voiced frames (mean per-clip standard deviation), model / teacher.
2. Voice profiles (`sonare.voices.encoder.analyse`, as cloning measures a clip) of the teacher's first 30 s of
   joe, of the model speaking the same texts with joe uncalibrated and calibrated, and of the vocoder
   re-rendering the teacher's own analysed frames: log-F0 median and spread, and the average envelope's tilt
   (mean level below 1 kHz minus mean level above 3 kHz, in dB) against the teacher's.
3. With --screen N: DNSMOS over N held-out sentences of joe uncalibrated, with the frames changed between the
   model and the vocoder: voicing rendered as the probability or decided at other thresholds, log F0 scaled
   about the voice's median, aperiodicity scaled, the envelope sharpened or smoothed across frequency; and the
   shipped calibrated voice.

    python benchmarks/tts_frames.py [--clips 150] [--screen 40]
"""

from __future__ import annotations

import argparse
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

CORPUS = Path("corpus/default")
DEFAULT_RECIPE = "configs/tts-default.yaml"  # its run's frame cache is shared


def teacher_forcing(clips: int) -> None:
    from sonare.data.manifest import read_manifest
    from sonare.train.tts import TTSTrainConfig
    from sonare.tts import load_default
    from sonare.tts.dataset import cache_frames, token_ids_and_durations

    tts = load_default()
    d = tts.model.cfg.d_speaker
    speaker = tts.voices["joe"][None, :d]
    records = [
        r
        for r in read_manifest(CORPUS / "manifest.jsonl")
        if r["speaker"] == "piper:joe" and r["split"] == "train" and "tts" in r.get("tasks", ["tts"])
    ]
    records = sorted(records, key=lambda r: zlib.crc32(r["id"].encode()))[:clips]
    paths = cache_frames(
        [CORPUS / r["audio"] for r in records], TTSTrainConfig.load(DEFAULT_RECIPE).frames_dir(), workers=2
    )
    uncertain, voiced_frames, spread_model, spread_teacher = 0, 0, [], []
    with torch.no_grad():
        for rec, path in zip(records, paths, strict=True):
            ids, durations = token_ids_and_durations(rec["phonemes"], rec["phones"], rec["duration"])
            h = tts.model.encode(torch.from_numpy(ids)[None], speaker)
            out = tts.model.decode_aligned(h, speaker, torch.from_numpy(durations)[None], int(durations.sum()))[0]
            measured = np.load(path)
            n = min(len(out), len(measured))
            probability = torch.sigmoid(out[:n, 1]).numpy()
            lf0 = tts.model.denormalize(out[:n])[:, 0].numpy()
            voiced = measured[:n, 1] > 0.5
            uncertain += int((probability[voiced] < 0.3).sum())
            voiced_frames += int(voiced.sum())
            if voiced.sum() > 10:
                spread_model.append(lf0[voiced].std())
                spread_teacher.append(measured[:n, 0][voiced].std())
    print(f"teacher forcing, {len(records)} clips of joe:")
    print(f"  voiced frames (as analysed) the model gives p(voiced) < 0.3: {uncertain / voiced_frames:.1%}")
    print(f"  log-F0 spread over voiced frames, model / teacher: {np.mean(spread_model) / np.mean(spread_teacher):.2f}")


def _tilt_db(envelope: np.ndarray) -> float:
    from sonare.tts.acoustic import N_ENV, mel_points

    hz = mel_points(N_ENV)
    return float(10 / np.log(10) * (envelope[hz < 1000].mean() - envelope[hz > 3000].mean()))


def profiles() -> None:
    from sonare.tts import load_default
    from sonare.tts.acoustic import analyze
    from sonare.tts.adapt import identity
    from sonare.tts.messages import SynthesisOptions, VoiceSpec
    from sonare.tts.vocoder import HarmonicNoiseVocoder
    from sonare.voices.encoder import MAX_CLIP_SECONDS, analyse, corpus_profile, teacher_clips

    tts = load_default()
    d = tts.model.cfg.d_speaker
    tts.voices["uncalibrated"] = torch.cat([tts.voices["joe"][:d], torch.from_numpy(identity())])
    clips = teacher_clips([str(CORPUS / "manifest.jsonl")], "piper:joe")
    teacher = corpus_profile(clips)
    rate = tts.sample_rate
    audio = np.concatenate([a for a, _, _ in clips]).astype(np.float32)
    rows = {"teacher (Piper joe)": teacher}
    for voice in ("uncalibrated", "joe"):
        spoken = [tts.synthesize(text, SynthesisOptions(VoiceSpec(voice)))[0] for _, _, text in clips]
        rows[f"model, {voice}"] = analyse(np.concatenate(spoken)[: int(MAX_CLIP_SECONDS * rate)], rate)
    resynthesis = HarmonicNoiseVocoder().render(torch.from_numpy(analyze(audio))).numpy()
    rows["vocoder on the teacher's frames"] = analyse(resynthesis[: int(MAX_CLIP_SECONDS * rate)], rate)
    print("voice profiles on the texts of joe's first 30 s in the corpus:")
    print(f"  {'speech':<34} {'median lf0':>10} {'spread':>7} {'tilt vs teacher, dB':>20}")
    for name, p in rows.items():
        tilt = _tilt_db(np.asarray(p.envelope)) - _tilt_db(np.asarray(teacher.envelope))
        print(f"  {name:<34} {p.median_lf0:10.3f} {p.spread_lf0:7.3f} {tilt:20.1f}")


def _variants(pivot: float) -> dict[str, Callable[[Tensor, Tensor], Tensor]]:
    """name -> f(raw model outputs, the shipped denormalised frames) -> frames for the vocoder."""
    from sonare.tts.acoustic import N_ENV

    env, ap = slice(2, 2 + N_ENV), slice(2 + N_ENV, None)

    def voicing(p: float | None) -> Callable[[Tensor, Tensor], Tensor]:
        def change(raw: Tensor, frames: Tensor) -> Tensor:
            prob = torch.sigmoid(raw[..., 1])
            frames[..., 1] = prob if p is None else (prob > p).to(frames.dtype)
            return frames

        return change

    def pitch(scale: float) -> Callable[[Tensor, Tensor], Tensor]:
        def change(raw: Tensor, frames: Tensor) -> Tensor:
            frames[..., 0] = pivot + scale * (frames[..., 0] - pivot)
            return frames

        return change

    def aperiodicity(scale: float) -> Callable[[Tensor, Tensor], Tensor]:
        def change(raw: Tensor, frames: Tensor) -> Tensor:
            frames[..., ap] = frames[..., ap] * scale
            return frames

        return change

    def contrast(beta: float) -> Callable[[Tensor, Tensor], Tensor]:
        def change(raw: Tensor, frames: Tensor) -> Tensor:
            e = frames[..., env]
            flat = torch.nn.functional.pad(e.reshape(-1, 1, N_ENV), (2, 2), mode="replicate")
            smooth = torch.nn.functional.conv1d(flat, torch.full((1, 1, 5), 0.2)).reshape(e.shape)
            changed = e + beta * (e - smooth)
            frames[..., env] = changed - changed.logsumexp(-1, keepdim=True) + e.logsumexp(-1, keepdim=True)
            return frames

        return change

    return {
        "voicing as the probability (before)": voicing(None),
        "voicing decided at p > 0.3": voicing(0.3),
        "voicing decided at p > 0.5 (shipped)": lambda raw, frames: frames,
        "voicing decided at p > 0.6": voicing(0.6),
        "log F0 x1.3 about the median": pitch(1.3),
        "log F0 x1.5 about the median": pitch(1.5),
        "aperiodicity (log) x1.6": aperiodicity(1.6),
        "aperiodicity (log) x0.8": aperiodicity(0.8),
        "envelope sharpened (0.5)": contrast(0.5),
        "envelope smoothed (-0.5)": contrast(-0.5),
    }


def screen(n: int) -> None:
    from sonare.eval.mos import dnsmos
    from sonare.text import generate_sentences
    from sonare.tts import builtin_voices, load_default
    from sonare.tts.adapt import identity
    from sonare.tts.messages import SynthesisOptions, VoiceSpec

    tts = load_default()
    model = tts.model
    d = model.cfg.d_speaker
    tts.voices["uncalibrated"] = torch.cat([tts.voices["joe"][:d], torch.from_numpy(identity())])
    pivot = next(v for v in builtin_voices() if v["id"] == "joe")["profile"]["median_lf0"]
    sentences = generate_sentences(n, seed=7, split="heldout")
    shipped = model.denormalize

    def score(voice: str) -> float:
        return float(np.mean([dnsmos(tts.synthesize(s, SynthesisOptions(VoiceSpec(voice)))[0], 22050).ovrl
                              for s in sentences]))  # fmt: skip

    print(f"DNSMOS over {n} held-out sentences, joe uncalibrated unless named:")
    for name, change in _variants(pivot).items():
        model.denormalize = lambda raw, change=change: change(raw, shipped(raw))  # this instance only
        print(f"  {name:<40} {score('uncalibrated'):.3f}", flush=True)
    model.denormalize = shipped
    print(f"  {'the shipped calibrated voice joe':<40} {score('joe'):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", type=int, default=150, help="training clips compared under teacher forcing")
    ap.add_argument("--screen", type=int, default=0, help="held-out sentences for the DNSMOS screen (0: none)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    teacher_forcing(args.clips)
    profiles()
    if args.screen:
        screen(args.screen)


if __name__ == "__main__":
    main()
