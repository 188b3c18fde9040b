"""What the templates see: the store read once and shaped into plain view objects.

All untrusted text (titles, abstracts, names, digests) leaves here either as a
plain str (Jinja autoescapes it) or as Markup built by escaping first
(`render_tex`, `word_diff`), never as raw HTML.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import quote
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from markupsafe import Markup

from pipeline.config import Config
from pipeline.derive import scope, stats
from pipeline.derive.readings import Reading, around
from pipeline.digest import prompt as digest_prompt
from pipeline.site import i18n
from pipeline.site.model import history as _history
from pipeline.site.model.note import Part, Side, note, note_text
from pipeline.site.render.diff import changed, word_diff
from pipeline.site.render.feeds import recent
from pipeline.site.render.safe import clean, clean_opt
from pipeline.site.render.tex import excerpt, links_in, plain_tex, render_tex
from pipeline.sources import facts as source_facts
from pipeline.store import Store
from pipeline.text.ids import is_arxiv_id
from pipeline.text.venue import Venue, venue

CLOCKS = ("updated", "first_seen", "published")
# Two lines of a card on a phone, most of two at 1366 px (CSS clamps to two lines at any
# width). A paper is in many lists: at 20,000 papers 200 characters cost 22 MB, 160 19 MB.
EXCERPT_CHARS = 160
DIGEST_FIELDS = tuple(digest_prompt.FIELDS)  # as the digest step asks the model for them
DIFF_CONTEXT = 12  # words kept on each side of a change to an abstract


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
        """Its change note (修订说明) by rule, as catalogue keys and values (model.note). Made
        each time it is asked for, not cached: a cached_property computes under a lock
        that a worker forked at that moment would inherit held (site.workers)."""
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
    ai_reason: str | None
    topics: list[tuple[str, str]]  # (slug, reason)
    hf_upvotes: int | None
    hf_repo: str | None
    hf_day: dt.date | None
    hf_stars: int | None = None  # the code repository's, as Hugging Face reports them
    hf_project: str | None = None  # the project page Hugging Face links
    facts: tuple[tuple[str, str], ...] = ()  # (label, text) that sources add (`Source.facts`)
    digest: dict[str, str | None] | None = None
    digest_model: str | None = None
    digest_version: int | None = None  # the version it was written for
    digest_created: dt.datetime | None = None
    digest_why: str | None = None  # why there is no digest, for a reader
    versions: list[Version] = field(default_factory=list)
    # Within paper_pages_days and an id of arXiv's grammar (only such an id becomes a path,
    # paper/<id>.html): the paper may have a page. Under [site] max_site_mb (site.budget) its
    # page may be light (its article in a shard the page's script fetches), and when even
    # light pages do not all fit, the oldest have none (has_page).
    pageable: bool = True
    has_page: bool = True
    light: bool = False
    venue: Venue | None = None  # the venue that took it (text.venue), as the latest version says
    venue_version: int | None = None  # the first version that said so
    venue_seen: dt.datetime | None = None  # when that was first read here
    similar: list[str] = field(default_factory=list)  # ids, most similar first

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
        return getattr(self, clock)

    @property
    def title_text(self) -> str:
        """The title as read (LaTeX as Unicode), for places that take no markup."""
        return plain_tex(self.title)

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
        its link stays on the page it names (a 404 there), never climbing with `../`."""
        return self.arxiv_id if is_arxiv_id(self.arxiv_id) else quote(self.arxiv_id, safe="")

    @property
    def abs_url(self) -> str:
        return self.version_url(self.version)

    def version_url(self, version: int) -> str:
        """arXiv's page of one version (each stays readable there after the next)."""
        return f"https://arxiv.org/abs/{self._ref}v{version}"

    @property
    def pdf_url(self) -> str:
        return f"https://arxiv.org/pdf/{self._ref}v{self.version}"

    @property
    def html_url(self) -> str:
        return f"https://arxiv.org/html/{self._ref}v{self.version}"

    @property
    def hf_url(self) -> str | None:
        return f"https://huggingface.co/papers/{self._ref}" if self.hf_day else None

    @property
    def repo_url(self) -> str | None:
        repo = self.hf_repo or ""
        return repo if repo.startswith(("https://github.com/", "https://gitlab.com/")) else None


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


def _opt(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, float) and pd.isna(value):
        return None
    return value


def clock(runs: pd.DataFrame) -> dt.datetime:
    """The site's "now": when the newest run finished, so a rebuild of unchanged data
    writes the same bytes; but never past the build's own clock, and never a paper's
    time: one run or paper dated 2099 would empty every 24 h window and take every paper
    page past paper_pages_days."""
    return min(stats.as_of(runs), dt.datetime.now(dt.UTC).replace(microsecond=0))


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
                    [_decoded(v) for v in raw.to_pylist()], f.type))
    return table


def _decoded(value: object) -> object:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return [_decoded(v) for v in value] if isinstance(value, list) else value


def _read(store: Store, name: str) -> pd.DataFrame:
    return _decodable(store.read(name)).to_pandas()


def load(cfg: Config, store: Store, now: dt.datetime | None = None) -> Library:
    tz = ZoneInfo(cfg.site.timezone)
    # Only the fork's scope: what it does not select is neither shown nor counted.
    papers_df = _decodable(scope.within(cfg, store.library())).to_pandas()
    kept = papers_df["arxiv_id"]
    versions_df = _read(store, "versions")
    versions_df = versions_df[versions_df["arxiv_id"].isin(kept)]
    digests_df = _read(store, "digests")
    digests_df = digests_df[digests_df["arxiv_id"].isin(kept)]
    runs_df = _clean_strings(_read(store, "runs"))
    now = now or clock(runs_df)
    cutoff = now - dt.timedelta(days=cfg.site.paper_pages_days)

    digest_by_id = _latest_digests(digests_df, cfg.digest_language)
    failed_digests = _failed_digests(digests_df, cfg.digest_language)
    strings = i18n.strings(cfg.site.language)
    shown = [(clean(f.label[cfg.site.language]), f.column) for f in source_facts()]
    versions_by_id: dict[str, list[dict]] = {}
    ordered = versions_df.sort_values(["arxiv_id", "version"], kind="stable")
    for row in _records(ordered, ("arxiv_id", "version", "title", "abstract", "updated",
                                  "first_seen")):
        versions_by_id.setdefault(row["arxiv_id"], []).append(row)

    def local(t: dt.datetime) -> str:
        return t.astimezone(tz).strftime("%Y-%m-%d %H:%M")

    def said(why: str) -> str:
        return i18n.reason(cfg.site.language, why)

    def reason_of(value: object) -> str | None:
        why = _str_or_none(value)
        return None if why is None else said(why)

    out: list[Paper] = []
    for row in _records(papers_df, (*_PAPER_COLUMNS, *dict.fromkeys(c for _, c in shown))):
        topics = list(zip(row["topics"] if row["topics"] is not None else [],
                          row["topic_reasons"] if row["topic_reasons"] is not None else [],
                          strict=False))
        d = digest_by_id.get(row["arxiv_id"])
        arxiv_id, title = clean(row["arxiv_id"]), clean(row["title"])
        pageable = row["updated"].to_pydatetime() >= cutoff and is_arxiv_id(arxiv_id)
        paper = Paper(
            arxiv_id=arxiv_id, version=int(row["version"]), title=title,
            title_html=render_tex(title), abstract_text=clean(row["abstract"]),
            authors=[clean(a) for a in row["authors"]],
            categories=[clean(c) for c in row["categories"]],
            primary=clean(row["primary_category"]), comment=_str_or_none(row["comment"]),
            journal_ref=_str_or_none(row["journal_ref"]), doi=_str_or_none(row["doi"]),
            published=row["published"].to_pydatetime(), updated=row["updated"].to_pydatetime(),
            first_seen=row["first_seen"].to_pydatetime(),
            version_seen_at=row["version_seen_at"].to_pydatetime(),
            ai_related=bool(_opt(row["ai_related"]) or False),
            ai_reason=reason_of(row["ai_reason"]),
            topics=[(clean(str(s)), said(clean(str(r)))) for s, r in topics],
            hf_upvotes=None if pd.isna(row["hf_upvotes"]) else int(row["hf_upvotes"]),
            hf_repo=_str_or_none(row["hf_repo"]),
            hf_day=None if pd.isna(row["hf_day"]) else row["hf_day"],
            hf_stars=None if pd.isna(row["hf_stars"]) else int(row["hf_stars"]),
            hf_project=_http_or_none(row["hf_project_page"]),
            facts=tuple((label, _fact_text(row[column])) for label, column in shown
                        if _opt(row[column]) is not None),
            digest={k: _str_or_none(d[k]) for k in DIGEST_FIELDS} if d else None,
            digest_model=_str_or_none(d["model"]) if d else None,
            digest_version=int(d["version"]) if d else None,
            digest_created=d["created"].to_pydatetime() if d else None,
            digest_why=None if d else _why_no_digest(
                cfg, strings, bool(_opt(row["ai_related"])), bool(topics),
                failed_digests.get(row["arxiv_id"])),
            pageable=pageable, has_page=pageable,
        )
        history = versions_by_id.get(row["arxiv_id"], [])
        previous = None
        for v in history:
            texts = (clean(v["title"]), clean(v["abstract"]))
            paper.versions.append(Version(
                int(v["version"]), local(v["updated"].to_pydatetime()),
                local(v["first_seen"].to_pydatetime()),
                texts=texts if previous else None, previous=previous))
            previous = texts
        out.append(paper)
    frames = {"papers": papers_df, "versions": versions_df, "digests": digests_df,
              "runs": runs_df, "announcements": _read(store, "announcements")}
    wanted = _revised_lately(cfg, versions_df, papers_df, now, tz)
    wanted |= {i for f in cfg.follows for i in f.watch}
    revised = [p for p in out if p.has_page and len(p.versions) > 1]
    for p in out:
        p.venue = venue(p.comment, p.journal_ref, p.doi)
    accepted = [p for p in out if p.venue]
    by_id = {p.arxiv_id: p for p in out}
    readings = _history.readings(store, wanted | {p.arxiv_id for p in revised}
                                 | {p.arxiv_id for p in accepted})
    for arxiv_id, told in readings.items():  # what changed with each version, for notes
        if (revised_paper := by_id.get(arxiv_id)) is not None:
            for version in revised_paper.versions[1:]:
                version.before, version.after = around(told, version.version)
    for (arxiv_id, since, until), text in _model_notes(store, cfg.digest_language).items():
        noted = by_id.get(arxiv_id)
        for a, b in itertools.pairwise(noted.versions if noted else []):
            if (a.version, b.version) == (since, until):
                b.model_note = text
    for arxiv_id, neighbours in _similar(store, by_id):
        by_id[arxiv_id].similar = neighbours
    for p in accepted:  # a store without its snapshots knows no more than the latest
        p.venue_version, p.venue_seen = _history.first_venue(
            readings.get(p.arxiv_id, [])) or (p.version, p.version_seen_at)
    return Library(out, by_id, frames, tz, now, readings)


def _model_notes(store: Store, language: str) -> dict[tuple[str, int, int], str]:
    """The model's change note of each revision, in the site's language, by (paper, version
    before, version): the newest written, whatever model or prompt wrote it."""
    table = store.read("notes", ["arxiv_id", "from_version", "version", "language", "status",
                                 "note", "created"])
    table = table.filter(pc.and_(pc.equal(table["status"], "ok"),
                                 pc.equal(table["language"], language)))
    out = {}
    for row in table.sort_by("created").to_pylist():  # the newest last, so it wins
        if row["note"]:
            out[row["arxiv_id"], row["from_version"], row["version"]] = clean(row["note"])
    return out


def _similar(store: Store, by_id: dict[str, Paper]) -> Iterator[tuple[str, list[str]]]:
    """The stored similar papers of each paper in the library, those still in it."""
    table = store.read("similar", ["arxiv_id", "neighbours"])
    for arxiv_id, neighbours in zip(table["arxiv_id"].to_pylist(),
                                    table["neighbours"].to_pylist(), strict=True):
        if arxiv_id in by_id:  # the library's own id strings: 200,000 lists share them
            yield arxiv_id, [by_id[n].arxiv_id for n in neighbours if n in by_id]


def _revised_lately(cfg: Config, versions: pd.DataFrame, papers: pd.DataFrame,
                    now: dt.datetime, tz: ZoneInfo) -> set[str]:
    """The papers whose revisions the revisions feed shows."""
    rev = stats.revisions(versions, papers).sort_values("first_seen", ascending=False)
    rows = list(zip(rev["arxiv_id"], rev["first_seen"], strict=True))
    return {i for i, _ in recent(rows, lambda r: r[1].to_pydatetime(), now,
                                 cfg.site.feed_days, tz)}


_PAPER_COLUMNS = ("arxiv_id", "version", "title", "abstract", "authors", "categories",
                  "primary_category", "comment", "journal_ref", "doi", "published", "updated",
                  "first_seen", "version_seen_at", "ai_related", "ai_reason", "topics",
                  "topic_reasons", "hf_upvotes", "hf_repo", "hf_day", "hf_stars",
                  "hf_project_page")


def _records(df: pd.DataFrame, columns: tuple[str, ...]) -> Iterator[dict]:
    """Rows as dicts of `columns`, made column by column: to_dict("records") boxes every
    cell of every column through pandas, a third of the library's load at 200,000 papers."""
    for values in zip(*(df[c].tolist() for c in columns), strict=True):
        yield dict(zip(columns, values, strict=True))


def _fact_text(value: object) -> str:
    """A source's fact as text: a count stays a count (pandas reads an int column with
    nulls as floats)."""
    if isinstance(value, float) and value.is_integer():
        return f"{int(value):,}"
    if isinstance(value, (list, tuple, np.ndarray)):  # a list column: its items, in order
        return "; ".join(clean(str(v)) for v in value if v is not None)
    return clean(str(value))


def _str_or_none(value: object) -> str | None:
    return clean_opt(_opt(value))  # type: ignore[arg-type]


def _http_or_none(value: object) -> str | None:
    """A link from upstream data, kept only when it is an http(s) URL."""
    url = _str_or_none(value)
    return url if url and url.startswith(("https://", "http://")) else None


def _why_no_digest(cfg: Config, s: dict[str, str], ai_related: bool, in_topics: bool,
                   attempts: int | None) -> str:
    """What a reader is told instead of a digest: never silence."""
    d = cfg.digest
    if not d.enabled:
        return s["digest_why_off"]
    if d.selection == "ai" and not ai_related:
        return s["digest_why_ai"]
    if d.selection == "topics" and not in_topics:
        return s["digest_why_topics"]
    if attempts:
        key = "digest_why_failed" if attempts >= d.max_attempts else "digest_why_retrying"
        return s[key].format(attempts=attempts)
    return s["digest_why_queued"].format(n=f"{d.max_per_run:,}")


def _failed_digests(digests: pd.DataFrame, language: str) -> dict[str, int]:
    """Attempts so far, by paper, of the digests that have not succeeded yet."""
    if digests.empty:
        return {}
    rows = digests[digests["language"] == language]
    rows = rows.sort_values(["arxiv_id", "version", "created"], kind="stable")
    last = rows.drop_duplicates("arxiv_id", keep="last")
    last = last[last["status"] != "ok"]
    return dict(zip(last["arxiv_id"], last["attempts"].fillna(0).astype(int), strict=True))


def _latest_digests(digests: pd.DataFrame, language: str) -> dict[str, dict]:
    if digests.empty:
        return {}
    ok = digests[(digests["status"] == "ok") & (digests["language"] == language)
                 & ~digests["superseded"].fillna(False).astype(bool)]
    ok = ok.sort_values(["arxiv_id", "version", "created"], kind="stable")
    return {r["arxiv_id"]: r for r in ok.drop_duplicates("arxiv_id", keep="last")
            .to_dict("records")}
