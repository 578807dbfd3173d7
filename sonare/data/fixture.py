"""A tiny corpus (a dozen utterances, every section kind) that builds in seconds, for tests.

It uses espeak-ng only, which needs nothing beyond the core dependencies, and is deterministic, so
two builds of the fixture are identical.
"""

from __future__ import annotations

from pathlib import Path

from sonare.data.config import CorpusConfig, Section

FIXTURE_SEED = 7


def fixture_config() -> CorpusConfig:
    return CorpusConfig(
        name="fixture",
        seed=FIXTURE_SEED,
        language="en-us",
        sections=[
            Section(name="speech", kind="speech", items=6, teacher="espeak", voices=["en-us+m3", "en-us+f2"]),
            Section(
                name="speakers", kind="speech", items=2, teacher="espeak", voices=["en-us"],
                speakers_per_voice=2, transform={"pitch_semitones": [-3, 3], "formant_ratio": [0.9, 1.1]},
            ),
            Section(
                name="augmented", kind="augment", items=2, sources=["speech", "speakers"], tasks=["stt"],
                acoustic={
                    "noise": {"prob": 1.0, "snr_db": [5, 20]},
                    "reverb": {"prob": 0.5, "rt60": [0.2, 0.6]},
                    "telephone": {"prob": 0.5},
                },
            ),
            Section(
                name="conversation", kind="conversation", items=1, tasks=["stt", "turn"],
                conversation={
                    "turns": [2, 3], "hold_prob": 1.0, "hold_pause": [0.2, 1.5], "end_pause": [0.3, 2.0],
                    "acoustic": {"noise": {"prob": 1.0, "snr_db": [15, 30]}},
                    "speakers": [{"teacher": "espeak", "voices": ["en-us+m1"]}],
                },
            ),
            Section(name="heldout", kind="speech", items=1, split="heldout", teacher="espeak",
                    voices=["en-gb-scotland+f5"], sentence_split="heldout"),
        ],
    )  # fmt: skip


def build_fixture(out: str | Path, workers: int = 1, progress: bool = False) -> dict[str, float]:
    from sonare.data.build import build_corpus

    return build_corpus(fixture_config(), out, workers=workers, progress=progress)
