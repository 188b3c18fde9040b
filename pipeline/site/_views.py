"""What the templates see: the store read once and shaped into plain view objects.

All untrusted text (titles, abstracts, names, digests) leaves here either as a
plain str (Jinja autoescapes it) or as Markup built by escaping first
(`render_math`, `word_diff`), never as raw HTML.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

import pandas as pd
from markupsafe import Markup

from pipeline.config import Config
from pipeline.site._diff import changed, word_diff
from pipeline.site._math import render_math
from pipeline.store import Store

CLOCKS = ("updated", "first_seen", "published")
DIGEST_FIELDS = ("tldr", "motivation", "method", "results", "conclusion")


@dataclass
class Version:
    """One version on a paper's timeline. The (title, abstract) of a revision and of the
    version before it are kept, and the diffs made from them only when the paper's page
    is rendered (in a worker process, see generator.py), not while the library loads."""

    version: int
    updated: str
    seen: str
    texts: tuple[str, str] | None = None  # this version's (title, abstract), for a diff
    previous: tuple[str, str] | None = None  # the version before's; None for the first

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

    def _changed(self, i: int) -> bool:
        return (self.texts is not None and self.previous is not None
                and changed(self.previous[i], self.texts[i]))

    def _diff(self, i: int) -> Markup | None:
        if not self._changed(i):
            return None
        return word_diff(self.previous[i], self.texts[i])  # type: ignore[index]


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
    digest: dict[str, str] | None = None
    digest_model: str | None = None
    digest_created: dt.datetime | None = None
    versions: list[Version] = field(default_factory=list)
    has_page: bool = True

    @property
    def path(self) -> str:
        """Site-relative path of the paper page: one file per paper, not a folder each
        (20k mkdirs cost seconds); old ids such as astro-ph/0601001 nest one level."""
        return f"paper/{self.arxiv_id}.html"

    @property
    def abstract_html(self) -> Markup:
        """Made when a page shows it (a paper page, the home page's few cards), in the
        worker that renders it: a fifth of the library's load otherwise, and lists show no
        abstract."""
        return render_math(self.abstract_text)

    @property
    def abs_url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv_id}v{self.version}"

    @property
    def pdf_url(self) -> str:
        return f"https://arxiv.org/pdf/{self.arxiv_id}v{self.version}"

    @property
    def html_url(self) -> str:
        return f"https://arxiv.org/html/{self.arxiv_id}v{self.version}"

    @property
    def hf_url(self) -> str | None:
        return f"https://huggingface.co/papers/{self.arxiv_id}" if self.hf_day else None

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


def _opt(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, float) and pd.isna(value):
        return None
    return value


def load(cfg: Config, store: Store, now: dt.datetime | None = None) -> Library:
    from pipeline import stats

    tz = ZoneInfo(cfg.site.timezone)
    papers_df = store.read("papers").to_pandas()
    versions_df = store.read("versions").to_pandas()
    digests_df = store.read("digests").to_pandas()
    runs_df = store.read("runs").to_pandas()
    now = now or stats.as_of(runs_df)
    cutoff = now - dt.timedelta(days=cfg.site.paper_pages_days)

    digest_by_id = _latest_digests(digests_df, cfg.digest_language)
    versions_by_id: dict[str, list[dict]] = {}
    ordered = versions_df.sort_values(["arxiv_id", "version"], kind="stable")
    for row in ordered.to_dict("records"):
        versions_by_id.setdefault(row["arxiv_id"], []).append(row)

    def local(t: dt.datetime) -> str:
        return t.astimezone(tz).strftime("%Y-%m-%d %H:%M")

    out: list[Paper] = []
    for row in papers_df.to_dict("records"):
        topics = list(zip(row["topics"] if row["topics"] is not None else [],
                          row["topic_reasons"] if row["topic_reasons"] is not None else [],
                          strict=False))
        d = digest_by_id.get(row["arxiv_id"])
        paper = Paper(
            arxiv_id=row["arxiv_id"], version=int(row["version"]), title=row["title"],
            title_html=render_math(row["title"]), abstract_text=row["abstract"],
            authors=list(row["authors"]), categories=list(row["categories"]),
            primary=row["primary_category"], comment=_opt(row["comment"]),
            journal_ref=_opt(row["journal_ref"]), doi=_opt(row["doi"]),
            published=row["published"].to_pydatetime(), updated=row["updated"].to_pydatetime(),
            first_seen=row["first_seen"].to_pydatetime(),
            version_seen_at=row["version_seen_at"].to_pydatetime(),
            ai_related=bool(_opt(row["ai_related"]) or False), ai_reason=_opt(row["ai_reason"]),
            topics=[(str(s), str(r)) for s, r in topics],
            hf_upvotes=None if pd.isna(row["hf_upvotes"]) else int(row["hf_upvotes"]),
            hf_repo=_opt(row["hf_repo"]),
            hf_day=None if pd.isna(row["hf_day"]) else row["hf_day"],
            digest={k: d[k] for k in DIGEST_FIELDS} if d else None,
            digest_model=d["model"] if d else None,
            digest_created=d["created"].to_pydatetime() if d else None,
            has_page=row["updated"].to_pydatetime() >= cutoff,
        )
        history = versions_by_id.get(row["arxiv_id"], [])
        previous = None
        for v in history:
            texts = (v["title"], v["abstract"])
            paper.versions.append(Version(
                int(v["version"]), local(v["updated"].to_pydatetime()),
                local(v["first_seen"].to_pydatetime()),
                texts=texts if previous else None, previous=previous))
            previous = texts
        out.append(paper)
    frames = {"papers": papers_df, "versions": versions_df, "digests": digests_df,
              "runs": runs_df}
    return Library(out, {p.arxiv_id: p for p in out}, frames, tz, now)


def _latest_digests(digests: pd.DataFrame, language: str) -> dict[str, dict]:
    if digests.empty:
        return {}
    ok = digests[(digests["status"] == "ok") & (digests["language"] == language)
                 & ~digests["superseded"].fillna(False).astype(bool)]
    ok = ok.sort_values(["arxiv_id", "version", "created"], kind="stable")
    return {r["arxiv_id"]: r for r in ok.drop_duplicates("arxiv_id", keep="last")
            .to_dict("records")}
