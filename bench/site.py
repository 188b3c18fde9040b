"""Site build benchmark. Prints figures; asserts nothing.

Makes a store of N papers from the real sample's distributions (titles, abstracts with
their LaTeX, authors, categories; 5% revised, digests for 10%, eight similar papers
each) spread over N/1000 days, then times a full `papertrail build` in a fresh process
and reports its peak memory, the home page's size, the site's size per 1,000 papers and
by folder, and how many paper pages [site] max_site_mb left out.
Run: .venv/bin/python bench/site.py [--jobs J] [--repeat R] [--max-site-mb M]
[--languages L ...] [N ...]
(default: 20000; J sets [site] build_jobs, default 0 = one worker process per CPU; R full
builds and R rebuilds, medians; M sets [site] max_site_mb, default 100000 so every paper
page is kept and the size per 1,000 papers is the whole site's; L sets [site] languages,
e.g. `--languages zh-CN --languages zh-CN,en` builds the same store in one language and
in two, to measure what the second adds; `--smoke`: 100 papers).
A full run appends its figures to bench/results/site.csv; `--smoke` appends nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
from _results import Figure, machine_load, record

from pipeline import config as config_mod
from pipeline.merge import merge_arxiv
from pipeline.replay import sample
from pipeline.sources import catalog
from pipeline.store import Store
from pipeline.tables import ARXIV_SNAPSHOT, DIGESTS, PAPERS, VERSIONS, empty

T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def make_store(root: Path, n: int, jobs: int = 0, max_site_mb: float = 100_000
               ) -> config_mod.Config:
    cfg_path = root / "papertrail.toml"
    cfg_path.write_text('[store]\npath = "data"\n[site]\noutput = "out"\n'
                        f'base_url = "https://example.org/"\nbuild_jobs = {jobs}\n'
                        f"max_site_mb = {max_site_mb}\n", encoding="utf-8")
    cfg = config_mod.load(cfg_path)
    base = [e for e in sample.entries() if e.version == 1]
    digests = sample.digests()
    days = max(1, n // 1000)
    rows, revised, digest_rows = [], [], []
    per_month: Counter[str] = Counter()
    for i in range(n):
        e = base[i % len(base)]
        day = i * days // n
        seen = T0 + dt.timedelta(days=day, hours=1)
        when = seen - dt.timedelta(hours=8, seconds=i % 3600)
        month = 5 + day // 30  # months since 2026-01: ids of arXiv's grammar at any N
        yymm = f"{26 + month // 12:02d}{month % 12 + 1:02d}"
        per_month[yymm] += 1
        arxiv_id = f"{yymm}.{per_month[yymm]:05d}"
        row = {"arxiv_id": arxiv_id, "version": 1, "title": e.title, "abstract": e.abstract,
               "authors": list(e.authors), "categories": list(e.categories),
               "primary_category": e.primary_category, "comment": e.comment,
               "journal_ref": None, "doi": None, "published": when, "updated": when,
               "fetched_at": seen}
        rows.append(row)
        if i % 20 == 0 and day + 2 < days:
            later = seen + dt.timedelta(days=2)
            revised.append({**row, "version": 2, "abstract": e.abstract + " Revised.",
                            "updated": later - dt.timedelta(hours=8), "fetched_at": later})
        if i % 10 == 0 and e.arxiv_id in digests:
            d = digests[e.arxiv_id]
            digest_rows.append({"arxiv_id": arxiv_id, "version": 1, "language": "zh-CN",
                                "model": "bench", "prompt_hash": "b", "status": "ok",
                                "superseded": False, "tldr": d.get("tldr"),
                                "motivation": d.get("motivation"), "method": d.get("method"),
                                "results": d.get("result"), "conclusion": d.get("conclusion"),
                                "attempts": 1, "tokens_in": 900, "tokens_out": 300,
                                "created": seen + dt.timedelta(minutes=30)})
    first = merge_arxiv(empty(PAPERS), empty(VERSIONS),
                        pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT), ["cs.CV"])
    second = merge_arxiv(first.papers, first.new_versions.select(["arxiv_id", "version"]),
                         pa.Table.from_pylist(revised, schema=ARXIV_SNAPSHOT), ["cs.CV"])
    store = Store(cfg.store_path, catalog)
    store.write("papers", second.papers)
    store.write("versions", pa.concat_tables([first.new_versions, second.new_versions]))
    store.write("digests", pa.Table.from_pylist(digest_rows, schema=DIGESTS))
    # Eight similar papers each, as `papertrail similar` stores them (finding them is
    # bench/similar.py's part; here only what the pages cost): papers nearby in the list.
    ids = [r["arxiv_id"] for r in rows]
    store.write("similar", pa.table({
        "arxiv_id": ids, "neighbours": [[ids[(i + k) % n] for k in range(1, 9)]
                                        for i in range(n)],
        "scores": [[0.5 - 0.01 * k for k in range(8)] for _ in range(n)]}))
    end = T0 + dt.timedelta(days=days, hours=1)
    store.append_run({"run_id": "bench", "source": "arxiv", "started": end, "finished": end,
                      "status": "ok", "fetched": n, "new": n, "watermark_after": end})
    return cfg


def child(cfg_path: str) -> None:
    from pipeline import build

    cfg = config_mod.load(cfg_path)
    # The site as of the simulated run, as the demo does: the build's clock is the real one.
    now = max(r["finished"] for r in Store(cfg.store_path, catalog).read("runs").to_pylist())
    started = time.perf_counter()
    report = build.build(cfg, now=now)
    seconds = time.perf_counter() - started
    hwm = next(int(line.split()[1]) / 1024 for line in
               Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:"))
    folders: Counter[str] = Counter()
    for path in cfg.output_path.rglob("*"):
        if path.is_file():
            top = path.relative_to(cfg.output_path).parts
            folders[top[0] if len(top) > 1 else "(top)"] += path.stat().st_size
    print(json.dumps({"seconds": seconds, "rss": hwm, "files": report.files,
                      "languages": report.languages,
                      "light": report.light,
                      "bytes": report.size_bytes, "written": report.written,
                      "home": (cfg.output_path / "index.html").stat().st_size,
                      "folders": folders}))


def _tree_pss(pid: int) -> float:
    """MiB of proportional set size of a process and its descendants: worker processes
    share the build's pages copy-on-write, so adding their RSS would count those twice."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            rollup = Path(f"/proc/{p}/smaps_rollup").read_text()
            total += next(int(x.split()[1]) for x in rollup.splitlines() if x.startswith("Pss:"))
            for task in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text()
                         .split()]
        except (FileNotFoundError, ProcessLookupError):
            continue  # the process ended between listing and reading
    return total / 1024


def _run_child(cfg_path: Path) -> dict:
    """A build in a fresh process, its tree's memory sampled every second (one sample of
    a 4 GiB process costs the kernel ~40 ms)."""
    proc = subprocess.Popen([sys.executable, __file__, "child", str(cfg_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0.0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_pss(proc.pid))
            time.sleep(1.0)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, err = proc.communicate()
    sampler.join()
    if proc.returncode:
        raise SystemExit(err)
    return {**json.loads(out.strip().splitlines()[-1]), "pss": peak[0]}


def bench(n: int, jobs: int, repeat: int, max_site_mb: float, keep: bool,
          language_sets: list[str]) -> None:
    """Times R full builds and R rebuilds of N papers in each set of languages; `keep`
    appends the figures to bench/results/site.csv."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = make_store(Path(tmp), n, jobs, max_site_mb)
        for languages in language_sets:
            _bench_languages(cfg, n, jobs, repeat, max_site_mb, keep, languages)


def _bench_languages(cfg: config_mod.Config, n: int, jobs: int, repeat: int,
                     max_site_mb: float, keep: bool, languages: str) -> None:
    started_at = machine_load()
    listed = ", ".join(f'"{language}"' for language in languages.split(",") if language)
    fulls = []
    # Each full build into a folder of its own: deleting a site just before building
    # the next one would time the file system, not the build (ext4 without a journal,
    # as here, skips inodes freed in the last minutes, scanning past each of them).
    for r in range(repeat):
        path = cfg.path.with_name(f"papertrail-{languages}-{r}.toml")
        path.write_text(cfg.path.read_text("utf-8").replace(
            'output = "out"', f'output = "out-{languages}-{r}"\nlanguages = [{listed}]'))
        fulls.append(_run_child(path))
        full = fulls[-1]
        print(f"{n:,} papers, build_jobs = {jobs}: full build {full['seconds']:.1f} s, "
              f"peak memory {full['pss']:.0f} MiB (all processes, PSS; the main one's "
              f"RSS {full['rss']:.0f} MiB), {full['files']:,} files, "
              f"{full['bytes'] / 1e6:.0f} MB ({full['bytes'] / 1e6 / (n / 1000):.1f} MB "
              f"per 1,000 papers), home page {full['home'] / 1000:.0f} KB, "
              f"{full['light']:,} paper pages light", flush=True)
        print("  by folder: " + ", ".join(
            f"{name} {size / 1e6:.1f} MB" for name, size in
            sorted(full["folders"].items(), key=lambda kv: -kv[1])), flush=True)
        if full["languages"]:
            print("  by language: " + ", ".join(
                f"{lang} {files:,} files, {size / 1e6:.1f} MB"
                for lang, files, size in full["languages"]), flush=True)
    if repeat > 1:
        print(f"  median of {repeat}: full build "
              f"{statistics.median(f['seconds'] for f in fulls):.1f} s, peak memory "
              f"{statistics.median(f['pss'] for f in fulls):.0f} MiB")
    # The last site again, from unchanged data, as often as the full build.
    agains = [_run_child(path) for _ in range(repeat)]
    runs = ", ".join(f"{a['seconds']:.1f}" for a in agains)
    print(f"  rebuild of unchanged data: median "
          f"{statistics.median(a['seconds'] for a in agains):.1f} s (runs {runs}), "
          f"{max(a['written'] for a in agains)} files written")
    if keep:
        figures: list[Figure] = [
            *(row for f in fulls for row in (
                ("first_build", f["seconds"], "s"), ("peak_pss", f["pss"], "MiB"),
                ("main_rss", f["rss"], "MiB"), ("files", f["files"], "files"),
                ("site_size", f["bytes"] / 1e6, "MB"), ("pages_light", f["light"], "pages"))),
            *(("rebuild", a["seconds"], "s") for a in agains),
            ("rebuild_files_written", max(a["written"] for a in agains), "files")]
        record("site", n, figures, started_at,
               f"max_site_mb={max_site_mb:g}; build_jobs={jobs}; "
               f"languages={languages or 'default'}; bench/site.py")


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2])
    else:
        parser = argparse.ArgumentParser(description="Time full and unchanged site builds.")
        parser.add_argument("sizes", nargs="*", type=int, default=[20_000], metavar="N")
        parser.add_argument("--jobs", type=int, default=0, help="[site] build_jobs")
        parser.add_argument("--repeat", type=int, default=1, help="full builds to time")
        parser.add_argument("--max-site-mb", type=float, default=100_000,
                            help="[site] max_site_mb")
        parser.add_argument("--languages", action="append", default=[],
                            help="[site] languages, comma-separated; again for another set")
        parser.add_argument("--smoke", action="store_true", help="100 papers")
        args = parser.parse_args()
        if args.repeat < 1:
            parser.error("--repeat must be at least 1")
        for size in [100] if args.smoke else args.sizes:
            bench(size, args.jobs, args.repeat, args.max_site_mb, not args.smoke,
                  args.languages or [""])
