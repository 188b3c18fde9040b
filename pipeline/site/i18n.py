"""UI strings: one catalogue file per language, `catalogue/<language>.toml`, read once.
`[site] language` picks one; tests/test_catalogue.py fails when the two differ in keys or
placeholders, or when the code or a template uses a key neither holds. Values may hold
{placeholders} (str.format)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from markupsafe import Markup, escape

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


class Links(NamedTuple):
    """A page's links to itself in the site's other languages: `<link rel="alternate">`s
    for its head, and the switch its header shows."""

    head: Markup
    switch: Markup


NO_LINKS = Links(Markup(""), Markup(""))


@dataclass(frozen=True)
class Alternates:
    """Where a page of one language's build is in the others ([site] languages): the
    default at the site's root, each other under `<language>/`. A page of another language
    has its counterpart in the default's build (it carries the newest papers of the same
    library); a page of the default has it in another's when that build made it (`made`:
    its files, built before the default's). Called by the pages (`alternates(here, root)`,
    a template global): callable, so the files are not in every page's salt, only the
    links a page shows are in its key."""

    lang: str  # of the build these pages are in
    languages: tuple[str, ...] = ()  # every language, the default first
    base_url: str = ""  # the default's public URL, for absolute hreflang links
    made: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def __call__(self, here: str, root: str) -> Links:
        """The links of the page at `here` (its path under this language's root: a
        folder's index.html, or a file) that reaches this language's root by `root`."""
        if len(self.languages) < 2:
            return NO_LINKS
        url = here.removesuffix("index.html")
        head, switch = [], []
        for language in self.languages:
            top = root + self.step(language)
            there = language == self.lang or self.has(language, here)
            if there:
                href = escape(self.absolute(language, url) or top + url)
                head.append(f'<link rel="alternate" hreflang="{language}" href="{href}">')
            if language != self.lang:  # no counterpart: that language's home page
                name = CATALOGUE[language][name_key(language)]
                switch.append(f'<a href="{escape(top + url if there else top)}" '
                              f'hreflang="{language}" lang="{language}">{escape(name)}</a>')
        default = self.languages[0]
        if self.lang == default or self.has(default, here):
            href = escape(self.absolute(default, url) or root + self.step(default) + url)
            head.append(f'<link rel="alternate" hreflang="x-default" href="{href}">')
        label = escape(_STRINGS[self.lang]["languages"])
        return Links(Markup("\n".join(head) + "\n"),
                     Markup(f'<nav class="languages" aria-label="{label}">{"".join(switch)}'
                            "</nav>\n"))

    def step(self, language: str) -> str:
        """From this language's root to `language`'s."""
        up = "" if self.lang == self.languages[0] else "../"
        return up if language == self.languages[0] else f"{up}{prefix(language)}"

    def has(self, language: str, here: str) -> bool:
        made = self.made.get(language)
        return made is None or here in made

    def absolute(self, language: str, url: str) -> str:
        if not self.base_url:
            return ""
        at = "" if language == self.languages[0] else prefix(language)
        return f"{self.base_url.rstrip('/')}/{at}{url}"


def name_key(language: str) -> str:
    """The key of a language's name (in each catalogue, as its readers call it)."""
    return f"language_{language.split('-')[0]}"


def prefix(language: str) -> str:
    """Where a language other than the default is built, under the site's root."""
    return f"{language}/"
