"""Every version's text: the earlier versions of papers the store first met at v2 or later.

OAI-PMH's arXivRaw carries a record's current text and only the dates of its other
versions, so a paper first stored at v3 (after an outage, in a backfill, a fork's first
year) has no text of v1 and v2, and its history no diff. The export API answers a
versioned id with that version's entry (arXiv/arxiv-search,
`search/services/index/classic_api/classic_search.py`: an id_list id ending in `v<n>` is
matched on `paper_id_v`, one indexed document per version, the others on `is_current`),
so this source asks for the missing ones by versioned id, in `id_list` batches.

The work list is read from the store each run (every version below a paper's current one
that the versions table lacks), so a bounded run, a crash or a kill is resumed by the next
run; at most `[sources.arxiv] version_texts_per_run` versions are asked for a run, the
papers updated most recently first.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.merge import merge_arxiv
from pipeline.report import RunReport, RunStatus
from pipeline.sources._source import Catch, Fact, Library, Link, Merged, Options, Picks, Signal
from pipeline.sources.arxiv import fetch_ids
from pipeline.tables import ARXIV_SNAPSHOT, Table
from pipeline.text.untrusted import MAX_LISTED

if TYPE_CHECKING:
    from pipeline.config import Config


def missing_texts(library: Library) -> list[str]:
    """Versioned ids ('2604.01234v1') of every version below a paper's current one that the
    versions table lacks: the papers updated most recently first (those the site's lists
    show), each paper's versions oldest first."""
    papers = library.papers.select(["arxiv_id", "version", "updated"])
    keys = library.version_keys.select(["arxiv_id", "version"])
    counts = keys.group_by("arxiv_id").aggregate([("version", "count")])
    at = pc.index_in(papers["arxiv_id"], value_set=counts["arxiv_id"].combine_chunks())
    held: pa.ChunkedArray[Any] = counts["version_count"].take(at)  # null: none stored
    held = pc.fill_null(held, pa.scalar(0, held.type))
    short = papers.filter(pc.greater(papers["version"], held)).to_pandas()
    if short.empty:
        return []
    short = short.sort_values(["updated", "arxiv_id"], ascending=[False, True],
                              kind="stable", na_position="last")
    have = keys.filter(pc.is_in(keys["arxiv_id"], value_set=pa.array(
        short["arxiv_id"].tolist(), pa.string()))).to_pandas()
    stored = set(zip(have["arxiv_id"], have["version"], strict=True))
    return [f"{arxiv_id}v{n}" for arxiv_id, version in zip(short["arxiv_id"],
                                                          short["version"], strict=True)
            for n in range(1, int(version) + 1) if (arxiv_id, n) not in stored]


def _as_history(rows: pa.Table, papers: pa.Table) -> pa.Table:
    """Versions rows of texts fetched after a later version: each is history, not news, so it
    keeps the time the store first knew its paper (`first_seen`), and the revisions feeds,
    counts and watch events (which read versions by when they were first seen) stay as
    they were."""
    at = pc.index_in(rows["arxiv_id"], value_set=papers["arxiv_id"].combine_chunks())
    first_seen = pc.coalesce(papers["first_seen"].take(at), rows["first_seen"])
    return rows.set_column(rows.schema.get_field_index("first_seen"), "first_seen", first_seen)

class VersionTexts:
    """The texts of stored papers' earlier versions, by versioned id from the export API."""

    name = "versions"
    label: Mapping[str, str] = {"zh-CN": "旧版本文本（arXiv API）",
                                "en": "Earlier versions' texts (arXiv API)"}
    schema = ARXIV_SNAPSHOT
    tables: tuple[Table, ...] = ()  # it adds versions rows, the core's own
    facts: tuple[Fact, ...] = ()
    signals: tuple[Signal, ...] = ()
    picks: Picks | None = None
    links: tuple[Link, ...] = ()

    def enabled(self, cfg: Config) -> bool:
        acfg = cfg.sources.arxiv
        return acfg.enabled and acfg.version_texts_per_run > 0

    def catch_up(self, cfg: Config, library: Library, watermark: dt.datetime | None,
                 started: dt.datetime, options: Options) -> Catch:
        acfg = cfg.sources.arxiv
        missing = missing_texts(library)
        asked = missing[:acfg.version_texts_per_run]
        fetch = (fetch_ids(acfg, asked, started,
                           max_requests=math.ceil(len(asked) / acfg.id_batch_size))
                 if asked else None)
        rows = [] if fetch is None else fetch.rows
        wanted = set(asked)
        # Only what was asked: a server answering a versioned id with another version
        # brings nothing here (the other sources keep the current version).
        kept = [r for r in rows if f"{r['arxiv_id']}v{r['version']}" in wanted]
        answered = {f"{r['arxiv_id']}v{r['version']}" for r in kept}
        merged = self.merge(cfg, library, pa.Table.from_pylist(kept, schema=ARXIV_SNAPSHOT))
        error = None if fetch is None else fetch.error
        status: RunStatus = "ok" if error is None else "partial" if kept else "failed"
        report = RunReport(
            self.name, status, merged.counts,
            0 if fetch is None else fetch.stats.requests,
            0 if fetch is None else fetch.stats.retries, error, watermark,
            started if error is None else watermark)
        unanswered = [i for i in asked if i not in answered]
        details: dict[str, object] = {
            "missing": len(missing), "asked": len(asked),
            "left": len(missing) - len(answered),
            "unanswered_count": len(unanswered) if error is None else 0,
            "unanswered": unanswered[:MAX_LISTED] if error is None else [],
            "not_asked": len(rows) - len(kept),
            **({} if fetch is None else fetch.findings.details())}
        catch = Catch(report, started.date(), details)
        catch.add(self.name, merged)
        return catch

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        merged = merge_arxiv(library.papers, library.version_keys, batch,
                             cfg.sources.arxiv.categories)
        texts = _as_history(merged.new_versions, library.papers)
        counts = {"fetched": merged.fetched, "new": texts.num_rows, "revised": 0,
                  "unchanged": merged.fetched - texts.num_rows}
        return Merged(merged.papers, merged.changed, counts, texts)


SOURCE = VersionTexts()

