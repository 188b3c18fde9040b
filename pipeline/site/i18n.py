"""UI strings: one catalogue file per language, `catalogue/<language>.toml`, read once.
`[site] language` picks one; tests/test_catalogue.py fails when the two differ in keys or
placeholders, or when the code or a template uses a key neither holds. Values may hold
{placeholders} (str.format)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

from pipeline.derive import rank
from pipeline.text.reasons import Code, Reason, named


def _load() -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    strings, timezones = {}, {}
    for file in sorted(Path(__file__).with_name("catalogue").glob("*.toml")):
        table = tomllib.loads(file.read_text("utf-8"))
        timezones[file.stem] = table.pop("timezones")
        strings[file.stem] = table
    return strings, timezones


CATALOGUE, TIMEZONES = _load()


class Strings(dict[str, str]):
    """A language's strings, read as `s.key` in templates straight from the dict: Jinja
    tries an attribute first, and on a plain dict that miss is an exception raised and
    caught, thirty times a paper page. No key may be a dict method's name (a test checks)."""

    def __getattr__(self, key: str) -> str:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


_STRINGS = {language: Strings(table) for language, table in CATALOGUE.items()}


def strings(language: str) -> Strings:
    return _STRINGS[language]


def tz_label(language: str, timezone: str) -> str:
    return TIMEZONES[language].get(timezone, timezone)


def say(why: Sequence[Reason], s: Mapping[str, str]) -> str:
    """Why a paper matched (pipeline/text/reasons.py) in the language of `s`: each reason by its
    `why_<code>` string, joined by `semicolon`; a follow's name leads the reasons it gave.
    The one place reasons become text (templates: `p.ai_reason | why(s)`)."""
    if why and why[0].code is Code.FOLLOW:
        return s["why_follow"].format(**named(why[0]), why=say(why[1:], s))
    return s["semicolon"].join(_part(r, s) for r in why)


def say_pick(r: rank.Reason, s: Mapping[str, str], topic_names: Mapping[str, str]) -> str:
    """A 今日精选 reason (pipeline/derive/rank.py) in the language of `s`, without its points: its
    `reason_<kind>` with its value (a venue's `reason_venue_<tier>`), a topic by its name."""
    value = topic_names.get(r.value, r.value) if r.kind is rank.Kind.TOPIC else r.value
    kind = f"{r.kind}_{r.tier}" if r.tier else r.kind
    return s[f"reason_{kind}"].format(value=value)


def _part(r: Reason, s: Mapping[str, str]) -> str:
    if r.code is Code.TEXT:  # a stored part of no known shape: as it is
        return r.args[0]
    if r.code is Code.ALL_OF:
        phrases = s["why_all_of_sep"].join(s["why_all_of_phrase"].format(phrase=p)
                                           for p in r.args)
        return s["why_all_of"].format(phrases=phrases)
    args = named(r)
    if "where" in args:
        args["where"] = s[f"why_in_{args['where']}"]
    return s[f"why_{r.code}"].format(**args)
