"""The sources page: each source's state, the completeness ledger's newest day, the
scheduled runs GitHub missed, the last arXiv run per category, the digest ledger and what
the last runs set aside."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable

import pandas as pd

from pipeline import schedule
from pipeline.derive import stats
from pipeline.site.model.data import SiteData
from pipeline.site.model.views import PageKind
from pipeline.site.output import Output
from pipeline.site.render.safe import clean


def render(site: SiteData, out: Output) -> list[str]:
    runs = site.lib.frames["runs"]
    arxiv_runs = runs[runs["source"] == "arxiv"] if not runs.empty else runs
    details = arxiv_runs.iloc[-1]["details"] if not arxiv_runs.empty else None
    ledger = []
    if not runs.empty:
        digest_runs = runs[runs["source"] == "digest"]
        ledger = [(site.local(r["started"].to_pydatetime()), int(r["tokens_in"] or 0),
                   int(r["tokens_out"] or 0))
                  for r in digest_runs.fillna({"tokens_in": 0, "tokens_out": 0})
                  .to_dict("records")][-30:]
    return [out.page("sources/", "sources.html", title=site.strings["sources"],
                     sources=site.home.sources, completeness=site.home.completeness,
                     held_of_announced=site.home.held_of_announced,
                     per_category=sorted(_per_category(details).items()), ledger=ledger,
                     set_aside=_set_aside(runs, site.local) if not runs.empty else [],
                     paper_pages=_paper_pages(site), coverage=_coverage(site),
                     gaps=site.home.gaps,
                     grace_minutes=int(schedule.GRACE.total_seconds() // 60),
                     gap_days=stats.GAP_DAYS, nav="sources")]


def _coverage(site: SiteData) -> list[str]:
    """Where the digests went: of 今日精选 and of the AI-related papers the home page counts
    (stats.Window), how many have one."""
    wanted = {clean(i) for i in site.home.window.ai}
    s, ai = site.strings, [p for p in site.lib.papers if p.arxiv_id in wanted]
    return [s["digest_coverage_top"].format(
                n=f"{len(site.top):,}", done=f"{sum(p.digest is not None for p, _ in site.top):,}"),
            s["digest_coverage_ai"].format(
                n=f"{len(ai):,}", done=f"{sum(p.digest is not None for p in ai):,}",
                budget=f"{site.cfg.digest.max_per_run:,}")]


def _paper_pages(site: SiteData) -> str:
    """Which papers have a page: past paper_pages_days (or, when even light pages do not all
    fit, under [site] max_site_mb) the oldest have none, and the page says from when on
    they do; under max_site_mb the oldest pages are light, and it says up to when."""
    paged, s = site.paged, site.strings
    if len(paged) == len(site.lib.papers):
        said = s["paper_pages_all"].format(n=f"{len(paged):,}")
    else:
        said = s["paper_pages_from"].format(
            n=f"{len(paged):,}",
            date=site.local(min((p.updated for p in paged), default=None))[:10],
            without=f"{len(site.lib.papers) - len(paged):,}",
            days=site.cfg.site.paper_pages_days, mb=f"{site.cfg.site.max_site_mb:g}")
    light = [p.updated for p in paged if site.pages.kind(p) is PageKind.LIGHT]
    if light:
        said += s["paper_pages_light"].format(n=f"{len(light):,}",
                                              date=site.local(max(light))[:10],
                                              mb=f"{site.cfg.site.max_site_mb:g}")
    return said


def _per_category(details: object) -> dict[str, object]:
    """A run's per-category counts from its stored details; none from details that are
    not the JSON object a run writes (a damaged row shows nothing, and fails no build)."""
    try:
        counts = json.loads(details).get("per_category", {})  # type: ignore[arg-type]
        return {clean(str(c)): n for c, n in counts.items()}
    except (TypeError, ValueError, AttributeError):
        return {}


def _set_aside(runs: pd.DataFrame, local: Callable[[dt.datetime], str], last: int = 30
               ) -> list[tuple[str, str, str, str]]:
    """What the last runs of each source did not take as it came: (when, source, kind, what)
    for each entry rejected (its id is not arXiv's, or a field is oversized), dated ahead of
    the run, or carrying a category outside the taxonomy, and each range the server sent
    short of its count. From details a damaged row holds: nothing."""
    found = []
    for row in runs.tail(last).to_dict("records"):
        try:
            details = json.loads(row["details"])
            notes = [("rejected", f"{r['id']} — {r['why']}") for r in details.get("rejected", [])]
            notes += [("ahead", ", ".join(f"{k} {v}" for k, v in a.items()))
                      for a in details.get("anomalies", [])]
            notes += [("unknown_category", f"{c} × {n}")
                      for c, n in details.get("unknown_categories", {}).items()]
            notes += [("shortfall", f"{r['got']:,} / {r['results']:,} ({r['from']} – "
                                    f"{r['to'] or '…'})")
                      for r in details.get("shortfall", [])]
        except (TypeError, ValueError, AttributeError, KeyError):
            continue
        when = local(row["started"].to_pydatetime())
        found += [(when, clean(str(row["source"])), kind, clean(str(what)))
                  for kind, what in notes]
    return found
