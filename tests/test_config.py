from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline._taxonomy import CS_CATEGORIES
from pipeline.cli import cli
from pipeline.config import ConfigError

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "papertrail.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_cover_all_of_computer_science(tmp_path):
    cfg = config_mod.load(write(tmp_path, ""))
    assert cfg.sources.arxiv.categories == CS_CATEGORIES
    assert len(cfg.sources.arxiv.categories) == 40
    assert cfg.sources.arxiv.delay_seconds == 3.0
    assert cfg.sources.arxiv.api_url == "https://export.arxiv.org/api/query"
    assert cfg.site.language == "zh-CN"
    assert cfg.site.timezone == "Asia/Shanghai"
    assert cfg.store_path == tmp_path / "data"
    assert cfg.output_path == tmp_path / "output"
    assert cfg.digest_language == "zh-CN"


def test_the_shipped_config_loads():
    cfg = config_mod.load(REPO / "papertrail.toml")
    assert cfg.sources.arxiv.enabled


def test_values_are_typed(tmp_path):
    cfg = config_mod.load(write(tmp_path, """
[site]
language = "en"
timezone = "Europe/Berlin"
[sources.arxiv]
categories = ["cs.CL", "stat.ML"]
delay_seconds = 5
page_size = 50
"""))
    assert cfg.site.language == "en"
    assert cfg.sources.arxiv.categories == ("cs.CL", "stat.ML")
    assert cfg.sources.arxiv.delay_seconds == 5.0
    assert isinstance(cfg.sources.arxiv.delay_seconds, float)
    assert cfg.digest_language == "en"


BAD = [
    ("[site]\ntitel = 'x'\n", "site.titel", "unknown key", "title"),
    ("[sources.arxiv]\nenabld = true\n", "sources.arxiv.enabld", "unknown key", "enabled"),
    ("[nonsense]\nx = 1\n", "nonsense", "unknown key", "sources"),
    ("[sources.arxiv]\npage_size = 'many'\n", "sources.arxiv.page_size", "'many'", "1 to 2000"),
    ("[sources.arxiv]\npage_size = 5000\n", "sources.arxiv.page_size", "5000", "1 to 2000"),
    ("[sources.arxiv]\nenabled = 'yes'\n", "sources.arxiv.enabled", "'yes'", "true or false"),
    ("[sources.arxiv]\ncategories = ['cs.XX']\n", "sources.arxiv.categories", "cs.XX",
     "arXiv category codes"),
    ("[sources.arxiv]\ncategories = 'cs.AI'\n", "sources.arxiv.categories", "'cs.AI'",
     "expected an array"),
    ("[sources.arxiv]\napi_url = 'ftp://x'\n", "sources.arxiv.api_url", "ftp://x", "http(s)"),
    ("[sources.arxiv]\ndelay_seconds = -1\n", "sources.arxiv.delay_seconds", "-1", "≥ 0"),
    ("[site]\ntimezone = 'Mars/Olympus'\n", "site.timezone", "Mars/Olympus", "IANA"),
    ("[site]\nbuild_jobs = -2\n", "site.build_jobs", "-2", "0 (one per CPU) to 64"),
    ("[site]\nlanguage = 'fr'\n", "site.language", "'fr'", "'zh-CN' | 'en'"),
    ("[digest]\nselection = 'some'\n", "digest.selection", "'some'", "'all' | 'ai' | 'topics'"),
    ("[sources.hf]\nenabled = 1\n", "sources.hf.enabled", "1", "true or false"),
    ("[[topics]]\nslug = 'Bad Slug'\n", "topics[0].slug", "Bad Slug", "lowercase"),
    ("[[topics]]\nslug = 'a'\nname = {zh = '甲', en = 'A'}\nkeywords = ['x']\n"
     "[[topics]]\nslug = 'a'\nname = {zh = '乙', en = 'B'}\nkeywords = ['y']\n",
     "topics[1].slug", "'a'", "no other"),
    ("[[topics]]\nname = {zh = 'x', en = 'y'}\n", "topics[0].slug", "", "required"),
    ("[[topics]]\nslug = 'a'\nkeywords = 'agents'\n", "topics[0].keywords", "'agents'",
     "array"),
    ("[[topics]]\nslug = 'a'\ncolour = 1\n", "topics[0].colour", "unknown key", "keywords"),
    ("[site\n", "not valid TOML", "", ""),
]


@pytest.mark.parametrize(("text", "key", "value", "allowed"), BAD)
def test_bad_config_is_one_clear_error(tmp_path, text, key, value, allowed):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        config_mod.load(path)
    message = str(err.value)
    assert str(path) in message
    assert key in message
    assert value in message
    assert allowed in message


@pytest.mark.parametrize(("text", "key", "value", "allowed"), BAD[:6])
def test_bad_config_exits_2_and_writes_nothing(tmp_path, text, key, value, allowed):
    path = write(tmp_path, text)
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest"])
    assert result.exit_code == 2
    assert key in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["papertrail.toml"]


def test_missing_config_file_names_it(tmp_path):
    result = CliRunner().invoke(cli, ["--config", str(tmp_path / "nope.toml"), "status"])
    assert result.exit_code == 2
    assert "nope.toml" in result.output and "not found" in result.output


def test_digest_base_url_and_model_come_from_env_when_set(tmp_path, monkeypatch):
    path = write(tmp_path, '[digest]\nmodel = "from-file"\n')
    monkeypatch.setenv("PAPERTRAIL_DIGEST_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("PAPERTRAIL_DIGEST_MODEL", "")  # an unset Actions variable
    cfg = config_mod.load(path)
    assert cfg.digest.base_url == "http://127.0.0.1:9/v1"
    assert cfg.digest.model == "from-file"
    monkeypatch.setenv("PAPERTRAIL_DIGEST_BASE_URL", "not a url")
    with pytest.raises(ConfigError, match=r"digest\.base_url"):
        config_mod.load(path)
