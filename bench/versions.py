"""Every version's text after a backfill or an outage: how many runs of the `versions` source
it takes, the requests of each run and the time, at the default `version_texts_per_run`.

OAI-PMH brings each paper at its current version only, so a paper first stored at v2 lacks
the text of v1 until the `versions` source fetches it from the export API by versioned id.
Two cases, each from the local replay (delays at 0) into an empty store:

- a year's backfill: `n` papers announced evenly over the year (the real sample's papers
  cloned under new ids), every 4th revised once and every 20th twice (~30% more versions
  than papers, as arXiv's cs), harvested by one OAI-PMH run;
- a 106-day outage shaped like the held-out replay of today's arXiv: 13,906 papers and
  16,757 versions, of which a run before the outage stored 106 papers at v1 that were
  revised inside it, and 2,745 papers were created and revised inside it (one version of
  each stored by the OAI-PMH run after it, so 14,012 versions stored).

Then `versions` runs, as the hourly runs would, until no text is missing. The time against
arXiv adds 3 s of waiting per request (arXiv's terms) to the time measured here.
Run: .venv/bin/python bench/versions.py [N]   (default 150,000 papers a year; `--smoke`:
3,000, and the outage case at a tenth)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import math
import tempfile
import time
from pathlib import Path

from pipeline import config as config_mod
from pipeline import ingest
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.oai import OAI_LAG
from pipeline.sources._source import VERSION_KEYS, Library
from pipeline.sources.versions import missing_texts
from pipeline.store import Store

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
YEAR = dt.timedelta(days=365)
OUTAGE = dt.timedelta(days=106)
ARXIV_DELAY = 3.0


def papers(n: int, start: dt.datetime, span: dt.timedelta, first: int = 0) -> list[sample.Entry]:
    """`n` papers announced evenly over `span` from `start`, ids from 2601.00001 + `first`."""
    base = [e for e in sample.entries() if e.version == 1]
    out = []
    for i in range(first, first + n):
        when = start + span * ((i - first) / n)
        out.append(dataclasses.replace(
            base[i % len(base)], arxiv_id=f"26{1 + i // 99999:02d}.{1 + i % 99999:05d}",
            published=when, updated=when, announced=when))
    return out


def revision(entry: sample.Entry, version: int, when: dt.datetime) -> sample.Entry:
    """Another version of `entry`, announced at `when`, with a sentence added."""
    return dataclasses.replace(entry, version=version, updated=when, announced=when,
                               abstract=f"{entry.abstract} Revised in v{version}.")


def _config(root: Path, replay: ArxivReplay) -> config_mod.Config:
    path = root / "papertrail.toml"
    path.write_text(f'[store]\npath = "data"\n[sources.arxiv]\napi_url = "{replay.url}"\n'
                    f'oai_url = "{replay.oai_url}"\ndelay_seconds = 0\nbackfill_days = 365\n'
                    'max_run_seconds = 7200\n', encoding="utf-8")
    return config_mod.load(path)


def _missing(store: Store) -> int:
    return len(missing_texts(Library(store.read("papers"),
                                     store.read("versions", columns=VERSION_KEYS))))


def catch_up(label: str, entries: list[sample.Entry], harvests: list[dt.datetime]) -> None:
    """OAI-PMH at each of `harvests`, then `versions` hourly until every text is stored."""
    with tempfile.TemporaryDirectory() as tmp, ArxivReplay(entries) as replay:
        cfg = _config(Path(tmp), replay)
        store = Store(cfg.store_path)
        for at in harvests:
            replay.as_of = at
            assert ingest.ingest(cfg, store, "oai", now=at).status == "ok"
        stored, missing = store.rows("versions"), _missing(store)
        print(f"{label}: {store.rows('papers'):,} papers, {len(entries):,} versions, "
              f"{stored:,} stored after OAI-PMH, {missing:,} texts missing")
        runs, requests, took = 0, 0, 0.0
        while missing and runs < 50:
            runs += 1
            at = harvests[-1] + dt.timedelta(hours=runs)
            replay.as_of = at
            began = time.perf_counter()
            report = ingest.ingest(cfg, store, "versions", now=at)
            spent = time.perf_counter() - began
            took, requests = took + spent, requests + report.requests
            missing = _missing(store)
            print(f"  run {runs}: {report.status}, {report.counts['new']:,} texts in "
                  f"{report.requests} requests, {spent:.1f} s here, "
                  f"~{(report.requests * ARXIV_DELAY + spent) / 60:.1f} min against arXiv; "
                  f"{missing:,} left")
        print(f"  all {store.rows('versions'):,} versions with text after {runs} runs "
              f"({runs} hours of hourly runs), {requests} requests, {took:.1f} s here, "
              f"~{(requests * ARXIV_DELAY + took) / 60:.1f} min against arXiv at 3 s a request")


def year(n: int) -> list[sample.Entry]:
    first = papers(n, NOW - YEAR, YEAR)
    out = list(first)
    for i, e in enumerate(first):
        if i % 4 == 0:
            out.append(revision(e, 2, e.announced + (NOW - e.announced) / 3))
        if i % 20 == 0:
            out.append(revision(e, 3, e.announced + (NOW - e.announced) * 2 / 3))
    return out


def outage(scale: float) -> tuple[list[sample.Entry], dt.datetime]:
    """The held-out shape: papers before the outage revised in it, and papers created and
    revised in it; the rest of the gap's papers have one version."""
    start = NOW - OUTAGE
    before_n, in_gap_n, revised_n = (math.ceil(x * scale) for x in (106, 13_800, 2_745))
    before = papers(before_n, start - dt.timedelta(days=2), dt.timedelta(days=1))
    inside = papers(in_gap_n, start, OUTAGE * 0.9, first=before_n)
    later = [revision(e, 2, start + OUTAGE * 0.95) for e in before]
    later += [revision(e, 2, e.announced + (NOW - e.announced) / 2) for e in inside[:revised_n]]
    return [*before, *inside, *later], start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=150_000)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    catch_up("a year's backfill", year(3_000 if args.smoke else args.n), [NOW])
    entries, start = outage(0.1 if args.smoke else 1.0)
    catch_up("a 106-day outage", entries, [start, NOW + OAI_LAG])


if __name__ == "__main__":
    main()
