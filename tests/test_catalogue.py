"""The UI catalogues (pipeline/site/catalogue/<language>.toml): the same keys and
placeholders in every language, every key the code and templates use held, shipped in the
package."""

from __future__ import annotations

import ast
import fnmatch
import string
import tomllib
import typing
from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

from pipeline.config import SiteConfig
from pipeline.derive import rank
from pipeline.site import i18n
from pipeline.sources import signals
from pipeline.text.reasons import Code
from pipeline.text.venue import Tier
from tests.support.code import file_nodes

REPO = Path(__file__).resolve().parents[1]
CATALOGUES = REPO / "pipeline" / "site" / "catalogue"


def placeholders(template: str) -> set[str]:
    """The names a str.format template reads ("{date.month}" reads date)."""
    return {name.split(".")[0].split("[")[0].split("!")[0]
            for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_there_is_one_catalogue_per_site_language_with_the_same_keys():
    languages = typing.get_args(typing.get_type_hints(SiteConfig)["language"])
    assert sorted(i18n.CATALOGUE) == sorted(languages) == sorted(
        p.stem for p in CATALOGUES.glob("*.toml"))
    keys = {language: set(table) for language, table in i18n.CATALOGUE.items()}
    assert keys["zh-CN"] == keys["en"]
    assert len(keys["en"]) > 300
    assert i18n.TIMEZONES["zh-CN"].keys() == i18n.TIMEZONES["en"].keys()


def test_a_key_takes_the_same_placeholders_in_every_language():
    zh, en = i18n.CATALOGUE["zh-CN"], i18n.CATALOGUE["en"]
    assert {k: (placeholders(zh[k]), placeholders(en[k])) for k in zh
            if placeholders(zh[k]) != placeholders(en[k])} == {}
    assert placeholders("{date:%b} {date.day}") == {"date"}  # the helper reads what format does


def test_catalogue_keys_read_as_attributes_and_shadow_no_dict_method():
    for language in i18n.CATALOGUE:
        s = i18n.strings(language)
        assert set(s) & set(dir(dict)) == set()
        assert s.authors == s["authors"] == i18n.CATALOGUE[language]["authors"]
        with pytest.raises(AttributeError):
            _ = s.no_such_key


def template_keys() -> set[str]:
    """`s.key` and `s["key"]` in every template (theme/templates: pages and ui.js), read
    from Jinja's syntax tree."""
    env = jinja2.Environment()
    used = set()
    for path in (REPO / "theme" / "templates").iterdir():
        tree = env.parse(path.read_text("utf-8"))
        for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
            if isinstance(node.node, nodes.Name) and node.node.name == "s":
                key = node.attr if isinstance(node, nodes.Getattr) else getattr(
                    node.arg, "value", None)
                if isinstance(key, str):
                    used.add(key)
    return used


def code_keys() -> tuple[set[str], set[str]]:
    """The keys Python reads from a catalogue (`s[...]`, `strings[...]`, `self.s[...]`,
    `site.strings[...]`): whole keys, and the constant starts of keys made by f-string."""
    whole, starts = set(), set()
    for path in (REPO / "pipeline").rglob("*.py"):
        for node in file_nodes(path):
            if not isinstance(node, ast.Subscript):
                continue
            value = node.value
            name = value.id if isinstance(value, ast.Name) else getattr(value, "attr", "")
            if name not in ("s", "strings"):
                continue
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                whole.add(key.value)
            elif isinstance(key, ast.JoinedStr) and isinstance(key.values[0], ast.Constant):
                starts.add(str(key.values[0].value))
    return whole, starts


def test_every_key_the_templates_and_code_use_is_in_the_catalogue():
    keys = set(i18n.CATALOGUE["en"])
    used = template_keys()
    whole, starts = code_keys()
    assert {"cite", "search_placeholder", "ai_flag"} <= used  # the scan finds them
    assert {"feed_why", "colon", "semicolon"} <= whole and {"reason_", "why_"} <= starts
    assert (used | whole) - keys == set()
    assert {p for p in starts if not any(k.startswith(p) for k in keys)} == set()


def test_every_reason_code_and_pick_kind_has_its_string():
    keys = set(i18n.CATALOGUE["en"])
    said = {f"why_{c}" for c in Code if c not in (Code.TEXT,)}
    said |= {"why_all_of_phrase", "why_all_of_sep", "why_in_title", "why_in_abstract"}
    assert said - keys == set()
    kinds = {f"reason_{k}" for k in rank.Kind if k is not rank.Kind.VENUE}
    kinds |= {f"reason_{signal.chip}" for signal in signals()}  # each source signal's chip
    assert "reason_hf" in kinds
    assert (kinds | {f"reason_venue_{t}" for t in Tier}) - keys == set()  # a venue by its tier


def test_the_catalogues_ship_in_the_package():
    data = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["pipeline.site"]
    files = [p.relative_to(CATALOGUES.parent).as_posix() for p in CATALOGUES.iterdir()]
    assert files and all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files)
