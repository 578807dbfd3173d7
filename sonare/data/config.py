"""Corpus recipes: a YAML file listing sections that are built in order.

A section renders utterances until it holds `hours` of audio (or `items` utterances). Kinds:
- `speech`: a teacher reads generated sentences with a set of speakers (voice + transform);
- `augment`: acoustic copies (noise, reverberation, telephone, codecs, level, clipping) of
  utterances from earlier sections, at 16 kHz, for recognition;
- `conversation`: one speaker's side of a dialogue, turns and in-turn holds joined by labelled
  pauses, for turn detection;
- `recordings`: a dataset of real recordings at `path` (LJSpeech layout, or one such folder per speaker),
  all of it, aligned like the teachers' speech (`sonare.data.recordings`).
See configs/data-default.yaml for every option in use.

A recipe may name a `base` recipe and change only what differs, its `sections` merged by name
(`sonare.recipe`; configs/data-stt-variety3.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sonare.recipe import read_recipe
from sonare.text.sentences import STYLES


@dataclass
class Section:
    name: str
    kind: str
    hours: float = 0.0
    items: int | None = None  # when set, the section is full at this many items instead of `hours`
    split: str = "train"
    tasks: list[str] = field(default_factory=lambda: ["tts", "stt"])
    teacher: str = ""
    voices: list[str] = field(default_factory=list)
    # Speakers per voice: 0 keeps the voice as it is; n > 0 draws n transforms from `transform`.
    speakers_per_voice: int = 0
    transform: dict[str, list[float]] = field(default_factory=dict)
    rate: list[float] = field(default_factory=lambda: [1.0, 1.0])
    sentence_split: str = "train"
    sentence_style: str = "mixed"  # "answers": lone values ("Tuesday.", "42."), sonare.text.sentences
    sample_rate: int | None = None  # None keeps the teacher's native rate
    max_seconds: float = 12.0
    sources: list[str] = field(default_factory=list)
    acoustic: dict[str, Any] = field(default_factory=dict)
    conversation: dict[str, Any] = field(default_factory=dict)
    path: str = ""  # recordings: the dataset folder


@dataclass
class CorpusConfig:
    name: str
    seed: int
    language: str
    sections: list[Section]

    def section(self, name: str) -> Section:
        for s in self.sections:
            if s.name == name:
                return s
        raise KeyError(name)


KINDS = ("speech", "augment", "conversation", "recordings")


def load_config(path: str | Path) -> CorpusConfig:
    raw = read_recipe(path)
    sections = [Section(**s) for s in raw["sections"]]
    names = [s.name for s in sections]
    if len(set(names)) != len(names):
        raise ValueError("section names must be unique")
    for s in sections:
        if s.kind not in KINDS:
            raise ValueError(f"section {s.name}: kind must be one of {KINDS}")
        if s.split not in ("train", "heldout"):
            raise ValueError(f"section {s.name}: split must be train or heldout")
        if s.kind == "speech" and not (s.teacher and s.voices):
            raise ValueError(f"section {s.name}: speech needs a teacher and voices")
        if s.sentence_style not in STYLES:
            raise ValueError(f"section {s.name}: sentence_style must be one of {STYLES}")
        if s.kind == "recordings":
            from sonare.data.recordings import read_recordings

            if not s.path:
                raise ValueError(f"section {s.name}: recordings need a path")
            s.items = len(read_recordings(s.path))  # the whole dataset, whatever its hours
        for source in s.sources:
            if source not in names[: names.index(s.name)]:
                raise ValueError(f"section {s.name}: source {source!r} must be an earlier section")
    return CorpusConfig(
        name=raw["name"], seed=int(raw["seed"]), language=raw.get("language", "en-us"), sections=sections
    )
