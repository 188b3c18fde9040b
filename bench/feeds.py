"""Feed weight benchmark: what a poller fetches. Prints figures; asserts nothing.

For each feed the site writes (the feeds page kind alone, rendered from the store as the
build renders it): its bytes raw and gzipped (GitHub Pages serves gzip to a client that
asks), its entries, and whether the byte cap ([site] feed_max_mb) left entries to the
daily briefs; then how many papers of the feed window are in no feed.
Two stores: the demo's (the bundled sample run through the real pipeline, ~50 s) and a
synthetic one of a firehose: DAYS days of PER_DAY new papers each (all cs.*'s busiest
announcements), a quarter revised, a tenth with a digest.
Run: .venv/bin/python bench/feeds.py [--per-day N] [--all] [--no-demo] (`--all`: every
feed, not the twelve heaviest; `--smoke`: 50 papers a day, no demo).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import re
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from _corpus import Corpus, ids_of_month
from _store import digest
from jinja2 import Environment

from pipeline import config as config_mod
from pipeline import demo
from pipeline.derive.enrich import derive
from pipeline.merge import merge_arxiv
from pipeline.site.model import data, views
from pipeline.site.output import Output
from pipeline.site.pages import feeds
from pipeline.site.writer import SkipUnchangedWriter
from pipeline.store import Store
from pipeline.tables import ARXIV_SNAPSHOT, DIGESTS, PAPERS, VERSIONS, empty

REPO = Path(__file__).resolve().parents[1]
START = dt.datetime(2026, 11, 24, 20, tzinfo=dt.UTC)  # the first announcement
DAYS = 3  # the default [site] feed_days: the window every paper must stay in


def firehose(root: Path, per_day: int) -> config_mod.Config:
    """DAYS announcements of `per_day` new papers each, and a quarter of them revised."""
    root.mkdir(parents=True)
    (root / "papertrail.toml").write_text(
        '[store]\npath = "data"\n[site]\noutput = "out"\nbase_url = "https://example.org/"\n',
        encoding="utf-8")
    cfg = config_mod.load(root / "papertrail.toml")
    corpus = Corpus(seed=7)
    rows, revised, digests = [], [], []
    ids = ids_of_month(START.year, START.month, per_day * DAYS)
    for i, arxiv_id in enumerate(ids):
        when = START + dt.timedelta(days=i // per_day, seconds=i % per_day)
        rows.append(corpus.paper(arxiv_id, 1, when - dt.timedelta(hours=6),
                                 when - dt.timedelta(hours=6)))
        if i % 4 == 0 and i // per_day + 1 < DAYS:
            later = when + dt.timedelta(days=1)
            revised.append({**corpus.paper(arxiv_id, 2, when, later - dt.timedelta(hours=6)),
                            "title": rows[-1]["title"]})
        if i % 10 == 0:
            digests.append(digest(corpus, arxiv_id, 1, when + dt.timedelta(hours=1)))
    first = merge_arxiv(empty(PAPERS), empty(VERSIONS),
                        pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT), [])
    second = merge_arxiv(first.papers, first.new_versions.select(["arxiv_id", "version"]),
                         pa.Table.from_pylist(revised, schema=ARXIV_SNAPSHOT), [])
    store = Store(cfg.store_path)
    end = START + dt.timedelta(days=DAYS)
    with store.lock():
        store.write("papers", derive(cfg, second.papers, {}))
        store.write("versions", pa.concat_tables([first.new_versions, second.new_versions]))
        store.write("digests", pa.Table.from_pylist(digests, schema=DIGESTS))
        store.append_run({"run_id": "bench", "source": "arxiv", "started": end,
                          "finished": end, "status": "ok", "watermark_after": end})
    return cfg


def render_feeds(cfg: config_mod.Config, out: Path) -> tuple[data.SiteData, float]:
    """The feeds page kind alone, as the build runs it; (its site data, seconds)."""
    lib = views.load(cfg, Store(cfg.store_path))
    site = data.compute(cfg, lib, REPO / "theme")
    started = time.perf_counter()
    feeds.render(site, Output(site, SkipUnchangedWriter(str(out)), Environment()))
    return site, time.perf_counter() - started


def report(name: str, cfg: config_mod.Config, every: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        site, seconds = render_feeds(cfg, Path(tmp))
        rows = []
        keys: set[str] = set()
        for path in sorted((Path(tmp) / "feeds").rglob("*.xml")):
            raw = path.read_bytes()
            text = raw.decode()
            if path.name.endswith(".atom.xml"):
                keys |= set(re.findall(r"<id>tag:[^,]+,2026:paper/([^<v/]+)", text))
                keys |= set(re.findall(r"(?:paper/|arxiv\.org/abs/)(\d{4}\.\d{4,5})", text))
            rows.append((len(raw), len(gzip.compress(raw, 6)),
                         text.count("<entry>") + text.count("<item>"),
                         "条未列出" in text or "not listed" in text,
                         path.relative_to(Path(tmp)).as_posix()))
        rows.sort(reverse=True)
        window = {p.arxiv_id for p in feeds.window(site)}
        print(f"\n{name}: {len(site.lib.papers):,} papers, {len(rows)} feed files in "
              f"{seconds:.1f} s; [site] feed_days {cfg.site.feed_days}, feed_max_mb "
              f"{cfg.site.feed_max_mb:g}")
        print(f"{'bytes':>11} {'gzip':>10} {'entries':>8}  capped  feed")
        for raw_n, gz, n, capped, rel in rows if every else rows[:12]:
            print(f"{raw_n:>11,} {gz:>10,} {n:>8,}  {'yes' if capped else '':6}  {rel}")
        gzipped = max(r[1] for r in rows) / 1e6
        print(f"heaviest poll {rows[0][0] / 1e6:.2f} MB raw, {gzipped:.2f} MB gzip; "
              f"papers of the window {len(window):,}, in no feed "
              f"{len(window - keys):,}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-day", type=int, default=1500)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if not (args.smoke or args.no_demo):
            started = time.perf_counter()
            cfg = demo.run(config_mod.load(demo.CONFIG), root / "demo", lambda line: None)
            print(f"demo run and build: {time.perf_counter() - started:.0f} s")
            report("demo", cfg, args.all)
        cfg = firehose(root / "firehose", 50 if args.smoke else args.per_day)
        report(f"firehose of {args.per_day if not args.smoke else 50}/day", cfg, args.all)


if __name__ == "__main__":
    main()
