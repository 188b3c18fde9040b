"""Shared fixtures: real local servers and real stores on disk, named for the state they give."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline import config as config_mod
from pipeline._schemas import ARXIV_SNAPSHOT, PAPERS, VERSIONS, empty
from pipeline._taxonomy import CS_CATEGORIES
from pipeline.config import Config
from pipeline.merge import merge_arxiv
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.hf import HFReplay
from pipeline.store import Store

# Recorded real responses, copied verbatim into the repository (tests/data/README.md): a
# fork's own CI has nothing outside its checkout.
FIXTURES = Path(__file__).resolve().parent / "data"


def fast_arxiv(cfg: Config, api_url: str, **changes: object) -> Config:
    """The config pointed at a local server, without arXiv's 3 s politeness delay."""
    fast: dict[str, object] = {"delay_seconds": 0.0, "backoff_seconds": 0.01,
                               "max_backoff_seconds": 0.05, "timeout_seconds": 2.0}
    arxiv = dataclasses.replace(cfg.sources.arxiv, api_url=api_url, **{**fast, **changes})
    return dataclasses.replace(cfg, sources=dataclasses.replace(cfg.sources, arxiv=arxiv))


@pytest.fixture
def base_config(tmp_path: Path) -> Config:
    path = tmp_path / "papertrail.toml"
    path.write_text('[store]\npath = "data"\n', encoding="utf-8")
    return config_mod.load(path)


@pytest.fixture
def replay() -> Iterator[ArxivReplay]:
    """The arXiv replay over the bundled sample, showing everything announced."""
    with ArxivReplay(sample.entries()) as server:
        yield server


@pytest.fixture
def config(base_config: Config, replay: ArxivReplay) -> Config:
    return fast_arxiv(base_config, replay.url)


@pytest.fixture
def store(config: Config) -> Store:
    return Store(config.store_path)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """An empty bare repository standing in for the project on GitHub."""
    bare = tmp_path / "github.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    return bare


# -- the Hugging Face replay, and the sample's papers as a table -----------------------------------


def fast_hf(cfg: Config, endpoint: str, **changes: object) -> Config:
    """The config pointed at a local HF replay, without delays and with quick backoff."""
    fast = {"delay_seconds": 0.0, "backoff_seconds": 0.01, "max_backoff_seconds": 0.05,
            "timeout_seconds": 2.0}
    hf = dataclasses.replace(cfg.sources.hf, endpoint=endpoint, **{**fast, **changes})
    return dataclasses.replace(cfg, sources=dataclasses.replace(cfg.sources, hf=hf))


@pytest.fixture
def hf_replay() -> Iterator[HFReplay]:
    """The HF daily-papers replay over the bundled sample days (2026-06-22 … 26)."""
    with HFReplay() as server:
        yield server


@pytest.fixture
def hf_config(config: Config, hf_replay: HFReplay) -> Config:
    """Both sources pointed at their local replays."""
    return fast_hf(config, hf_replay.endpoint)


@pytest.fixture(scope="session")
def sample_papers() -> pa.Table:
    """The bundled sample's newest versions as a papers table (no server needed)."""
    rows = [{**{k: v for k, v in e.__dict__.items() if k != "announced"},
             "authors": list(e.authors), "categories": list(e.categories),
             "primary_category": e.primary_category, "fetched_at": e.announced}
            for e in sample.entries()]
    batch = pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT)
    return merge_arxiv(empty(PAPERS), empty(VERSIONS), batch, CS_CATEGORIES).papers
