"""papertrail.toml: the one file a forker edits, loaded into typed, validated objects.

Every section is a frozen dataclass; its fields (with their defaults) *are* the
schema. Loading rejects unknown keys, wrong types and out-of-range values with a
single `ConfigError` that names the file, the key, the bad value and what is
allowed, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import os
import re
import tomllib
import types
import typing
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pipeline.text import patterns
from pipeline.text.ids import is_arxiv_id
from pipeline.text.taxonomy import ALL_CATEGORIES, CS_CATEGORIES
from pipeline.text.venue import Tier

DEFAULT_PATH = Path("papertrail.toml")
# The project's own folders. The build removes every file of [site] output it did not make,
# so the output must stay clear of them (see _check_output).
PROJECT_ROOT = Path(__file__).resolve().parents[1]
THEME = PROJECT_ROOT / "theme"
CONTENT = PROJECT_ROOT / "content"
# Values the update workflow passes through env: rather than the file: a fork's repository
# variables, and the Pages URL (so feeds, OPML and sitemap carry absolute URLs without
# anyone typing them). Empty counts as unset: Actions expands a missing variable to "".
ENV_OVERRIDES = {"PAPERTRAIL_DIGEST_BASE_URL": ("digest", "base_url"),
                 "PAPERTRAIL_DIGEST_MODEL": ("digest", "model"),
                 "PAPERTRAIL_SITE_BASE_URL": ("site", "base_url"),
                 "PAPERTRAIL_SITE_SOURCE_URL": ("site", "source_url")}

# The secrets .github/workflows/update.yml hands `papertrail run`, each as the variable of
# its own name: a fixed list, since `env:` names cannot come from the config and a secret
# looked up by a computed name would hand the step every secret. An unset one arrives empty.
WORKFLOW_KEY_ENVS = ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY",
                     "VLLM_API_KEY", "OLLAMA_API_KEY")


class ConfigError(Exception):
    """A bad config: the message names file, key, value and what is allowed."""


# -- checks attached to fields (metadata["check"]) ------------------------------------------------

Check = Callable[[Any], str | None]  # returns a problem description, or None when fine


def _at_least(low: float) -> Check:
    return lambda v: None if v >= low else f"must be ≥ {low}"


def _between(low: float, high: float) -> Check:
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


TAXONOMY_URL = "https://arxiv.org/category_taxonomy"


def _categories(values: tuple[str, ...]) -> str | None:
    unknown = [v for v in values if v not in ALL_CATEGORIES]
    if not unknown:
        return None
    named = []
    for code in unknown:
        near = _nearest_category(code)
        named.append(f"{code} (did you mean {near}?)" if near else code)
    return (f"unknown arXiv categor{'y' if len(unknown) == 1 else 'ies'} {', '.join(named)}; "
            f"the codes: {TAXONOMY_URL} (pipeline/text/taxonomy.py)")


def _nearest_category(code: str) -> str | None:
    """The known code a typo most likely meant: the same but for case, else the closest."""
    by_case = {c.casefold(): c for c in ALL_CATEGORIES}
    if (same := by_case.get(code.casefold())) is not None:
        return same
    near = difflib.get_close_matches(code.casefold(), sorted(by_case), n=1, cutoff=0.75)
    return by_case[near[0]] if near else None


# What a site built from a replay's store may declare made up (`[site] simulated`): each
# is named by the banner on every page, and a made-up revision links to no arXiv version.
SIMULATED = ("times", "revisions", "licenses")


SiteLanguage = Literal["zh-CN", "en"]
SITE_LANGUAGES: tuple[SiteLanguage, ...] = typing.get_args(SiteLanguage)
LANGUAGES_ALLOWED = ("an array of distinct languages of 'zh-CN', 'en', the default first "
                     "([site] language, which may be left out then), or empty")


def _simulated(values: tuple[str, ...]) -> str | None:
    unknown = [v for v in values if v not in SIMULATED]
    return f"unknown {', '.join(map(repr, unknown))}" if unknown else None


def _timezone(value: str) -> str | None:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        return "is not an IANA time zone"
    return None


# scheme, a host, then anything without spaces or characters that would end an HTML attribute
_URL = re.compile(r"https?://[^\s/?#\"'<>`\\]+(?:[/?#][^\s\"'<>`\\]*)?", re.IGNORECASE)


def _url(value: str) -> str | None:
    return None if _URL.fullmatch(value) else "must be an http(s) URL"


def _feed_url(value: str) -> str | None:
    return _url(value) or (None if value.endswith("/") else "must end with /")


def _site_url(value: str) -> str | None:
    # It prefixes every link of the feeds and the sitemap: `javascript:` would land in each.
    return None if value == "" else _url(value)


_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def _contact(value: str) -> str | None:
    # It goes into a request header: one line, no control characters.
    if value == "" or _URL.fullmatch(value) or _EMAIL.fullmatch(value):
        return None
    return "must be an e-mail address or an http(s) URL"


def _some_categories(values: tuple[str, ...]) -> str | None:
    return "must list at least one category" if not values else _categories(values)


def _non_empty(value: Any) -> str | None:
    return None if value else "must not be empty"


# Phrases in one list (keywords, exclude, authors, all groups together): matching is
# linear in them, but a list this long is a pasted vocabulary, not a topic.
MAX_PHRASES = 10_000


def _phrases(values: tuple[str, ...]) -> str | None:
    if len(values) > MAX_PHRASES:
        return f"{len(values):,} phrases; at most {MAX_PHRASES:,} in one list"
    # A phrase without a letter or digit would match everywhere (or nowhere): surely a typo.
    for i, v in enumerate(values):
        if not re.search(r"\w", v):
            return f"item {i} ({v!r}) has no letter or digit"
    return None


def _phrase_groups(groups: tuple[tuple[str, ...], ...]) -> str | None:
    if (total := sum(map(len, groups))) > MAX_PHRASES:
        return f"{total:,} phrases; at most {MAX_PHRASES:,} in all groups together"
    for i, group in enumerate(groups):
        if not group:
            return f"group {i} is empty"
        if problem := _phrases(group):
            return f"group {i}: {problem}"
    return None


def _spec(default: Any, check: Check | None = None, allowed: str = "",
          multiline: bool = False) -> Any:
    """A dataclass field with a default, an optional check and the 'allowed' text for errors.
    `multiline`: its text may hold line breaks and tabs (other control characters never)."""
    kwargs: dict[str, Any] = {"metadata": {"check": check, "allowed": allowed,
                                           "multiline": multiline}}
    if isinstance(default, list | dict):
        kwargs["default_factory"] = lambda: type(default)(default)
    else:
        kwargs["default"] = default
    return field(**kwargs)


# -- sections -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoreConfig:
    path: Path = _spec(Path("data"), allowed="a folder path")


@dataclass(frozen=True)
class SiteConfig:
    title: str = _spec("研踪 PaperTrail", _non_empty, "a non-empty string")
    # The header shows it in bold, then the rest of the title; empty: the title's first word.
    short_name: str = _spec("", allowed="a short name, or empty for the title's first word")
    # The home page's small line above its headline (empty: none), headline and paragraph
    # (empty: the site language's own).
    tagline: str = _spec("YOUR RESEARCH, IN SIGHT", allowed="a line of text, or empty for none")
    hero: str = _spec("", allowed="a headline, or empty for the language's default")
    intro: str = _spec("", allowed="a paragraph, or empty for the language's default")
    # The site's code, linked from the credit a site under another title gives PaperTrail;
    # the update workflow passes its own repository (PAPERTRAIL_SITE_SOURCE_URL).
    source_url: str = _spec("", _site_url, "empty, or an http(s) URL such as "
                            "https://github.com/you/repo")
    language: SiteLanguage = "zh-CN"
    # Every language the site is built in, the default (`language`, at the site's root) first,
    # each other under its own prefix (en/); empty: `language` alone.
    languages: tuple[str, ...] = _spec((), allowed=LANGUAGES_ALLOWED)
    # What a language other than the default carries: the papers first seen in these days
    # (its home, lists, briefs, feeds, search and paper pages); the default carries all. A
    # second full copy would not fit max_site_mb past ~100,000 papers (docs/SCALE.md).
    other_language_days: int = _spec(14, _between(1, 366), "1 to 366 days")
    timezone: str = _spec("Asia/Shanghai", _timezone, "an IANA name such as Asia/Shanghai")
    base_url: str = _spec("", _site_url, "empty, or an http(s) URL such as "
                          "https://you.github.io/repo (the site's public URL)")
    output: Path = _spec(Path("output"), allowed="a folder path")
    paper_pages_days: int = _spec(365, _at_least(1), "a whole number of days ≥ 1")
    # Worker processes for paper pages and the search index; 0 = one per CPU the build
    # may use. 1 renders everything in the build's own process.
    build_jobs: int = _spec(0, _between(0, 64), "0 (one per CPU) to 64")
    # Every feed holds every entry of the last feed_days days, or of the last feed_days
    # days that had entries when those reach further back: a reader who polls less than
    # daily, or over a weekend, still gets every paper of a cs.* announcement (600-1,500).
    feed_days: int = _spec(3, _between(1, 60), "1 to 60 days")
    # 为你推荐 (for-you/) ranks the papers first seen in these days; its data grows with
    # them (all cs.*: 0.92 MB gzip at 7 days, 1.41 MB at 14; docs/RECOMMEND.md).
    recommend_days: int = _spec(7, _between(1, 30), "1 to 30 days")
    # A reader downloads the whole file on every poll; past this the oldest entries give
    # way to one that says so, and the light twin and the daily brief feed hold the rest
    # (an entry with its abstract is 2-3 KB, its light form ~0.5, a brief's line ~0.2).
    feed_max_mb: float = _spec(1.0, _between(0.05, 50), "0.05 to 50 MB")
    # Past it the oldest paper pages turn light (their article fetched by the page's script,
    # ~2 KB a paper where a full page is ~5). GitHub Pages publishes at most 1 GB and
    # does not say how it counts (the files, or the archive the workflow uploads): 5% spare.
    max_site_mb: float = _spec(950.0, _at_least(1), "a number of MB ≥ 1")
    # What of the store is made up (the demo's replays set it): a banner names it on every
    # page. Empty for a site of real data.
    simulated: tuple[str, ...] = _spec((), _simulated,
                                       f"an array of {', '.join(map(repr, SIMULATED))}")


@dataclass(frozen=True)
class RequestsConfig:
    """What every source's requests share: a pause between them, a timeout on each, retries
    with backoff (Retry-After wins), and a bound on the whole run. A source's own config
    extends it, with defaults of its own where its service asks for them."""

    enabled: bool = True
    delay_seconds: float = _spec(1.0, _at_least(0), "seconds ≥ 0")
    # A stalled response would otherwise hang the run.
    timeout_seconds: float = _spec(30.0, _at_least(0.1), "seconds ≥ 0.1")
    max_retries: int = _spec(4, _between(0, 20), "0 to 20")
    # Exponential backoff base: wait backoff_seconds × 2^attempt (capped), or Retry-After.
    backoff_seconds: float = _spec(2.0, _at_least(0), "seconds ≥ 0")
    max_backoff_seconds: float = _spec(60.0, _at_least(0), "seconds ≥ 0")
    # Hard bound on one catch-up, retries and waits included.
    max_run_seconds: float = _spec(600.0, _at_least(1), "seconds ≥ 1")


@dataclass(frozen=True)
class ArxivConfig(RequestsConfig):
    categories: tuple[str, ...] = _spec(
        CS_CATEGORIES, _some_categories, "arXiv category codes such as cs.AI (default: all "
        "40 cs.*; to follow none, set enabled = false)"
    )
    # The export API: papers by id (watched papers, Hugging Face picks) and the newest
    # papers by their first version's date, which is all its date ranges select today.
    api_url: str = _spec("https://export.arxiv.org/api/query", _url, "an http(s) URL")
    # OAI-PMH, which arXiv asks bulk harvesters to use: every new version and every
    # metadata change (comment, journal-ref, DOI), by the day it happened.
    oai_url: str = _spec("https://oaipmh.arxiv.org/oai", _url, "an http(s) URL")
    # The announcement feed (`<feed_url>cs.CV+cs.LG`): what arXiv announced today, read to
    # fetch what the store lacks and to keep the completeness ledger.
    feed_url: str = _spec("https://rss.arxiv.org/rss/", _feed_url,
                          "an http(s) URL ending in / (the categories are appended)")
    # Sent in the User-Agent of every request to arXiv, so arXiv can reach whoever runs
    # this copy instead of blocking it (its terms ask harvesters to identify themselves).
    contact: str = _spec("", _contact, "an e-mail address or an http(s) URL, or empty")
    # arXiv's API terms: "make no more than one request every three seconds". Lower values
    # are for mirrors and local replays only.
    delay_seconds: float = _spec(3.0, _at_least(0), "seconds ≥ 0 (arXiv asks for 3)")
    backoff_seconds: float = _spec(5.0, _at_least(0), "seconds ≥ 0")
    max_backoff_seconds: float = _spec(120.0, _at_least(0), "seconds ≥ 0")
    # arXiv serves at most 2000 results a call; 200 keeps each response small and quick.
    page_size: int = _spec(200, _between(1, 2000), "1 to 2000 (arXiv's per-call limit)")
    backfill_days: int = _spec(3, _between(1, 365), "1 to 365 days")
    # arXiv serves no result past offset 10,000 of one query (arxiv-search's MAX_RESULTS;
    # past it HTTP 500); a date range holding more is halved.
    max_results_per_query: int = _spec(10000, _between(100, 10000),
                                       "100 to 10000 (arXiv serves no result past 10,000)")
    # A version is stamped when submitted but listed at the next announcement; re-reading a
    # day before the watermark catches entries that surface late.
    overlap_hours: float = _spec(24.0, _between(0, 24 * 14), "0 to 336 hours")
    # A long backfill pages many ranges at 3 s a request.
    max_run_seconds: float = _spec(1800.0, _at_least(1), "seconds ≥ 1")
    id_batch_size: int = _spec(100, _between(1, 2000), "1 to 2000 ids per request")
    # What [[follows]] name outside the categories (watched ids, followed authors) is looked
    # up by the export API: one request per id_batch_size watched ids, one per author (the
    # newest page_size papers), at most this many a run (at 3 s each); authors past it are
    # looked up in the next runs, in turn.
    lookups_per_run: int = _spec(20, _between(0, 500), "0 (no look-ups) to 500 requests")
    # The texts of stored papers' earlier versions (a paper first stored at v3 lacks v1 and
    # v2) are fetched by versioned id, at most this many versions a run: 2,000 is 20
    # requests at id_batch_size 100, a minute at 3 s each; a year's backfill (~45,000
    # versions) is done in about a day of hourly runs, a 106-day outage in two.
    version_texts_per_run: int = _spec(2000, _between(0, 100_000),
                                       "0 (never fetch them) to 100000 versions")

    @property
    def user_agent(self) -> str:
        contact = f"; {self.contact}" if self.contact else ""
        return f"papertrail/0.1 (+https://github.com/{contact})"


@dataclass(frozen=True)
class HFConfig(RequestsConfig):
    endpoint: str = _spec("https://huggingface.co", _url, "an http(s) URL")
    backfill_days: int = _spec(7, _between(1, 365), "1 to 365 days")
    # Picks keep arriving and upvotes keep growing after a day's list appears, so each run
    # re-reads this many days before the watermark day (which is itself always re-read).
    overlap_days: int = _spec(2, _between(0, 30), "0 to 30 days")
    page_size: int = _spec(100, _between(1, 100), "1 to 100 items per request")
    # Picks of papers in none of [sources.arxiv] categories: shown (and digested) or not.
    # "auto": shown when the categories are all of cs.*, the upstream site's scope, whose
    # readers want the day's picks of every field; a narrower fork chose its field.
    outside_categories: Literal["auto", "show", "hide"] = "auto"


@dataclass(frozen=True)
class SourcesConfig:
    arxiv: ArxivConfig = field(default_factory=ArxivConfig)
    hf: HFConfig = field(default_factory=HFConfig)


@dataclass(frozen=True)
class ClassifyConfig:
    """The explainable AI-related rule: any of these categories, or any phrase."""

    ai_categories: tuple[str, ...] = _spec(
        ("cs.AI", "cs.LG", "cs.CL", "cs.CV", "cs.NE", "cs.IR", "cs.MA", "cs.RO", "stat.ML",
         "eess.AS", "eess.IV"),
        _categories,
        "arXiv category codes",
    )
    ai_phrases: tuple[str, ...] = _spec(
        ("large language model", "language model", "LLM", "GPT", "neural network",
         "deep learning", "machine learning", "reinforcement learning", "federated learning",
         "distributed learning", "self-supervised learning", "representation learning",
         "diffusion model", "world model",
         "transformer", "foundation model", "generative model", "generative adversarial network",
         "multimodal model", "vision-language", "natural language processing", "computer vision",
         "artificial intelligence", "AI agent", "prompting", "prompt engineering",
         "fine-tuning", "text embedding", "word embedding", "embedding model"),
        _phrases,
        "phrases matched on word boundaries, case-insensitively",
    )


@dataclass(frozen=True)
class SimilarConfig:
    enabled: bool = True
    # Eight fill a screen at the end of a paper page, ~1 KB of its bytes (links and titles).
    count: int = _spec(8, _between(1, 20), "1 to 20 papers")
    # Empty: similar by words (TF-IDF), no model. A model name: by embeddings from the
    # [digest] server (its base_url and key), once every paper has one.
    embeddings_model: str = _spec("", allowed="empty, or an embeddings model of the [digest] "
                                  "server such as text-embedding-3-small")
    # 256 keeps a year of vectors at ~200 MB in the store; text-embedding-3 models shorten
    # theirs on request.
    embeddings_dimensions: int = _spec(256, _between(16, 4096), "16 to 4096")
    # A run embeds at most this many papers (a year's backfill: 30 runs); ~300 tokens each.
    # Also the local encoder's cap: 5,000 papers are ~14 minutes on 2 cores (docs/RECOMMEND.md).
    embeddings_per_run: int = _spec(5000, _at_least(0), "a whole number ≥ 0")
    # A local sentence encoder (pipeline/derive/encoder.py), run on the job's CPU when
    # embeddings_model is empty: fetched from the Hugging Face hub at a pinned revision and
    # checked by its files' SHA-256. Empty: no local model.
    encoder: Literal["", "all-MiniLM-L6-v2"] = ""
    # A folder holding the encoder's files (config.json, tokenizer.json, model.safetensors)
    # instead of the hub; checked the same way. Empty: the hub (through its cache).
    encoder_path: str = _spec("", allowed="empty, or a folder holding the encoder's files")


@dataclass(frozen=True)
class RankConfig:
    """今日精选's weights: points per reason (pipeline/derive/rank.py), 0 to leave one out."""

    # Per doubling of a paper's Hugging Face upvotes: 1 vote is 1.5 points, 18 votes 6.4,
    # more than a top venue, a topic and code together (docs/CONFIG.md#rank, bench/picks.py).
    hf_upvotes: float = _spec(1.5, _between(0, 100), "0 to 100 points")
    # A venue took it, by its tier (text.venue.Tier): a main conference the fork's categories
    # count among their top venues, findings, a workshop, a journal, another conference.
    venue_main: float = _spec(2.0, _between(0, 100), "0 to 100 points")
    venue_findings: float = _spec(1.0, _between(0, 100), "0 to 100 points")
    venue_workshop: float = _spec(0.5, _between(0, 100), "0 to 100 points")
    venue_journal: float = _spec(1.0, _between(0, 100), "0 to 100 points")
    venue_other: float = _spec(0.5, _between(0, 100), "0 to 100 points")
    code: float = _spec(1.5, _between(0, 100), "0 to 100 points")  # on a code host
    project_page: float = _spec(1.0, _between(0, 100), "0 to 100 points")  # and no code
    revision: float = _spec(1.0, _between(0, 100), "0 to 100 points")
    # Fewer changed words of title and abstract are a fix, not a new version worth a look.
    min_changed_words: int = _spec(20, _between(1, 10_000), "1 to 10000 words")
    topic: float = _spec(1.0, _between(0, 100), "0 to 100 points")
    follow: float = _spec(4.0, _between(0, 100), "0 to 100 points")
    # The view's length: its head on the home page, each daily brief and the digest queue.
    top: int = _spec(50, _between(1, 1000), "1 to 1000 papers")
    window_hours: float = _spec(24.0, _between(1, 24 * 7), "1 to 168 hours")
    # One primary category's most papers in the view while others with a reason are left.
    max_category_share: float = _spec(0.4, _between(0.05, 1), "0.05 to 1 (a share of top)")

    def venue(self, tier: Tier) -> float:
        """The points of a venue of `tier`."""
        return {Tier.MAIN: self.venue_main, Tier.FINDINGS: self.venue_findings,
                Tier.WORKSHOP: self.venue_workshop, Tier.JOURNAL: self.venue_journal,
                Tier.OTHER: self.venue_other}[tier]


@dataclass(frozen=True)
class DigestConfig:
    enabled: bool = True
    base_url: str = _spec("https://api.openai.com/v1", _url, "an OpenAI-compatible base URL")
    model: str = _spec("gpt-4o-mini", _non_empty, "a model name the server knows")
    api_key_env: str = _spec("OPENAI_API_KEY", _non_empty, "an environment variable name")
    language: Literal["", "zh-CN", "en"] = ""  # empty: the site's language
    temperature: float = _spec(0.2, _between(0, 2), "0 to 2")
    max_output_tokens: int = _spec(900, _between(64, 8192), "64 to 8192")
    timeout_seconds: float = _spec(60.0, _at_least(0.1), "seconds ≥ 0.1")
    # The openai client's own retries (429 honouring Retry-After, 5xx, timeouts) per request;
    # when they run out the digest counts one failed attempt.
    max_retries: int = _spec(2, _between(0, 10), "0 to 10")
    concurrency: int = _spec(4, _between(1, 64), "1 to 64")
    max_per_run: int = _spec(100, _at_least(0), "a whole number ≥ 0")
    token_budget_per_run: int = _spec(300_000, _at_least(0), "a whole number ≥ 0")
    # auto: "ai" when the fork follows one of [classify] ai_categories, else "all" (a fork
    # outside AI, such as cs.CR alone, digests its own field). Config.digest_selection.
    selection: Literal["auto", "all", "ai", "topics"] = "auto"
    prompt_version: str = _spec("1", _non_empty, "a non-empty label")
    max_attempts: int = _spec(3, _between(1, 20), "1 to 20")
    # A failed digest waits retry_backoff_hours × 2^(attempts − 1) before the next try.
    retry_backoff_hours: float = _spec(1.0, _between(0, 24 * 30), "0 to 720 hours")
    # Change notes (修订说明) by the model for the selected papers' revisions. Off, or with
    # no model, the site shows the notes made by rule.
    notes: bool = True
    # The share of max_per_run and token_budget_per_run the change notes may use in a run;
    # the digests of the same `papertrail run` get what the notes left.
    notes_share: float = _spec(0.2, _between(0, 1), "0 to 1")

    @property
    def no_key(self) -> str:
        """Why there is no key, in words a fork can act on."""
        why = f"no API key: ${self.api_key_env} is not set"
        if os.environ.get("GITHUB_ACTIONS") == "true" and \
                self.api_key_env not in WORKFLOW_KEY_ENVS:
            why += (" (the update workflow passes only the secrets "
                    f"{', '.join(WORKFLOW_KEY_ENVS)}: name one in [digest] api_key_env)")
        return why

    def notes_limits(self) -> tuple[int, int]:
        """(items, tokens) the change notes may use in a run: their share of each limit."""
        share = self.notes_share if self.notes else 0.0
        return int(self.max_per_run * share), int(self.token_budget_per_run * share)


def _arxiv_ids(values: tuple[str, ...]) -> str | None:
    for v in values:
        if not is_arxiv_id(v):
            return f"{v!r} is not an arXiv id"
        if re.search(r"v\d+$", v):
            return f"{v!r} names a version; a paper is named by its id alone"
    return None


@dataclass(frozen=True)
class TopicName:
    zh: str = _spec("", _non_empty, "a non-empty string")
    en: str = _spec("", _non_empty, "a non-empty string")


@dataclass(frozen=True)
class Topic:
    slug: str = _spec("", lambda v: None if re.fullmatch(r"[a-z0-9][a-z0-9-]{0,62}", v)
                      else "must be lowercase letters, digits and dashes",
                      "lowercase letters, digits and dashes, e.g. llm-agents")
    name: TopicName = field(default_factory=TopicName)
    description: str = _spec("", allowed="text shown on the topic page", multiline=True)
    # The same in Chinese, for a zh-CN site (which shows `description` when this is empty).
    description_zh: str = _spec("", allowed="text shown on a zh-CN site's topic page",
                                multiline=True)
    # any of these phrases
    keywords: tuple[str, ...] = _spec((), _phrases, "an array of phrases")
    # groups: a paper matches a group when every phrase of the group is in it
    all: tuple[tuple[str, ...], ...] = _spec((), _phrase_groups,
                                             "an array of arrays of phrases")
    exclude: tuple[str, ...] = _spec((), _phrases, "an array of phrases")  # none of these
    categories: tuple[str, ...] = _spec((), _categories, "arXiv category codes")
    authors: tuple[str, ...] = _spec((), _phrases, "an array of names such as 'Kaiming He'")
    match_initials: bool = False  # "K. He" matches "Kaiming He" only when True
    min_upvotes: int = _spec(0, _at_least(0), "a whole number ≥ 0")
    # What the topic means beside its description: papers a reader of it would pick. A
    # keyword or `all` hit whose text is less similar than `min_similarity` to the topic's
    # meaning (description, keywords, examples) is no match (docs/TOPICS.md, bench/topics.py).
    examples: tuple[str, ...] = _spec((), _arxiv_ids, "arXiv ids such as 2606.01234 (no version)")
    min_similarity: float = _spec(0.07, _between(0, 1), "0 (no check) to 1")

    def gated(self) -> bool:
        """Whether keyword hits are checked against the topic's meaning."""
        return self.min_similarity > 0 and bool(self.description or self.examples)


@dataclass(frozen=True)
class Follow:
    """What a fork's reader follows (`[[follows]]`): a paper matching any of these lists is
    in their personal feed; a watched paper fires on each version, a DOI, a journal-ref and
    a comment saying it was accepted."""

    name: str = _spec("", allowed="a label shown on the page")
    authors: tuple[str, ...] = _spec((), _phrases, "an array of names such as 'Kaiming He'")
    keywords: tuple[str, ...] = _spec((), _phrases, "an array of phrases")
    categories: tuple[str, ...] = _spec((), _categories, "arXiv category codes")
    topics: tuple[str, ...] = _spec((), allowed="slugs of [[topics]]")
    watch: tuple[str, ...] = _spec((), _arxiv_ids, "arXiv ids such as 2606.01234 (no version)")
    match_initials: bool = False  # "L. Yang" matches "Lin Yang" only when True, as in topics

    @property
    def empty(self) -> bool:
        return not (self.authors or self.keywords or self.categories or self.topics
                    or self.watch)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _env_name(value: str) -> str | None:
    return None if _ENV_NAME.fullmatch(value) else "must be an environment variable's name"


def _optional_env_name(value: str) -> str | None:
    return None if value == "" else _env_name(value)


def _emails(values: tuple[str, ...]) -> str | None:
    if not values:
        return "must list at least one address"
    bad = next((v for v in values if not _EMAIL.fullmatch(v)), None)
    return None if bad is None else f"{bad!r} is not an e-mail address"


def _email(value: str) -> str | None:
    return None if _EMAIL.fullmatch(value) else "must be an e-mail address"


Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                  "sunday"]
WEEKDAYS: tuple[Weekday, ...] = typing.get_args(Weekday)  # in ISO order, Monday first


# Every kind of [[notify]] channel and its settings, in the order they are declared (each
# names its kind: `Channel`); pipeline/notify/channels.py's CHANNELS sends through each.
CHANNEL_KINDS: dict[str, type[Channel]] = {}


@dataclass(frozen=True)
class Channel:
    """What every `[[notify]]` table has; each kind adds its own settings in a subclass
    that names it, `class EmailChannel(Channel, kind="email")`, which registers it in
    CHANNEL_KINDS. Secrets are never in the file: a key ending in `_env` names the
    variable holding one."""

    def __init_subclass__(cls, kind: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if kind:
            CHANNEL_KINDS[kind] = cls

    kind: str = ""
    # The channel's name in the ledger: each item goes once to each name (default: kind).
    name: str = _spec("", allowed="a label, unique among [[notify]] (default: the kind)")
    # daily: one message a run with every new paper; immediate: one message per paper;
    # weekly: once an ISO week (the first run on or after `weekday`), the past 7 days'
    # papers grouped by the follow (or topic) that matched.
    format: Literal["daily", "immediate", "weekly"] = "daily"
    # The day (the site's timezone) from which a weekly channel sends its week.
    weekday: Weekday = "monday"
    # Also the newest papers of the last announcement, this many (0: only what you follow).
    top: int = _spec(0, _between(0, 50), "0 to 50 papers")
    # Papers sent in one run at most; past it the message says how many more the feed holds.
    max_items: int = _spec(50, _between(1, 500), "1 to 500 papers")
    timeout_seconds: float = _spec(20.0, _at_least(0.1), "seconds ≥ 0.1")
    # Retries of one message on 429 (after the wait the service asks for), 5xx and
    # connection errors; then the channel is recorded as failing and tried next run.
    max_retries: int = _spec(2, _between(0, 10), "0 to 10")
    # Bound on the channel's whole run: its messages, retries and the waits a 429 asks for
    # (one asking longer fails the channel at once, and it is tried next run).
    max_run_seconds: float = _spec(120.0, _at_least(1), "seconds ≥ 1")

    @property
    def label(self) -> str:
        return self.name or self.kind


@dataclass(frozen=True)
class EmailChannel(Channel, kind="email"):
    host: str = _spec("", _non_empty, "the SMTP server's host name")
    port: int = _spec(587, _between(1, 65535), "a port, 1 to 65535")
    # starttls: plain connection upgraded with STARTTLS (port 587); tls: TLS from the first
    # byte (port 465). Either way the server's certificate is verified.
    security: Literal["starttls", "tls"] = "starttls"
    username: str = _spec("", allowed="the SMTP login, or empty for none")
    password_env: str = _spec("SMTP_PASSWORD", _env_name, "an environment variable name")
    sender: str = _spec("", _email, "an e-mail address (From)")
    to: tuple[str, ...] = _spec((), _emails, "an array of e-mail addresses")


@dataclass(frozen=True)
class TelegramChannel(Channel, kind="telegram"):
    chat_id: str = _spec("", _non_empty, "a chat id such as \"-1001234567890\" or "
                         "\"@channelname\", as a string")
    token_env: str = _spec("TELEGRAM_BOT_TOKEN", _env_name, "an environment variable name")
    api_url: str = _spec("https://api.telegram.org", _url, "an http(s) URL")


@dataclass(frozen=True)
class FeishuChannel(Channel, kind="feishu"):
    url_env: str = _spec("FEISHU_WEBHOOK_URL", _env_name, "an environment variable name")
    # The bot's signing secret, when its security settings ask for a signature.
    secret_env: str = _spec("", _optional_env_name, "empty, or an environment variable name")


@dataclass(frozen=True)
class SlackChannel(Channel, kind="slack"):
    url_env: str = _spec("SLACK_WEBHOOK_URL", _env_name, "an environment variable name")


@dataclass(frozen=True)
class DiscordChannel(Channel, kind="discord"):
    url_env: str = _spec("DISCORD_WEBHOOK_URL", _env_name, "an environment variable name")


@dataclass(frozen=True)
class WebhookChannel(Channel, kind="webhook"):
    # The URL itself when it holds no secret; else url_env names the variable holding it.
    url: str = _spec("", _site_url, "empty, or an http(s) URL")
    url_env: str = _spec("", _optional_env_name, "empty, or an environment variable name")
    # The variable holding the key each message is signed with (X-PaperTrail-Signature).
    secret_env: str = _spec("", _optional_env_name, "empty, or an environment variable name")


# The secrets .github/workflows/update.yml hands `papertrail notify`, each as the variable
# of its own name (the default of the key that names it): fixed, as WORKFLOW_KEY_ENVS.
WORKFLOW_NOTIFY_ENVS = ("SMTP_PASSWORD", "TELEGRAM_BOT_TOKEN", "FEISHU_WEBHOOK_URL",
                        "FEISHU_SECRET", "SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK_URL",
                        "NOTIFY_WEBHOOK_URL", "NOTIFY_WEBHOOK_SECRET")


@dataclass(frozen=True)
class Config:
    path: Path
    store: StoreConfig = field(default_factory=StoreConfig)
    site: SiteConfig = field(default_factory=SiteConfig)
    sources: SourcesConfig = field(default_factory=SourcesConfig)
    classify: ClassifyConfig = field(default_factory=ClassifyConfig)
    similar: SimilarConfig = field(default_factory=SimilarConfig)
    digest: DigestConfig = field(default_factory=DigestConfig)
    rank: RankConfig = field(default_factory=RankConfig)
    topics: tuple[Topic, ...] = ()
    follows: tuple[Follow, ...] = ()
    notify: tuple[Channel, ...] = ()

    @property
    def root(self) -> Path:
        """Relative paths in the file are relative to the file's folder."""
        return self.path.resolve().parent

    @property
    def store_path(self) -> Path:
        return self.root / self.store.path

    @property
    def output_path(self) -> Path:
        return self.root / self.site.output

    @property
    def site_languages(self) -> tuple[SiteLanguage, ...]:
        """Every language the site is built in, the default (at the root) first."""
        return cast("tuple[SiteLanguage, ...]", self.site.languages) or (self.site.language,)

    @property
    def digest_language(self) -> str:
        return self.digest.language or self.site.language

    @property
    def digest_selection(self) -> Literal["all", "ai", "topics"]:
        """[digest] selection, with "auto" resolved by the fork's categories."""
        if self.digest.selection != "auto":
            return self.digest.selection
        ai = set(self.classify.ai_categories) & set(self.sources.arxiv.categories)
        return "ai" if ai else "all"


# -- advice: a config that loads but may not do what its owner means -----------------------------

WORKFLOW = Path(".github", "workflows", "update.yml")


def lint(cfg: Config) -> list[str]:
    """What `papertrail` warns of after loading a config, never an error (each may be
    meant): phrases written as regular expressions, and secrets' variables the update
    workflow does not pass."""
    return _pattern_phrases(cfg) + _unpassed_envs(cfg)


def _phrase_lists(cfg: Config) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(key, whose, phrases) of every list matched as plain phrases."""
    yield "classify.ai_phrases", "", cfg.classify.ai_phrases
    for i, topic in enumerate(cfg.topics):
        whose = f" (topic {topic.slug!r})"
        yield f"topics[{i}].keywords", whose, topic.keywords
        for j, group in enumerate(topic.all):
            yield f"topics[{i}].all[{j}]", whose, group
        yield f"topics[{i}].exclude", whose, topic.exclude
    for i, follow in enumerate(cfg.follows):
        yield f"follows[{i}].keywords", f" (follow {follow.name!r})" if follow.name else "", \
            follow.keywords


def _pattern_phrases(cfg: Config) -> list[str]:
    out = []
    for key, whose, phrases in _phrase_lists(cfg):
        for i, phrase in enumerate(phrases):
            if not patterns.looks_like_pattern(phrase):
                continue
            forms = patterns.plain_forms(phrase)
            meant = (f"did you mean {', '.join(f'{f!r}' for f in forms)}?" if forms
                     else "write the words themselves")
            out.append(f"{cfg.path}: {key}[{i}] = {phrase!r}{whose} looks like a regular "
                       "expression, but phrases are plain text matched as written (docs/"
                       f"TOPICS.md): {meant} (`papertrail topics check` counts each)")
    return out


def workflow_env(root: Path, command: str) -> tuple[Path, frozenset[str]] | None:
    """(the file, the env: names) of the update workflow's step that runs `papertrail
    <command>`, from the first .github/workflows/update.yml at or above `root`; None when
    there is none, or no such step."""
    for folder in (root, *root.parents):
        if (path := folder / WORKFLOW).is_file():
            try:
                names = _step_env(path.read_text(encoding="utf-8"), command)
            except (OSError, UnicodeDecodeError):
                return None
            return None if names is None else (path, names)
    return None


def _step_env(text: str, command: str) -> frozenset[str] | None:
    """The keys of the `env:` of the step whose `run:` is `papertrail <command>`: read by
    indentation, as the workflow is written (block YAML), without a YAML library."""
    lines = text.splitlines()
    run = re.compile(rf"( *)(- +)?run: *papertrail +{command}\b")
    for i, line in enumerate(lines):
        if not (found := run.match(line)):
            continue
        key = len(found.group(1)) + len(found.group(2) or "")
        start = next((j for j in range(i, -1, -1)
                      if (d := re.match(r"( *)- ", lines[j])) and len(d.group(1)) < key), 0)
        dash = len(lines[start]) - len(lines[start].lstrip())
        names: set[str] = set()
        in_env = False
        for line in lines[start + 1:]:
            indent = len(line) - len(line.lstrip())
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if indent <= dash:
                break
            if indent == key:
                in_env = line.strip() == "env:"
            elif in_env and (name := re.match(r" *([A-Za-z_][A-Za-z0-9_]*) *:", line)):
                names.add(name.group(1))
        return frozenset(names)
    return None


def _env_names(cfg: Config) -> Iterator[tuple[str, str, str]]:
    """(key, variable, the command reading it) of every secret the config names."""
    if cfg.digest.enabled:
        yield "digest.api_key_env", cfg.digest.api_key_env, "run"
    for i, channel in enumerate(cfg.notify):
        for f in dataclasses.fields(channel):
            if f.name.endswith("_env") and (name := getattr(channel, f.name)):
                yield f"notify[{i}].{f.name}", name, "notify"


def _unpassed_envs(cfg: Config) -> list[str]:
    """The secrets the update workflow would not hand the step that reads them (GitHub
    passes a secret only by an `env:` line naming it): checked before the fork pushes."""
    fixed = {"run": frozenset(WORKFLOW_KEY_ENVS), "notify": frozenset(WORKFLOW_NOTIFY_ENVS)}
    out = []
    for key, name, command in _env_names(cfg):
        found = workflow_env(cfg.root, command)
        where, passed = found or (f"upstream's {WORKFLOW}", fixed[command])
        if name not in passed:
            out.append(f"{cfg.path}: {key} = {name!r}: {where} does not pass ${name} to "
                       f"`papertrail {command}`, so in Actions it is unset; add to that "
                       f"step's env: the line `{name}: ${{{{ secrets.{name} }}}}` (and a "
                       f"repository secret {name}), or name one it passes: "
                       f"{', '.join(sorted(passed & fixed[command]))}")
    return out


# -- loading --------------------------------------------------------------------------------------


def load(path: Path | str = DEFAULT_PATH) -> Config:
    """Read and validate a papertrail.toml; raises ConfigError."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found (pass --config PATH)") from None
    except OSError as exc:  # a folder, or a file this user may not read
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text: {exc}") from None
    for var, (section, key) in ENV_OVERRIDES.items():
        if value := os.environ.get(var):
            if not isinstance(raw.get(section, {}), dict):
                _fail(path, section, raw[section], f"a table [{section}]")
            raw.setdefault(section, {})[key] = value  # validated below like the file's own
    return from_dict(raw, path)


def from_dict(raw: dict[str, Any], path: Path) -> Config:
    topics = raw.pop("topics", [])
    follows = raw.pop("follows", [])
    channels = raw.pop("notify", [])
    _default_language(raw, path)
    config = _build(Config, {**raw, "path": path}, path, "")
    if not isinstance(topics, list):
        _fail(path, "topics", topics, "an array of tables: [[topics]]")
    built = tuple(_build_topic(t, path, i) for i, t in enumerate(topics))
    first: dict[str, int] = {}  # slug → the index of the topic that has it
    for i, topic in enumerate(built):
        if (seen := first.setdefault(topic.slug, i)) != i:
            _fail(path, f"topics[{i}].slug", topic.slug, "a slug used by no other topic",
                  f"topics[{seen}] has it already")
    _check_output(config)
    return dataclasses.replace(config, topics=built,
                               follows=_build_follows(follows, path, {t.slug for t in built}),
                               notify=_build_channels(channels, path, bool(follows)))


def _default_language(raw: dict[str, Any], path: Path) -> None:
    """[site] languages names the default first; `language`, when given too, must be it
    (when left out, it is taken from there)."""
    site = raw.get("site")
    if not isinstance(site, dict) or not site.get("languages"):
        return
    languages = site["languages"]
    if not isinstance(languages, list) or not all(isinstance(v, str) for v in languages):
        return  # _build names the wrong type
    if unknown := [v for v in languages if v not in SITE_LANGUAGES]:
        _fail(path, "site.languages", languages, LANGUAGES_ALLOWED,
              f"unknown {', '.join(map(repr, unknown))}")
    if len(set(languages)) != len(languages):
        _fail(path, "site.languages", languages, LANGUAGES_ALLOWED, "a language twice")
    if site.setdefault("language", languages[0]) != languages[0]:
        _fail(path, "site.languages", languages, LANGUAGES_ALLOWED,
              f"[site] language = {site['language']!r} is not its first")


_OUTPUT_ALLOWED = ("a folder of its own (e.g. \"output\"): not the store, the theme or "
                   "content folder, nor inside or around them; not the config file's folder "
                   "or the project root, nor around them")


def _check_output(config: Config) -> None:
    """Refuse a [site] output that the build's cleanup (it removes every file there that it
    did not make) would delete the store, the config or the project from."""
    out = config.output_path.resolve()  # symlinks and `..` resolved on both sides
    for name, folder, inside_ok in _protected_folders(config):
        folder = folder.resolve()
        relation = ("is" if out == folder else "contains" if folder.is_relative_to(out)
                    else "is inside" if out.is_relative_to(folder) and not inside_ok else "")
        if relation:
            _fail(config.path, "site.output", str(config.site.output), _OUTPUT_ALLOWED,
                  f"resolved to {out}, it {relation} {name}: {folder}")


def _protected_folders(config: Config) -> list[tuple[str, Path, bool]]:
    """(what, where, whether the output may lie inside it)."""
    return [("the config file's folder", config.root, True),
            ("the project root", PROJECT_ROOT, True),
            ("the store ([store] path)", config.store_path, False),
            ("the theme folder", THEME, False),
            ("the site's content folder", CONTENT, False)]


def _build_topic(raw: Any, path: Path, i: int) -> Topic:
    key = f"topics[{i}]"
    if not isinstance(raw, dict):
        _fail(path, key, raw, "a table")
    slug = raw.get("slug")
    try:
        topic = _build(Topic, raw, path, key)
        if not topic.slug:
            _fail(path, f"{key}.slug", _MISSING, "a slug is required, e.g. llm-agents")
        for lang in ("zh", "en"):
            if not getattr(topic.name, lang):
                _fail(path, f"{key}.name.{lang}", _MISSING, "a non-empty string",
                      "every topic needs a Chinese and an English name")
        if not (topic.keywords or topic.all or topic.categories or topic.authors
                or topic.min_upvotes):
            _fail(path, key, raw, "at least one of keywords, all, categories, authors, "
                  "min_upvotes", "this topic would match nothing")
        lowered = {k.casefold() for k in topic.keywords}
        clash = [x for x in topic.exclude if x.casefold() in lowered]
        if clash:
            _fail(path, f"{key}.exclude", list(topic.exclude), "phrases not also in keywords",
                  f"{clash[0]!r} is both a keyword and an exclude")
    except ConfigError as exc:
        if isinstance(slug, str) and slug:
            raise ConfigError(f"{exc} (in topic {slug!r})") from None
        raise
    return topic


def _build_follows(raw: Any, path: Path, slugs: set[str]) -> tuple[Follow, ...]:
    if not isinstance(raw, list):
        _fail(path, "follows", raw, "an array of tables: [[follows]]")
    follows = []
    for i, table in enumerate(raw):
        key = f"follows[{i}]"
        follow = _build(Follow, table, path, key)
        if follow.empty:
            _fail(path, key, table, "at least one of authors, keywords, categories, topics, "
                  "watch", "this follow would match nothing")
        if unknown := [t for t in follow.topics if t not in slugs]:
            _fail(path, f"{key}.topics", list(follow.topics),
                  "slugs of the configured [[topics]]: " + (", ".join(sorted(slugs)) or "none"),
                  f"no topic {unknown[0]!r}")
        follows.append(follow)
    return tuple(follows)


def _build_channels(raw: Any, path: Path, follows: bool) -> tuple[Channel, ...]:
    if not isinstance(raw, list):
        _fail(path, "notify", raw, "an array of tables: [[notify]]")
    kinds = ", ".join(CHANNEL_KINDS)
    channels: list[Channel] = []
    for i, table in enumerate(raw):
        key = f"notify[{i}]"
        if not isinstance(table, dict):
            _fail(path, key, table, "a table")
        kind = table.get("kind", _MISSING)
        if kind not in CHANNEL_KINDS:
            _fail(path, f"{key}.kind", kind, f"one of {kinds}")
        channel = _build(CHANNEL_KINDS[kind], table, path, key)
        fields = {f.name: f for f in dataclasses.fields(channel)}
        for required in ("host", "sender", "to", "chat_id"):
            if required in fields and required not in table:
                _fail(path, f"{key}.{required}", _MISSING, fields[required].metadata["allowed"],
                      f"a {kind} channel needs it")
        if isinstance(channel, WebhookChannel) and bool(channel.url) == bool(channel.url_env):
            _fail(path, key, table, "either url (an http(s) URL) or url_env (the variable "
                  "holding it), not both", "a webhook needs exactly one")
        if not (follows or channel.top):
            _fail(path, key, table, "[[follows]] tables (what is sent), or top ≥ 1",
                  "this channel would send nothing")
        if (seen := next((j for j, c in enumerate(channels) if c.label == channel.label),
                         None)) is not None:
            _fail(path, f"{key}.name", channel.name or _MISSING, "a name no other [[notify]] "
                  "has (set name = \"...\" on one of them)",
                  f"notify[{seen}] is named {channel.label!r} too")
        channels.append(channel)
    return tuple(channels)


def _fail(path: Path, key: str, value: Any, allowed: str, problem: str = "") -> typing.NoReturn:
    shown = "(missing)" if value is _MISSING else repr(value)
    if len(shown) > 300:  # a pasted vocabulary: the key and the problem say enough
        shown = shown[:300] + f"… ({len(shown):,} characters)"
    reason = f": {problem}" if problem else ""
    raise ConfigError(f"{path}: {key} = {shown}{reason}; allowed: {allowed}")


_MISSING = object()


class _Dataclass(Protocol):
    """A dataclass, as dataclasses.fields() takes it (typeshed's DataclassInstance)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]


_T = typing.TypeVar("_T", bound=_Dataclass)  # a config dataclass


# Keys a fork's config may still hold from an earlier release, and what took their place:
# still refused (a silently ignored weight would rank otherwise than its owner thinks), but
# the message says what to write instead.
_REPLACED = {
    "rank.venue": "replaced by one weight per venue tier: venue_main, venue_findings, "
                  "venue_workshop, venue_journal, venue_other (docs/CONFIG.md#rank)",
}


def _build(cls: type[_T], raw: Any, path: Path, prefix: str) -> _T:
    if not isinstance(raw, dict):
        _fail(path, prefix, raw, f"a table [{prefix}]")
    hints = _type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in raw:
        if key not in fields:
            known = ", ".join(sorted(n for n in fields if n != "path"))
            where = _join(prefix, key)
            said = f"{_REPLACED[where]}; " if where in _REPLACED else ""
            _fail(path, where, raw[key], f"{said}one of the known keys: {known}",
                  "unknown key")
    values = {}
    for name, value in raw.items():
        if name == "path" and cls is Config:
            values[name] = value
            continue
        values[name] = _coerce(value, hints[name], path, _join(prefix, name), fields[name])
    return cls(**values)


@functools.cache
def _type_hints(cls: type) -> dict[str, Any]:
    # Once per class, not per table: 10,000 [[topics]] would evaluate them 20,000 times.
    return typing.get_type_hints(cls)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _coerce(value: Any, tp: Any, path: Path, key: str, fld: dataclasses.Field[Any]) -> Any:
    meta = fld.metadata
    allowed = meta.get("allowed") or _describe(tp)
    result = _convert(value, tp, path, key, allowed)
    if problem := _control_character(result, meta.get("multiline", False)):
        _fail(path, key, value, allowed, problem)
    check = meta.get("check")
    if check is not None and (problem := check(result)):
        _fail(path, key, value, allowed, problem)
    return result


def _convert(value: Any, tp: Any, path: Path, key: str, allowed: str) -> Any:
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _build(tp, value, path, key)
    if origin is Literal:
        if value not in typing.get_args(tp):
            _fail(path, key, value, " | ".join(repr(a) for a in typing.get_args(tp)))
        return value
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _convert(value, args[0], path, key, allowed)
    if origin is tuple:
        if not isinstance(value, list):
            _fail(path, key, value, allowed, "expected an array")
        item = typing.get_args(tp)[0]
        return tuple(_convert(v, item, path, f"{key}[{i}]", _describe(item))
                     for i, v in enumerate(value))
    if tp is bool:
        if not isinstance(value, bool):
            _fail(path, key, value, "true or false")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(path, key, value, allowed, "expected a whole number")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            _fail(path, key, value, allowed, "expected a number")
        if not math.isfinite(value):  # TOML has inf and nan; no setting means either
            _fail(path, key, value, allowed, "expected a finite number")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            _fail(path, key, value, allowed, "expected a string")
        return value
    if tp is Path:
        if not isinstance(value, str) or not value:
            _fail(path, key, value, allowed, "expected a path string")
        return Path(value)
    raise TypeError(f"config type {tp!r} is not supported")  # our bug, not the user's


def _control_character(value: Any, multiline: bool) -> str | None:
    """Config text ends up in pages and feeds, where a control character breaks the XML (or
    hides text): refuse any, in a string or an array of them, except line breaks and tabs in
    `multiline` text."""
    if isinstance(value, tuple):
        return next(filter(None, (_control_character(v, multiline) for v in value)), None)
    if not isinstance(value, str):
        return None
    keep = "\n\t" if multiline else ""
    bad = next((c for c in value if unicodedata.category(c) == "Cc" and c not in keep), None)
    return None if bad is None else f"contains the control character U+{ord(bad):04X}"


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is tuple:
        return f"an array of {_describe(typing.get_args(tp)[0])}s"
    return {bool: "true or false", int: "a whole number", float: "a number",
            str: "a string", Path: "a path"}.get(tp, str(tp))


def section_keys(cls: type) -> list[str]:
    """The keys of one section, in order (used by the docs-completeness test)."""
    return [f.name for f in dataclasses.fields(cls) if f.name != "path"]
