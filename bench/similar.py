"""Similar papers at a year of cs.* and what they find. Prints figures; asserts nothing.

Cost, on a store of N papers (default 200,000) with unique text (bench/_store.py):
- every list made anew (`papertrail similar --full`): time, peak memory;
- a day: ~1,000 new papers and ~300 revisions merged in, then `papertrail similar`: time,
  lists made and updated, bytes of table files written;
- an hour that brought no new text: time.
Quality, on real papers (the bundled sample's 1,333, with the week of listings in
../shared/fixtures when it is there): the share of neighbours sharing the paper's primary
category and a topic, each against chance; how many of the exact TF-IDF top 8 (every
pair scored) the two-step search finds; and 20 papers with their three nearest, for
judging by eye (docs/SIMILAR.md has the judgement).

Run: .venv/bin/python bench/similar.py [N]   (--smoke: 2,000 papers)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
from _corpus import Corpus
from _store import START, day_entries, seed

from pipeline import config as config_mod
from pipeline import demo
from pipeline.derive import neighbours as _neighbours
from pipeline.derive import similar
from pipeline.derive.enrich import derive
from pipeline.merge import merge_arxiv
from pipeline.replay import sample
from pipeline.store import Store
from pipeline.tables import ARXIV_SNAPSHOT, PAPERS, VERSIONS, empty
from pipeline.text.taxonomy import CS_CATEGORIES

REPO = Path(__file__).resolve().parent.parent
LISTINGS = REPO.parent / "shared" / "fixtures" / "listings"


def run_cli(cfg: config_mod.Config, *args: str) -> tuple[str, float, float]:
    """`papertrail similar ARGS` in a process of its own: its line, seconds, and the peak
    sum of PSS over it and its workers (pages they share counted once), sampled every
    0.2 s: what a runner must have for them all."""
    began = time.perf_counter()
    command = [sys.executable, "-c", "from pipeline.cli import main; main()"]
    child = subprocess.Popen([*command, "--config", str(cfg.path), "similar", *args],
                             stdout=subprocess.PIPE, text=True)
    peak = 0
    while child.poll() is None:
        peak = max(peak, sum(_pss_kib(p) for p in _tree(child.pid)))
        time.sleep(0.2)
    out = child.stdout.read().strip() if child.stdout else ""
    if child.returncode:
        raise SystemExit(f"papertrail similar failed ({child.returncode})")
    return out, time.perf_counter() - began, peak / 1024


def _tree(pid: int) -> list[int]:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return [pid]
    return [pid, *(p for c in children for p in _tree(int(c)))]


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass  # a worker that just ended
    return 0


def table_bytes(store: Store) -> dict[str, int]:
    return {str(p): p.stat().st_size for p in store.table_files("similar")}


def cost(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "papertrail.toml").write_text('[store]\npath = "data"\n')
        cfg = config_mod.load(Path(tmp) / "papertrail.toml")
        corpus = Corpus(0)
        t = time.perf_counter()
        ids = seed(cfg, corpus, n)
        store = Store(cfg.store_path)
        print(f"store: {n:,} papers seeded in {time.perf_counter() - t:.0f} s")

        line, seconds, mib = run_cli(cfg, "--full")
        size = sum(table_bytes(store).values())
        print(f"full: {line}; {seconds:.1f} s in all; peak memory {mib:,.0f} MiB; table "
              f"{size / 1e6:.1f} MB")

        before = table_bytes(store)
        papers = store.read("papers")
        batch = pa.Table.from_pylist(
            [{**vars(e), "authors": list(e.authors), "categories": list(e.categories),
              "primary_category": e.categories[0], "fetched_at": e.announced}
             for e in day_entries(corpus, 0, ids, {})], schema=ARXIV_SNAPSHOT)
        versions = store.read("versions", ["arxiv_id", "version"])
        merged = merge_arxiv(papers, versions, batch, list(CS_CATEGORIES))
        store.write("papers", derive(cfg, merged.papers, {}))
        line, seconds, mib = run_cli(cfg)
        written = {p: b for p, b in table_bytes(store).items() if p not in before}
        print(f"a day ({batch.num_rows:,} entries): {line}; {seconds:.1f} s in all; peak "
              f"memory {mib:,.0f} MiB; {len(written)} table files written, "
              f"{sum(written.values()) / 1e6:.2f} MB")
        times = [run_cli(cfg) for _ in range(3)]
        print(f"an hour without new text: {times[0][0]}; median of 3: "
              f"{sorted(t[1] for t in times)[1]:.1f} s in all (Python's start and the "
              "imports included)")


def real_papers() -> pa.Table:
    """The sample's newest versions, and the listings' papers the sample lacks."""
    rows = {e.arxiv_id: {**vars(e), "authors": list(e.authors),
                         "categories": list(e.categories), "primary_category": e.categories[0],
                         "fetched_at": e.announced} for e in sample.entries()}
    when = START
    for path in sorted(LISTINGS.glob("2026-06-??.jsonl")) if LISTINGS.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["id"] not in rows and r["categories"]:
                rows[r["id"]] = {"arxiv_id": r["id"], "version": 1, "title": r["title"],
                                 "abstract": r["summary"], "authors": r["authors"],
                                 "categories": r["categories"],
                                 "primary_category": r["categories"][0], "published": when,
                                 "updated": when, "fetched_at": when}
    batch = pa.Table.from_pylist(list(rows.values()), schema=ARXIV_SNAPSHOT)
    return merge_arxiv(empty(PAPERS), empty(VERSIONS), batch, list(CS_CATEGORIES)).papers


def quality(checks: int) -> None:
    cfg = config_mod.load(demo.CONFIG)
    cfg = dataclasses.replace(cfg, store=dataclasses.replace(cfg.store, path=Path("data")))
    papers = derive(cfg, real_papers(), {})
    with tempfile.TemporaryDirectory() as tmp:
        cfg = dataclasses.replace(cfg, path=Path(tmp) / "papertrail.toml")
        store = Store(cfg.store_path)
        store.write("papers", papers)
        similar.similar(cfg, store)
        table = store.read("similar")
    ids = papers["arxiv_id"].to_pylist()
    at = {i: k for k, i in enumerate(ids)}
    primary = papers["primary_category"].to_pylist()
    topics = [set(t) for t in papers["topics"].to_pylist()]
    titles = papers["title"].to_pylist()
    lists = {a: [at[x] for x in names] for a, names in zip(
        table["arxiv_id"].to_pylist(), table["neighbours"].to_pylist(), strict=True)}
    pairs = [(at[a], b) for a, names in lists.items() for b in names]
    share = np.mean([primary[a] == primary[b] for a, b in pairs])
    counts = np.array(list(Counter(primary).values()))
    chance = float(((counts / counts.sum()) ** 2).sum())
    print(f"quality on {len(ids):,} real papers: neighbours sharing the primary category "
          f"{share:.1%}, chance {chance:.1%}")
    with_topic = [(a, b) for a, b in pairs if topics[a]]
    rng = random.Random(0)
    shuffled = [(a, rng.randrange(len(ids))) for a, _ in with_topic]
    agree = np.mean([bool(topics[a] & topics[b]) for a, b in with_topic])
    base = np.mean([bool(topics[a] & topics[b]) for a, b in shuffled if a != b])
    print(f"  neighbours sharing a topic of a paper in one: {agree:.1%}, random papers "
          f"{base:.1%} ({len(with_topic):,} pairs, {len(cfg.topics)} topics)")
    matrix = _neighbours.vectors([f"{t}\n{a}" for t, a in zip(
        titles, papers["abstract"].to_pylist(), strict=True)])
    cosine = (matrix @ matrix.T).toarray()
    np.fill_diagonal(cosine, -1)
    k = cfg.similar.count
    exact = np.argsort(-cosine, axis=1, kind="stable")[:, :k]
    found = np.mean([len(set(exact[at[a]]) & set(names)) / k for a, names in lists.items()])
    exact_share = np.mean(np.array(primary)[exact] == np.array(primary)[:, None])
    print(f"  the exact top {k} (every pair scored): {found:.1%} of it found; it shares "
          f"the primary category {exact_share:.1%}")
    for a in rng.sample(ids, checks):
        print(f"\n{a} [{primary[at[a]]}] {titles[at[a]]}")
        for b in lists[a][:3]:
            print(f"   → {ids[b]} [{primary[b]}] {titles[b]}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Time and judge similar papers.")
    parser.add_argument("n", nargs="?", type=int, default=200_000, metavar="N")
    parser.add_argument("--smoke", action="store_true", help="2,000 papers")
    args = parser.parse_args()
    began = dt.datetime.now(dt.UTC)
    quality(2 if args.smoke else 20)
    cost(2_000 if args.smoke else args.n)
    print(f"\ndone in {(dt.datetime.now(dt.UTC) - began).total_seconds():.0f} s")


if __name__ == "__main__":
    main()
