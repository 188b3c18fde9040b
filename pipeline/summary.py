"""The job summary of a scheduled run: Markdown for $GITHUB_STEP_SUMMARY.

Reads the run ledger and the completeness ledger, so it also works after a failed step:
per source the latest run (status, counts, tokens, error), the scheduled runs GitHub
missed in the last week, then what arXiv's newest announcement listed against what the
store holds, then the library's totals. What the ledgers hold came from outside (an error
is often an upstream reply's text; a seeded store is another site's): it reaches the
Markdown only through `plain`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pandas as pd

from pipeline import schedule
from pipeline.config import Config
from pipeline.derive import stats
from pipeline.derive.stats import completeness, completeness_line
from pipeline.store import Store

_COUNTS = ("fetched", "new", "revised", "unchanged")
GAP_WEEK = dt.timedelta(days=7)
# ASCII punctuation but & < > (written as entities): a backslash before each makes it
# literal in GitHub's Markdown, so no link, image, code, emphasis, autolink or table cell
# can start in the text.
_PUNCTUATION = re.compile(r"([!\"#$%'()*+,\-./:;=?@\[\\\]^_`{|}~])")
MAX_TEXT = 1000  # characters of one cell or line: an error can be a whole reply body


def plain(text: str) -> str:
    """Untrusted text as Markdown that shows it as typed, on one line (a newline would end
    the table row) and at most MAX_TEXT characters."""
    flat = " ".join(text.split())
    if len(flat) > MAX_TEXT:
        flat = flat[:MAX_TEXT - 1] + "…"
    escaped = _PUNCTUATION.sub(r"\\\1", flat)
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _int(value: Any) -> int:
    return 0 if value is None or pd.isna(value) else int(value)


def markdown(store: Store, cfg: Config | None = None) -> str:
    """The summary; with the fork's config, also the last 24 hours as the home page
    counts them (stats.last_24h)."""
    runs = store.runs()
    if runs.empty:
        return "## PaperTrail update\n\nNo runs recorded yet.\n"
    lines = ["## PaperTrail update", "",
             "| source | status | " + " | ".join(_COUNTS) + " | tokens | error |",
             "| --- | --- |" + " --- |" * (len(_COUNTS) + 2)]
    problems = []
    for source, mine in runs.groupby("source", sort=True):
        last = mine.sort_values("started", kind="stable").iloc[-1]
        tokens = _int(last["tokens_in"]) + _int(last["tokens_out"])
        error = plain(last["error"]) if isinstance(last["error"], str) else ""
        name, status = plain(str(source)), plain(str(last["status"]))
        counts = " | ".join(str(_int(last[k])) for k in _COUNTS)
        lines.append(f"| {name} | {status} | {counts} | {tokens:,} | {error or '—'} |")
        if last["status"] in ("failed", "partial"):
            problems.append(f"- ⚠ {name} {status}: {error or 'no error recorded'}")
        elif last["status"] == "skipped":
            problems.append(f"- {name} skipped: {error or 'no reason recorded'}")
    lines += _missed(runs)
    papers = store.read("papers", columns=["arxiv_id"]).num_rows
    versions = store.read("versions", columns=["arxiv_id"]).num_rows
    spent = sum(_int(v) for v in runs["tokens_in"]) + sum(_int(v) for v in runs["tokens_out"])
    ledger = completeness(store.read("announcements").to_pandas())
    if cfg is not None:
        w = stats.last_24h(cfg, store)
        lines += ["", f"Last 24 h: {len(w.new):,} new papers ({len(w.ai):,} AI-related), "
                      f"{len(w.revised):,} revised, {len(w.digests):,} new digests."]
    lines += ["", *problems, "" if problems else "All sources ok.", "",
              f"Completeness: {plain(completeness_line(ledger))}.", "",
              f"Library: {papers:,} papers, {versions:,} versions; {len(runs):,} runs "
              f"recorded, {spent:,} digest tokens spent in all."]
    return "\n".join(lines) + "\n"


def _missed(runs: pd.DataFrame) -> list[str]:
    """The stretches of the last week in which GitHub started no scheduled run."""
    found = schedule.gaps(runs, since=stats.as_of(runs) - GAP_WEEK)
    if not found:
        return []
    grace = int(schedule.GRACE.total_seconds() // 60)
    return ["", f"### Missed scheduled runs (last 7 days, {grace} min grace)", "",
            *(f"- ⚠ {g.last:%Y-%m-%d %H:%M} → {g.next:%Y-%m-%d %H:%M} UTC: no scheduled run for "
              f"{g.hours:.1f} h, {g.missed} missed ({g.arxiv} right after an arXiv announcement)"
              for g in found)]
