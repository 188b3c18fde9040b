"""Paper pages, the bulk of the site: rendered in chunks by worker processes, each page
only when its inputs changed since it was last rendered (the key cache, pages.json).

A page is full, or light when [site] max_site_mb has no room for every page in full
(site.budget): then it holds its title and arXiv link, and its article and citation tags wait
in a gzipped shard with those of up to 99 other papers (shard()), ~0.9 KB a paper where
its full page is ~5 KB. app.js fetches the shard and puts them in place."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pipeline
from pipeline.site.model.data import SiteData
from pipeline.site.model.views import PageKind, Paper
from pipeline.site.output import Output
from pipeline.site.render.feeds import FeedSpec
from pipeline.site.workers import Task
from pipeline.site.writer import LINES, gzipped, read_record, stamp

CHUNK = 1000  # paper pages per worker task
CACHE = ".papertrail/pages.json"  # per file: its inputs' key, the file's stamp
SHARDS = "paper/shards/"  # where light pages' articles wait (see shard())

Entry = tuple[str, str]  # a paper page's meta and main blocks


def shard(arxiv_id: str) -> str:
    """The file a light page's article waits in: named by its id but the last two digits,
    so a shard holds at most 100 papers (~40 of cs.*'s in a month of arXiv's numbering),
    the page's script finds it from the id alone, and a paper's shard never moves."""
    return f"{SHARDS}{arxiv_id[:-2]}.json.gz"


Shards = dict[str, list[Paper]]  # by name, every paper of its range, by id
PageKey = list[str | int]  # [key, size, mtime in ns] of a page file (see _fresh)


def tasks(site: SiteData, out: Output, full: list[Paper], rendered: dict[str, PageKey],
          salt: str, shards: Shards) -> list[Task]:
    """render_light over the `shards` (in chunks of whole shards), then render_chunk over
    spans of `full` (in their order), with what every chunk reads: the keys of files
    rendered before (by the last build, or by an earlier pass of this one) and what every
    page depends on besides its own data."""
    old = {**read_record(out.root / CACHE), **rendered}
    made: list[Task] = []
    chunk: list[tuple[str, list[Paper]]] = []
    size = 0
    for name in sorted(shards):
        chunk.append((name, shards[name]))
        size += len(shards[name])
        if size >= CHUNK:
            made.append((render_light, (chunk, old, salt)))
            chunk, size = [], 0
    if chunk:
        made.append((render_light, (chunk, old, salt)))
    return made + [(render_chunk, (full[a:a + CHUNK], old, salt))
                   for a in range(0, len(full), CHUNK)]


def render_chunk(site: SiteData, out: Output, papers: list[Paper], old: dict[str, PageKey],
                 salt: str) -> dict[str, PageKey]:
    """The full pages of `papers` whose key changed; returns every page's [key, size,
    mtime]."""
    keys: dict[str, PageKey] = {}
    for paper in papers:
        _fresh(out, paper.path, _keys(salt, out, paper)(site.pages.kind(paper)), old, keys,
               functools.partial(render_one, site, out, paper))
    return keys


def render_light(site: SiteData, out: Output, shards: list[tuple[str, list[Paper]]],
                 old: dict[str, PageKey], salt: str) -> dict[str, PageKey]:
    """These shards and the light pages of their papers, each made again only when its key
    changed. A shard holds every paper of its range, light or not, so that its bytes do
    not depend on where the boundary is, and its key is made so (a build renders the
    shards of the oldest pages while it still measures how many more turn light)."""
    keys: dict[str, PageKey] = {}
    for name, members in shards:
        kinds = [_keys(salt, out, paper) for paper in members]
        for paper, key in zip(members, kinds, strict=True):
            if site.pages.kind(paper) is PageKind.LIGHT:
                _fresh(out, paper.path, key(PageKind.LIGHT), old, keys,
                       functools.partial(_render_light, site, out, paper))
        made = _hash("".join(key(PageKind.FULL) for key in kinds))
        _fresh(out, name, made, old, keys, functools.partial(_render_shard, out, name, members))
    return keys


def _render_light(site: SiteData, out: Output, paper: Paper) -> list[int]:
    return out.writer.put(out.root / paper.path, light_html(site, out, paper).encode("utf-8"))


def _render_shard(out: Output, name: str, papers: list[Paper]) -> list[int]:
    return out.writer.put(out.root / name, _gzip({p.arxiv_id: entry(out, p) for p in papers}))


def _fresh(out: Output, path: str, key: str, old: dict[str, PageKey], keys: dict[str, PageKey],
           make: Callable[[], list[int]]) -> None:
    """Keep the file at `path` when the cache saw it made from `key`, else make it (`make`
    returns its stamp); note its [key, size, mtime] in `keys`. A file is trusted only while
    it is the one the cache saw written: a build killed after rewriting it (in another
    language, say) leaves a file with another stamp, and it is made again."""
    target = out.root / path
    recorded = old.get(path)
    seen = stamp(target) if recorded else None  # none recorded (a first build): no stat
    if seen and recorded == [key, *seen]:
        out.writer.keep(target, seen[0])
    else:
        seen = make()
    keys[path] = [key, *seen]


def _keys(salt: str, out: Output, paper: Paper) -> Callable[[PageKind], str]:
    """The key of the paper's page of a kind (full, light: a page that turns light, or
    back, is made again): what renders it (salt()) and its template's context, the one its
    render gets (_context), so nothing it shows can change and leave the key as it was.
    The paper in it by its fields: the page says whether it has similar papers, not which
    (search.js lists them). The context's text is made once for both kinds: a light page
    and its full article in a shard each need theirs."""
    seen = {**vars(paper), "similar": bool(paper.similar)}
    text = salt + out.context_text({**_context(out, paper), "p": seen})
    made = hashlib.blake2b(text.encode(), digest_size=16)

    def key(kind: PageKind) -> str:
        of_kind = made.copy()
        of_kind.update(kind.encode())
        return of_kind.hexdigest()
    return key


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _gzip(entries: dict[str, Entry]) -> bytes:
    """A shard: {id: [meta, main]}, gzipped (Pages serves it as is: it counts as stored).
    The same entries give the same bytes (no time in the gzip header). In ASCII, other
    characters escaped: json's encoder of text that may hold any character took 5.1 ms a
    shard of 100 papers, its ASCII one 1.8 ms, and the shard gzips 0.5% smaller."""
    text = json.dumps(entries, separators=(",", ":"), sort_keys=True)
    return gzipped(text.encode("ascii"))


def render_one(site: SiteData, out: Output, paper: Paper) -> list[int]:
    return out.writer.put(out.root / paper.path, html(site, out, paper).encode("utf-8"))


def html(site: SiteData, out: Output, paper: Paper) -> str:
    """The full page: its meta and main blocks in the chrome rendered once."""
    return _page(out, paper, entry(out, paper))


def light_html(site: SiteData, out: Output, paper: Paper) -> str:
    """The light page: its title and arXiv link, the rest in its shard (app.js)."""
    return out.light_page(paper, page_feeds(out, paper))


def entry(out: Output, paper: Paper) -> Entry:
    """What a full page holds and a light one fetches: its meta and main blocks."""
    template = out.template("paper.html")
    blocks = out.new_context(template, _context(out, paper))
    meta, main = ("".join(template.blocks[b](blocks)) for b in ("meta", "main"))
    return meta, main


def _context(out: Output, paper: Paper) -> dict[str, Any]:
    """What its template renders from, and its key is made of: its links to itself in the
    other languages among it, so a page whose counterpart comes or goes is made again."""
    return out.context("../" * paper.path.count("/"), page_feeds(out, paper), p=paper,
                       langs=out.langs(paper.path))


def _page(out: Output, paper: Paper, blocks: Entry) -> str:
    if not paper.title:  # base.html leaves out the title's separator then
        return out.template("paper.html").render({**_context(out, paper),
                                                  "title": paper.title_text})
    meta, main = blocks
    return out.in_chrome(paper.path, paper.title_text, meta, main, page_feeds(out, paper))


def sizes(site: SiteData, out: Output, papers: list[Paper], per_shard: int
          ) -> list[tuple[int, int]]:
    """The bytes of these papers' full pages and of their light pages with their share of a
    shard, rendered in memory (see budget.PaperPages.sample): the entries gzipped in
    groups of `per_shard`, as many as a shard holds on average."""
    full, light, entries = [], [], []
    for p in papers:
        made = entry(out, p)
        full.append(len(_page(out, p, made).encode("utf-8")))
        light.append(len(light_html(site, out, p).encode("utf-8")))
        entries.append((p.arxiv_id, made))
    shares = []
    for a in range(0, len(entries), per_shard):
        group = entries[a:a + per_shard]
        shares += [len(_gzip(dict(group))) / len(group)] * len(group)
    return [(page, round(shell + share))
            for page, shell, share in zip(full, light, shares, strict=True)]


def page_feeds(out: Output, paper: Paper) -> tuple[FeedSpec, ...]:
    """The feeds a paper page links: all new papers, and its primary category's when the
    site has one (a code outside arXiv's taxonomy has no feed). Two, not the site's
    eight: on 20,000 pages the other six cost megabytes."""
    everything, primary = out.feed_specs["all"], out.feed_specs.get(f"category/{paper.primary}")
    return (everything,) if primary is None else (everything, primary)


def save_keys(out: Output, keys: Iterable[dict[str, PageKey]]) -> None:
    """Written once every page is (and atomically): a build that fails midway must not
    record keys of pages it never wrote."""
    merged = {path: key for chunk in keys for path, key in chunk.items()}
    text = json.dumps(merged, sort_keys=True, separators=LINES)
    out.writer.put(out.root / CACHE, text.encode(), atomic=True)


def salt(out: Output) -> str:
    """What renders every page from its context: the code (the templates, every module of
    the package: filters, a Paper's properties, TeX, diffs, change notes; Jinja and
    MarkupSafe) and the templates' globals that are data."""
    code = [*sorted((out.site.theme / "templates").iterdir()),
            *sorted(Path(pipeline.__file__).parent.rglob("*.py"))]
    parts = [path.read_bytes() for path in code if path.is_file()]
    parts += [version(name).encode() for name in ("jinja2", "markupsafe")]
    parts.append(repr({k: v for k, v in out.env.globals.items() if not callable(v)}).encode())
    return hashlib.blake2b(b"\0".join(parts), digest_size=16).hexdigest()
