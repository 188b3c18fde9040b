"""[site] max_site_mb: the site never grows past it.

Lists, feeds and search stay whole; the oldest paper pages give way, and their papers link
to arXiv from the lists, as papers past paper_pages_days do. Each pass first renders a
sample of the paper pages in memory to estimate their bytes. When they would not all fit
even if nothing else took any room, the pass renders everything else first, measures it,
and the oldest pages give way (while the search index, the longest part, is still being
made, the build's process renders the newest pages that may be kept: those kept are not
rendered again); otherwise the paper pages render alongside the rest. At the end the
whole site is measured, and when it is over the limit, the oldest pages whose own bytes
cover the excess give way. When pages gave way the pass starts again: the writer skips
every file whose bytes did not change, and the cards, the search index and the pages
already rendered carry over (none depends on which pages are kept). The boundary is
recorded, so the next build starts from it: a rebuild of unchanged data is one pass that
writes nothing.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import Config, ConfigError
from pipeline.site._search import minutes
from pipeline.site._views import Paper
from pipeline.site._writer import SkipUnchangedWriter, manifest_bytes, read_record

RECORD = ".papertrail/budget.json"  # the limit and the oldest page kept under it
# Left free when pages are cut, so the next builds' new papers fit without a second pass:
# 1% of 950 MB is two days of all cs.* at ~5 MB a day.
HEADROOM = 0.01
# Paper pages rendered in memory to estimate the bytes of all of them: ~0.5 s, and close
# (at 200,000 papers: 463.0 MB estimated for the 55,900 pages kept, 462.8 MB written).
SAMPLE = 2000


class SiteTooLargeError(ConfigError):
    """The site is over the limit with no paper page left to leave out."""


Rank = tuple[int, str]
_PAST_ALL: Rank = (2**63, "")  # a boundary no paper reaches


def order(p: Paper) -> Rank:
    """The order in which pages give way: the oldest update first, in whole minutes as the
    search index holds times (so search.js finds the same boundary), then by id."""
    return minutes(p.updated), p.arxiv_id


def pages_from(papers: Sequence[Paper]) -> Rank | None:
    """The oldest page kept, None when no paper has a page: the search manifest's
    pages_from, from which on a paper that may have a page has one."""
    return min((order(p) for p in papers if p.has_page), default=None)


def _recorded(path: str) -> int:
    """What a paper page adds to the build's records: its line in files.json ("path",)
    and in pages.json ("path": [key of 32 digits, size, mtime of 19 digits]), both JSON
    with a line per value."""
    return 2 * len(path) + 76


def _bytes(out: Path, files: set[str]) -> int:
    """The bytes of `files` (paths under `out`) and of the manifest that lists them."""
    return sum(os.stat(p).st_size for p in files) + len(manifest_bytes(out, files))


@dataclass
class PaperPages:
    """The papers that may have a page (within paper_pages_days, an id of arXiv's grammar),
    and the oldest of them that keeps it under the limit."""

    eligible: list[Paper]  # oldest first
    cfg: Config
    salt: str  # what every paper page's bytes depend on besides its data (pages.paper)
    first: Rank | None = None  # order() of the oldest page kept

    @classmethod
    def of(cls, papers: list[Paper], cfg: Config, salt: str) -> PaperPages:
        """Starting from the last build's boundary when it was drawn for the same limit and
        pages of the same make (a leaner template, say, may bring pages back)."""
        pages = cls(sorted((p for p in papers if p.pageable), key=order), cfg, salt)
        record = read_record(cfg.output_path / RECORD)
        try:
            if (record.get("limit"), record.get("salt")) == (pages.limit, salt) \
                    and record.get("first"):
                when, arxiv_id = record["first"]
                pages.keep_from((int(when), str(arxiv_id)))
        except (TypeError, ValueError):
            pass  # a damaged record: start from every page, the measure decides
        return pages

    @property
    def limit(self) -> int:
        return int(self.cfg.site.max_site_mb * 1_000_000)

    @property
    def kept(self) -> list[Paper]:
        return [p for p in self.eligible if p.has_page]

    @property
    def left_out(self) -> int:
        return sum(not p.has_page for p in self.eligible)

    def keep_from(self, first: Rank | None) -> None:
        self.first = first
        for p in self.eligible:
            p.has_page = first is None or order(p) >= first

    def sample(self) -> list[Paper]:
        """The pages kept at every step of SAMPLE's stride, newest first: the estimate takes
        each for the step of pages older than it."""
        kept = self.kept
        return kept[::-1][::self._step(len(kept))]

    @staticmethod
    def _step(n: int) -> int:
        return max(1, math.ceil(n / SAMPLE))

    def _cut(self, kept: list[Paper], sizes: list[int], rest: int) -> int:
        """How many of the oldest pages kept give way, as estimated from `sizes` (the bytes
        of sample()'s pages), for the site to fit with the headroom free when everything
        but the paper pages takes `rest` bytes."""
        room, step = self.limit * (1 - HEADROOM) - rest, self._step(len(kept))
        for i, (p, size) in enumerate(zip(kept[::-1][::step], sizes, strict=True)):
            # the page stands for itself and the step - 1 pages older than it
            room -= min(step, len(kept) - i * step) * (size + _recorded(p.path))
            if room < 0:
                return len(kept) - i * step
        return 0

    def to_render(self, sizes: list[int]) -> list[Paper] | None:
        """The pages kept, newest first, to render while the rest of the site is (fit()
        decides then); None when they would not all fit even if the rest took no room: some
        give way, and which depends on what the rest takes (give_way())."""
        kept = self.kept
        return None if self._cut(kept, sizes, 0) else kept[::-1]

    def ahead(self, writer: SkipUnchangedWriter, sizes: list[int]) -> list[Paper]:
        """With the pages waiting and the rest rendered but for the index: the newest pages,
        newest first, that would fit if the index took no room. The pages kept will be
        among them."""
        kept = self.kept
        return kept[self._cut(kept, sizes, self._rest(writer)):][::-1]

    def give_way(self, writer: SkipUnchangedWriter, sizes: list[int]) -> None:
        """With the rest of the site rendered and the pages waiting: the oldest give way to
        what the rest took, as estimated, leaving the headroom free."""
        kept = self.kept
        rest = self._rest(writer)
        if rest > self.limit:
            self._too_large(rest, len(kept))
        cut = self._cut(kept, sizes, rest)
        self.keep_from(order(kept[cut]) if cut < len(kept) else _PAST_ALL)

    def _rest(self, writer: SkipUnchangedWriter) -> int:
        """The bytes of everything but the paper pages (some may be rendered ahead)."""
        out = Path(writer.output_path)
        pages = {os.path.normpath(out / p.path) for p in self.eligible}
        return _bytes(out, {os.path.normpath(p) for p in writer.files()} - pages)

    def fit(self, writer: SkipUnchangedWriter) -> bool:
        """Record this pass's boundary, then measure; when over the limit, move the boundary
        past the oldest pages that cover the excess (and the headroom) and return False."""
        out = Path(writer.output_path)
        writer.put(out / RECORD, json.dumps({
            "limit": self.limit, "salt": self.salt, "left_out": self.left_out,
            "first": list(self.first) if self.first else None,
        }).encode(), atomic=True)
        size = _bytes(out, {os.path.normpath(p) for p in writer.files()})
        if size <= self.limit:
            return True
        over = size - self.limit
        kept = self.kept
        sizes = [os.stat(out / p.path).st_size for p in kept]
        if sum(sizes) < over:
            self._too_large(size - sum(sizes), len(kept))
        need, cut = over + int(self.limit * HEADROOM), 0
        while cut < len(kept) and need > 0:
            need -= sizes[cut]
            cut += 1
        self.keep_from(order(kept[cut]) if cut < len(kept) else _PAST_ALL)
        return False

    def _too_large(self, rest: int, pages: int) -> None:
        raise SiteTooLargeError(
            f"{self.cfg.path}: site.max_site_mb = {self.cfg.site.max_site_mb:g}: the site "
            f"would be {rest / 1e6:,.1f} MB even without its {pages:,} paper pages (lists, "
            "feeds and search stay whole); allowed: a larger limit, or lower [site] "
            "feed_days or feed_max_mb")
