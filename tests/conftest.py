"""Shared fixtures: real local servers and real stores on disk, named for the state they give."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline import config as config_mod
from pipeline.config import Config
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.store import Store

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"


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
