"""The docs name every member of every registry, walked from the registry itself (as
datasette's docs tests do): every config section and key (from `Config`'s own fields),
every `[[notify]]` kind and its keys, every source, page kind (its module's docstring)
and site feed. A new member
fails here until it is documented."""

from __future__ import annotations

import dataclasses
import importlib
import re
import typing
from pathlib import Path

import pytest

from pipeline import config as config_mod
from pipeline.config import Channel, Config
from pipeline.site.pages.kinds import PAGE_KINDS, PageKind
from pipeline.site.render.feeds import SITE_FEEDS
from pipeline.sources import SOURCES

DOCS = Path(__file__).resolve().parents[1] / "docs"
CONFIG_DOC = (DOCS / "CONFIG.md").read_text(encoding="utf-8")


def sections() -> dict[str, type]:
    """Every section of the config file and the dataclass of its keys: a plain table
    (`store`), a table of tables (`sources.arxiv`), an array of tables (`[topics]`).
    `[[notify]]` is its kinds' (below)."""
    found: dict[str, type] = {}
    hints = typing.get_type_hints(Config)
    for f in dataclasses.fields(Config):
        kind = hints[f.name]
        if typing.get_origin(kind) is tuple:
            item = typing.get_args(kind)[0]
            if item is not Channel:
                found[f"[{f.name}]"] = item
        elif not dataclasses.is_dataclass(kind):
            continue  # the file's own path
        elif all(dataclasses.is_dataclass(t) for t in typing.get_type_hints(kind).values()):
            found |= {f"{f.name}.{sub}": t for sub, t in typing.get_type_hints(kind).items()}
        else:
            found[f.name] = kind
    return found


def _section(heading: str) -> str:
    block = CONFIG_DOC.split(f"## [{heading}]", 1)
    assert len(block) == 2, f"docs/CONFIG.md has no ## [{heading}] section"
    return block[1].split("\n## ", 1)[0]


def _has_row(body: str, key: str) -> bool:
    return re.search(rf"^\| `{re.escape(key)}` \|", body, re.M) is not None


def test_the_walk_finds_every_kind_of_section() -> None:
    """The walk itself: plain tables, a source's table and arrays of tables."""
    assert {"store", "site", "similar", "sources.arxiv", "[topics]", "[follows]"} <= set(
        sections())


@pytest.mark.parametrize(("section", "key"), [
    (s, k) for s, cls in sections().items() for k in config_mod.section_keys(cls)])
def test_every_config_key_is_documented(section: str, key: str) -> None:
    assert _has_row(_section(section), key), f"{section}.{key} undocumented"


def notify_kind_documented(kind: str, doc: str) -> bool:
    """`[[notify]]`'s `kind` row names the kind, and a row documents each of its keys."""
    body = doc.split("## [[notify]]", 1)[1].split("\n## ", 1)[0]
    kinds_row = next(line for line in body.splitlines() if line.startswith("| `kind` |"))
    return f"`{kind}`" in kinds_row and all(
        _has_row(body, key) for key in config_mod.section_keys(config_mod.CHANNEL_KINDS[kind]))


@pytest.mark.parametrize("kind", list(config_mod.CHANNEL_KINDS))
def test_every_notify_kind_and_its_keys_are_documented(kind: str) -> None:
    assert notify_kind_documented(kind, CONFIG_DOC), f"[[notify]] kind {kind} undocumented"


def source_documented(name: str, data: str, config: str) -> bool:
    """A source is documented where a forker reads of it: DATA.md names it (how its numbers
    count), or CONFIG.md has its own `[sources.<name>]` section."""
    return f"`{name}`" in data or f"## [sources.{name}]" in config


@pytest.mark.parametrize("name", list(SOURCES))
def test_every_source_is_documented(name: str) -> None:
    assert source_documented(name, (DOCS / "DATA.md").read_text(encoding="utf-8"),
                             CONFIG_DOC), f"neither DATA.md nor CONFIG.md documents {name}"


def page_kind_documented(kind: PageKind) -> bool:
    """A page kind is documented by its module's docstring: what its pages show."""
    module = importlib.import_module(kind.render.__module__ if kind.render else
                                     f"pipeline.site.pages.{kind.name}")
    return len((module.__doc__ or "").split()) >= 5


@pytest.mark.parametrize("name", list(PAGE_KINDS))
def test_every_page_kind_is_documented(name: str) -> None:
    assert page_kind_documented(PAGE_KINDS[name]), f"page kind {name}: its module says nothing"


@pytest.mark.parametrize("slug", list(SITE_FEEDS))
def test_every_site_feed_is_documented(slug: str) -> None:
    which = (DOCS / "DATA.md").read_text(encoding="utf-8").split("**Which entries.**", 1)[1]
    assert f"`{slug}`" in which.split("\n\n", 1)[0], f"docs/DATA.md's feeds lack {slug}"
