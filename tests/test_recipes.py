"""The recipes of docs/ARCHITECTURE.md carried out as a newcomer would: a source with a
side table its paper pages show, a page kind in the nav that sorts by that source's
numbers, a notify channel, each written as files of a package of the test's own (on
sys.path) and added through the public registries only, then the site built (or the
channel sent to) and the result checked.

Each recipe counts the files it had to touch: those it wrote, each registry module it
added a line to (the entry is made with monkeypatch, as that line would make it), each
doc a docs test asks for. The count is the recipe's number in ARCHITECTURE.md, and the
test fails when it grows past the number the project holds it to."""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import json
import sys
import textwrap
from collections.abc import Iterator, MutableMapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline import ingest
from pipeline import notify as notify_mod
from pipeline.config import Config
from pipeline.notify import channels
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.site.pages import kinds
from pipeline.sources import SOURCES
from pipeline.store import Store
from tests.support.servers import running
from tests.test_docs_registries import (
    notify_kind_documented,
    page_kind_documented,
    source_documented,
)

REPO = Path(__file__).resolve().parents[1]
T1 = sample.run_at(sample.days()[0])
T2 = T1 + dt.timedelta(hours=1)
# The most files each recipe may touch (docs/ARCHITECTURE.md says the same)
MOST = {"source": 4, "page kind": 3, "channel": 3}


class Recipe:
    """What carrying out one recipe touched, by path from the project's root."""

    def __init__(self, package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.package, self.monkeypatch = package, monkeypatch
        self.touched: set[str] = set()

    def write(self, name: str, text: str) -> None:
        """A new module of the recipe's own."""
        (self.package / name).write_text(textwrap.dedent(text), encoding="utf-8")
        self.touched.add(f"{self.package.name}/{name}")

    def register(self, registry: MutableMapping[str, object], key: str, value: object,
                 where: str) -> None:
        """One entry in a registry: the line a newcomer adds to `where`."""
        self.monkeypatch.setitem(registry, key, value)
        self.touched.add(where)

    def document(self, doc: str, text: str) -> str:
        """`doc` with the recipe's lines added (the docs test reads it so)."""
        self.touched.add(doc)
        return (REPO / doc).read_text(encoding="utf-8") + textwrap.dedent(text)


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The newcomer's package, importable as `fork_additions`."""
    root = tmp_path / "ext"
    (root / "fork_additions").mkdir(parents=True)
    (root / "fork_additions" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    yield root / "fork_additions"
    for name in [m for m in sys.modules if m.startswith("fork_additions")]:
        del sys.modules[name]


CITATIONS = '''
    """Citation counts: how often other papers cite each paper, read from a list the
    source is handed (a real one fetches them from a citation service)."""

    import pyarrow as pa

    from pipeline.report import RunReport
    from pipeline.sources._source import Catch, Fact, Library, Merged, Options
    from pipeline.tables import REBUILD, Table

    CITED = Table("citations", pa.schema([("arxiv_id", pa.string()), ("cited_by", pa.int32())]),
                  ("arxiv_id",), on_save="rebuild", remedy=REBUILD)


    class Citations:
        name = "citations"
        label = {"zh-CN": "引用数", "en": "Citation counts"}
        schema = pa.schema([("arxiv_id", pa.string()), ("cited_by", pa.int32()),
                            ("fetched_at", pa.timestamp("us", tz="UTC"))])
        tables = (CITED,)
        facts = (Fact("cited_by", {"zh-CN": "被引", "en": "Cited by"}),)
        signals = ()
        picks = None
        links = ()

        def __init__(self, counts):
            self.counts = counts

        def enabled(self, cfg):
            return True

        def catch_up(self, cfg, library, watermark, started, options):
            batch = pa.Table.from_pylist(
                [{"arxiv_id": i, "cited_by": n, "fetched_at": started}
                 for i, n in self.counts.items()], schema=self.schema)
            merged = self.merge(cfg, library, batch)
            catch = Catch(RunReport(self.name, "ok", merged.counts, requests=1,
                                    watermark_before=watermark, watermark_after=started),
                          started)
            catch.add(self.name, merged)
            return catch

        def merge(self, cfg, library, batch):
            held = {r["arxiv_id"]: r for r in library.tables.get(
                "citations", CITED.schema.empty_table()).to_pylist()}
            fresh = {r["arxiv_id"]: {"arxiv_id": r["arxiv_id"], "cited_by": r["cited_by"]}
                     for r in batch.to_pylist()}
            rows = sorted({**held, **fresh}.values(), key=lambda r: r["arxiv_id"])
            new = len(set(fresh) - set(held))
            counts = {"fetched": batch.num_rows, "new": new, "revised": len(fresh) - new,
                      "unchanged": 0}
            return Merged(library.papers, batch, counts,
                          tables={"citations": pa.Table.from_pylist(rows, schema=CITED.schema)})
'''

CITED_PAGE = '''
    """The most cited papers of the library, most first: the citations source's counts,
    read as numbers (`Paper.sourced`)."""


    def render(site, out):
        cited = [p for p in site.lib.papers if p.sourced.get("cited_by") is not None]
        cited.sort(key=lambda p: (-p.sourced["cited_by"], p.arxiv_id))
        label = {"zh-CN": "最常被引", "en": "Most cited"}[site.lang]
        return out.listing("cited/", label, cited, nav="cited")
'''


@pytest.mark.slow  # builds the site
def test_add_a_source_and_a_page_kind(package: Path, monkeypatch: pytest.MonkeyPatch,
                                      config: Config, replay: ArxivReplay) -> None:
    store = Store(config.store_path)
    replay.as_of = T1
    ingest.ingest_arxiv(config, store, now=T1)
    ids = sorted(store.read("papers", ["arxiv_id"])["arxiv_id"].to_pylist())[:3]
    counts = dict(zip(ids, (7, 1_234, 40), strict=True))

    source = Recipe(package, monkeypatch)
    source.write("citations.py", CITATIONS)
    module = importlib.import_module("fork_additions.citations")
    source.register(SOURCES, "citations", module.Citations(counts),
                    "pipeline/sources/__init__.py")
    data = source.document("docs/DATA.md", """
        ## Citation counts
        `citations`: how often other papers cite each paper, as the citation service
        counts them; the latest count replaces the last.
        """)
    assert source_documented("citations", data, "")

    page = Recipe(package, monkeypatch)
    page.write("cited.py", CITED_PAGE)
    render = importlib.import_module("fork_additions.cited").render
    kind = kinds.PageKind("cited", "cited/", ("cited/",), render,
                          nav={"zh-CN": "最常被引", "en": "Most cited"})
    page.register(kinds.PAGE_KINDS, "cited", kind, "pipeline/site/pages/kinds.py")
    assert page_kind_documented(kind)

    assert ingest.ingest(config, store, "citations", now=T2).status == "ok"
    cfg = dataclasses.replace(config, site=dataclasses.replace(
        config.site, language="en", output=config.root / "out"))
    build_mod.build(cfg, now=T2)
    out = cfg.output_path
    # the source: its count on the paper's page, its name on the sources page
    assert "<dt>Cited by</dt><dd>1,234</dd>" in (out / "paper" / f"{ids[1]}.html").read_text()
    assert '<th scope="row">Citation counts</th>' in (out / "sources" / "index.html"
                                                      ).read_text()
    # the page kind: sorted by the number, in every page's nav, in the sitemap
    cited = (out / "cited" / "index.html").read_text()
    at = [cited.index(f"paper/{i}.html") for i in (ids[1], ids[2], ids[0])]
    assert at == sorted(at)
    assert '<a href="../cited/" aria-current="page">Most cited</a>' in cited
    assert '<a href="../cited/">Most cited</a>' in (out / "sources" / "index.html").read_text()
    assert "cited/</loc>" in (out / "sitemap.xml").read_text()

    assert len(source.touched) <= MOST["source"], sorted(source.touched)
    assert len(page.touched) <= MOST["page kind"], sorted(page.touched)


TOY_CHANNEL = '''
    """A chat service that takes each message as JSON: its subject and the papers' ids."""

    from dataclasses import dataclass

    from pipeline.config import Channel
    from pipeline.notify.channels import Sender


    @dataclass(frozen=True)
    class ToyChatChannel(Channel, kind="toychat"):
        url: str = ""


    class ToyChat(Sender):
        def send(self, message):
            self._post(self.cfg.url, {"subject": message.subject,
                                      "ids": [i.arxiv_id for i in message.items]},
                       lambda answer: None if answer.status == 200 else ("refused", None))
'''


class _Chat(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        self.received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_add_a_notify_channel(package: Path, monkeypatch: pytest.MonkeyPatch, config: Config,
                              replay: ArxivReplay) -> None:
    store = Store(config.store_path)
    replay.as_of = T1
    ingest.ingest_arxiv(config, store, now=T1)
    category = store.read("papers", ["primary_category"])["primary_category"][0].as_py()
    # the kind registers itself (`Channel`'s subclass names it): undone after the test
    monkeypatch.setattr(config_mod, "CHANNEL_KINDS", dict(config_mod.CHANNEL_KINDS))

    recipe = Recipe(package, monkeypatch)
    recipe.write("toychat.py", TOY_CHANNEL)
    module = importlib.import_module("fork_additions.toychat")
    recipe.register(channels.CHANNELS, "toychat", module.ToyChat,
                    "pipeline/notify/channels.py")
    doc = recipe.document("docs/CONFIG.md", "").replace(  # its name in the `kind` row
        "`discord` or `webhook`.", "`discord`, `webhook` or `toychat`.")
    assert notify_kind_documented("toychat", doc)

    _Chat.received = []
    with running(_Chat) as url:
        path = config.path
        path.write_text(path.read_text(encoding="utf-8")
                        + f'[[follows]]\nname = "field"\ncategories = ["{category}"]\n'
                        f'[[notify]]\nkind = "toychat"\nurl = "{url}hook"\n', encoding="utf-8")
        cfg = dataclasses.replace(config_mod.load(path), sources=config.sources)
        report = notify_mod.notify(cfg, store, env={}, now=T2)
    assert report.status == "ok", report.error
    [message] = _Chat.received
    assert message["ids"] and message["subject"]
    assert len(recipe.touched) <= MOST["channel"], sorted(recipe.touched)
