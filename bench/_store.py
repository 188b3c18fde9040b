"""A year of cs.* as the benchmarks seed it: a store of N papers with unique text
(bench/_corpus.py) spread over the 12 months before START, 25% revised, 10% picked by
Hugging Face and 10% with a digest; and a day of arXiv after it (~1,000 new papers and
~300 revisions of the last three months' papers)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from _corpus import Corpus, ids_of_month

from pipeline import config as config_mod
from pipeline.derive.enrich import derive
from pipeline.merge import merge_arxiv
from pipeline.replay import sample
from pipeline.store import Store
from pipeline.tables import ARXIV_SNAPSHOT, DIGESTS, PAPERS, VERSIONS, empty

START = dt.datetime(2026, 11, 24, tzinfo=dt.UTC)  # the seed ends here; the days cross a month
NEW_PER_DAY, REVISED_PER_DAY, DIGESTS_PER_DAY, PICKS_PER_DAY = 1000, 300, 150, 50


def _months_before() -> list[tuple[int, int]]:
    """The 12 months up to START's, oldest first, as (year, month)."""
    last = START.year * 12 + START.month - 1
    return [(year, month + 1) for year, month in (divmod(last - k, 12) for k in range(11, -1, -1))]


def digest(corpus: Corpus, arxiv_id: str, version: int, when: dt.datetime) -> dict:
    return {"arxiv_id": arxiv_id, "version": version, "language": "zh-CN", "model": "bench",
            "prompt_hash": "b", "status": "ok", "superseded": False,
            "tldr": corpus.text(25), "motivation": corpus.text(60),
            "method": corpus.text(80), "results": corpus.text(60),
            "conclusion": corpus.text(40), "attempts": 1, "tokens_in": 900,
            "tokens_out": 300, "created": when}


def seed(cfg: config_mod.Config, corpus: Corpus, n: int) -> list[str]:
    """The store of n papers; returns their ids, oldest first."""
    rows, revised, digests = [], [], []
    months = _months_before()
    per_month = n // len(months)
    for year, month in months:
        first = dt.datetime(year, month, 1, tzinfo=dt.UTC)
        for i, arxiv_id in enumerate(ids_of_month(year, month, per_month,
                                                  step=max(1, 28_000 // per_month))):
            when = min(first + dt.timedelta(minutes=i * 28 * 24 * 60 // per_month), START)
            row = corpus.paper(arxiv_id, 1, when, when)
            rows.append(row)
            if i % 4 == 0:
                later = min(when + dt.timedelta(days=20), START)
                revised.append({**corpus.paper(arxiv_id, 2, when, later),
                                "title": row["title"]})
            if i % 10 == 0:
                digests.append(digest(corpus, arxiv_id, 1, row["fetched_at"]))
    first = merge_arxiv(empty(PAPERS), empty(VERSIONS),
                        pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT), [])
    second = merge_arxiv(first.papers, first.new_versions.select(["arxiv_id", "version"]),
                         pa.Table.from_pylist(revised, schema=ARXIV_SNAPSHOT), [])
    papers = second.papers
    chosen = papers.to_pandas()[["arxiv_id", "published"]].iloc[3::10]
    picks = pa.table({"arxiv_id": chosen["arxiv_id"], "hf_day": chosen["published"].dt.date,
                      "hf_upvotes": pa.array(chosen.index % 97, pa.int32()),
                      "hf_summary": [corpus.text(30) for _ in range(len(chosen))]})
    store = Store(cfg.store_path)
    with store.lock():
        store.write("hf", picks)
        store.write("papers", derive(cfg, papers, {"hf": store.read("hf")}))
        store.write("versions", pa.concat_tables([first.new_versions, second.new_versions]))
        store.write("digests", pa.Table.from_pylist(digests, schema=DIGESTS))
        for source in ("arxiv", "hf"):
            store.append_run({"run_id": f"{START:%Y%m%dT%H%M%SZ}-{source}-seed",
                              "source": source, "started": START, "finished": START,
                              "status": "ok", "watermark_after": START})
    return [r["arxiv_id"] for r in rows]


def day_entries(corpus: Corpus, day: int, ids: list[str], next_number: dict[str, int]
                 ) -> list[sample.Entry]:
    when = START + dt.timedelta(days=day, hours=2)
    month = f"{when:%y%m}"
    if month not in next_number:  # after the seed's numbers of the month, whatever N
        next_number[month] = 1 + max((int(i[5:]) for i in ids if i.startswith(month + ".")),
                                     default=0)
    start = next_number[month]
    new_ids = ids_of_month(when.year, when.month, NEW_PER_DAY, start=start)
    next_number[month] = start + NEW_PER_DAY * 2
    recent = ids[-12_500 * 3:]
    entries = []
    for arxiv_id in new_ids:
        p = corpus.paper(arxiv_id, 1, when, when)
        entries.append(_entry(p, when))
    for _ in range(REVISED_PER_DAY):
        arxiv_id = recent[corpus.rng.randrange(len(recent))]
        p = corpus.paper(arxiv_id, 3 + day, when - dt.timedelta(days=30), when)
        entries.append(_entry(p, when))
    ids += new_ids
    return entries


def _entry(p: dict, announced: dt.datetime) -> sample.Entry:
    return sample.Entry(p["arxiv_id"], p["version"], p["title"], p["abstract"],
                        tuple(p["authors"]), tuple(p["categories"]), p["comment"], None, None,
                        p["published"], p["updated"], announced)
