"""为你推荐: what its data costs and what its ranking finds. Prints figures; asserts nothing.

Budget: the files for-you/ loads (pipeline/site/index/recommend.py) for DAYS days of all cs.*
at PER_DAY new papers a day, with unique text (bench/_corpus.py draws it from the sample's
words: random text compresses no better than real), gzipped as the site stores them, and
the time to make them. The issue's budget: ≤ 1.5 MB for 14 days.

Quality, on the real sample (pipeline/replay/sample, 5 days): seed with 20 papers of one
category from the first two days, rank the later days' papers as foryou.js does (the
mirror in _recommend.score) and count how many of the top 20 list that category, against
the newest 20 (newest first, what the site shows without a profile); the same with the
first days' Hugging Face picks as seeds and later picks as the target; and with the
seeds placed from their own text (as an imported entry or an older saved paper is) rather
than their stored rows.

Run: .venv/bin/python bench/recommend.py [--days 14] [--per-day 570]   (--smoke: tiny)
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter

import numpy as np
from _corpus import Corpus, ids_of_month

from pipeline.replay import sample
from pipeline.site.index import recommend as _recommend
from pipeline.site.writer import gzipped

SEEDS = 20
TOP = 20


def budget(days: int, per_day: int) -> None:
    corpus = Corpus(seed=7)
    ids = ids_of_month(2026, 6, days * per_day)
    docs = [_recommend.Doc(i, corpus.title(), corpus.abstract(),
                           f"10.1000/x{n}" if n % 20 == 0 else None) for n, i in enumerate(ids)]
    # A model's vectors as the site gets them: 384 numbers a paper, random (real ones are
    # no more compressible once reduced to int8).
    vectors = np.random.default_rng(7).standard_normal((len(docs), 384)).astype(np.float32)
    started = time.perf_counter()
    window = _recommend.build(docs, vectors, "all-MiniLM-L6-v2")
    files = _recommend.files(window, 0, 0, days)
    took = time.perf_counter() - started
    sizes = {name: len(data) for name, data in files.items()}
    total = sum(sizes.values())
    print(f"budget: {days} days × {per_day:,} papers = {len(docs):,} papers, "
          f"{window.vectors.shape[1]} dims, {_recommend.TERMS} words a paper, "
          f"{len(window.vocab):,} words, {len(window.term_vectors):,} with a row")
    for name, size in sizes.items():
        print(f"  {name}: {size / 1e6:.3f} MB gzip")
    verdict = "within" if total <= 1.5e6 else "OVER"
    print(f"  total {total / 1e6:.3f} MB gzip (budget 1.5 MB: {verdict}) · made in {took:.1f} s")
    parts(window)


def quality(categories: int) -> None:
    entries = [e for e in sample.entries() if e.version == 1]
    days = sample.days()
    early = [e for e in entries if e.announced.date().isoformat() <= days[1]]
    later = [e for e in entries if e.announced.date().isoformat() > days[1]]
    # Oldest first, as the window is: the newest are last.
    order = sorted(early + later, key=lambda e: (e.announced, e.arxiv_id))
    window = _recommend.build([_recommend.Doc(e.arxiv_id, e.title, e.abstract, e.doi)
                               for e in order])
    row = {e.arxiv_id: i for i, e in enumerate(order)}
    later_rows = np.array(sorted(row[e.arxiv_id] for e in later))
    newest = later_rows[::-1][:TOP]
    print(f"quality: {len(early)} papers in the first {2} days, {len(later)} later; "
          f"{SEEDS} seeds, precision@{TOP}")
    print(f"  {'seeds':<14}{'rows':>8}{'text':>8}{'newest':>8}{'share':>8}")
    counts = Counter(c for e in early for c in e.categories)
    rng = random.Random(0)
    for cat in [c for c, n in counts.most_common() if n >= SEEDS][:categories]:
        seeds = rng.sample([e for e in early if cat in e.categories], SEEDS)
        hit = [cat in order[r].categories for r in range(len(order))]
        _line(cat, window, seeds, row, later_rows, newest, hit)
    picks = {p["paper"]["id"] for day in days for p in json.loads(sample.hf_daily(day) or b"[]")}
    seeds = [e for e in early if e.arxiv_id in picks][:SEEDS]
    _line(f"HF ({len(seeds)})", window, seeds, row, later_rows, newest,
          [order[r].arxiv_id in picks for r in range(len(order))])


def _line(label: str, window: _recommend.Window, seeds: list, row: dict[str, int],
          later_rows: np.ndarray, newest: np.ndarray, hit: list[bool]) -> None:
    """Precision@TOP of ranking by the seeds' rows, by their own text, and newest first."""
    allowed = set(later_rows.tolist())
    by_rows = [_recommend.from_row(window, row[e.arxiv_id]) for e in seeds]
    by_text = [_recommend.embed(window, f"{e.title}\n{e.abstract}") for e in seeds]

    def precision(ranked: list[int] | np.ndarray) -> float:
        top = [r for r in ranked if r in allowed][:TOP]
        return sum(hit[r] for r in top) / TOP

    share = sum(hit[r] for r in later_rows) / len(later_rows)
    print(f"  {label:<14}{precision(_recommend.rank(window, by_rows)):>8.2f}"
          f"{precision(_recommend.rank(window, by_text)):>8.2f}{precision(newest):>8.2f}"
          f"{share:>8.2f}")


def parts(window: _recommend.Window) -> None:
    """Each part of vectors.bin gzipped alone: what each costs."""
    steps = _recommend.as_steps(window.terms).astype(">u2").view(np.uint8)  # as files() has them
    stored = {"terms": steps[:, ::2].tobytes() + steps[:, 1::2].tobytes()}
    for name in ("title_keys", "terms", "term_weights", "idf", "vectors", "term_vectors"):
        data = stored.get(name) or getattr(window, name).tobytes()
        print(f"    {name}: {len(gzipped(data)) / 1e6:.3f} MB gzip")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=14)
    # 14 days of all cs.*: 5,800–8,000 new papers (arXiv's listings of 2026).
    ap.add_argument("--per-day", type=int, default=570)
    ap.add_argument("--categories", type=int, default=6)
    ap.add_argument("--smoke", action="store_true", help="tiny: 2 days of 100, 2 categories")
    args = ap.parse_args()
    if args.smoke:
        args.days, args.per_day, args.categories = 2, 100, 2
    budget(args.days, args.per_day)
    quality(args.categories)


if __name__ == "__main__":
    main()
