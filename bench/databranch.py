"""What each run pushes to the data branch, with a year of cs.* stored. Prints figures;
asserts nothing.

A store of N papers (default 150,000: about a year of all cs.*) with unique text
(bench/_corpus.py), 25% of them revised, 10% picked by Hugging Face and 10% with a
digest, is saved to a local bare repository standing in for GitHub. Then each
simulated day runs the real pipeline against local replays:
- a daily arXiv run finding ~1,000 new papers and ~300 revisions of papers of the
  last three months, then ~150 new digests written as the digest run writes them, and
  the similar papers of what changed (`papertrail similar`; the seed has every list);
- H hourly Hugging Face runs that only change upvotes (and stars) of the last days'
  picks (and a similar step that finds no new text);
each ending in `papertrail data save` (squash at 24 commits or a new month, as the
workflow does). A push is measured as the blobs the new commit adds to the branch's
previous tip (`git diff-tree` + `git cat-file -s`): what GitHub must receive, before
git's deltas make it smaller.

Run: .venv/bin/python bench/databranch.py [N] [DAYS] [HOURLY]   (default 150000 7 3;
`--smoke`: 2,000 papers, 2 days, 1 hourly run)
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from _corpus import Corpus
from _store import (
    DIGESTS_PER_DAY,
    NEW_PER_DAY,
    PICKS_PER_DAY,
    REVISED_PER_DAY,
    START,
    day_entries,
    digest,
    seed,
)

from pipeline import config as config_mod
from pipeline import databranch, ingest
from pipeline.derive import similar
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.hf import HFReplay
from pipeline.store import Store
from pipeline.tables import DIGESTS


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def _picks(template: list[dict], ids: list[str], hour: int) -> bytes:
    """The day's Hugging Face list: PICKS_PER_DAY recent papers, upvotes growing by hour."""
    items = []
    for k in range(PICKS_PER_DAY):
        item = copy.deepcopy(template[k % len(template)])
        item["paper"]["id"] = ids[(-NEW_PER_DAY * (1 + k % 3) + k) % len(ids)]
        item["paper"]["upvotes"] = 3 + k + hour * (k % 7)
        items.append(item)
    return json.dumps(items).encode()


def pushed(repo: Path, before: str | None, after: str) -> int:
    """Bytes of the blobs `after`'s tree adds to `before`'s."""
    if before is None:
        lines = git(repo, "ls-tree", "-r", after).splitlines()
        blobs = [line.split()[2] for line in lines]
    else:
        blobs = [line.split()[3] for line in git(repo, "diff-tree", "-r", "--no-commit-id",
                                                 before, after).splitlines()
                 if line.split()[3] != "0" * 40]
    return sum(int(git(repo, "cat-file", "-s", blob)) for blob in set(blobs))


def simulate(n: int, days: int, hourly: int) -> None:
    corpus = Corpus(seed=13)
    template = json.loads(sample.hf_daily(sample.days()[-1]) or b"[]")
    with tempfile.TemporaryDirectory() as tmp, ArxivReplay([]) as arxiv, HFReplay({}) as hf:
        root = Path(tmp)
        bare = root / "github.git"
        subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
        repo = root / "checkout"
        repo.mkdir()
        git(repo, "init", "--quiet")
        git(repo, "remote", "add", "origin", str(bare))
        (repo / "papertrail.toml").write_text(
            f'[store]\npath = "data"\n[sources.arxiv]\napi_url = "{arxiv.url}"\n'
            "delay_seconds = 0\npage_size = 2000\n"
            f'[sources.hf]\nendpoint = "{hf.endpoint}"\ndelay_seconds = 0\n',
            encoding="utf-8")
        cfg = config_mod.load(repo / "papertrail.toml")
        began = time.perf_counter()
        ids = seed(cfg, corpus, n)
        store = Store(cfg.store_path)
        similar.similar(cfg, store)  # every paper's similar papers, as a year of runs left them
        seeded = time.perf_counter() - began
        first = databranch.save(cfg, repo, now=START)
        tip = first.commit
        assert tip is not None
        largest = max(p.stat().st_size for p in store.files())
        print(f"seeded {store.rows('papers'):,} papers, {store.rows('versions'):,} versions, "
              f"{store.rows('digests'):,} digests in {seeded:.0f} s; first push "
              f"{pushed(bare, None, tip) / 1e6:.1f} MB in {len(store.files())} files, "
              f"the largest {largest / 1e6:.1f} MB")
        daily, hours, ingest_s, similar_s = [], [], [], []
        numbers: dict[str, int] = {}
        entries: list[sample.Entry] = []
        for day in range(days):
            now = START + dt.timedelta(days=day + 1, hours=1)
            entries += day_entries(corpus, day, ids, numbers)
            arxiv.entries = tuple(entries)
            arxiv.as_of = now
            t = time.perf_counter()
            report = ingest.ingest_arxiv(cfg, store, now=now)
            ingest_s.append(time.perf_counter() - t)
            new = store.read("digests")
            made = [digest(corpus, i, 1, now) for i in ids[-NEW_PER_DAY:][:DIGESTS_PER_DAY]]
            store.write("digests", pa.concat_tables(
                [new, pa.Table.from_pylist(made, schema=DIGESTS)]))
            t = time.perf_counter()
            lists = similar.similar(cfg, store)
            similar_s.append(time.perf_counter() - t)
            saved = databranch.save(cfg, repo, now=now)
            if saved.commit:
                daily.append(pushed(bare, tip, saved.commit))
                tip = saved.commit
            print(f"day {day + 1}: arXiv {report.status} (new {report.counts.get('new', 0)}, "
                  f"revised {report.counts.get('revised', 0)}) in {ingest_s[-1]:.1f} s, "
                  f"similar papers {lists.made:,} made, {lists.updated:,} updated in "
                  f"{similar_s[-1]:.1f} s; pushed {daily[-1] / 1e6:.2f} MB")
            for hour in range(hourly):
                later = now + dt.timedelta(hours=1 + hour)
                hf.days = {f"{later:%Y-%m-%d}": _picks(template, ids, hour + 1)}
                ingest.ingest_hf(cfg, store, now=later)
                similar.similar(cfg, store)  # no new text: nothing written
                saved = databranch.save(cfg, repo, now=later)
                if saved.commit:
                    hours.append(pushed(bare, tip, saved.commit))
                    tip = saved.commit
        git(bare, "gc", "--quiet", "--prune=now")
        stats = dict(line.split(": ", 1)
                     for line in git(bare, "count-objects", "-vH").splitlines())
        largest = max(p.stat().st_size for p in store.files())
        mb = [f"{b / 1e6:.2f}" for b in (statistics.median(daily), max(daily))]
        print(f"daily push: median {mb[0]} MB, max {mb[1]} MB ({len(daily)} runs)")
        if hours:
            mb = [f"{b / 1e6:.3f}" for b in (statistics.median(hours), max(hours))]
            print(f"hourly push (upvotes only): median {mb[0]} MB, max {mb[1]} MB "
                  f"({len(hours)} runs)")
        print(f"arXiv ingest of a day: median {statistics.median(ingest_s):.1f} s; similar "
              f"papers of a day: median {statistics.median(similar_s):.1f} s")
        print(f"store: {store.rows('papers'):,} papers in {len(store.files())} files, the "
              f"largest {largest / 1e6:.1f} MB; branch after {days} days and gc: "
              f"{stats['size-pack']}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Data-branch pushes at a year of cs.*.")
    parser.add_argument("n", nargs="?", type=int, default=150_000)
    parser.add_argument("days", nargs="?", type=int, default=7)
    parser.add_argument("hourly", nargs="?", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="2,000 papers, 2 days, 1 hourly")
    args = parser.parse_args()
    n, days, hourly = (2_000, 2, 1) if args.smoke else (args.n, args.days, args.hourly)
    print(f"{n:,} papers stored, then {days} days of 1 daily arXiv run (~{NEW_PER_DAY:,} new, "
          f"~{REVISED_PER_DAY} revised) and {hourly} hourly HF runs, each saved to the branch")
    simulate(n, days, hourly)


if __name__ == "__main__":
    main()
