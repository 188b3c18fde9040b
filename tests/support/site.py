"""A site built by the real pipeline over the arXiv replay, and what reads it: the sample's
days, a paper whose title and abstract are hostile, and parsers of the built pages."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.store import Store
from tests.support.replays import fast_arxiv, ingest_arxiv_paths

DAYS = sample.days()
XSS_ID = "2606.99999"
XSS_TITLE = "<script>alert(1)</script>"
XSS_ABSTRACT = ("We study <img src=x onerror=alert(1)> and [click](javascript:alert(1)) "
                "with $x^2$ cost.")


def at(day: str) -> dt.datetime:
    return sample.run_at(day)


def entries() -> list[sample.Entry]:
    """The sample's entries and a paper whose title, abstract and authors are hostile."""
    base = next(e for e in sample.entries() if e.version == 1)
    when = sample.announced_at(DAYS[-1]) - dt.timedelta(hours=7)
    evil = dataclasses.replace(base, arxiv_id=XSS_ID, title=XSS_TITLE, abstract=XSS_ABSTRACT,
                               authors=("<b>Mallory</b>", "Eve"), published=when, updated=when,
                               announced=sample.announced_at(DAYS[-1]))
    return [*sample.entries(), evil]


def write_config(root: Path, language: str | None = "zh-CN", extra: str = "", *,
                 store: str | None = "data", **site: object) -> Path:
    """The tests' one way to write a config, `root`/papertrail.toml: [store] path `store`
    (None: no [store] table); [site] with `language`, output "out" and `site`'s keys
    (language None: `site`'s keys alone, if any); then `extra`, further tables as TOML."""
    root.mkdir(parents=True, exist_ok=True)
    keys = ({"language": language, "output": "out"} if language else {}) | site
    path = root / "papertrail.toml"
    path.write_text((f'[store]\npath = "{store}"\n' if store else "")
                    + ("[site]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items())
                       if keys else "")
                    + extra, encoding="utf-8")
    return path


def make_config(root: Path, language: str | None = "zh-CN", extra: str = "", *,
                store: str | None = "data", **site: object) -> config_mod.Config:
    """write_config's file, loaded by the real loader."""
    return config_mod.load(write_config(root, language, extra, store=store, **site))


def add_digest(store: Store, arxiv_id: str, version: int, when: dt.datetime,
               text: str, language: str = "zh-CN") -> None:
    """A digest row as the digest step stores it (the digest step itself has its tests)."""
    row = {"arxiv_id": arxiv_id, "version": version, "language": language, "model": "test-model",
           "prompt_hash": "p1", "status": "ok", "superseded": False, "tldr": text,
           "motivation": "m", "method": "x", "results": "r", "conclusion": "c",
           "attempts": 1, "tokens_in": 10, "tokens_out": 5, "created": when}
    digests = store.read("digests")
    store.write("digests", pa.concat_tables([digests, pa.Table.from_pylist(
        [row], schema=digests.schema)]))


def build_at_last_run(cfg: config_mod.Config) -> build_mod.BuildReport:
    """The site as of the store's last run (the build's clock is the real one, and the
    sample's days are long past)."""
    runs = Store(cfg.store_path).read("runs").to_pylist()
    return build_mod.build(cfg, now=max(r["finished"] for r in runs))


def run_pipeline(cfg: config_mod.Config, days: list[str]) -> Store:
    store = Store(cfg.store_path)
    with ArxivReplay(entries()) as api:
        fast = fast_arxiv(cfg, api.url)
        for day in days:
            api.as_of = at(day)
            ingest_arxiv_paths(fast, store, api.as_of)
    return store


def html_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.html"))


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        self.tags.append((tag, d))
        for key in ("href", "src"):
            if d.get(key):
                self.links.append(d[key])


def parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


class BuiltSite(NamedTuple):
    """A site as the sample's five days and one hostile digest leave it. Shared by the tests
    of a session (tests/conftest.py): read it; a test that changes it works on a copy."""

    cfg: config_mod.Config
    store: Store
    report: build_mod.BuildReport

    @property
    def out(self) -> Path:
        return self.cfg.output_path


HOSTILE_DIGEST = "<img src=x onerror=alert(1)> 扩散模型 <a href='javascript:alert(1)'>x</a>"
BASE_URL = "https://example.org/papertrail/"


def build_sample_site(root: Path) -> BuiltSite:
    """The Chinese site of every sample day, the hostile paper digested."""
    cfg = make_config(root, base_url=BASE_URL)
    store = run_pipeline(cfg, DAYS)
    add_digest(store, XSS_ID, 1, at(DAYS[-1]) - dt.timedelta(minutes=5), HOSTILE_DIGEST)
    return BuiltSite(cfg, store, build_at_last_run(cfg))


def build_in_english(site: BuiltSite, root: Path) -> BuiltSite:
    """The same store's site in English (the store copied: the pipeline runs once)."""
    cfg = make_config(root, "en", base_url=BASE_URL)
    shutil.copytree(site.cfg.store_path, cfg.store_path)
    return BuiltSite(cfg, Store(cfg.store_path), build_at_last_run(cfg))


def in_languages(cfg: config_mod.Config, *languages: str, **site: object
                 ) -> config_mod.Config:
    """`cfg` built in these languages ([site] languages), with more [site] keys."""
    path = cfg.path
    listed = ", ".join(f'"{language}"' for language in languages)
    extra = "".join(f"{k} = {v!r}\n" for k, v in site.items())
    path.write_text(path.read_text("utf-8").replace(
        "[site]\n", f"[site]\nlanguages = [{listed}]\n{extra}", 1), encoding="utf-8")
    return config_mod.load(path)
