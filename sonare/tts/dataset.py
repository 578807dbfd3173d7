"""TTS training examples: phoneme ids with frame durations, and the acoustic frames they should produce.

Examples come from corpus manifests (`sonare data build`): the manifest's phoneme tokens become model ids
(through `sonare.text.inventory`, the mapping inference uses), their timings become whole-frame durations, and
the audio is analysed once into acoustic frames cached as .npy files beside the run, so a resumed or repeated
training run never analyses twice.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sonare.tts.acoustic import HOP, SAMPLE_RATE


@dataclass
class Example:
    id: str
    speaker: str
    ids: np.ndarray  # (N,) int64 phoneme ids, BOS ... EOS
    durations: np.ndarray  # (N,) int64 frames, summing to the number of frames
    frames_path: Path  # cached (T, FRAME_DIM) float32
    text: str  # the words spoken (the manifest's normalised text)

    @property
    def n_frames(self) -> int:
        return int(self.durations.sum())


def token_ids_and_durations(tokens: list[str], phones: list[dict], duration: float) -> tuple[np.ndarray, np.ndarray]:
    """Manifest tokens with timings -> (ids, frames per id) with BOS/EOS taking leading/trailing silence.

    Boundaries are rounded on the cumulative time so rounding never accumulates, and a token that maps to
    several ids (a tied phoneme only known by its parts) splits its frames evenly."""
    from sonare.text.inventory import BOS_ID, EOS_ID, token_ids

    if len(tokens) != len(phones):
        raise ValueError(f"{len(tokens)} tokens but {len(phones)} timings")
    n_frames = int(round(duration * SAMPLE_RATE)) // HOP + 1
    ids, edges = [BOS_ID], [0.0]
    for token, span in zip(tokens, phones, strict=True):
        parts = token_ids(token)
        start, end = float(span["start"]), float(span["end"])
        for k, part in enumerate(parts):
            ids.append(part)
            edges.append(start + (end - start) * k / len(parts))
    ids.append(EOS_ID)
    edges.append(float(phones[-1]["end"]) if phones else 0.0)
    bounds = np.clip(np.round(np.array(edges) * SAMPLE_RATE / HOP).astype(np.int64), 0, n_frames)
    bounds = np.maximum.accumulate(bounds)
    bounds = np.append(bounds, n_frames)
    return np.array(ids, dtype=np.int64), np.diff(bounds)


def frames_cache_path(cache_dir: Path, audio_path: Path) -> Path:
    key = hashlib.sha1(str(audio_path.resolve()).encode()).hexdigest()[:16]
    return cache_dir / f"{key}.npy"


def _analyze_to_cache(args: tuple[str, str, str, str]) -> None:
    """(audio path, cache path, F0 tracker, envelope): measure the clip's acoustic frames and write them
    atomically."""
    from sonare.audio.io import load_audio
    from sonare.audio.resample import resample
    from sonare.tts.acoustic import analyze

    audio_path, out_path, f0_tracker, envelope = args
    audio, rate = load_audio(audio_path)
    if rate != SAMPLE_RATE:
        audio = resample(audio, rate, SAMPLE_RATE)
    frames = analyze(audio, SAMPLE_RATE, f0_tracker, envelope)
    tmp = f"{out_path}.{os.getpid()}.tmp.npy"
    np.save(tmp, frames)
    os.replace(tmp, out_path)


def load_examples(
    manifests: Iterable[str | os.PathLike],
    cache_dir: str | os.PathLike,
    task: str = "tts",
    split: str = "train",
    teachers: list[str] | None = None,
    workers: int = 2,
    progress: bool = True,
    f0_tracker: str = "dio",
    envelope: str = "cheaptrick",
) -> list[Example]:
    """Examples for `split` from every manifest line tagged with `task`, analysing uncached audio first (a cache
    holds the frames of one analysis: name a cache per F0 tracker and envelope)."""
    from sonare.data.manifest import read_manifest

    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    examples, audio_paths = [], []
    for manifest in manifests:
        root = Path(manifest).parent
        for rec in read_manifest(manifest):
            if task not in rec.get("tasks", [task]) or rec["split"] != split:
                continue
            if teachers and rec["teacher"] not in teachers:
                continue
            ids, durations = token_ids_and_durations(rec["phonemes"], rec["phones"], rec["duration"])
            audio_path = root / rec["audio"]
            frames_path = frames_cache_path(cache, audio_path)
            text = rec.get("normalized") or rec["text"]
            examples.append(Example(rec["id"], rec["speaker"], ids, durations, frames_path, text))
            audio_paths.append(audio_path)
    cache_frames(audio_paths, cache, workers, progress, f0_tracker, envelope)
    return examples


def cache_frames(
    audio_paths: list[Path],
    cache_dir: Path,
    workers: int,
    progress: bool = True,
    f0_tracker: str = "dio",
    envelope: str = "cheaptrick",
) -> list[Path]:
    """Measure the acoustic frames of the clips not yet in the cache (in `workers` processes); -> every clip's
    cache path, in order."""
    from tqdm import tqdm

    paths = [frames_cache_path(cache_dir, audio) for audio in audio_paths]
    todo = [(str(a), str(p), f0_tracker, envelope) for a, p in zip(audio_paths, paths, strict=True) if not p.exists()]
    if todo:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            jobs = pool.map(_analyze_to_cache, todo, chunksize=4)
            for _ in tqdm(jobs, total=len(todo), desc="acoustic analysis", disable=not progress):
                pass
    return paths


def load_frames(example: Example) -> np.ndarray:
    """The cached frames, trimmed or edge-padded to the example's duration total."""
    frames = np.load(example.frames_path)
    t = example.n_frames
    if len(frames) >= t:
        return frames[:t]
    return np.concatenate([frames, np.repeat(frames[-1:], t - len(frames), axis=0)])
