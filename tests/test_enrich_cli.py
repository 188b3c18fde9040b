"""enrich (derived columns only, idempotent), topics check and preview, and ingest of the
Hugging Face source, through the real CLI."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline.cli import cli
from pipeline.derive.enrich import DERIVED, enrich
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.hf import HFReplay
from pipeline.sources import SOURCES
from pipeline.store import Store
from tests.support.site import write_config

TOPICS = """
[[topics]]
slug = "agents"
name = { zh = "智能体", en = "Agents" }
keywords = ["LLM agent", "agentic"]

[[topics]]
slug = "robots"
name = { zh = "机器人", en = "Robots" }
categories = ["cs.RO"]
"""


def _write_config(tmp_path: Path, extra: str = "") -> Path:
    return write_config(tmp_path, None, f"{extra}\n{TOPICS}")


@pytest.fixture
def sample_store(tmp_path: Path, sample_papers: pa.Table) -> Path:
    """A config file with two topics and a store holding the sample's papers, not enriched."""
    path = _write_config(tmp_path)
    Store(tmp_path / "data").write("papers", sample_papers)
    return path


def test_enrich_fills_only_the_derived_columns_and_is_idempotent(sample_store: Path) -> None:
    cfg = config_mod.load(sample_store)
    store = Store(cfg.store_path)
    before = store.read("papers")
    assert pc.all(pc.is_null(before["ai_related"])).as_py()
    first = enrich(cfg, store)
    after = store.read("papers")
    others = [n for n in after.column_names if n not in DERIVED]
    assert after.select(others).equals(before.select(others))
    assert first["written"] and 0 < first["ai_related"] <= after.num_rows
    assert first["topics"]["agents"] > 0 and first["topics"]["robots"] > 0
    mtime = [p.stat().st_mtime_ns for p in store.table_files("papers")]
    second = enrich(cfg, store)
    assert not second["written"] and second["topics"] == first["topics"]
    assert [p.stat().st_mtime_ns for p in store.table_files("papers")] == mtime
    assert store.read("papers").equals(after)


def test_enrich_after_a_config_change_rematches(sample_store: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "data")
    enrich(config_mod.load(sample_store), store)
    text = sample_store.read_text(encoding="utf-8").replace('"agentic"]', '"agentic", "quantum"]')
    sample_store.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(sample_store), "enrich"])
    assert result.exit_code == 0, result.output
    assert "AI-related" in result.output and "agents:" in result.output
    topics = store.read("papers")["topic_reasons"].to_pylist()
    assert any("keyword 'quantum'" in r for row in topics for r in row)


def test_topics_check_counts_matches(sample_store: Path) -> None:
    result = CliRunner().invoke(cli, ["--config", str(sample_store), "topics", "check"])
    assert result.exit_code == 0, result.output
    assert "ok  agents (Agents / 智能体)" in result.output
    assert "2 topics valid" in result.output and "matches nothing" not in result.output


def test_topics_check_flags_a_topic_that_matches_nothing(sample_store: Path) -> None:
    sample_store.write_text(sample_store.read_text(encoding="utf-8") + '\n[[topics]]\n'
                            'slug = "void"\nname = { zh = "空", en = "Void" }\n'
                            'keywords = ["zqxjv"]\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(sample_store), "topics", "check"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    void = next(line for line in lines if "void (Void" in line)
    assert "0 of 1333 papers" in void and "matches nothing" in void
    assert any("'zqxjv' (topic 'void') matches nothing" in line for line in lines)


def test_topics_check_rejects_a_bad_topic_with_exit_2(tmp_path: Path) -> None:
    path = _write_config(tmp_path, "")
    path.write_text(path.read_text(encoding="utf-8") + '\n[[topics]]\nslug = "bad"\n'
                    'name = { zh = "坏", en = "Bad" }\nkeywords = ["ok", ""]\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(path), "topics", "check"])
    assert result.exit_code == 2
    assert "topics[2].keywords" in result.output and "in topic 'bad'" in result.output


def test_topics_preview_lists_newest_first_with_why(sample_store: Path) -> None:
    result = CliRunner().invoke(cli, ["--config", str(sample_store), "topics", "preview",
                                      "agents", "--limit", "500"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    dates = [line[:10] for line in lines[1:] if line[:2] == "20"]
    assert dates and dates == sorted(dates, reverse=True)
    assert "why: keyword 'LLM agent' in" in result.output
    recent = CliRunner().invoke(cli, ["--config", str(sample_store), "topics", "preview",
                                      "agents", "--days", "1"])
    count = int(lines[0].split(": ")[1].split()[0])
    assert "in the last 1 days" in recent.output
    assert int(recent.output.split(": ")[1].split()[0]) < count


def test_topics_preview_of_an_unknown_slug_is_a_usage_error(sample_store: Path) -> None:
    result = CliRunner().invoke(cli, ["--config", str(sample_store), "topics", "preview", "x"])
    assert result.exit_code == 2 and "known: agents, robots" in result.output


def test_ingest_source_hf_runs_against_the_replays(tmp_path: Path, replay: ArxivReplay,
                                                   hf_replay: HFReplay) -> None:
    path = _write_config(tmp_path, f'[sources.arxiv]\napi_url = "{replay.url}"\n'
                         f'oai_url = "{replay.base}/oai"\n'
                         f'feed_url = "{replay.base}/rss/"\n'
                         'delay_seconds = 0\n'
                         f'[sources.hf]\nendpoint = "{hf_replay.endpoint}"\n'
                         'delay_seconds = 0\nbackfill_days = 1\n')
    # The sample's first day as yesterday's: a run since the sample's own date would ask
    # HF for every day from then to today's clock.
    day = (dt.datetime.now(dt.UTC) - dt.timedelta(days=1)).date().isoformat()
    hf_replay.days = {day: hf_replay.days[sample.days()[0]]}
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest", "--source", "hf",
                                      "--since", day])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("hf: ok")
    assert Store(tmp_path / "data").rows("hf") > 0
    # Only the picks, by id: no category catch-up.
    assert all(q["id_list"][0] and not q["search_query"][0] for q in replay.log)


def test_ingest_source_all_runs_every_source_in_registry_order(tmp_path: Path, replay: ArxivReplay,
                                                         hf_replay: HFReplay) -> None:
    path = _write_config(tmp_path, f'[sources.arxiv]\napi_url = "{replay.url}"\n'
                         f'oai_url = "{replay.base}/oai"\n'
                         f'feed_url = "{replay.base}/rss/"\n'
                         'delay_seconds = 0\nmax_retries = 0\n'
                         f'[sources.hf]\nendpoint = "{hf_replay.endpoint}"\n'
                         'delay_seconds = 0\nbackfill_days = 1\n')
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest", "--source", "all"])
    assert result.exit_code == 0, result.output
    said = dict(line.split(": ", 1) for line in result.output.splitlines())
    assert list(said) == list(SOURCES)
    assert said["hf"].startswith("ok")
    assert set(Store(tmp_path / "data").runs()["source"]) == set(SOURCES)
