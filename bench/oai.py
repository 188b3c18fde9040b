"""A year's backfill through OAI-PMH: requests, time at arXiv's 3 s and peak memory.

The `oai` source harvests a year of synthetic cs papers from the local replay of arXiv's
OAI-PMH (2,500 records a page, arXiv's RECORDS_LIMIT), delays at 0, into an empty store;
the time it would take against arXiv adds 3 s of waiting per request (arXiv's terms; the
pacer counts from the end of one response to the next request) to the measured time,
which stands in for arXiv's own time per page. Entries are the real sample's papers cloned
under new ids, so their text has the real distributions.
Run: .venv/bin/python bench/oai.py [N]   (default 180,000: ~150,000 cs papers a year and
their cross-lists; `--smoke`: 3,000)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import resource
import tempfile
import time
from pathlib import Path

from pipeline import config as config_mod
from pipeline import ingest
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.store import Store

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
YEAR = dt.timedelta(days=365)


def synthetic(n: int) -> list[sample.Entry]:
    """`n` papers announced evenly over the year before NOW (ids 2601.00001…)."""
    base = [e for e in sample.entries() if e.version == 1]
    out = []
    for i in range(n):
        when = NOW - YEAR + YEAR * (i / n)
        out.append(dataclasses.replace(
            base[i % len(base)], arxiv_id=f"26{1 + i // 99999:02d}.{1 + i % 99999:05d}",
            published=when, updated=when, announced=when))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=180_000)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    n = 3_000 if args.smoke else args.n
    entries = synthetic(n)
    with tempfile.TemporaryDirectory() as tmp, ArxivReplay(entries, as_of=NOW) as replay:
        path = Path(tmp) / "papertrail.toml"
        path.write_text(f'[store]\npath = "data"\n[sources.arxiv]\noai_url = '
                        f'"{replay.oai_url}"\ndelay_seconds = 0\nbackfill_days = 365\n'
                        'max_run_seconds = 7200\n', encoding="utf-8")
        cfg = config_mod.load(path)
        began = time.perf_counter()
        report = ingest.ingest(cfg, Store(cfg.store_path), "oai", now=NOW)
        took = time.perf_counter() - began
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        stored = Store(cfg.store_path).rows("papers")
    print(f"{n:,} records over a year: {report.status}, {stored:,} papers stored, "
          f"{report.requests} requests, {took:.1f} s here, peak {rss:,.0f} MiB")
    print(f"against arXiv at 3 s a request: {report.requests * 3 / 60:.1f} min of waiting, "
          f"~{(report.requests * 3 + took) / 60:.1f} min in all (arXiv's own time per page "
          "not counted beyond ours)")


if __name__ == "__main__":
    main()
