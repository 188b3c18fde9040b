from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline import demo
from pipeline.cli import cli
from pipeline.replay.faults import Fault
from pipeline.store import Store
from tests.support import site as support

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
CONFIG_DOC = (REPO / "docs" / "CONFIG.md").read_text(encoding="utf-8")
COMMANDS = sorted(cli.commands)


def write_config(tmp_path: Path, api_url: str, extra: str = "") -> Path:
    oai_url = api_url.removesuffix("/api/query") + "/oai"
    return support.write_config(tmp_path, None, f"""
[sources.arxiv]
api_url = "{api_url}"
oai_url = "{oai_url}"
feed_url = "{api_url.removesuffix("/api/query")}/rss/"
delay_seconds = 0
backoff_seconds = 0.01
max_backoff_seconds = 0.02
timeout_seconds = 2
backfill_days = 365
{extra}
[sources.hf]
enabled = false
""")


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_is_documented_in_the_readme(name):
    assert re.search(rf"`papertrail {name}\b", README), f"README does not document {name}"


@pytest.mark.parametrize("target", re.findall(r"^## ([a-z-]+):", (REPO / "Makefile").read_text(
    encoding="utf-8"), re.M))
def test_every_documented_make_target_is_named_in_the_readme(target):
    assert f"`make {target}`" in README or f"$ make {target} " in README, target


def test_the_readme_lists_the_commands_in_the_order_help_does():
    listed = re.findall(r"^- `papertrail ([a-z-]+)", README, re.M)
    assert list(dict.fromkeys(listed)) == cli.list_commands(None)


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, command in group.commands.items():
        out.append((*prefix, name))
        if isinstance(command, click.Group):
            out += _commands(command, (*prefix, name))
    return out


@pytest.mark.parametrize("command", _commands(cli), ids=" ".join)
def test_every_command_has_help(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    assert result.output.count("\n") > 3 and "Usage:" in result.output
    summary = result.output.split("\n\n")[1].strip()
    assert len(summary) > 15, result.output
    first_line = (command_of(command).help or "").split("\n")[0]
    assert first_line and " ".join(first_line.split()[:5]) in " ".join(result.output.split())


def command_of(path: tuple[str, ...]) -> click.Command:
    found: click.Command = cli
    for name in path:
        assert isinstance(found, click.Group)
        found = found.commands[name]
    return found


@pytest.mark.slow
def test_ingest_then_status(tmp_path, replay):
    path = write_config(tmp_path, replay.url)
    runner = CliRunner()
    result = runner.invoke(cli, ["--config", str(path), "ingest"])
    assert result.exit_code == 0, result.output
    assert "arxiv: ok" in result.output
    visible = len(replay.visible())
    assert f"new {visible}" in result.output
    status = runner.invoke(cli, ["--config", str(path), "status", "--json"])
    rows = {r["source"]: r for r in json.loads(status.output)}
    assert rows["arxiv"]["status"] == "ok" and rows["arxiv"]["new"] == visible
    assert rows["hf"]["status"] == "skipped"  # disabled in this config, and says so
    table = runner.invoke(cli, ["--config", str(path), "status"])
    assert "last success" in table.output and "arxiv" in table.output


@pytest.mark.slow
def test_source_failure_prints_one_line_and_exits_0(tmp_path, replay):
    path = write_config(tmp_path, replay.url)
    replay.inject(*[Fault("503")] * 5)
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest"])
    assert result.exit_code == 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 5 and "arxiv: failed" in lines[0] and "HTTP 503" in lines[0]
    assert lines[1].startswith("oai: ")  # the other paths to arXiv go on
    assert lines[2].startswith("announce: ")
    assert lines[3].startswith("versions: ")
    assert lines[4] == "hf: skipped (disabled in config)"


def test_corrupt_store_exits_1_naming_the_file(tmp_path, replay):
    path = write_config(tmp_path, replay.url)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "papers.parquet").write_bytes(b"PAR1 not really")
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest"])
    assert result.exit_code == 1
    assert "papers.parquet" in result.output and "store error" in result.output


@pytest.mark.slow
def test_since_and_max_pages(tmp_path, replay):
    path = write_config(tmp_path, replay.url, "page_size = 100")
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest", "--since", "2026-06-01",
                                      "--max-pages", "1"])
    assert result.exit_code == 0
    assert "arxiv: partial" in result.output and "new 100" in result.output
    assert replay.log[0]["max_results"] == ["100"]
    bad = CliRunner().invoke(cli, ["--config", str(path), "ingest", "--since", "yesterday"])
    assert bad.exit_code == 2 and "not a date" in bad.output


@pytest.mark.slow
def test_rebuild_command(tmp_path, replay):
    path = write_config(tmp_path, replay.url)
    runner = CliRunner()
    runner.invoke(cli, ["--config", str(path), "ingest"])
    result = runner.invoke(cli, ["--config", str(path), "rebuild"])
    assert result.exit_code == 0
    assert f"{len(replay.visible())} papers" in result.output


def test_the_demo_points_every_source_section_at_its_replay(tmp_path):
    # A section without a replay would send the demo, `papertrail try` and the benches to
    # the real service: every URL of every [sources.*] section is the replay's.
    assert set(demo.STANDS) == {f.name for f in dataclasses.fields(config_mod.SourcesConfig)}
    with demo.Replays() as replays:
        cfg = demo.demo_config(config_mod.load(demo.CONFIG), tmp_path, replays, 8000)
    for name in demo.STANDS:
        urls = [v for v in dataclasses.asdict(getattr(cfg.sources, name)).values()
                if isinstance(v, str) and re.match(r"https?://", v)]
        assert urls, name
        assert all(url.startswith("http://127.0.0.1:") for url in urls), (name, urls)


@pytest.mark.slow
def test_demo_runs_offline(tmp_path):
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path / "demo"), "--no-serve"])
    assert result.exit_code == 0, result.output
    runs = [line for line in result.output.splitlines() if "arxiv: ok" in line]
    assert len(runs) == 5
    assert any("revised" in line and "revised 0" not in line for line in runs)
    assert Store(tmp_path / "demo" / "data").rows("papers") > 0
    assert (tmp_path / "demo" / "output" / "index.html").exists()
    assert re.search(r"site: \d+ files", result.output)
    # its own config's topics (pipeline/replay/demo.toml), whatever papertrail.toml holds
    assert (tmp_path / "demo" / "output" / "topic" / "llm-agents" / "index.html").exists()


@pytest.mark.slow
def test_the_demo_runs_with_the_config_named(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('[site]\nlanguage = "en"\n[[topics]]\nslug = "grasping"\n'
                    'name = { zh = "抓取", en = "Grasping" }\nkeywords = ["grasp"]\n',
                    encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(path), "demo", "--dir",
                                      str(tmp_path / "demo"), "--no-serve"])
    assert result.exit_code == 0, result.output
    topics = tmp_path / "demo" / "output" / "topic"
    assert sorted(p.name for p in topics.iterdir() if p.is_dir()) == ["grasping"]



@pytest.mark.slow
def test_run_does_every_step_against_the_replays(tmp_path, replay, monkeypatch):
    from pipeline.replay.hf import HFReplay
    from pipeline.replay.openai import OpenAIReplay

    with HFReplay() as hf, OpenAIReplay() as llm:
        path = write_config(tmp_path, replay.url, f"""
[digest]
base_url = "{llm.url}"
model = "replay"
api_key_env = "TEST_RUN_KEY"
max_per_run = 5
""").read_text(encoding="utf-8").replace(
            "[sources.hf]\nenabled = false\n",
            f'[sources.hf]\nendpoint = "{hf.endpoint}"\ndelay_seconds = 0\n')
        (tmp_path / "papertrail.toml").write_text(path, encoding="utf-8")
        monkeypatch.setenv("TEST_RUN_KEY", "k")
        result = CliRunner().invoke(cli, ["--config", str(tmp_path / "papertrail.toml"), "run"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("arxiv: ok") for line in lines)
    assert any(line.startswith("hf: ") for line in lines)
    assert any(line.startswith("enrich: ") for line in lines)
    assert any(line.startswith("similar: ") and "lists made" in line for line in lines)
    # The backfill met 54 papers at v2; the same run fetches their v1 texts, so their
    # revisions have notes to write, which share the run's budget with the digests.
    assert any(line.startswith("versions: ok") and "new 54" in line for line in lines)
    assert any(line.startswith("notes: ok") and "selected 51 · made 1" in line
               for line in lines)
    assert any(line.startswith("digest: ok") and "made 4" in line for line in lines)
    assert llm.calls == 5
    assert (tmp_path / "output" / "index.html").is_file()


@pytest.mark.slow  # runs every step and builds the site
def test_a_first_run_that_finds_nothing_selecting_by_topics(tmp_path, monkeypatch):
    """A fork's first run can find nothing: every step then says so, and the site builds."""
    from pipeline.replay.arxiv import ArxivReplay
    from pipeline.replay.openai import OpenAIReplay

    with ArxivReplay([]) as api, OpenAIReplay() as llm:
        write_config(tmp_path, api.url, f"""
[digest]
base_url = "{llm.url}"
api_key_env = "TEST_RUN_KEY"
selection = "topics"
""")
        monkeypatch.setenv("TEST_RUN_KEY", "k")
        result = CliRunner().invoke(cli, ["--config", str(tmp_path / "papertrail.toml"), "run"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("notes: ok · selected 0") for line in lines)
    assert any(line.startswith("digest: ok · selected 0") for line in lines)
    assert llm.calls == 0
    assert (tmp_path / "output" / "index.html").is_file()


# One value for each list a follow can hold: a new list fails here until it is given one.
FOLLOW_VALUES = {"authors": '["Lin Yang"]', "keywords": '["robot"]', "categories": '["cs.RO"]',
                 "topics": '["robots"]', "watch": '["2605.00006"]'}
FOLLOW_LISTS = [f.name for f in dataclasses.fields(config_mod.Follow)
                if isinstance(f.default, tuple)]


@pytest.mark.slow  # builds the site twice for each kind
@pytest.mark.parametrize("kind", FOLLOW_LISTS)
def test_a_first_run_that_finds_nothing_publishes_with_every_kind_of_follow(kind, tmp_path,
                                                                           httpserver):
    """An empty store (arXiv brought nothing): build, notify and run each end well."""
    from pipeline.replay.arxiv import ArxivReplay

    with ArxivReplay([]) as api:
        path = write_config(tmp_path, api.url, f"""
[[topics]]
slug = "robots"
name = {{ zh = "机器人", en = "Robots" }}
keywords = ["robot"]
[[follows]]
name = "mine"
{kind} = {FOLLOW_VALUES[kind]}
[[notify]]
kind = "webhook"
url = "{httpserver.url_for("/hook")}"
""")
        for command in (["build"], ["notify"], ["run"]):
            shutil.rmtree(tmp_path / "output", ignore_errors=True)
            result = CliRunner().invoke(cli, ["--config", str(path), *command])
            assert result.exit_code == 0, (command, result.output, result.exception)
            if command != ["notify"]:
                assert (tmp_path / "output" / "me" / "index.html").is_file(), command
            else:
                assert result.output.startswith("notify: ok"), result.output
    assert httpserver.log == []  # nothing to send


def test_status_says_what_the_digest_selection_leaves_out_and_a_fork_outside_ai_digests_its_own(
        tmp_path, replay):
    path = write_config(tmp_path, replay.url, 'categories = ["cs.CR", "cs.RO"]')
    runner = CliRunner()
    assert runner.invoke(cli, ["--config", str(path), "ingest"]).exit_code == 0
    papers = Store(tmp_path / "data").read("papers").to_pylist()
    mine = [p for p in papers if {"cs.CR", "cs.RO"} & set(p["categories"])]
    ai = sum(bool(p["ai_related"]) for p in mine)
    assert 0 < ai < len(mine)
    out = runner.invoke(cli, ["--config", str(path), "status"]).stdout
    assert (f'digests: selection "ai" (auto) picks {ai} of {len(mine)} papers in scope; leaves '
            f"out {len(mine) - ai} (not AI-related by [classify] ai_categories and ai_phrases): "
            '[digest] selection = "all" digests them too') in out.splitlines()
    # A fork of cs.CR alone (no AI category): the default digests every paper of its field.
    path.write_text(path.read_text().replace('"cs.CR", "cs.RO"', '"cs.CR"'), encoding="utf-8")
    crypto = sum("cs.CR" in p["categories"] for p in papers)
    out = runner.invoke(cli, ["--config", str(path), "status"]).stdout
    assert f'digests: selection "all" (auto) picks {crypto} of {crypto} papers in scope' \
        in out.splitlines()
