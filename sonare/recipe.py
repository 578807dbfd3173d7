"""Reading a recipe: the YAML file behind every `--config` of `sonare data build` and `sonare train ...`.

A recipe may name a `base` recipe (a path from the working directory, like every path in a recipe): it is then
that recipe with this one's keys laid over it. Mappings merge key by key (a training stage changes one entry of
`model`, not the whole block); lists of named mappings, such as a corpus recipe's `sections`, merge item by item
by `name`, a new name adding an item at the end; every other value is replaced. So a corpus drawn anew with
another seed, or a training stage continued on another corpus, is a few lines, not a copy.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml


def read_recipe(path: str | os.PathLike) -> dict[str, Any]:
    """The recipe at `path` with its `base` chain resolved."""
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: a recipe is a mapping of keys to values")
    base = raw.pop("base", None)
    return _merge(read_recipe(base), raw) if base else raw


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge(base[k], v) if k in base else v for k, v in over.items()}}
    if _named(base) and _named(over):
        items = {item["name"]: item for item in base}
        for item in over:
            items[item["name"]] = _merge(items[item["name"]], item) if item["name"] in items else item
        return list(items.values())
    return over


def _named(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and "name" in v for v in value)
