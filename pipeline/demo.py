"""The offline demo: the real pipeline, end to end, against local replays of the services.

Each bundled sample day is one simulated run, an hour after that day's arXiv
announcement (so revisions appear on later days); then the site is built and,
optionally, served on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import shutil
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pipeline import build as build_mod
from pipeline import ingest
from pipeline.config import Config
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.store import Store

Echo = Callable[[str], None]


@contextlib.contextmanager
def replays() -> Iterator[dict[str, object]]:
    with ArxivReplay(sample.entries()) as arxiv_api:
        yield {"arxiv": arxiv_api}


def demo_config(base: Config, folder: Path, services: dict[str, object]) -> Config:
    """The user's config, pointed at the replays and at a store and site under `folder`."""
    arxiv_api = services["arxiv"]
    assert isinstance(arxiv_api, ArxivReplay)
    sources = dataclasses.replace(base.sources, arxiv=dataclasses.replace(
        base.sources.arxiv, api_url=arxiv_api.url, delay_seconds=0.0))
    return dataclasses.replace(
        base, store=dataclasses.replace(base.store, path=(folder / "data").resolve()),
        site=dataclasses.replace(base.site, output=(folder / "output").resolve()),
        sources=sources)


def run(base: Config, folder: Path, echo: Echo) -> Config:
    """Ingest every sample day from fresh, then build; returns the config it used."""
    shutil.rmtree(folder / "data", ignore_errors=True)
    with replays() as services:
        cfg = demo_config(base, folder, services)
        store = Store(cfg.store_path)
        arxiv_api = services["arxiv"]
        assert isinstance(arxiv_api, ArxivReplay)
        for day in sample.days():
            now = sample.announced_at(day) + dt.timedelta(hours=1)
            arxiv_api.as_of = now
            report = ingest.ingest_arxiv(cfg, store, now=now)
            echo(f"[{now:%Y-%m-%d %H:%M} UTC] {report.line()}")
    echo(build_mod.build(cfg).line())
    return cfg


def serve(output: Path, port: int, echo: Echo) -> None:
    handler = functools.partial(_QuietHandler, directory=str(output))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        echo(f"serving the demo site at http://127.0.0.1:{port}/ (Ctrl-C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # one line per request is noise here
        pass
