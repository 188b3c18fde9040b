"""The offline demo: the real pipeline, end to end, against local replays of the services.

arXiv, Hugging Face and an OpenAI-compatible model server are replayed from the
bundled real sample (the model answers with the sample's real Chinese digests).
Each sample day is one simulated `papertrail run`, after that day's arXiv announcement
once arXiv's OAI-PMH has it too (`sample.run_at`), so revisions appear on later days;
then the site is built and, optionally, served on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pipeline import build as build_mod
from pipeline.config import SIMULATED, Config
from pipeline.replay import sample
from pipeline.replay._server import LocalServer
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.hf import HFReplay
from pipeline.replay.openai import OpenAIReplay
from pipeline.run import update
from pipeline.store import Store

Echo = Callable[[str], None]


# The local model server takes any key; the demo's own variable keeps a real one unused.
DEMO_KEY_ENV = "PAPERTRAIL_DEMO_API_KEY"
# The demo's own topics and site settings: a fork's papertrail.toml must not change the demo
# (nor the golden site the tests compare it with).
CONFIG = Path(__file__).resolve().parent / "replay" / "demo.toml"


@dataclass(frozen=True)
class Stand:
    """The replay standing in for one `[sources.<section>]` service: how to start it, how
    to point the section at it, and how to set its clock to a simulated run's time."""

    start: Callable[[], LocalServer]
    point: Callable[[Any, Any], Any]  # (the section, its started replay) → the section
    at: Callable[[Any, dt.datetime], None] = lambda replay, now: None


def _arxiv_at(replay: ArxivReplay, now: dt.datetime) -> None:
    replay.as_of = now  # only what arXiv had announced by then


# One per `[sources.*]` section (a test walks config.SourcesConfig against it): whatever
# the demo, `papertrail try` and the benches run reaches these, never the real service.
STANDS: dict[str, Stand] = {
    "arxiv": Stand(lambda: ArxivReplay(sample.entries()),
                   lambda section, replay: dataclasses.replace(
                       section, api_url=replay.url, oai_url=f"{replay.base}/oai",
                       feed_url=f"{replay.base}/rss/", delay_seconds=0.0),
                   _arxiv_at),
    "hf": Stand(HFReplay, lambda section, replay: dataclasses.replace(
        section, endpoint=replay.endpoint, delay_seconds=0.0, backfill_days=1)),
}


class Replays(contextlib.ExitStack):
    """Every outside service a run talks to, replayed on 127.0.0.1 while in `with`: each
    source section's (STANDS) and the model server (`llm`)."""

    sources: dict[str, LocalServer]
    llm: OpenAIReplay

    def __enter__(self) -> Replays:
        super().__enter__()
        self.sources = {name: self.enter_context(stand.start())
                        for name, stand in STANDS.items()}
        self.llm = self.enter_context(OpenAIReplay())
        return self

    def at(self, now: dt.datetime) -> None:
        for name, stand in STANDS.items():
            stand.at(self.sources[name], now)


def demo_config(base: Config, folder: Path, replays: Replays, port: int) -> Config:
    """The demo's (or the user's) config, pointed at the replays and at a store and site
    under `folder`, the site's URL where `serve` puts it (so its feeds work in a reader)."""
    sources = dataclasses.replace(base.sources, **{
        name: stand.point(getattr(base.sources, name), replays.sources[name])
        for name, stand in STANDS.items()})
    # No change notes asked of the replay: its answer is a rule's diff, which the store
    # would keep as a model's; the site makes the same by rule and labels it so.
    digest = dataclasses.replace(base.digest, enabled=True, base_url=replays.llm.url,
                                 model="replay", api_key_env=DEMO_KEY_ENV, notes=False)
    # What the replays make up (replay/sample.py, replay/oai.py): every page says so.
    return dataclasses.replace(
        base, store=dataclasses.replace(base.store, path=(folder / "data").resolve()),
        site=dataclasses.replace(base.site, output=(folder / "output").resolve(),
                                 base_url=f"http://127.0.0.1:{port}/", simulated=SIMULATED),
        sources=sources, digest=digest)


def run(base: Config, folder: Path, echo: Echo, port: int = 8000) -> Config:
    """Every sample day as one run, from an empty store, then the site (to be served on
    `port`); returns the config."""
    shutil.rmtree(folder / "data", ignore_errors=True)
    os.environ.setdefault(DEMO_KEY_ENV, "demo")
    with Replays() as replays:
        cfg = demo_config(base, folder, replays, port)
        now = simulate(cfg, replays, echo)
    echo(build_mod.build(cfg, now=now).line())  # the site as of the last simulated run
    return cfg


def simulate(cfg: Config, replays: Replays, echo: Echo,
             after: Callable[[dt.datetime], None] | None = None) -> dt.datetime:
    """One scheduled run (`update`) per sample day, the replays' clocks at that day's run,
    then `after(now)`; returns the last run's time."""
    store = Store(cfg.store_path)
    now = sample.run_at(sample.days()[0])
    for day in sample.days():
        now = sample.run_at(day)
        replays.at(now)
        echo(f"— simulated run at {now:%Y-%m-%d %H:%M} UTC")
        update(cfg, store, lambda line: echo(f"  {line}"), now=now)
        if after is not None:
            after(now)
    return now


def serve(output: Path, port: int, echo: Echo) -> None:
    handler = functools.partial(PagesHandler, directory=str(output))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        echo(f"serving the demo site at http://127.0.0.1:{port}/ (Ctrl-C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


class PagesHandler(SimpleHTTPRequestHandler):
    """A built site served as GitHub Pages serves it: an address it lacks, a folder without
    an index.html among them, gets 404.html with status 404 (not a folder listing)."""

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(HTTPStatus.NOT_FOUND)

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code != HTTPStatus.NOT_FOUND or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(code)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:  # one line per request is noise here
        pass
