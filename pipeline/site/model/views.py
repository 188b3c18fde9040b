"""What the templates see: the store read once and shaped into plain view objects.

All untrusted text (titles, abstracts, names, digests) leaves here either as a
plain str (Jinja autoescapes it) or as Markup built by escaping first
(`render_tex`, `word_diff`), never as raw HTML.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, Literal, TypedDict, cast
from urllib.parse import quote
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from markupsafe import Markup

from pipeline.config import Config
from pipeline.derive import scope, similar, stats
from pipeline.derive.readings import Reading, around
from pipeline.digest import prompt as digest_prompt
from pipeline.site.model import history as _history
from pipeline.site.model.note import Part, Side, note, note_text
from pipeline.site.render.diff import changed, word_diff
from pipeline.site.render.feeds import recent
from pipeline.site.render.safe import clean, clean_all, clean_opt
from pipeline.site.render.tex import excerpt, links_in, plain_tex, render_tex
from pipeline.sources import facts as source_facts
from pipeline.sources import source_columns
from pipeline.store import Store
from pipeline.text import reasons
from pipeline.text.ids import is_arxiv_id
from pipeline.text.reasons import Why
from pipeline.text.venue import Venue, venue

CLOCKS = ("updated", "first_seen", "published")
# Two lines of a card on a phone, most of two at 1366 px (CSS clamps to two lines at any
# width). A paper is in many lists: at 20,000 papers 200 characters cost 22 MB, 160 19 MB.
EXCERPT_CHARS = 160
DIGEST_FIELDS = tuple(digest_prompt.FIELDS)  # as the digest step asks the model for them
DIFF_CONTEXT = 12  # words kept on each side of a change to an abstract
OK: Final = "ok"  # a digest's or change note's stored status when it was written


@dataclass
class Version:
    """One version on a paper's timeline. The (title, abstract) of a revision and of the
    version before it are kept, and the diffs made from them only when the paper's page
    is rendered (in a worker process, see pages/paper.py), not while the library loads."""

    version: int
    updated: str
    seen: str
    texts: tuple[str, str] | None = None  # this version's (title, abstract), for a diff
    previous: tuple[str, str] | None = None  # the version before's; None for the first
    # What arXiv showed with the version before, last, and with this one, first (None:
    # not read, see Library.readings).
    before: Reading | None = None
    after: Reading | None = None
    model_note: str | None = None  # the change note the model wrote (pipeline.digest.notes)
    # Its text is not stored yet (the `versions` source fetches it): the timeline says so.
    pending: bool = False
    _note: list[Part] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def meta(self) -> list[tuple[str, str | None, str | None]]:
        """(field, before, after) of the comment and journal-ref that changed with it."""
        if self.after is None:
            return []
        return [(key, getattr(self.before, key, None), getattr(self.after, key))
                for key in ("comment", "journal_ref")
                if getattr(self.before, key, None) != getattr(self.after, key)]

    @property
    def note(self) -> list[Part]:
        """Its change note (修订说明) by rule, as catalogue keys and values (model.note): made
        with difflib the first time it is asked for (a card, the paper's page), then kept.
        Kept in a plain field, not a cached_property, which computes under a lock that a
        worker forked at that moment would inherit held (site.workers)."""
        if self._note is None:
            self._note = self._rule_note()
        return self._note

    def _rule_note(self) -> list[Part]:
        if self.texts is None or self.previous is None:
            return []

        def side(texts: tuple[str, str], said: Reading | None) -> Side:
            return Side(plain_tex(texts[0]), plain_tex(texts[1]),
                        said.comment if said else None, said.journal_ref if said else None)

        return note(side(self.previous, self.before), side(self.texts, self.after),
                    meta=self.before is not None and self.after is not None)

    def told(self, strings: dict[str, str]) -> tuple[str, str] | None:
        """(label, text) of its change note: the model's when there is one, else by rule."""
        if self.model_note:
            return strings["change_note_ai"], self.model_note
        note = self.note
        return (strings["change_note"], note_text(note, strings)) if note else None

    def changed_parts(self, strings: dict[str, str]) -> str | None:
        """What changed from the version before, by name ("v2 与上一版相比改了：摘要、备注"):
        the summary of its diffs; None when nothing they show changed."""
        parts = [key for key, changed in (("title", self.title_changed),
                                          ("abstract", self.abstract_changed)) if changed]
        parts += [key for key, _, _ in self.meta]
        if not parts:
            return None
        named = strings["note_list_sep"].join(strings[f"part_{key}"] for key in parts)
        return strings["changed_parts"].format(version=self.version, parts=named)

    @property
    def title_changed(self) -> bool:
        return self._changed(0)

    @property
    def abstract_changed(self) -> bool:
        return self._changed(1)

    @property
    def title_diff(self) -> Markup | None:
        return self._diff(0)

    @property
    def abstract_diff(self) -> Markup | None:
        return self._diff(1)

    @property
    def meta_diffs(self) -> list[tuple[str, Markup]]:
        """(field, word diff) of each changed comment and journal-ref, whole: they are short."""
        return [(key, word_diff(plain_tex(a or ""), plain_tex(b or ""))) for key, a, b in self.meta]

    def _changed(self, i: int) -> bool:
        return (self.texts is not None and self.previous is not None
                and changed(self.previous[i], self.texts[i]))

    def _diff(self, i: int) -> Markup | None:
        if not self._changed(i):
            return None
        # A title whole; an abstract by what changed (it is shown whole above).
        # Compared as read (Unicode, no TeX commands), as the feeds compare them.
        return word_diff(plain_tex(self.previous[i]), plain_tex(self.texts[i]),  # type: ignore[index]
                         None if i == 0 else DIFF_CONTEXT)


NoDigestWhy = Literal["off", "ai", "topics", "retrying", "failed", "queued"]


@dataclass(frozen=True)
class NoDigest:
    """Why a paper has no digest: the [digest] settings, or its attempts so far."""

    why: NoDigestWhy
    attempts: int = 0
    per_run: int = 0  # [digest] max_per_run, for "queued"

    def said(self, s: Mapping[str, str]) -> str:
        """What a reader is told instead of a digest, in the language of `s`."""
        return s[f"digest_why_{self.why}"].format(attempts=self.attempts,
                                                  n=f"{self.per_run:,}")


@dataclass
class Paper:
    arxiv_id: str
    version: int
    title: str
    title_html: Markup
    abstract_text: str
    authors: list[str]
    categories: list[str]
    primary: str
    comment: str | None
    journal_ref: str | None
    doi: str | None
    published: dt.datetime
    updated: dt.datetime
    first_seen: dt.datetime
    version_seen_at: dt.datetime
    ai_related: bool
    ai_reason: Why  # empty when not AI-related; said in the site's language at render
    topics: list[tuple[str, Why]]  # (slug, why)
    hf_upvotes: int | None = None
    hf_repo: str | None = None
    hf_day: dt.date | None = None
    hf_stars: int | None = None  # the code repository's, as Hugging Face reports them
    hf_project: str | None = None  # the project page Hugging Face links
    # (column, text) that sources add (`Source.facts`), labelled by a page (`fact_labels`)
    facts: tuple[tuple[str, str], ...] = ()
    # What the sources' own tables hold of it, by column, typed as stored (a count an int,
    # a day a date, a list a tuple of texts, texts cleaned): what a page sorts or filters by
    sourced: Mapping[str, object] = field(default_factory=dict)
    digest: dict[str, str | None] | None = None
    digest_model: str | None = None
    digest_version: int | None = None  # the version it was written for
    digest_created: dt.datetime | None = None
    digest_language: str | None = None  # what it is written in: the site's, when there is one
    digest_why: NoDigest | None = None  # why there is no digest
    versions: list[Version] = field(default_factory=list)
    # Within paper_pages_days and an id of arXiv's grammar (only such an id becomes a path,
    # paper/<id>.html): the paper may have a page. Under [site] max_site_mb its page may be
    # light, or left out (Pages).
    pageable: bool = True
    venue: Venue | None = None  # the venue that took it (_venue), as the latest version says
    venue_version: int | None = None  # the first version that said so
    venue_seen: dt.datetime | None = None  # when that was first read here
    similar: list[str] = field(default_factory=list)  # ids, most similar first
    # How many of its versions arXiv holds, when the later ones stored are made up
    # ([site] simulated = ["revisions"]: the demo's v2s); None: all of them.
    arxiv_versions: int | None = None

    @property
    def timeline(self) -> list[Version]:
        """Its versions oldest first, those below the current one whose text the store lacks
        as pending (a paper first stored at v3: v1 and v2, until they are fetched)."""
        have = {v.version for v in self.versions}
        pending = [Version(n, "", "", pending=True)
                   for n in range(1, self.version + 1) if n not in have]
        return sorted([*self.versions, *pending], key=lambda v: v.version)

    @property
    def path(self) -> str:
        """Site-relative path of the paper page: one file per paper, not a folder each
        (20k mkdirs cost seconds); old ids such as astro-ph/0601001 nest one level."""
        return f"paper/{self.arxiv_id}.html"

    @property
    def anchor(self) -> str:
        """The id of the paper's card in a list (old ids' slash is not an id character)."""
        return "p-" + self.arxiv_id.replace("/", "-")

    def as_of(self, version: int, seen: dt.datetime) -> Paper:
        """The paper as its `version` came in (`seen`): that version's number, time and
        history, for a past day's list of revisions. Its text is the latest: the card links
        to the paper as it is now."""
        return dataclasses.replace(self, version=version, version_seen_at=seen,
                                   versions=[v for v in self.versions if v.version <= version])

    def at(self, clock: str) -> dt.datetime:
        """The paper's time on ``clock``: a list's sort key (CLOCKS, "revision" when this
        version came in, "digest" when its digest was written, "venue" when its venue was
        first read)."""
        if clock == "revision":
            return self.version_seen_at
        if clock == "digest":
            return self.digest_created or self.version_seen_at
        if clock == "venue":
            return self.venue_seen or self.version_seen_at
        return cast(dt.datetime, getattr(self, clock))

    @property
    def title_text(self) -> str:
        """The title as read (LaTeX as Unicode), for places that take no markup."""
        return plain_tex(self.title)

    @property
    def title_as_written(self) -> str | None:
        """The title as written when its text reads otherwise (TeX in it), else None: a
        paper page keeps it for its BibTeX."""
        return None if self.title_text == " ".join(self.title.split()) else self.title

    @property
    def description(self) -> str:
        """What a search result or a link preview shows: the digest's line, else the
        abstract's start."""
        text = (self.digest or {}).get("tldr") or self.abstract_text
        return plain_tex(excerpt(text, EXCERPT_CHARS))

    @property
    def excerpt_html(self) -> Markup:
        """A card's text when the paper has no digest: the abstract's first two lines (made
        when a card renders, and not kept: a paper page's key is its fields)."""
        return render_tex(excerpt(self.abstract_text, EXCERPT_CHARS))

    @property
    def links(self) -> frozenset[str]:
        """The URLs the paper itself links (abstract, comment): all its digest may link."""
        return links_in(self.abstract_text, self.comment)

    @property
    def abstract_html(self) -> Markup:
        """Made when a page shows it (a paper page, the home page's few cards), in the
        worker that renders it: a fifth of the library's load otherwise, and lists show no
        abstract."""
        return render_tex(self.abstract_text)

    @property
    def _ref(self) -> str:
        """The id as it goes into a URL: an id outside arXiv's grammar is quoted whole, so
        its link stays on the page it names (a 404 there), never climbing with `../`. A
        pageable paper's id was checked when it was loaded (a page asks ~7 times)."""
        if self.pageable or is_arxiv_id(self.arxiv_id):
            return self.arxiv_id
        return quote(self.arxiv_id, safe="")

    def on_arxiv(self, version: int) -> bool:
        return self.arxiv_versions is None or version <= self.arxiv_versions

    def _linked(self, version: int) -> int:
        """The version a link to `version` opens: it, or arXiv's newest when it is made up."""
        return version if self.on_arxiv(version) else cast(int, self.arxiv_versions)

    @property
    def abs_url(self) -> str:
        return self.version_url(self.version)

    def version_url(self, version: int) -> str:
        """arXiv's page of one version (each stays readable there after the next)."""
        return f"https://arxiv.org/abs/{self._ref}v{self._linked(version)}"

    @property
    def pdf_url(self) -> str:
        return f"https://arxiv.org/pdf/{self._ref}v{self._linked(self.version)}"

    @property
    def html_url(self) -> str:
        return f"https://arxiv.org/html/{self._ref}v{self._linked(self.version)}"

    @property
    def hf_url(self) -> str | None:
        return f"https://huggingface.co/papers/{self._ref}" if self.hf_day else None

    @property
    def repo_url(self) -> str | None:
        repo = self.hf_repo or ""
        return repo if repo.startswith(("https://github.com/", "https://gitlab.com/")) else None


class PageKind(StrEnum):
    """What a paper has at its address, paper/<id>.html (pages.paper)."""

    FULL = "full"
    LIGHT = "light"  # its article in a shard the page's script fetches
    NONE = "none"  # not pageable, or left out: its links go to arXiv


@dataclass(frozen=True)
class Pages:
    """Which pages [site] max_site_mb (_budget) makes light, the oldest, and which it leaves
    out when even light pages do not all fit: a new value at each pass of the build, which
    renderers read from the SiteData. By default every pageable paper's page is full."""

    light: frozenset[str] = frozenset()
    left_out: frozenset[str] = frozenset()

    def kind(self, p: Paper) -> PageKind:
        if not p.pageable or p.arxiv_id in self.left_out:
            return PageKind.NONE
        return PageKind.LIGHT if p.arxiv_id in self.light else PageKind.FULL

    def has(self, p: Paper) -> bool:
        """Whether `p` has a page of its own, full or light."""
        return self.kind(p) is not PageKind.NONE


@dataclass
class Library:
    """Everything a build needs, loaded once from the store."""

    papers: list[Paper]
    by_id: dict[str, Paper]
    frames: dict[str, pd.DataFrame]
    tz: ZoneInfo
    now: dt.datetime
    # What arXiv said of the watched papers, the revisions the feeds show, the revised
    # papers with a page and the accepted ones, reading by reading (comment, journal-ref,
    # DOI: the tables keep only the latest).
    readings: dict[str, list[Reading]] = field(default_factory=dict)
    # 为你推荐's window papers' embeddings by the configured model (none without one), and
    # that model's name: the store's vectors of the papers first seen in the window only.
    embeddings: dict[str, np.ndarray] = field(default_factory=dict)
    embedder: str = ""
    # The model every similar list was made with besides words; empty: by words alone.
    similar_by: str = ""


def _opt(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, float) and pd.isna(value):
        return None
    return value


def _clean_strings(df: pd.DataFrame) -> pd.DataFrame:
    """Every str cell through `clean`: for the small tables (runs) shown as they are."""
    for col in df.select_dtypes(include=["object", "str"]).columns:
        df[col] = df[col].map(lambda v: clean(v) if isinstance(v, str) else v)
    return df


def _decodable(table: pa.Table) -> pa.Table:
    """Stored bytes that are not UTF-8 (a lone surrogate written as WTF-8, say) as U+FFFD:
    pandas cannot load such a cell at all, and one of them stopped every build."""
    for i, f in enumerate(table.schema):
        try:
            table.column(i).validate(full=True)
        except pa.ArrowInvalid:
            if f.type == pa.string() or f.type == pa.list_(pa.string()):
                raw = table.column(i).cast(pa.binary() if f.type == pa.string()
                                           else pa.list_(pa.binary()))
                table = table.set_column(i, f, pa.array(
                    # stubs: to_pylist is typed for flat types only
                    [_decoded(v) for v in raw.to_pylist()], f.type))  # type: ignore[misc]
    return table


def _decoded(value: object) -> object:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return [_decoded(v) for v in value] if isinstance(value, list) else value


def _read(store: Store, name: str) -> pd.DataFrame:
    return _decodable(store.read(name)).to_pandas()


def load(cfg: Config, store: Store, now: dt.datetime | None = None) -> Library:
    """The library: the papers table makes the papers' fields, and each step of ATTACH
    adds what one more table holds. Every paper is made once, from all of it: none changes
    after."""
    tz = ZoneInfo(cfg.site.timezone)
    frames = _frames(cfg, store)
    now = now or stats.clock(frames["runs"])
    papers = _papers(cfg, frames["papers"], now)
    tables = Tables(cfg, store, frames, tz, now,
                    _history.readings(store, _wanted(cfg, frames, papers, now, tz)))
    for attach in ATTACH:
        # Folded into load's own dicts, before any Paper is made: a new dict a paper at
        # each step cost 0.9 s of CPU a step that adds to every paper, at 200,000 (0.1 s).
        for arxiv_id, fields in attach(tables, papers).items():
            papers[arxiv_id].update(fields)
    made = [Paper(**fields) for fields in papers.values()]
    source = similar.embedder(cfg)
    window = now - dt.timedelta(days=cfg.site.recommend_days)
    return Library(made, {p.arxiv_id: p for p in made}, frames, tz, now, tables.readings,
                   _embeddings(store, source[0], [p.arxiv_id for p in made
                                                  if p.first_seen >= window])
                   if source else {}, source[0] if source else "", _similar_by(store))


def _similar_by(store: Store) -> str:
    """The model named in every similar list's method ("tfidf/…+MODEL@REV/count"), or ""."""
    methods = pc.unique(store.read("similar", ["method"])["method"]).to_pylist()
    if len(methods) != 1 or "+" not in (methods[0] or ""):
        return ""
    return str(methods[0]).split("+", 1)[1].rsplit("/", 1)[0].split("@")[0]


def _embeddings(store: Store, model: str, ids: list[str]) -> dict[str, np.ndarray]:
    """The stored embeddings by `model` of `ids` (a year's table is ~250 MB: only these
    rows are turned into arrays)."""
    table = store.read("embeddings")
    table = table.filter(pc.and_(pc.is_in(table["arxiv_id"], value_set=pa.array(ids)),
                                 pc.equal(table["model"], pa.scalar(model))))
    return {str(a): np.asarray(v, np.float32) for a, v in zip(
        table["arxiv_id"].to_pylist(), table["vector"].to_numpy(zero_copy_only=False),
        strict=True)}


class Fields(TypedDict, total=False):
    """A paper's fields by name, as Paper takes them: what a step attaches is checked
    against these (a misspelled or mistyped field fails the type check, not a build).
    `tests/test_site_model.py` holds them to Paper's own."""

    arxiv_id: str
    version: int
    title: str
    title_html: Markup
    abstract_text: str
    authors: list[str]
    categories: list[str]
    primary: str
    comment: str | None
    journal_ref: str | None
    doi: str | None
    published: dt.datetime
    updated: dt.datetime
    first_seen: dt.datetime
    version_seen_at: dt.datetime
    ai_related: bool
    ai_reason: Why
    topics: list[tuple[str, Why]]
    hf_upvotes: int | None
    hf_repo: str | None
    hf_day: dt.date | None
    hf_stars: int | None
    hf_project: str | None
    facts: tuple[tuple[str, str], ...]
    sourced: Mapping[str, object]
    digest: dict[str, str | None] | None
    digest_model: str | None
    digest_version: int | None
    digest_created: dt.datetime | None
    digest_language: str | None
    digest_why: NoDigest | None
    versions: list[Version]
    pageable: bool
    venue: Venue | None
    venue_version: int | None
    venue_seen: dt.datetime | None
    similar: list[str]
    arxiv_versions: int | None


@dataclass(frozen=True)
class Tables:
    """What the attach steps read: the config, the store at one commit and the tables read
    once for all (the papers in the fork's scope, versions, digests, runs, announcements),
    the site's clock, and what arXiv said of the papers whose pages show their history."""

    cfg: Config
    store: Store
    frames: dict[str, pd.DataFrame]
    tz: ZoneInfo
    now: dt.datetime
    readings: dict[str, list[Reading]]


# A step: from what it reads and the papers so far (their fields, by id) to the fields it
# adds or replaces, for the papers it has something for. Never changes what it is given.
Attach = Callable[[Tables, Mapping[str, Fields]], dict[str, Fields]]


def _frames(cfg: Config, store: Store) -> dict[str, pd.DataFrame]:
    """The tables read once: the papers in the fork's scope (what it does not select is
    neither shown nor counted), their versions and digests, the runs and announcements."""
    papers = _decodable(scope.within(cfg, store.library()))
    kept = papers["arxiv_id"].combine_chunks()

    def of_papers(name: str) -> pd.DataFrame:  # filtered by Arrow: pandas' isin took 1.4 s
        table = _decodable(store.read(name))
        return table.filter(pc.is_in(table["arxiv_id"], value_set=kept)).to_pandas()

    return {"papers": papers.to_pandas(), "versions": of_papers("versions"),
            "digests": of_papers("digests"), "runs": _clean_strings(_read(store, "runs")),
            "announcements": _read(store, "announcements")}


def _papers(cfg: Config, df: pd.DataFrame, now: dt.datetime) -> dict[str, Fields]:
    """The papers table's own columns, by id. Reasons stay as stored: a page says them in
    its language (`| reason`). Its texts are cleaned a column at a time (_texts)."""
    cutoff = now - dt.timedelta(days=cfg.site.paper_pages_days)
    out: dict[str, Fields] = {}
    texts = (_texts(_column(df, c)) for c in ("arxiv_id", "title", "abstract",
                                               "primary_category", "comment", "journal_ref",
                                               "doi"))
    rows = zip(*texts, *(_column(df, c) for c in ("version", "authors", "categories",
                                                   *_TIMES, "ai_related", "ai_reason",
                                                   "topics", "topic_reasons")), strict=True)
    for (arxiv_id, title, abstract, primary, comment, journal_ref, doi, version, authors,
         categories, published, updated, first_seen, version_seen_at, ai_related, ai_reason,
         topics, topic_reasons) in rows:
        out[arxiv_id] = {
            "arxiv_id": arxiv_id, "version": int(version), "title": title,
            "title_html": render_tex(title), "abstract_text": abstract,
            "authors": clean_all(authors), "categories": clean_all(categories),
            "primary": primary, "comment": comment, "journal_ref": journal_ref, "doi": doi,
            "published": published, "updated": updated, "first_seen": first_seen,
            "version_seen_at": version_seen_at,
            "arxiv_versions": 1 if "revisions" in cfg.site.simulated else None,
            "ai_related": bool(_opt(ai_related) or False),
            "ai_reason": reasons.read(_str_or_none(ai_reason)),
            "topics": [(clean(str(s)), reasons.read(clean(str(r)))) for s, r in zip(
                _list(topics), _list(topic_reasons), strict=False)],
            "pageable": updated >= cutoff and is_arxiv_id(arxiv_id),
            "venue": venue(comment, journal_ref, doi)}
    return out


def _wanted(cfg: Config, frames: dict[str, pd.DataFrame], papers: Mapping[str, Fields],
            now: dt.datetime, tz: ZoneInfo) -> set[str]:
    """The papers whose readings pages show: the watched, the revisions the feeds show,
    the revised papers with a page and the accepted ones."""
    counts = frames["versions"]["arxiv_id"].value_counts()
    revised = {clean(i) for i in counts[counts > 1].index}
    return (_revised_lately(cfg, frames["versions"], frames["papers"], now, tz)
            | {i for f in cfg.follows for i in f.watch}
            | {i for i, p in papers.items() if (p["pageable"] and i in revised) or p["venue"]})


def _hf(tables: Tables, papers: Mapping[str, Fields]) -> dict[str, Fields]:
    """Hugging Face's table (Store.library() joins it to papers): the board's upvotes and
    day, the code repository's stars and the links it reports."""
    out: dict[str, Fields] = {}
    papers_table = tables.frames["papers"]
    held = papers_table[list(_HF_COLUMNS[1:])].notna().any(axis=1)  # most papers: none
    for row in _records(papers_table[held], _HF_COLUMNS):
        fields: Fields = {"hf_upvotes": _int_or_none(row["hf_upvotes"]),
                          "hf_repo": _str_or_none(row["hf_repo"]),
                          "hf_day": None if pd.isna(row["hf_day"]) else row["hf_day"],
                          "hf_stars": _int_or_none(row["hf_stars"]),
                          "hf_project": _http_or_none(row["hf_project_page"])}
        if any(v is not None for v in fields.values()):
            out[clean(row["arxiv_id"])] = fields
    return out


def _facts(tables: Tables, papers: Mapping[str, Fields]) -> dict[str, Fields]:
    """What the sources' own tables hold (Store.library() joins them to papers): each
    value typed as stored (`sourced`), and those a paper's page lists (`Source.facts`) as
    (column, text), which a page labels in its language (the `fact_labels` global)."""
    listed = tuple(dict.fromkeys(f.column for f in source_facts()))
    columns = tuple(dict.fromkeys([*listed, *source_columns()]))
    frame = tables.frames["papers"]
    held = frame[list(columns)].notna().any(axis=1) if columns else frame["arxiv_id"].isna()
    out: dict[str, Fields] = {}
    for row in _records(frame[held], ("arxiv_id", *columns)):
        sourced = {c: _typed(row[c]) for c in columns if _opt(row[c]) is not None}
        facts = tuple((c, _fact_text(row[c])) for c in listed if c in sourced)
        out[clean(row["arxiv_id"])] = {"facts": facts, "sourced": sourced}
    return out


def _versions(tables: Tables, papers: Mapping[str, Fields]) -> dict[str, Fields]:
    """The versions table: each paper's timeline, oldest first, a revision with its text
    and the version before's (diffed when its page renders)."""
    ordered = tables.frames["versions"].sort_values(["arxiv_id", "version"], kind="stable")
    # Local times a column at a time: a strftime a cell was 1.6 s a column at 200,000.
    ordered = ordered.assign(**{f"{c}_local": ordered[c].dt.tz_convert(tables.tz)
                                .dt.strftime("%Y-%m-%d %H:%M") for c in ("updated", "first_seen")})
    out: dict[str, Fields] = {}
    ids = cast(list[str], _texts(_column(ordered, "arxiv_id")))  # the column has no null
    numbers, titles, abstracts, updated, seen = (_column(ordered, c) for c in (
        "version", "title", "abstract", "updated_local", "first_seen_local"))
    for arxiv_id, rows in itertools.groupby(range(len(ids)), key=ids.__getitem__):
        versions: list[Version] = []
        previous = None
        for i in rows:
            if versions and versions[-1].version != int(numbers[i]) - 1:
                previous = None  # the version before is pending: no diff across the gap
            # Texts only for a diff, with the version before or after: most papers have
            # one version, which needs none.
            texts = None if previous is None and ids[i + 1:i + 2] != [arxiv_id] else (
                clean(titles[i]), clean(abstracts[i]))
            versions.append(Version(int(numbers[i]), updated[i], seen[i],
                                    texts=texts if previous else None, previous=previous))
            previous = texts
        if arxiv_id in papers:
            out[arxiv_id] = {"versions": versions}
    return out


def _readings(tables: Tables, papers: Mapping[str, Fields]) -> dict[str, Fields]:
    """The snapshots (Library.readings): what arXiv showed before and with each revision,
    for its note, and when a venue that took the paper was first read (a store without its
    snapshots knows no more than the latest version)."""
    out: dict[str, Fields] = {}
    for arxiv_id, p in papers.items():
        told = tables.readings.get(arxiv_id)
        fields: Fields = {}
        if told is not None:
            versions = p.get("versions", [])
            fields["versions"] = [*versions[:1], *(_told(v, told) for v in versions[1:])]
        if p["venue"]:
            fields["venue_version"], fields["venue_seen"] = _history.first_venue(
                told or []) or (p["version"], p["version_seen_at"])
        if fields:
            out[arxiv_id] = fields
    return out


def _told(version: Version, told: list[Reading]) -> Version:
    """`version` with what arXiv showed with the version before, last, and with it, first."""
    before, after = around(told, version.version)
    return dataclasses.replace(version, before=before, after=after)


def _notes(tables: Tables, papers: Mapping[str, Fields]) -> dict[str, Fields]:
    """The notes table: the model's change note of each revision, in the site's language
    (the newest written, whatever model or prompt wrote it)."""
    table = tables.store.read("notes", ["arxiv_id", "from_version", "version", "language",
                                        "status", "note", "created"])
    # stubs: compute functions take Python scalars
    table = table.filter(pc.and_(pc.equal(table["status"], OK),  # type: ignore[arg-type, call-overload]
                                 # stubs: compute functions take Python scalars
                                 pc.equal(table["language"], tables.cfg.digest_language)))  # type: ignore[call-overload]
    noted: dict[str, dict[tuple[int, int], str]] = {}
    for row in table.sort_by("created").to_pylist():  # the newest last, so it wins
        if row["note"] and row["arxiv_id"] in papers:
            noted.setdefault(row["arxiv_id"], {})[row["from_version"], row["version"]] = \
                clean(row["note"])
    out: dict[str, Fields] = {}
    for arxiv_id, notes in noted.items():
        versions = papers[arxiv_id].get("versions", [])
        out[arxiv_id] = {"versions": [*versions[:1], *(
            dataclasses.replace(b, model_note=notes[a.version, b.version])
            if (a.version, b.version) in notes else b
            for a, b in itertools.pairwise(versions))]}
    return out


def _digests(tables: Tables, papers: Mapping[str, Fields]) -> dict[str, Fields]:
    """The digests table: each paper's latest digest in the site's language, else in the
    digests' language ([digest] language: a site of several languages shows its one digest
    in each, saying so), or why it has none (a NoDigest, said in the page's language)."""
    cfg, digests = tables.cfg, tables.frames["digests"]
    latest = {r["arxiv_id"]: r for language in dict.fromkeys(
              (cfg.digest_language, cfg.site.language))
              for r in stats.latest_digests(digests, language).to_dict("records")}
    failed = _failed_digests(digests, cfg.digest_language)
    # One (frozen) NoDigest for each reason: 200,000 papers have a few between them.
    why = functools.cache(functools.partial(_why_no_digest, cfg))
    out: dict[str, Fields] = {}
    for arxiv_id, p in papers.items():
        d = latest.get(arxiv_id)
        out[arxiv_id] = {
            "digest": {k: _str_or_none(d[k]) for k in DIGEST_FIELDS},
            "digest_model": _str_or_none(d["model"]), "digest_version": int(d["version"]),
            "digest_created": d["created"].to_pydatetime(),
            "digest_language": _str_or_none(d["language"]),
        } if d else {"digest_why": why(p["ai_related"], bool(p["topics"]),
                                       failed.get(arxiv_id))}
    return out


def _similar(tables: Tables, papers: Mapping[str, Fields]) -> dict[str, Fields]:
    """The similar table: each paper's similar papers still in the library, most similar
    first."""
    table = tables.store.read("similar", ["arxiv_id", "neighbours"])
    own = {arxiv_id: p["arxiv_id"] for arxiv_id, p in papers.items()}
    out: dict[str, Fields] = {}
    for arxiv_id, neighbours in zip(cast(list[str], table["arxiv_id"].to_pylist()),
                                    cast(list[list[str]], table["neighbours"].to_pylist()),
                                    strict=True):
        if arxiv_id in own:  # the library's own id strings: 200,000 lists share them
            similar = [s for n in neighbours if (s := own.get(n)) is not None]
            out[arxiv_id] = {"similar": similar}
    return out


# One step per table, in order: a step may read what an earlier one attached (the readings
# and the notes change the versions).
ATTACH: tuple[Attach, ...] = (_hf, _facts, _versions, _readings, _notes, _digests, _similar)


def _revised_lately(cfg: Config, versions: pd.DataFrame, papers: pd.DataFrame,
                    now: dt.datetime, tz: ZoneInfo) -> set[str]:
    """The papers whose revisions the revisions feed shows."""
    rev = stats.revisions(versions, papers).sort_values("first_seen", ascending=False)
    rows = list(zip(rev["arxiv_id"], rev["first_seen"], strict=True))
    return {i for i, _ in recent(rows, lambda r: r[1].to_pydatetime(), now,
                                 cfg.site.feed_days, tz)}


_TIMES = ("published", "updated", "first_seen", "version_seen_at")
_PAPER_COLUMNS = ("arxiv_id", "version", "title", "abstract", "authors", "categories",
                  "primary_category", "comment", "journal_ref", "doi", *_TIMES,
                  "ai_related", "ai_reason", "topics", "topic_reasons")
_HF_COLUMNS = ("arxiv_id", "hf_upvotes", "hf_repo", "hf_day", "hf_stars", "hf_project_page")


def _records(df: pd.DataFrame, columns: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """Rows as dicts of `columns`, made column by column (_column): to_dict("records")
    boxes every cell of every column through pandas, a third of the library's load at
    200,000 papers."""
    for values in zip(*(_column(df, c) for c in columns), strict=True):
        yield dict(zip(columns, values, strict=True))


def _column(df: pd.DataFrame, c: str) -> list[Any]:
    """A column's cells, times as datetimes: a Timestamp a cell, then its datetime, cost
    1 s a column at 200,000 papers."""
    values = df[c]
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return cast(list[Any], values.dt.to_pydatetime().tolist())
    return values.tolist()


def _texts(values: list[Any]) -> list[str | None]:
    """`_str_or_none` over a column's cells, its test inline: a call a cell cost ~0.1 µs,
    and nearly every cell is printable ASCII."""
    return [v if type(v) is str and v.isascii() and v.isprintable() else _str_or_none(v)
            for v in values]


def _typed(value: object) -> object:
    """A source's stored value as its column's type says (pandas reads an int column with
    nulls as floats, a list column as an array), texts cleaned."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(clean(str(v)) for v in value if v is not None)
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value.item() if isinstance(value, np.generic) else value


def _fact_text(value: object) -> str:
    """A source's fact as text: a count stays a count (pandas reads an int column with
    nulls as floats)."""
    if isinstance(value, float) and value.is_integer():
        return f"{int(value):,}"
    if isinstance(value, (list, tuple, np.ndarray)):  # a list column: its items, in order
        return "; ".join(clean(str(v)) for v in value if v is not None)
    return clean(str(value))


def _list(value: Iterable[Any] | None) -> list[Any]:
    return [] if value is None else list(value)


def _int_or_none(value: Any) -> int | None:
    return None if pd.isna(value) else int(value)


def _str_or_none(value: object) -> str | None:
    return clean_opt(_opt(value))  # type: ignore[arg-type]


def _http_or_none(value: object) -> str | None:
    """A link from upstream data, kept only when it is an http(s) URL."""
    url = _str_or_none(value)
    return url if url and url.startswith(("https://", "http://")) else None


def _why_no_digest(cfg: Config, ai_related: bool, in_topics: bool, attempts: int | None
                   ) -> NoDigest:
    """Why a paper has no digest, for a reader: never silence."""
    d = cfg.digest
    if not d.enabled:
        return NoDigest("off")
    if cfg.digest_selection == "ai" and not ai_related:
        return NoDigest("ai")
    if cfg.digest_selection == "topics" and not in_topics:
        return NoDigest("topics")
    if attempts:
        return NoDigest("failed" if attempts >= d.max_attempts else "retrying", attempts)
    return NoDigest("queued", per_run=d.max_per_run)


def _failed_digests(digests: pd.DataFrame, language: str) -> dict[str, int]:
    """Attempts so far, by paper, of the digests that have not succeeded yet."""
    if digests.empty:
        return {}
    rows = digests[digests["language"] == language]
    rows = rows.sort_values(["arxiv_id", "version", "created"], kind="stable")
    last = rows.drop_duplicates("arxiv_id", keep="last")
    last = last[last["status"] != OK]
    return dict(zip(last["arxiv_id"], last["attempts"].fillna(0).astype(int), strict=True))
