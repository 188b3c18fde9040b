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


@dataclass(frozen=True)
class BuildReport:
    output: Path
    seconds: float
    written: int
    unchanged: int
    files: int
    size_bytes: int

    def line(self) -> str:
        return (f"site: {self.files} files, {self.size_bytes / 1e6:.1f} MB in {self.output} · "
                f"{self.written} written, {self.unchanged} unchanged · {self.seconds:.1f} s")


def build(cfg: Config, *, publish: bool = False, now: dt.datetime | None = None) -> BuildReport:
    started = time.perf_counter()
    os.environ["PAPERTRAIL_CONFIG"] = str(cfg.path.resolve())
    conf = REPO / ("publishconf.py" if publish else "pelicanconf.py")
    settings = read_settings(str(conf), override={
        "PAPERTRAIL_CONFIG": str(cfg.path.resolve()), "OUTPUT_PATH": str(cfg.output_path),
        "PAPERTRAIL_NOW": now,
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
    sizes = [p.stat().st_size for p in out.rglob("*") if p.is_file()]
    w = writers[0]
    return BuildReport(out, time.perf_counter() - started, w.written, w.unchanged, len(sizes),
                       sum(sizes))
