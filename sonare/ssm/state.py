"""Batched stream state: named tensors whose first dimension is the stream (row).

Every streaming model in Sonare keeps its whole per-stream context in one of these. Because a stream is
one row, the engine admits a stream by resetting a row, batches streams by gathering rows, and retires a
stream by freeing its row: no per-stream Python objects on the hot path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import torch
from torch import Tensor


class BatchState(Mapping[str, Tensor]):
    """An immutable-keyed mapping of tensors that share their leading (batch) dimension."""

    def __init__(self, tensors: Mapping[str, Tensor]):
        sizes = {t.shape[0] for t in tensors.values()}
        if len(sizes) > 1:
            raise ValueError(f"state tensors disagree on batch size: {sorted(sizes)}")
        self._tensors = dict(tensors)

    def __getitem__(self, name: str) -> Tensor:
        return self._tensors[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)

    @property
    def batch_size(self) -> int:
        return next(iter(self._tensors.values())).shape[0] if self._tensors else 0

    def nbytes_per_row(self) -> int:
        """Memory one stream occupies, in bytes."""
        return sum(t[0].numel() * t.element_size() for t in self._tensors.values())

    def replace(self, **updates: Tensor) -> BatchState:
        merged = dict(self._tensors)
        for name, value in updates.items():
            if name not in merged:
                raise KeyError(f"unknown state tensor {name!r}")
            merged[name] = value
        return BatchState(merged)

    def gather(self, rows: Tensor) -> BatchState:
        """A new state holding copies of `rows` (a 1-D long tensor), in that order."""
        return BatchState({k: v.index_select(0, rows) for k, v in self._tensors.items()})

    def scatter_(self, rows: Tensor, src: BatchState) -> None:
        """Write `src` (batch == len(rows)) back into `rows`, in place."""
        for k, v in self._tensors.items():
            v.index_copy_(0, rows, src[k])

    def reset_(self, rows: Tensor) -> None:
        """Zero `rows` in place: an admitted stream starts from a clean state."""
        for v in self._tensors.values():
            v.index_fill_(0, rows, 0)

    def detach(self) -> BatchState:
        return BatchState({k: v.detach() for k, v in self._tensors.items()})

    def to(self, *args, **kwargs) -> BatchState:
        return BatchState({k: v.to(*args, **kwargs) for k, v in self._tensors.items()})

    @staticmethod
    def merge(parts: Mapping[str, BatchState]) -> BatchState:
        """Combine several states under name prefixes (`prefix.name`), for models built from parts."""
        return BatchState({f"{p}.{k}": v for p, s in parts.items() for k, v in s.items()})

    def part(self, prefix: str) -> BatchState:
        """The sub-state stored under `prefix` by `merge`."""
        head = prefix + "."
        return BatchState({k[len(head) :]: v for k, v in self._tensors.items() if k.startswith(head)})

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}: {tuple(v.shape)}" for k, v in self._tensors.items())
        return f"BatchState({shapes})"


def zeros_state(shapes: Mapping[str, tuple[int, ...]], batch: int, **tensor_kwargs) -> BatchState:
    """Allocate a zero state; `shapes` gives each tensor's shape without the batch dimension."""
    return BatchState({k: torch.zeros((batch, *shape), **tensor_kwargs) for k, shape in shapes.items()})
