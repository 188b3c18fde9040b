"""A source is one object in the registry: a toy one, added by one line with its own snapshot
schema, its own table and a fact for paper pages, runs through ingest, the ledger, rebuild,
the store's checks, status, the site's numbers and paper pages, with no edit of the core."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Mapping

import pyarrow as pa
import pytest
from click.testing import CliRunner

from pipeline import build as build_mod
from pipeline import cli, ingest
from pipeline.config import Config
from pipeline.derive import stats
from pipeline.replay.arxiv import ArxivReplay
from pipeline.report import RunReport
from pipeline.sources import SOURCES
from pipeline.sources._source import Catch, Fact, Library, Merged, Options, Source
from pipeline.store import Store
from pipeline.tables import Table

T1 = dt.datetime(2026, 6, 23, tzinfo=dt.UTC)
T2 = T1 + dt.timedelta(hours=1)


class Toy:
    """A source without a network: its 'server' is a list of readers' stars and notes on
    arXiv papers, which it keeps in a table of its own."""

    name = "toy"
    label: Mapping[str, str] = {"zh-CN": "读者星标", "en": "Readers' <stars>"}  # as text
    schema = pa.schema([("arxiv_id", pa.string()), ("stars", pa.int32()),
                        ("note", pa.string()), ("fetched_at", pa.timestamp("us", tz="UTC"))])
    tables = (Table("toy", pa.schema([("arxiv_id", pa.string()), ("toy_stars", pa.int32()),
                                      ("toy_note", pa.string())]), ("arxiv_id",),
                    on_save="rebuild"),)
    facts = (Fact("toy_stars", {"zh-CN": "星标", "en": "Stars"}),
             Fact("toy_note", {"zh-CN": "读者注", "en": "Readers' note"}))
    signals = ()
    picks = None
    links = ()

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def enabled(self, cfg: Config) -> bool:
        return True

    def catch_up(self, cfg: Config, library: Library, watermark: dt.datetime | None,
                 started: dt.datetime, options: Options) -> Catch:
        batch = pa.Table.from_pylist([{**r, "fetched_at": started} for r in self.rows],
                                     schema=self.schema)
        merged = self.merge(cfg, library, batch)
        catch = Catch(RunReport(self.name, "ok", merged.counts, requests=1,
                                watermark_before=watermark, watermark_after=started),
                      started, {"listed": len(self.rows)})
        catch.add(self.name, merged)
        return catch

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        held = {r["arxiv_id"]: r for r in library.tables.get(
            "toy", self.tables[0].schema.empty_table()).to_pylist()}
        fresh = {r["arxiv_id"]: {"arxiv_id": r["arxiv_id"], "toy_stars": r["stars"],
                                 "toy_note": r["note"]} for r in batch.to_pylist()}
        changed = [i for i, r in fresh.items() if held.get(i) != r]
        rows = sorted({**held, **fresh}.values(), key=lambda r: r["arxiv_id"])
        counts = {"fetched": batch.num_rows, "new": len(set(changed) - set(held)),
                  "revised": len(set(changed) & set(held)),
                  "unchanged": batch.num_rows - len(changed)}
        return Merged(library.papers, batch.filter(pa.array(
            [r["arxiv_id"] in changed for r in batch.to_pylist()])), counts,
            tables={"toy": pa.Table.from_pylist(rows, schema=self.tables[0].schema)})


@pytest.fixture
def stored(config: Config, replay: ArxivReplay) -> Store:
    """The sample's first day, ingested from the arXiv replay."""
    replay.as_of = T1
    ingest.ingest_arxiv(config, Store(config.store_path), now=T1)
    return Store(config.store_path)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, stored: Store) -> Toy:
    ids = stored.read("papers", ["arxiv_id"])["arxiv_id"].to_pylist()
    source = Toy([{"arxiv_id": i, "stars": n, "note": "<b>must</b> stay text" if n == 1 else None}
                  for n, i in enumerate(ids[:30], start=1)])
    monkeypatch.setitem(SOURCES, source.name, source)  # the registry line
    return source


def test_the_toy_is_a_source(toy: Toy) -> None:
    assert isinstance(toy, Source)


def test_a_registered_source_is_ingested_recorded_and_rebuilt(toy: Toy, config: Config,
                                                               stored: Store) -> None:
    store = stored
    report = ingest.ingest(config, store, "toy", now=T2)
    assert report.status == "ok" and report.counts["new"] == len(toy.rows)
    assert report.line().startswith(f"toy: ok · fetched {len(toy.rows)} · new {len(toy.rows)}")
    [snap] = store.snapshots("toy")
    run = store.runs("toy").iloc[-1]
    assert snap.run_id == run["run_id"] and run["started"] == T2
    details = json.loads(run["details"])
    assert details["snapshots"] == ["toy"] and details["listed"] == len(toy.rows)
    assert store.rows("toy") == len(toy.rows)  # its own table
    assert store.library(["arxiv_id", "toy_stars"])["toy_stars"].to_pylist()[:3] == [1, 2, 3]
    assert store.check() == []  # its snapshots and its table are checked against its schemas

    again = ingest.ingest(config, store, "toy", now=T2 + dt.timedelta(hours=1))
    assert again.counts["new"] == 0 and len(store.snapshots("toy")) == 1
    papers, versions, own = store.read("papers"), store.read("versions"), store.read("toy")
    store.table_files("toy")[0].write_bytes(b"garbage")
    assert ingest.rebuild(config, store)["snapshots"] == 2
    assert store.read("papers").equals(papers) and store.read("versions").equals(versions)
    assert store.read("toy").equals(own)


@pytest.mark.slow
def test_its_facts_show_on_paper_pages_as_text(toy: Toy, config: Config, stored: Store
                                               ) -> None:
    ingest.ingest(config, stored, "toy", now=T2)
    cfg = dataclasses.replace(config, site=dataclasses.replace(
        config.site, language="en", output=config.root / "out"))
    build_mod.build(cfg, now=T2)
    first = (cfg.output_path / "paper" / f"{toy.rows[0]['arxiv_id']}.html").read_text()
    assert "<dt>Stars</dt><dd>1</dd>" in first
    assert "<dt>Readers&#39; note</dt><dd>&lt;b&gt;must&lt;/b&gt; stay text</dd>" in first
    second = (cfg.output_path / "paper" / f"{toy.rows[1]['arxiv_id']}.html").read_text()
    assert "<dt>Stars</dt><dd>2</dd>" in second and "Readers&#39; note" not in second
    # Its name in its own language, from the registry, on the sources page (as text)
    said = (cfg.output_path / "sources" / "index.html").read_text()
    assert '<th scope="row">Readers&#39; &lt;stars&gt;</th>' in said


def test_status_and_the_site_list_it_in_registry_order(toy: Toy, config: Config) -> None:
    base_config = config
    store = Store(base_config.store_path)
    store.append_run({"run_id": "20260622T000000Z-digest-000000", "source": "digest",
                      "started": T1, "finished": T1, "status": "skipped", "error": "no key"})
    ingest.ingest(base_config, store, "toy", now=T1)
    out = CliRunner().invoke(cli.cli, ["--config", str(base_config.path), "status", "--json"])
    assert out.exit_code == 0, out.output
    assert [r["source"] for r in json.loads(out.output)] == ["arxiv", "toy", "digest"]
    assert stats.ledger_order()[-4:] == ("toy", "notes", "digest", "notify")
    assert [s.source for s in stats.source_states(store.runs())] == ["arxiv", "toy", "digest"]


def test_the_cli_offers_every_registered_source() -> None:
    option = next(p for p in cli.ingest.params if p.name == "source")
    assert list(option.type.choices) == [*SOURCES, "all"]
