"""[site] max_site_mb: the site never grows past it.

Lists, feeds and search stay whole; the oldest paper pages turn light (pages.paper): each
keeps its address, and its article waits in a shard its script fetches. When even light
pages do not all fit (a store of years), the oldest are left out: their papers link to
arXiv, as papers past paper_pages_days do. Each pass first
renders a sample of the pages in memory, full and light, to estimate their bytes. When the
full pages might not fit beside everything else (taken to be REST_SHARE of the limit, unless
the last build drew the boundary), the pass renders everything else first, measures it,
and the oldest turn light; while the search index, the
longest part, is still being made, the build's process renders the light pages so far and
their shards, then the newest pages that may stay full (none is rendered again). Otherwise
the paper pages render alongside the rest. At the end the whole site is measured, and when
it is over the limit, the oldest full pages whose bytes (less their light page's) cover
the excess turn light; when it fits with pages left out, as many of them as the room
holds, at what the light pages took as written, come back (in at most two passes: the
sample's estimate of a light page with its share of a shard runs high). When pages
turned light (or came back) the pass starts again: the paper pages already rendered, the
search index and everything else but the sources page carry over (none depends on which
pages are light), unless pages were left out: the rest links them elsewhere. The
boundaries are recorded, so the next build starts from them: a rebuild of unchanged data
is one pass that writes nothing.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.config import Config, ConfigError
from pipeline.site.index.search import minutes
from pipeline.site.model.views import PageKind, Pages, Paper
from pipeline.site.pages.paper import SHARDS, Shards, shard
from pipeline.site.writer import SkipUnchangedWriter, manifest_bytes, read_record, relative

RECORD = ".papertrail/budget.json"  # the limit, the oldest full page and the oldest page
# Left free when pages turn light, so the next builds' new papers fit without a second pass:
# 1% of 950 MB is two days of all cs.* at ~5 MB a day.
HEADROOM = 0.01
# Paper pages rendered in memory, full and light, to estimate the bytes of all of them:
# ~1 s, and close (docs/SCALE.md).
SAMPLE = 2000
# Before the rest of the site is measured, the paper pages render alongside it only when
# they would fit with the rest this share of the limit (or the last build drew the
# boundary). At a year of cs.* the full pages fit alone, the rest then took 43% of 950 MB,
# and 71,000 pages were made full, then light (37 s); waiting costs two cores nothing, as
# the index's worker keeps the second busy while the rest renders.
REST_SHARE = 0.5
# Passes that may give back pages left out, from what the light pages took as written: the
# pages given back are the oldest light, whose shards may be new, so a second pass measures
# again.
BRING_BACK_PASSES = 2


class SiteTooLargeError(ConfigError):
    """The site is over the limit with no paper page left to leave out."""


Rank = tuple[int, str]
_PAST_ALL: Rank = (2**63, "")  # a boundary no paper reaches


def order(p: Paper) -> Rank:
    """The order in which pages turn light, then give way: the oldest update first, in
    whole minutes as the search index holds times (so search.js finds the same boundary),
    then by id."""
    return minutes(p.updated), p.arxiv_id


def pages_from(paged: Sequence[Paper]) -> Rank | None:
    """The oldest of the papers with a page, None when none has: the search manifest's
    pages_from, from which on a paper that may have a page has one."""
    return min(map(order, paged), default=None)


def _recorded(path: str) -> int:
    """What a paper page adds to the build's records: its line in files.json ("path",) and
    its lines in pages.json ("path": ["key of 32 digits", size, mtime of 19 digits],), both
    JSON with a line between values (writer.LINES)."""
    return 2 * len(path) + 74


def _bytes(out: Path, files: dict[str, int]) -> int:
    """The bytes of `files` (paths under `out`: bytes) and of the manifest that lists
    them."""
    return sum(files.values()) + len(manifest_bytes(out, set(files)))


@dataclass
class PaperPages:
    """The papers that may have a page (within paper_pages_days, an id of arXiv's grammar),
    the oldest of them with a page and the oldest whose page is full, for the site to fit:
    older pages are light, older still left out."""

    eligible: list[Paper]  # oldest first
    cfg: Config
    salt: str  # the code and globals that render every paper page (pages.paper.salt)
    first: Rank | None = None  # order() of the oldest full page
    paged: Rank | None = None  # order() of the oldest page (None: every paper has one)
    # From sample()'s bytes (estimate()): every page light, and each sampled page's full
    # page less its light one.
    all_light: float = 0.0
    more: list[int] = field(default_factory=list)
    ranges: Shards = field(default_factory=dict)  # every paper by its shard, by id
    pages: Pages = field(default_factory=Pages)  # light and left out, anew by keep_from()
    _brought_back: int = 0  # passes that gave back pages left out, from the measure
    # The boundaries were drawn from a measure: the last build's (for this limit and make),
    # or this one's (give_way(), fit()).
    measured: bool = False

    @classmethod
    def of(cls, papers: list[Paper], cfg: Config, salt: str) -> PaperPages:
        """Starting from the last build's boundary when it was drawn for the same limit and
        pages of the same make (a leaner template, say, may bring full pages back)."""
        pages = cls(sorted((p for p in papers if p.pageable), key=order), cfg, salt)
        for p in sorted(pages.eligible, key=lambda p: p.arxiv_id):
            pages.ranges.setdefault(shard(p.arxiv_id), []).append(p)
        record = read_record(cfg.output_path / RECORD)
        try:
            if (record.get("limit"), record.get("salt")) == (pages.limit, salt):
                pages.keep_from(*(None if record.get(k) is None else
                                  (int(record[k][0]), str(record[k][1])) for k in
                                  ("first", "paged")))
                pages.measured = True
        except (TypeError, ValueError, IndexError, KeyError):
            pass  # a damaged record: start from every page full, the measure decides
        return pages

    @property
    def limit(self) -> int:
        return int(self.cfg.site.max_site_mb * 1_000_000)

    @property
    def full(self) -> list[Paper]:
        return [p for p in self.eligible if self.pages.kind(p) is PageKind.FULL]

    @property
    def light(self) -> list[Paper]:
        return [p for p in self.eligible if self.pages.kind(p) is PageKind.LIGHT]

    @property
    def left_out(self) -> int:
        return len(self.pages.left_out)

    def keep_from(self, first: Rank | None, paged: Rank | None = None) -> None:
        """Pages from `paged` on (all when None), full from `first` on (all when None)."""
        self.first, self.paged = first, paged
        left_out = {p.arxiv_id for p in self.eligible if paged is not None and order(p) < paged}
        self.pages = Pages(frozenset(p.arxiv_id for p in self.eligible if first is not None
                                     and order(p) < first and p.arxiv_id not in left_out),
                           frozenset(left_out))

    def _turn(self, cut: int, drop: int = 0) -> None:
        """The oldest `cut` of the full pages turn light, and the oldest `drop` of the pages
        are left out (none of those already left out gets its page back)."""
        full = self.full
        first = order(full[cut]) if cut < len(full) else _PAST_ALL
        paged = self.paged
        if drop:
            paged = max(paged or order(self.eligible[0]), order(self.eligible[drop]))
        self.keep_from(first, paged)

    def sample(self) -> list[Paper]:
        """Every page at SAMPLE's stride, newest first: the estimate takes each for the
        step of pages older than it."""
        return self.eligible[::-1][::self._step()]

    def shards(self) -> Shards:
        """The shards a light page needs: each holds every paper of its range."""
        return {name: papers for name, papers in self.ranges.items()
                if any(self.pages.kind(p) is PageKind.LIGHT for p in papers)}

    def per_shard(self) -> int:
        """How many papers a shard holds on average."""
        return max(1, round(len(self.eligible) / max(1, len(self.ranges))))

    def estimate(self, sizes: list[tuple[int, int]]) -> None:
        """Take sample()'s bytes, (full, light with its share of a shard) a page."""
        step, n = self._step(), len(self.eligible)
        self.all_light = sum(min(step, n - i * step) * (light + _recorded(p.path))
                             for i, (p, (_, light)) in enumerate(zip(self.sample(), sizes,
                                                                     strict=True)))
        self.more = [full - light for full, light in sizes]

    def _step(self) -> int:
        return max(1, math.ceil(len(self.eligible) / SAMPLE))

    def _cut(self, rest: int) -> tuple[int, int]:
        """How many of the oldest full pages turn light, and how many of the oldest pages
        are left out (when even light ones do not all fit), as estimated, for the site to
        fit with the headroom free when everything but the paper pages takes `rest`
        bytes."""
        full, step = len(self.full), self._step()
        room = self.limit * (1 - HEADROOM) - rest - self.all_light
        if room < 0:
            return full, math.ceil(-room / self._light_each())
        # the newest pages are full: sampled page i stands for itself and the step - 1
        # pages older than it
        for i, more in enumerate(self.more):
            if i * step >= full:
                break
            room -= min(step, full - i * step) * more
            if room < 0:
                return full - i * step, 0
        return 0, 0

    def _light_each(self) -> float:
        """A light page's bytes with its share of a shard, on average as sampled."""
        return self.all_light / max(1, len(self.eligible))

    def to_render(self) -> list[Paper] | None:
        """The full pages, newest first, to render while the rest of the site is (fit()
        decides then); None when they might not all fit beside the rest (REST_SHARE): some
        may turn light, and which depends on what the rest takes (give_way())."""
        rest = 0 if self.measured else int(self.limit * REST_SHARE)
        return None if self._cut(rest) != (0, 0) else self.full[::-1]

    def light_at_least(self) -> None:
        """Before the rest of the site is measured: the oldest full pages that turn light
        even if the rest took no room turn light now (give_way() can only turn more)."""
        self._turn(self._cut(0)[0])

    def give_way(self, writer: SkipUnchangedWriter) -> None:
        """With the rest of the site rendered and the pages waiting: the oldest turn light
        for what the rest took, as estimated, leaving the headroom free. Called while the
        index is still being made too: it can only turn more light."""
        rest = self._rest(writer)
        if rest > self.limit:
            raise _too_large(self.cfg, len(self.eligible), rest)
        cut, drop = self._cut(rest)
        self._turn(cut, min(drop, len(self.eligible) - 1))
        self.measured = True

    def _rest(self, writer: SkipUnchangedWriter) -> int:
        """The bytes of everything but the paper pages and shards (some may be rendered
        ahead)."""
        out = Path(writer.output_path)
        pages = {p.path for p in self.eligible}
        return _bytes(out, {path: size for path, size in writer.files().items()
                            if (name := relative(path, out)) not in pages
                            and not name.startswith(SHARDS)})

    def fit(self, writer: SkipUnchangedWriter) -> bool:
        """Record this pass's boundary, then measure; when over the limit, move the boundary
        past the oldest full pages that cover the excess (and the headroom) and return
        False."""
        out = Path(writer.output_path)
        writer.put(out / RECORD, json.dumps({
            "limit": self.limit, "salt": self.salt, "light": len(self.light),
            "left_out": self.left_out, "first": list(self.first) if self.first else None,
            "paged": list(self.paged) if self.paged else None,
        }).encode(), atomic=True)
        files = {os.path.normpath(p): size for p, size in writer.files().items()}
        size = _bytes(out, files)
        self.measured = True
        if size <= self.limit:
            return not self._bring_back(out, files, size)
        need, full, each = float(size - self.limit * (1 - HEADROOM)), self.full, self._light_each()
        # what turning each light saves: its full page, less a light page as sampled; then
        # what leaving out each light one saves
        saved = [files[os.path.normpath(out / p.path)] - each for p in full]
        cut = 0
        while cut < len(full) and need > 0:
            need -= saved[cut]
            cut += 1
        paged = [p for p in self.eligible if self.pages.has(p)]
        drop = len(self.eligible) - len(paged) + max(0, math.ceil(need / each))
        if drop >= len(self.eligible):
            raise _too_large(self.cfg, len(self.eligible), size - sum(saved) - each * len(paged))
        self._turn(cut, drop if need > 0 else 0)
        return False

    def _bring_back(self, out: Path, files: dict[str, int], size: int) -> bool:
        """Up to BRING_BACK_PASSES a build, when pages were left out and the site fits: give
        back as many of the newest left out as the room (less the headroom) holds, each at
        what a light page took as written with its share of the shards (the sample's
        estimate runs high). True when some came back: the pass starts again."""
        light, left_out = self.light, self.left_out
        if self._brought_back >= BRING_BACK_PASSES or not (left_out and light):
            return False
        self._brought_back += 1
        written = (sum(files[os.path.normpath(out / p.path)] + _recorded(p.path)
                       for p in light)
                   + sum(b for f, b in files.items() if relative(f, out).startswith(SHARDS)))
        back = min(left_out, int((self.limit * (1 - HEADROOM) - size) / (written / len(light))))
        if back <= 0:
            return False
        self.keep_from(self.first, order(self.eligible[left_out - back]))
        return True


def _too_large(cfg: Config, pages: int, rest: float) -> SiteTooLargeError:
    return SiteTooLargeError(
        f"{cfg.path}: site.max_site_mb = {cfg.site.max_site_mb:g}: the site would be "
        f"{rest / 1e6:,.1f} MB even without its {pages:,} paper pages (lists, feeds and "
        "search stay whole); allowed: a larger limit, or lower [site] feed_days or "
        "feed_max_mb")
