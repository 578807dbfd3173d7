"""Building a corpus from a recipe: plan items deterministically, render them in parallel, append.

Resuming: every item has an id fixed by the recipe (section name + index) and its parameters are
drawn from a random generator seeded by (recipe seed, section, index), so a restarted build plans
the same items, skips the ids already in the manifest and continues where it stopped. Results
are appended in plan order, so an interrupted build followed by a resumed one writes the same
manifest as one uninterrupted run. A section is complete once it holds `hours` of audio (or
`items` utterances).
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import os
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sonare.data.config import CorpusConfig, Section
from sonare.data.manifest import MANIFEST_NAME, ManifestWriter, read_manifest
from sonare.data.speakers import SpeakerTransform, sample_transform

# How many sentences to ask for per hour of audio: more than any section uses (sentences
# average over two seconds), so the plan never runs out.
SENTENCES_PER_HOUR = 2400
# A brisk reading pace, to keep sentences under a section's `max_seconds` before synthesising them.
WORDS_PER_SECOND = 2.8


def item_rng(seed: int, section: str, index: int, purpose: str = "") -> np.random.Generator:
    """The generator behind one item's choices: the same for the same recipe, section and index."""
    return np.random.default_rng([seed, zlib.crc32(section.encode()), index, zlib.crc32(purpose.encode())])


def speaker_id(teacher: str, voice: str, transform: SpeakerTransform) -> str:
    if transform.is_identity:
        return f"{teacher}:{voice}"
    digest = hashlib.sha1(json.dumps(transform.to_dict(), sort_keys=True).encode()).hexdigest()[:8]
    return f"{teacher}:{voice}:{digest}"


def section_speakers(config: CorpusConfig, section: Section) -> list[tuple[str, str, SpeakerTransform]]:
    """(speaker id, voice, transform) for every speaker of a speech section."""
    speakers = []
    for v, voice in enumerate(section.voices):
        if section.speakers_per_voice == 0:
            transform = SpeakerTransform()
            speakers.append((speaker_id(section.teacher, voice, transform), voice, transform))
            continue
        for k in range(section.speakers_per_voice):
            rng = item_rng(config.seed, section.name, v * 1000 + k, "speaker")
            transform = SpeakerTransform.from_dict(sample_transform(rng, section.transform).to_dict())
            speakers.append((speaker_id(section.teacher, voice, transform), voice, transform))
    return speakers


def section_sentences(config: CorpusConfig, section: Section) -> list[str]:
    from sonare.text.sentences import generate_sentences

    n = max(16, int(section.hours * SENTENCES_PER_HOUR) + 16, 4 * (section.items or 0))
    seed = config.seed + zlib.crc32(section.name.encode())
    return generate_sentences(n, seed, split=section.sentence_split, style=section.sentence_style)


def audio_path(section: Section, item_id: str, index: int) -> str:
    return f"audio/{section.name}/{index // 1000:03d}/{item_id}.flac"


def plan_speech(config: CorpusConfig, section: Section) -> Iterator[dict[str, Any]]:
    from sonare.text import normalize

    speakers = section_speakers(config, section)
    for index, text in enumerate(section_sentences(config, section)):
        if len(text.split()) > section.max_seconds * WORDS_PER_SECOND:
            continue  # too long for one training utterance
        rng = item_rng(config.seed, section.name, index)
        speaker, voice, transform = speakers[int(rng.integers(len(speakers)))]
        item_id = f"{section.name}-{index:06d}"
        yield {
            "kind": "speech",
            "id": item_id,
            "section": section.name,
            "audio": audio_path(section, item_id, index),
            "text": text,
            "normalized": normalize(text),
            "speaker": speaker,
            "teacher": section.teacher,
            "voice": voice,
            "rate": round(float(rng.uniform(*section.rate)), 3),
            "transform": transform.to_dict(),
            "language": config.language,
            "split": section.split,
            "tasks": section.tasks,
            "sample_rate": section.sample_rate,
        }


def plan_section(config: CorpusConfig, section: Section, records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    if section.kind == "speech":
        return plan_speech(config, section)
    if section.kind == "augment":
        from sonare.data.augment import plan_augment

        return plan_augment(config, section, records)
    if section.kind == "recordings":
        from sonare.data.recordings import plan_recordings

        return plan_recordings(section, config.language)
    from sonare.data.conversations import plan_conversations

    return plan_conversations(config, section)


def render_item(spec: dict[str, Any], corpus_dir: str) -> dict[str, Any]:
    if spec["kind"] == "speech":
        from sonare.data.render import render_speech

        return render_speech(spec, corpus_dir)
    if spec["kind"] == "augment":
        from sonare.data.augment import render_augment

        return render_augment(spec, corpus_dir)
    if spec["kind"] == "recordings":
        from sonare.data.recordings import render_recording

        return render_recording(spec, corpus_dir)
    from sonare.data.conversations import render_conversation

    return render_conversation(spec, corpus_dir)


def _init_worker() -> None:
    # One core per worker: several workers, each single-threaded, use the cores best.
    import warnings

    import torch

    torch.set_num_threads(1)
    os.environ["OMP_NUM_THREADS"] = "1"
    # pyworld imports pkg_resources, which warns once per worker and clutters the build log.
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated")


def _worker_pool(workers: int) -> ProcessPoolExecutor:
    """Workers start as fresh interpreters (spawn): a forked worker would inherit the parent's open
    files and locks, and torch's thread pool, which hangs when used after a fork."""
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker)


def _skip_problem(spec: dict[str, Any], error: BaseException) -> None:
    print(f"skipping {spec['id']}: {type(error).__name__}: {error}", flush=True)


@dataclass
class _Fill:
    """How much audio (seconds) and how many items a section holds against its target."""

    have: float
    target: float
    count: int
    max_items: int | None

    def full(self) -> bool:
        if self.max_items is not None:
            return self.count >= self.max_items
        return self.have >= self.target


def build_corpus(
    config: CorpusConfig,
    out_dir: str | Path,
    workers: int = 2,
    sections: list[str] | None = None,
    progress: bool = True,
    features: bool = True,
) -> dict[str, float]:
    """Build (or resume) every section in order; returns hours per section."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / MANIFEST_NAME
    # Files a killed run was writing never reached the manifest; their items are rendered again.
    for stale in out.glob("audio/**/.*.tmp"):
        stale.unlink()
    records = list(read_manifest(manifest))
    hours: dict[str, float] = {}
    with ManifestWriter(manifest) as writer, _worker_pool(workers) as pool:
        for section in config.sections:
            if sections and section.name not in sections:
                continue
            hours[section.name] = _build_section(config, section, out, records, writer, pool, workers, progress)
            if features and "stt" in section.tasks:
                from sonare.data.featcache import cache_features

                mine = [r for r in records if r["section"] == section.name]
                cache_features(out, mine, progress=progress, map_fn=functools.partial(pool.map, chunksize=8))
    return hours


def _build_section(config, section, out: Path, records, writer, pool, workers: int, progress: bool) -> float:
    """Render a section's missing items, appending to the manifest and to `records`; returns hours."""
    from tqdm import tqdm

    done = {r["id"] for r in records}
    mine = [r for r in records if r["section"] == section.name]
    fill = _Fill(sum(r["duration"] for r in mine), section.hours * 3600, len(mine), section.items)
    by_items = fill.max_items is not None  # counted in items, not minutes of audio
    bar = tqdm(
        total=fill.max_items if by_items else round(fill.target / 60, 1),
        initial=fill.count if by_items else round(min(fill.have, fill.target) / 60, 1), desc=section.name,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} "
        + ("items" if by_items else "min") + " [{elapsed}<{remaining}]",
        disable=not progress, dynamic_ncols=True, mininterval=5,
    )  # fmt: skip
    if not fill.full():
        plan = (s for s in plan_section(config, section, records) if s["id"] not in done)
        for record in _render_in_order(pool, plan, str(out), workers, fill.full):
            if fill.full():
                (out / record["audio"]).unlink(missing_ok=True)  # finished after the section filled
                continue
            writer.append(record)
            records.append(record)
            fill.have += record["duration"]
            fill.count += 1
            # Capped at the target: the last item may overshoot it, and tqdm drops a total that its count passes.
            bar.update(fill.count - bar.n if by_items else min(fill.have, fill.target) / 60 - bar.n)
    bar.close()
    return fill.have / 3600


def _render_in_order(
    pool: ProcessPoolExecutor,
    plan: Iterator[dict[str, Any]],
    corpus_dir: str,
    workers: int,
    full: Callable[[], bool],
) -> Iterator[dict[str, Any]]:
    """Render specs on the pool, a few ahead of the writer, yielding results in plan order."""
    window: deque[tuple[dict[str, Any], Future]] = deque()
    exhausted = False
    while True:
        while not exhausted and not full() and len(window) < 3 * workers:
            spec = next(plan, None)
            if spec is None:
                exhausted = True
                break
            window.append((spec, pool.submit(render_item, spec, corpus_dir)))
        if not window:
            return
        spec, future = window.popleft()
        try:
            yield future.result()
        except Exception as error:  # one bad sentence must not stop an hours-long build
            _skip_problem(spec, error)
