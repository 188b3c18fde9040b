"""The bundled real sample as arXiv entries, with derived (simulated) times and revisions."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

SAMPLE_DIR = Path(__file__).parent / "sample"
EASTERN = ZoneInfo("America/New_York")
REVISION_EVERY = 20  # every 20th paper of a day gets a simulated v2 ...
REVISION_LAG = 2  # ... announced this many announcement days later


@dataclass(frozen=True)
class Entry:
    """One version of one paper as arXiv would serve it, and when it became visible."""

    arxiv_id: str
    version: int
    title: str
    abstract: str
    authors: tuple[str, ...]
    categories: tuple[str, ...]
    comment: str | None
    journal_ref: str | None
    doi: str | None
    published: dt.datetime
    updated: dt.datetime
    announced: dt.datetime

    @property
    def primary_category(self) -> str:
        return self.categories[0]


def days() -> list[str]:
    return sorted(p.name[len("listings-"):-len(".jsonl.gz")]
                  for p in SAMPLE_DIR.glob("listings-*.jsonl.gz"))


def announced_at(day: str) -> dt.datetime:
    """A listing dated D was announced at 20:00 US-Eastern the evening before."""
    d = dt.date.fromisoformat(day) - dt.timedelta(days=1)
    return dt.datetime(d.year, d.month, d.day, 20, tzinfo=EASTERN).astimezone(dt.UTC)


def run_at(day: str) -> dt.datetime:
    """When the scheduled run after that day's announcement runs: once arXiv's OAI-PMH has
    the day too (its docs: ~22:30 ET after the 20:00 ET announcement), with half an hour
    to spare."""
    return announced_at(day) + dt.timedelta(hours=3)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@cache
def listing(day: str) -> tuple[dict[str, Any], ...]:
    return tuple(_read_jsonl(SAMPLE_DIR / f"listings-{day}.jsonl.gz"))


@cache
def digests() -> dict[str, dict[str, str]]:
    """Real Chinese digests by arXiv id."""
    out = {}
    for path in sorted(SAMPLE_DIR.glob("digests-*.jsonl.gz")):
        for row in _read_jsonl(path):
            out[row["id"]] = row["AI"]
    return out


def hf_daily(day: str) -> bytes | None:
    path = SAMPLE_DIR / f"hf-{day}.json.gz"
    return gzip.decompress(path.read_bytes()) if path.exists() else None


@cache
def entries() -> tuple[Entry, ...]:
    """Every version the replay can serve: each paper's v1, plus the simulated v2s."""
    all_days = days()
    out: list[Entry] = []
    seen: set[str] = set()  # the archive lists a cross-listed paper more than once
    for index, day in enumerate(all_days):
        announced = announced_at(day)
        cutoff = announced - dt.timedelta(hours=6)  # submissions close 14:00 US-Eastern
        rows = []
        for r in listing(day):
            if r["id"] not in seen:
                seen.add(r["id"])
                rows.append(r)
        for i, row in enumerate(rows):
            submitted = cutoff - dt.timedelta(seconds=86400 * (i + 1) // (len(rows) + 1))
            submitted = submitted.replace(microsecond=0)
            v1 = Entry(
                arxiv_id=row["id"], version=1, title=" ".join(row["title"].split()),
                abstract=" ".join(row["summary"].split()), authors=tuple(row["authors"]),
                categories=tuple(row["categories"]), comment=row.get("comment"),
                journal_ref=None, doi=None, published=submitted, updated=submitted,
                announced=announced,
            )
            out.append(v1)
            later = index + REVISION_LAG
            if i % REVISION_EVERY == 0 and later < len(all_days):
                re_announced = announced_at(all_days[later])
                out.append(Entry(
                    **{**v1.__dict__, "version": 2,
                       "abstract": v1.abstract + " In this revised version we extend the "
                       "evaluation and release our code.",
                       "title": v1.title if i % (2 * REVISION_EVERY) else v1.title
                       + " (Extended Version)",
                       "comment": "v2: extended evaluation (simulated revision)",
                       "updated": re_announced - dt.timedelta(hours=8),
                       "announced": re_announced},
                ))
    return tuple(out)
