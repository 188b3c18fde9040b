"""A source is one object in the registry: a toy one, added by one line, runs through ingest,
the ledger, rebuild, the store's checks, status and the site's numbers."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pytest
from click.testing import CliRunner

from pipeline import cli, ingest, stats
from pipeline._report import RunReport
from pipeline._schemas import ARXIV_SNAPSHOT
from pipeline.config import Config
from pipeline.merge import merge_arxiv
from pipeline.replay import sample
from pipeline.sources import SOURCES
from pipeline.sources._source import Catch, Library, Merged, Options, Source
from pipeline.store import Store

T1 = dt.datetime(2026, 6, 23, tzinfo=dt.UTC)
T2 = T1 + dt.timedelta(hours=1)


class Toy:
    """A source without a network: its 'server' is a list of arXiv-shaped rows."""

    name = "toy"
    schema = ARXIV_SNAPSHOT

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def enabled(self, cfg: Config) -> bool:
        return True

    def catch_up(self, cfg: Config, library: Library, watermark: dt.datetime | None,
                 started: dt.datetime, options: Options) -> Catch:
        since = options.since or watermark or started - dt.timedelta(days=365)
        rows = [{**r, "fetched_at": started} for r in self.rows if r["updated"] >= since]
        merged = self.merge(cfg, library, pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT))
        newest = max((r["updated"] for r in rows), default=watermark)
        catch = Catch(RunReport(self.name, "ok", merged.counts, requests=1,
                                watermark_before=watermark, watermark_after=newest), since,
                      {"listed": len(self.rows)})
        catch.add(self.name, merged)
        return catch

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        m = merge_arxiv(library.papers, library.version_keys, batch,
                        cfg.sources.arxiv.categories)
        return Merged(m.papers, m.changed, m.counts, m.new_versions)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Toy:
    rows = [{**{k: v for k, v in e.__dict__.items() if k != "announced"},
             "authors": list(e.authors), "categories": list(e.categories),
             "primary_category": e.primary_category}
            for e in sample.entries()[:30] if e.version == 1]
    source = Toy(rows)
    monkeypatch.setitem(SOURCES, source.name, source)  # the registry line
    return source


def test_the_toy_is_a_source(toy: Toy) -> None:
    assert isinstance(toy, Source)


def test_a_registered_source_is_ingested_recorded_and_rebuilt(toy: Toy, base_config: Config
                                                               ) -> None:
    store = Store(base_config.store_path)
    report = ingest.ingest(base_config, store, "toy", now=T1)
    assert report.status == "ok" and report.counts["new"] == len(toy.rows)
    assert report.line().startswith(f"toy: ok · fetched {len(toy.rows)} · new {len(toy.rows)}")
    [snap] = store.snapshots("toy")
    run = store.runs("toy").iloc[-1]
    assert snap.run_id == run["run_id"] and run["started"] == T1
    details = json.loads(run["details"])
    assert details["snapshots"] == ["toy"] and details["listed"] == len(toy.rows)
    assert store.watermark("toy") == max(r["updated"] for r in toy.rows)
    assert store.check() == []  # its snapshots are checked against its schema

    again = ingest.ingest(base_config, store, "toy", now=T2)
    assert again.counts["new"] == 0 and len(store.snapshots("toy")) == 1
    papers, versions = store.read("papers"), store.read("versions")
    store.table_files("papers")[0].write_bytes(b"garbage")
    assert ingest.rebuild(base_config, store)["snapshots"] == 1
    assert store.read("papers").equals(papers) and store.read("versions").equals(versions)


def test_status_and_the_site_list_it_in_registry_order(toy: Toy, base_config: Config) -> None:
    store = Store(base_config.store_path)
    store.append_run({"run_id": "20260622T000000Z-digest-000000", "source": "digest",
                      "started": T1, "finished": T1, "status": "skipped", "error": "no key"})
    ingest.ingest(base_config, store, "toy", now=T1)
    out = CliRunner().invoke(cli.cli, ["--config", str(base_config.path), "status", "--json"])
    assert out.exit_code == 0, out.output
    assert [r["source"] for r in json.loads(out.output)] == ["toy", "digest"]
    assert stats.ledger_order()[-3:] == ("toy", "notes", "digest")
    assert [s.source for s in stats.source_states(store.runs())] == ["toy", "digest"]


def test_the_cli_offers_every_registered_source() -> None:
    option = next(p for p in cli.ingest.params if p.name == "source")
    assert list(option.type.choices) == [*SOURCES, "all"] == ["arxiv", "hf", "all"]
