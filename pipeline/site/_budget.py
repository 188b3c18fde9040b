"""[site] max_site_mb: the site never grows past it.

Lists, feeds and search stay whole; the oldest paper pages give way, and their papers link
to arXiv from the lists, as papers past paper_pages_days do. Which pages to leave out is
measured, not estimated: the build renders, sums the bytes of every file it produced (the
manifest it is about to write included), and when that is over the limit it drops the
oldest pages whose own bytes cover the excess and renders again (the writer skips every
file whose bytes did not change). The boundary is recorded, so the next build starts from
it: a rebuild of unchanged data is one pass that writes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import Config, ConfigError
from pipeline.site._views import Paper
from pipeline.site._writer import SkipUnchangedWriter, manifest_bytes, read_record

RECORD = ".papertrail/budget.json"  # the limit and the oldest page kept under it
# Left free when pages are cut, so the next builds' new papers fit without a second pass:
# 1% of 950 MB is two days of all cs.* at ~5 MB a day.
HEADROOM = 0.01


class SiteTooLargeError(ConfigError):
    """The site is over the limit with no paper page left to leave out."""


_PAST_ALL = (dt.datetime.max.replace(tzinfo=dt.UTC), "")  # a boundary no paper reaches


def _key(p: Paper) -> tuple[dt.datetime, str]:
    return p.updated, p.arxiv_id


@dataclass
class PaperPages:
    """The papers that may have a page (within paper_pages_days, an id of arXiv's grammar),
    and the oldest of them that keeps it under the limit."""

    eligible: list[Paper]  # oldest first
    cfg: Config
    salt: str  # what every paper page's bytes depend on besides its data (pages.paper)
    first: tuple[dt.datetime, str] | None = None  # (updated, id) of the oldest page kept

    @classmethod
    def of(cls, papers: list[Paper], cfg: Config, salt: str) -> PaperPages:
        """Starting from the last build's boundary when it was drawn for the same limit and
        pages of the same make (a leaner template, say, may bring pages back)."""
        pages = cls(sorted((p for p in papers if p.has_page), key=_key), cfg, salt)
        record = read_record(cfg.output_path / RECORD)
        try:
            if (record.get("limit"), record.get("salt")) == (pages.limit, salt) \
                    and record.get("first"):
                when, arxiv_id = record["first"]
                pages.keep_from((dt.datetime.fromisoformat(when), str(arxiv_id)))
        except (TypeError, ValueError):
            pass  # a damaged record: start from every page, the measure decides
        return pages

    @property
    def limit(self) -> int:
        return int(self.cfg.site.max_site_mb * 1_000_000)

    @property
    def left_out(self) -> int:
        return sum(not p.has_page for p in self.eligible)

    def keep_from(self, first: tuple[dt.datetime, str] | None) -> None:
        self.first = first
        for p in self.eligible:
            p.has_page = first is None or _key(p) >= first

    def fit(self, writer: SkipUnchangedWriter) -> bool:
        """Record this pass's boundary, then measure; when over the limit, move the boundary
        past the oldest pages that cover the excess (and the headroom) and return False."""
        out = Path(writer.output_path)
        writer.put(out / RECORD, json.dumps({
            "limit": self.limit, "salt": self.salt, "left_out": self.left_out,
            "first": [self.first[0].isoformat(), self.first[1]] if self.first else None,
        }).encode(), atomic=True)
        produced = {os.path.normpath(p) for p in writer.files()}
        size = sum(os.stat(p).st_size for p in produced) + len(manifest_bytes(out, produced))
        if size <= self.limit:
            return True
        over = size - self.limit
        kept = [p for p in self.eligible if p.has_page]
        sizes = [os.stat(out / p.path).st_size for p in kept]
        if sum(sizes) < over:
            raise SiteTooLargeError(
                f"{self.cfg.path}: site.max_site_mb = {self.cfg.site.max_site_mb:g}: the site "
                f"would be {(size - sum(sizes)) / 1e6:,.1f} MB even without its "
                f"{len(kept):,} paper pages (lists, feeds and search stay whole); allowed: "
                "a larger limit, or lower [site] feed_days or feed_max_mb")
        need, cut = over + int(self.limit * HEADROOM), 0
        while cut < len(kept) and need > 0:
            need -= sizes[cut]
            cut += 1
        self.keep_from(_key(kept[cut]) if cut < len(kept) else _PAST_ALL)
        return False
