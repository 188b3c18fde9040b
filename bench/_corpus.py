"""Papers with unique, realistic text for the benchmarks (not the sample repeated).

Repeating the sample's 1,333 abstracts would make the store look small: Parquet's
dictionary encoding and zstd find the repeats. Here every title and abstract is drawn
word by word from the sample's own vocabulary at its word frequencies, with its lengths,
so text compresses like real text or a little worse (conservative for sizes); authors
are the sample's first and last names recombined, categories the sample's own lists.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

from pipeline.replay import sample

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class _Pool:
    words: list[str]
    cum_weights: list[int]
    abstract_lengths: list[int]
    title_lengths: list[int]
    first_names: list[str]
    last_names: list[str]
    author_counts: list[int]
    categories: list[tuple[str, ...]]


@cache
def _pool() -> _Pool:
    entries = [e for e in sample.entries() if e.version == 1]
    counts = Counter(w for e in entries for w in _WORD.findall(e.abstract))
    names = [a.split() for e in entries for a in e.authors if len(a.split()) >= 2]
    return _Pool(list(counts), list(itertools.accumulate(counts.values())),
                 [len(_WORD.findall(e.abstract)) for e in entries],
                 [len(_WORD.findall(e.title)) for e in entries],
                 sorted({n[0] for n in names}), sorted({n[-1] for n in names}),
                 [len(e.authors) for e in entries], [e.categories for e in entries])


class Corpus:
    """A seeded source of papers: the same seed gives the same papers."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.pool = _pool()

    def text(self, words: int) -> str:
        pool = self.pool
        return " ".join(self.rng.choices(pool.words, cum_weights=pool.cum_weights, k=words))

    def abstract(self) -> str:
        return self.text(self.rng.choice(self.pool.abstract_lengths))

    def title(self) -> str:
        return self.text(self.rng.choice(self.pool.title_lengths)).capitalize()

    def authors(self) -> list[str]:
        p = self.pool
        return [f"{self.rng.choice(p.first_names)} {self.rng.choice(p.last_names)}"
                for _ in range(self.rng.choice(p.author_counts))]

    def paper(self, arxiv_id: str, version: int, published: dt.datetime,
              updated: dt.datetime) -> dict:
        """An arXiv snapshot row (fetched when updated)."""
        categories = list(self.rng.choice(self.pool.categories))
        return {"arxiv_id": arxiv_id, "version": version, "title": self.title(),
                "abstract": self.abstract(), "authors": self.authors(),
                "categories": categories, "primary_category": categories[0],
                "comment": f"{self.rng.randint(6, 40)} pages, {self.rng.randint(1, 12)} figures",
                "journal_ref": None, "doi": None, "published": published, "updated": updated,
                "fetched_at": updated + dt.timedelta(hours=6)}


def ids_of_month(year: int, month: int, count: int, start: int = 1, step: int = 2
                 ) -> list[str]:
    """arXiv ids of a month, from number `start` on, every `step`th: cs.* takes ~45% of
    arXiv's ~28,000 numbers a month."""
    return [f"{year % 100:02d}{month:02d}.{start + i * step:05d}" for i in range(count)]
