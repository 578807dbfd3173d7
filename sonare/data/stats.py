"""Summaries of a built corpus: hours by section, teacher, split and task."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from sonare.data.manifest import MANIFEST_NAME, read_manifest


def corpus_hours(corpus_dir: str | Path) -> dict[str, dict[str, float]]:
    """{"section": {...}, "teacher": {...}, "split": {...}, "task": {...}} -> hours."""
    table: dict[str, dict[str, float]] = {k: defaultdict(float) for k in ("section", "teacher", "split", "task")}
    for record in read_manifest(Path(corpus_dir) / MANIFEST_NAME):
        hours = record["duration"] / 3600
        table["section"][record["section"]] += hours
        table["teacher"][record["teacher"]] += hours
        table["split"][record["split"]] += hours
        for task in record["tasks"]:
            table["task"][task] += hours
    return {k: dict(v) for k, v in table.items()}


def corpus_stats(corpus_dir: str | Path) -> str:
    lines = []
    for group, hours in corpus_hours(corpus_dir).items():
        lines.append(f"{group}:")
        lines += [f"  {name:28s} {h:7.2f} h" for name, h in sorted(hours.items())]
    return "\n".join(lines)
