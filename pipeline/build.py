"""`papertrail build`: run Pelican with pelicanconf.py (or publishconf.py) over the store."""

from __future__ import annotations

import datetime as dt
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from pelican import Pelican
from pelican.settings import read_settings

from pipeline.config import Config

REPO = Path(__file__).resolve().parents[1]
# GitHub Pages: "Published GitHub Pages sites may be no larger than 1 GB."
PAGES_LIMIT = 1_000_000_000


@dataclass(frozen=True)
class BuildReport:
    output: Path
    seconds: float
    written: int
    unchanged: int
    files: int
    size_bytes: int
    removed: int

    def line(self) -> str:
        line = (f"site: {self.files} files, {self.size_bytes / 1e6:.1f} MB in {self.output} · "
                f"{self.written} written, {self.unchanged} unchanged, {self.removed} stale "
                f"removed · {self.seconds:.1f} s")
        if self.size_bytes > PAGES_LIMIT:
            line += ("\nwarning: the site is larger than GitHub Pages' 1 GB limit; lower "
                     "[site] paper_pages_days so older papers keep no page of their own")
        return line


def build(cfg: Config, *, publish: bool = False, now: dt.datetime | None = None) -> BuildReport:
    started = time.perf_counter()
    os.environ["PAPERTRAIL_CONFIG"] = str(cfg.path.resolve())
    conf = REPO / ("publishconf.py" if publish else "pelicanconf.py")
    settings = read_settings(str(conf), override={
        "PAPERTRAIL_CONFIG": str(cfg.path.resolve()), "OUTPUT_PATH": str(cfg.output_path),
        # The Config object itself: callers (the demo, tests) may have changed it in memory.
        "PAPERTRAIL_CONFIG_OBJECT": cfg, "PAPERTRAIL_NOW": now,
    })
    logging.getLogger("pelican").setLevel(logging.WARNING)
    pelican = Pelican(settings)
    writers: list = []
    original = pelican._get_writer

    def keep_writer():  # remember the writer to report what it wrote
        writer = original()
        writers.append(writer)
        return writer

    pelican._get_writer = keep_writer
    pelican.run()
    out = cfg.output_path
    produced = {os.path.normpath(p) for p in writers[0].files()}
    removed = _remove_stale(out, produced)
    size = sum(os.stat(p).st_size for p in produced)
    w = writers[0]
    return BuildReport(out, time.perf_counter() - started, w.written, w.unchanged,
                       len(produced), size, removed)


def _remove_stale(out: Path, produced: set[str]) -> int:
    """Delete files a previous build made that this one did not (e.g. pages of papers past
    paper_pages_days), so the site holds exactly what the store says. Hidden files stay."""
    removed = 0
    for folder, _, files in os.walk(out, topdown=False):
        if any(part.startswith(".") for part in Path(folder).relative_to(out).parts):
            continue
        for name in files:
            path = os.path.normpath(os.path.join(folder, name))
            if not name.startswith(".") and path not in produced:
                os.remove(path)
                removed += 1
        if folder != str(out) and not os.listdir(folder):
            os.rmdir(folder)
    return removed
