"""Topics' precision against judged papers: each shipped topic's tagged papers of the bundled
sample, graded on-topic or not by reading their title and abstract (bench/judgements/topics.csv;
method in docs/TOPICS.md, "How precision is measured"). Prints figures; asserts nothing.

For each topic, with its keyword hits unchecked (`min_similarity = 0`: what the site did
before) and checked against its meaning (the shipped `min_similarity`): papers tagged, the
share of them judged on-topic (precision), and the share of the judged on-topic papers still
tagged (recall on the judged papers: true tags lost by the check). A topic's own examples are
left out of its figures (they define its meaning). `--sweep` prints the same at other
thresholds; `--record` appends the figures to bench/results/topics.csv (`--smoke`: the same
figures, never recorded).

Run: .venv/bin/python bench/topics.py [--sweep] [--record]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
from pathlib import Path

import pyarrow as pa
from _results import machine_load
from _results import record as results_record

from pipeline import config as config_mod
from pipeline import demo
from pipeline.config import Topic
from pipeline.derive import topics as topics_mod
from pipeline.replay import sample

REPO = Path(__file__).resolve().parent.parent
JUDGED = REPO / "bench" / "judgements" / "topics.csv"
Figures = tuple[int, float, float]  # tagged, precision, recall


def papers() -> pa.Table:
    entries = [e for e in sample.entries() if e.version == 1]
    return pa.table({"arxiv_id": [e.arxiv_id for e in entries],
                     "title": [e.title for e in entries],
                     "abstract": [e.abstract for e in entries],
                     "categories": [list(e.categories) for e in entries],
                     "authors": [list(e.authors) for e in entries],
                     "hf_upvotes": pa.array([None] * len(entries), pa.int64())})


def judged() -> dict[str, dict[str, bool]]:
    out: dict[str, dict[str, bool]] = {}
    with JUDGED.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            out.setdefault(row["topic"], {})[row["arxiv_id"]] = row["on_topic"] == "1"
    return out


def figures(table: pa.Table, topics: tuple[Topic, ...], grades: dict[str, dict[str, bool]]
            ) -> dict[str, Figures]:
    ids = table["arxiv_id"].to_pylist()
    tagged: dict[str, set[str]] = {t.slug: set() for t in topics}
    for arxiv_id, slugs in zip(ids, topics_mod.match(table, topics).topics.to_pylist(),
                               strict=True):
        for slug in slugs:
            tagged[slug].add(arxiv_id)
    out = {}
    for t in topics:
        judged_here = {a: g for a, g in grades[t.slug].items() if a not in t.examples}
        unjudged = tagged[t.slug] - judged_here.keys() - set(t.examples)
        if unjudged:
            raise SystemExit(f"{t.slug}: tagged but not judged: {sorted(unjudged)[:5]}")
        kept = tagged[t.slug] - set(t.examples)
        good = sum(judged_here[a] for a in kept)
        out[t.slug] = (len(kept), good / len(kept) if kept else 0.0,
                       good / max(1, sum(judged_here.values())))
    return out


def at(topics: tuple[Topic, ...], threshold: float) -> tuple[Topic, ...]:
    return tuple(dataclasses.replace(t, min_similarity=threshold) for t in topics)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", action="store_true", help="also other thresholds")
    ap.add_argument("--record", action="store_true", help="append to bench/results/topics.csv")
    ap.add_argument("--smoke", action="store_true", help="print only (it is quick anyway)")
    args = ap.parse_args()
    load = machine_load()
    topics = config_mod.load(demo.CONFIG).topics  # the shipped topics, as the demo has them
    table, grades = papers(), judged()
    before, after = figures(table, at(topics, 0.0), grades), figures(table, topics, grades)
    print(f"{'topic':24} {'tagged':>7} {'precision':>10}   {'tagged':>7} {'precision':>10} "
          f"{'recall':>7}\n{'':24} {'(before)':>18}   {'(after: checked by meaning)':>26}")
    for slug in before:
        b, a = before[slug], after[slug]
        print(f"{slug:24} {b[0]:7d} {b[1]:10.2f}   {a[0]:7d} {a[1]:10.2f} {a[2]:7.2f}")
    mean = [sum(f[k] for f in d.values()) / len(d) for d in (before, after) for k in (1, 2)]
    print(f"{'mean':24} {'':7} {mean[0]:10.2f}   {'':7} {mean[2]:10.2f} {mean[3]:7.2f}")
    if args.sweep:
        for threshold in (0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1):
            f = figures(table, at(topics, threshold), grades)
            print(f"{threshold:.2f}: " + "  ".join(f"{s[:8]} {p:.2f}/{r:.2f}"
                                                   for s, (_, p, r) in f.items()))
    if args.record and not args.smoke:
        rows = [(f"{what}.{when}.{slug}", value, unit) for when, d in (("before", before),
                                                                       ("after", after))
                for slug, (n, p, r) in d.items()
                for what, value, unit in (("tagged", n, "papers"), ("precision", p, "share"),
                                          ("recall", r, "share"))]
        print(results_record("topics", table.num_rows, rows, load))


if __name__ == "__main__":
    main()
