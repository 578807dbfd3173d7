"""A word trigram language model (interpolated Kneser-Ney) for the recogniser's beam search.

The CTC head spells what it hears letter by letter and knows nothing of which words exist or which follow
which; the beam search (`sonare.stt.beam`) weighs its spellings with this model. Trained by
`sonare train lm` on text only (spoken form: lower-case words, numbers spelled out), stored as
`lm.safetensors` beside the acoustic model.

Interpolated Kneser-Ney with one discount d per order (Chen & Goodman 1998):

    P(c | a b) = max(N(a b c) - d, 0) / N(a b ·)   +   d · T(a b ·) / N(a b ·) · P2(c | b)
    P2(c | b)  = max(N'(· b c) - d, 0) / N'(· b ·) +   d · T'(· b ·) / N'(· b ·) · P1(c)
    P1(c)      = N'(· · c) / N'(· · ·)

N counts, N' continuation counts (how many distinct words precede), T the number of distinct followers.
An unseen history backs off with weight 1. Both discounted terms and backoff weights are precomputed, so
a query is at most five dictionary lookups.
"""

from __future__ import annotations

import collections
import json
import math
import os
from collections.abc import Iterable

import numpy as np

BOS, EOS = "<s>", "</s>"
LM_FILE = "lm.safetensors"


def _pack(vocab_size: int, *ids: int) -> int:
    """One integer key per n-gram of word ids: (a * V + b) * V + c."""
    key = 0
    for i in ids:
        key = key * vocab_size + i
    return key


class WordLM:
    def __init__(
        self,
        vocab: list[str],
        unigram: np.ndarray,
        bigrams: dict[int, float],
        bigram_backoff: dict[int, float],
        trigrams: dict[int, float],
        trigram_backoff: dict[int, float],
        decoding: dict | None = None,
        end_threshold: float | None = None,
        eager_threshold: float | None = None,
        unsure_end: float | None = None,
    ):
        self.vocab = vocab
        self.decoding = decoding or {}  # the beam search settings tuned for this model (`BeamSettings` fields)
        # The turn tracker's end and eager-end thresholds with this model's sentence-end check weighing in, tuned
        # beside the beam for the same acoustic model (None: the acoustic model's own, chosen on its head alone).
        self.end_threshold = end_threshold
        self.eager_threshold = eager_threshold
        # How sure the head must be where these words may end a sentence but likely do not (the middle tier of
        # `sonare.stt.turns.SentenceEndTiers`), where an acoustic model's head needs its own (None: the default).
        self.unsure_end = unsure_end
        self.ids = {w: i for i, w in enumerate(vocab)}
        self.unigram = unigram.tolist()
        self.bigrams, self.bigram_backoff = bigrams, bigram_backoff
        self.trigrams, self.trigram_backoff = trigrams, trigram_backoff
        self.words = frozenset(w for w in vocab if w not in (BOS, EOS))
        self.prefixes = frozenset(w[:i] for w in self.words for i in range(1, len(w) + 1))
        self._cache: dict[tuple[str, str, str], float] = {}

    def _key(self, *ids: int) -> int:
        return _pack(len(self.vocab), *ids)

    def log_prob(self, a: str, b: str, c: str) -> float | None:
        """log P(c | a b) (natural log), or None when c is not in the vocabulary. a, b may be BOS."""
        cached = self._cache.get((a, b, c))
        if cached is not None:
            return cached
        ic = self.ids.get(c)
        if ic is None:
            return None
        ia, ib = self.ids.get(a), self.ids.get(b)
        p = self.unigram[ic]
        if ib is not None:
            p = self.bigrams.get(self._key(ib, ic), 0.0) + self.bigram_backoff.get(ib, 1.0) * p
            if ia is not None:
                ab = self._key(ia, ib)
                p = self.trigrams.get(self._key(ia, ib, ic), 0.0) + self.trigram_backoff.get(ab, 1.0) * p
        lp = math.log(p)
        if len(self._cache) > 200_000:
            self._cache.clear()
        self._cache[(a, b, c)] = lp
        return lp

    # -- building and storage ---------------------------------------------------------------------------

    @staticmethod
    def train(sentences: Iterable[str], discount: float = 0.75) -> WordLM:
        """A model of `sentences` (spoken form, words separated by spaces)."""
        c3: collections.Counter[tuple[str, str, str]] = collections.Counter()
        for sentence in sentences:
            words = [BOS, BOS, *sentence.split(), EOS]
            c3.update(zip(words, words[1:], words[2:], strict=False))
        vocab = [BOS, EOS] + sorted({w for gram in c3 for w in gram} - {BOS, EOS})
        ids = {w: i for i, w in enumerate(vocab)}
        v = len(vocab)
        # Highest order: counts.
        hist3: collections.Counter[tuple[str, str]] = collections.Counter()
        types3: collections.Counter[tuple[str, str]] = collections.Counter()
        cont2: collections.Counter[tuple[str, str]] = collections.Counter()
        for (a, b, c), n in c3.items():
            hist3[a, b] += n
            types3[a, b] += 1
            cont2[b, c] += 1
        # Lower orders: continuation counts.
        hist2: collections.Counter[str] = collections.Counter()
        types2: collections.Counter[str] = collections.Counter()
        cont1: collections.Counter[str] = collections.Counter()
        for (b, c), n in cont2.items():
            hist2[b] += n
            types2[b] += 1
            cont1[c] += 1
        total = sum(cont1.values())
        unigram = np.array([cont1.get(w, 0) / total for w in vocab])
        unigram[ids[BOS]] = 0.0
        unigram = np.maximum(unigram, 0.5 / total)  # a word only ever seen first still has some mass
        # Singletons are dropped to keep the model small; their discounted mass moves to the backoff weight,
        # so every distribution still sums to one.
        trigrams, trigram_backoff = {}, {}
        for (a, b), n in hist3.items():
            trigram_backoff[_pack(v, ids[a], ids[b])] = discount * types3[a, b] / n
        for (a, b, c), n in c3.items():
            if n > 1:
                trigrams[_pack(v, ids[a], ids[b], ids[c])] = (n - discount) / hist3[a, b]
            else:
                trigram_backoff[_pack(v, ids[a], ids[b])] += (n - discount) / hist3[a, b]
        bigrams, bigram_backoff = {}, {}
        for b, n in hist2.items():
            bigram_backoff[ids[b]] = discount * types2[b] / n
        for (b, c), n in cont2.items():
            if n > 1:
                bigrams[_pack(v, ids[b], ids[c])] = (n - discount) / hist2[b]
            else:
                bigram_backoff[ids[b]] += (n - discount) / hist2[b]
        return WordLM(vocab, unigram, bigrams, bigram_backoff, trigrams, trigram_backoff)

    def save(self, path: str | os.PathLike) -> None:
        from safetensors.numpy import save_file

        def table(d: dict[int, float], name: str) -> dict[str, np.ndarray]:
            keys = np.fromiter(d.keys(), np.int64, len(d))
            return {f"{name}.keys": keys, f"{name}.values": np.fromiter(d.values(), np.float32, len(d))}

        tensors = {"unigram": np.asarray(self.unigram, np.float32)}
        tensors |= table(self.bigrams, "bigrams") | table(self.bigram_backoff, "bigram_backoff")
        tensors |= table(self.trigrams, "trigrams") | table(self.trigram_backoff, "trigram_backoff")
        metadata = {"vocab": json.dumps(self.vocab), "decoding": json.dumps(self.decoding)}
        for name in ("end_threshold", "eager_threshold", "unsure_end"):
            if getattr(self, name) is not None:
                metadata[name] = str(getattr(self, name))
        save_file(tensors, str(path), metadata=metadata)

    @staticmethod
    def load(path: str | os.PathLike) -> WordLM:
        from safetensors import safe_open
        from safetensors.numpy import load_file

        with safe_open(str(path), framework="np") as f:
            meta = f.metadata()
        t = load_file(str(path))

        def table(name: str) -> dict[int, float]:
            return dict(zip(t[f"{name}.keys"].tolist(), t[f"{name}.values"].tolist(), strict=True))

        return WordLM(
            json.loads(meta["vocab"]),
            t["unigram"],
            table("bigrams"),
            table("bigram_backoff"),
            table("trigrams"),
            table("trigram_backoff"),
            json.loads(meta.get("decoding", "{}")),
            float(meta["end_threshold"]) if "end_threshold" in meta else None,
            float(meta["eager_threshold"]) if "eager_threshold" in meta else None,
            float(meta["unsure_end"]) if "unsure_end" in meta else None,
        )
