"""The site build against hostile stores, killed builds and folders it does not own."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from unittest.mock import ANY

import feedparser
import pyarrow as pa
import pytest

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline.site.writer import SkipUnchangedWriter, UnsafePathError, stamp
from pipeline.store import Store
from tests.support.site import DAYS, add_digest, build_at_last_run, make_config, run_pipeline

pytestmark = pytest.mark.slow  # builds sites, kills builds

REPO = Path(__file__).resolve().parents[1]
CONTROLS = "\x00\x01\x08\x0b\x0c\x0e\x1b\x1f\x7f\x80\x85\x9f\ufffe\uffff"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_FORBIDDEN = re.compile(f"[{CONTROLS}{BIDI}\r\ud800-\udfff]")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _site(root: Path) -> dict[str, bytes]:
    """The site's files, not the build's own records (.papertrail/ holds file times)."""
    return {k: v for k, v in _files(root).items() if not k.startswith(".papertrail/")}


def _rewrite_papers(store: Store, change) -> list[dict]:
    table = store.read("papers")
    rows = table.to_pylist()
    change(rows)
    store.write("papers", pa.Table.from_pylist(rows, schema=table.schema))
    return rows


def _last_run(store: Store) -> dt.datetime:
    return max(r["finished"] for r in store.read("runs").to_pylist())


# -- (a) stale files: only what a build made ------------------------------------------------------


def test_a_file_no_build_made_survives_and_a_page_no_longer_made_is_removed(tmp_path):
    cfg = make_config(tmp_path)
    store = run_pipeline(cfg, DAYS[:1])
    build_at_last_run(cfg)
    out = cfg.output_path
    pages = sorted((out / "paper").glob("*.html"))
    assert pages
    foreign = {out / "notes.txt": b"mine", out / "paper" / "draft.html": b"<p>mine</p>",
               out / "data" / "papers.parquet": b"PAR1", out / ".keep": b""}
    for path, data in foreign.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # 400 days on, every paper is past paper_pages_days: its page is no longer made.
    report = build_mod.build(cfg, now=_last_run(store) + dt.timedelta(days=400))
    assert not any(p.exists() for p in pages)
    assert report.removed >= len(pages)
    assert {p: p.read_bytes() for p in foreign} == foreign
    assert (out / "index.html").is_file()


# -- (b) a killed build leaves nothing the next one keeps ------------------------------------------

# Runs a build in a child process and kills it (os._exit: no cleanup, no finally) right
# after it wrote its Nth file whose path contains the given part.
_KILLER = """
import datetime as dt, os, sys
from pipeline import build, config
from pipeline.site import writer as _writer

cfg_path, now, part, n = sys.argv[1:]
real, count = _writer.SkipUnchangedWriter.put, [0]

def put(self, path, data, **kw):
    written = real(self, path, data, **kw)
    if part in str(path):
        count[0] += 1
        if count[0] >= int(n):
            os._exit(9)
    return written

_writer.SkipUnchangedWriter.put = put
build.build(config.load(cfg_path), now=dt.datetime.fromisoformat(now))
sys.exit("the build finished before it was killed")
"""


def _config(root: Path, language: str, output: str = "out") -> config_mod.Config:
    """One process (build_jobs = 1): a worker killed alone would leave its pool waiting."""
    path = root / f"papertrail-{language}-{Path(output).name}.toml"
    path.write_text(f'[store]\npath = "data"\n[site]\nlanguage = "{language}"\n'
                    f'output = "{output}"\nbuild_jobs = 1\n', encoding="utf-8")
    return config_mod.load(path)


# Killed amid the paper pages, amid the search index, and right after theme/ui.js (the
# killed build's language in it).
@pytest.mark.parametrize("part, n", [("/paper/", 5), ("/search/", 5), ("/theme/ui.js", 1)])
def test_a_build_killed_midway_leaves_no_page_the_next_build_keeps(tmp_path, part, n):
    en = _config(tmp_path, "en")
    store = run_pipeline(en, DAYS[:2])
    now = _last_run(store)
    build_mod.build(en, now=now)
    original = store.read("papers")

    # The killed build: another language, and every title changed (so the index differs).
    zh = _config(tmp_path, "zh-CN")
    _rewrite_papers(store, lambda rows: [r.update(title=r["title"] + " (killed)") for r in rows])
    child = subprocess.run([sys.executable, "-c", _KILLER, str(zh.path), now.isoformat(), part,
                            str(n)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert child.returncode == 9, child.stderr

    store.write("papers", original)
    build_mod.build(en, now=now)
    clean = _config(tmp_path, "en", output="clean")
    build_mod.build(clean, now=now)
    assert _site(en.output_path) == _site(clean.output_path)


def _limited(root: Path, output: str, max_site_mb: float) -> config_mod.Config:
    path = root / f"papertrail-{output}.toml"
    path.write_text(f'[store]\npath = "data"\n[site]\noutput = "{output}"\nbuild_jobs = 1\n'
                    f"max_site_mb = {max_site_mb}\n", encoding="utf-8")
    return config_mod.load(path)


def _a_day_and_a_limit_for_some_light_pages(root: Path) -> tuple[dt.datetime, float]:
    """A store of the sample's first day: its last run, and a max_site_mb under which about
    half its paper pages turn light."""
    full = _limited(root, "full", 10_000)
    now = _last_run(run_pipeline(full, DAYS[:1]))
    build_mod.build(full, now=now)
    whole = sum(len(v) for v in _files(full.output_path).values())
    pages = sum(len(v) for k, v in _files(full.output_path).items() if k.startswith("paper/"))
    return now, (whole - pages / 4) / 1e6


# Killed after the first pass's lists (no paper page yet), amid its paper pages (some of
# them to turn light), after the second pass's sources page (the pages to turn light not
# yet rewritten), after a light page's shard, amid the light pages and shards, and after
# the record of the boundary (before the manifest).
@pytest.mark.parametrize("part, n", [("sitemap.xml", 1), ("/paper/", 3),
                                     ("sources/index.html", 2),
                                     ("/paper/shards/", 1), ("/paper/shards/", 3),
                                     ("budget.json", 1)])
def test_a_build_killed_while_fitting_max_site_mb_leaves_what_an_uninterrupted_one_makes(
        tmp_path, part, n):
    now, limit = _a_day_and_a_limit_for_some_light_pages(tmp_path)
    killed = _limited(tmp_path, "out", limit)
    child = subprocess.run([sys.executable, "-c", _KILLER, str(killed.path), now.isoformat(),
                            part, str(n)], cwd=REPO, capture_output=True, text=True,
                           timeout=300)
    assert child.returncode == 9, child.stderr

    report = build_mod.build(killed, now=now)
    clean = _limited(tmp_path, "clean", limit)
    assert build_mod.build(clean, now=now).light == report.light > 0
    assert _site(killed.output_path) == _site(clean.output_path)
    assert sum(len(v) for v in _files(killed.output_path).values()) <= limit * 1e6


# Killed, with its workers, as its own process renders pages while the pages wait for the
# rest to be measured, the index too (see generator.render_site): forced here, as a day's
# sample never waits, and the index slowed so that the pages render meanwhile. At the first
# such page, or once they are all on disk (those to turn light too), as the boundary is drawn
# again with the index measured.
_WAITING_KILLER = """
import datetime as dt, os, sys, time
from pipeline import build, config
from pipeline.site import budget as _budget
from pipeline.site.index import search as _search
from pipeline.site import writer as _writer

cfg_path, now, at = sys.argv[1:]
real, build_index = _writer.SkipUnchangedWriter.put, _search.build_index
main, to_render, forced = os.getpid(), _budget.PaperPages.to_render, []
real_give_way, drawn = _budget.PaperPages.give_way, []

def put(self, path, data, **kw):
    written = real(self, path, data, **kw)
    if at == "page" and "/paper/" in str(path) and os.getpid() == main:
        os.killpg(0, 9)
    return written

def give_way(self, writer):
    drawn.append(True)
    if at == "give_way" and len(drawn) == 2:
        os.killpg(0, 9)
    real_give_way(self, writer)

def slow_index(*args, **kwargs):
    time.sleep(5)
    return build_index(*args, **kwargs)

def waiting_once(self):
    if forced:
        return to_render(self)
    forced.append(True)

_writer.SkipUnchangedWriter.put = put
_budget.PaperPages.give_way = give_way
_search.build_index = slow_index
_budget.PaperPages.to_render = waiting_once
build.build(config.load(cfg_path), now=dt.datetime.fromisoformat(now))
sys.exit("the build finished before it was killed")
"""


@pytest.mark.parametrize("at", ["page", "give_way"])
def test_a_build_killed_amid_the_pages_it_renders_while_they_wait_leaves_no_trace(
        tmp_path, at):
    now, limit = _a_day_and_a_limit_for_some_light_pages(tmp_path)
    killed = _limited(tmp_path, "out", limit)
    killed.path.write_text(killed.path.read_text("utf-8").replace("build_jobs = 1",
                                                                   "build_jobs = 2"))
    child = subprocess.run([sys.executable, "-c", _WAITING_KILLER, str(killed.path),
                            now.isoformat(), at], cwd=REPO, capture_output=True, text=True,
                           timeout=300, start_new_session=True)
    assert child.returncode == -9, child.stderr
    on_disk = len(list((killed.output_path / "paper").glob("*.html")))

    report = build_mod.build(killed, now=now)
    clean = _limited(tmp_path, "clean", limit)
    assert build_mod.build(clean, now=now).light == report.light > 0
    assert _site(killed.output_path) == _site(clean.output_path)
    assert on_disk == 1 if at == "page" else on_disk > 1


def test_a_page_only_a_killed_build_made_is_removed_by_the_next_build(tmp_path):
    en = _config(tmp_path, "en")
    store = run_pipeline(en, DAYS[:1])
    now = _last_run(store)
    build_mod.build(en, now=now)
    original = store.read("papers")
    (en.output_path / "notes.txt").write_text("mine", encoding="utf-8")
    # The killed build renders one page more (first), and dies before its manifest.
    _rewrite_papers(store, lambda rows: rows.insert(0, {**rows[0], "arxiv_id": "0704.0001"}))
    child = subprocess.run([sys.executable, "-c", _KILLER, str(en.path), now.isoformat(),
                            "/paper/", "1"], cwd=REPO, capture_output=True, text=True,
                           timeout=300)
    assert child.returncode == 9, child.stderr
    extra = en.output_path / "paper" / "0704.0001.html"
    assert extra.is_file()

    store.write("papers", original)
    build_mod.build(en, now=now)
    assert not extra.exists()
    assert (en.output_path / "notes.txt").read_text("utf-8") == "mine"


# -- (c) ids and categories never become paths outside output/ ------------------------------------


def test_an_id_or_category_climbing_with_dots_writes_nothing_outside_the_output(tmp_path):
    cfg = make_config(tmp_path)
    store = run_pipeline(cfg, DAYS[:1])
    decoy = tmp_path / "theme" / "templates" / "base.html"  # where ../../ leads from out/paper
    decoy.parent.mkdir(parents=True)
    decoy.write_text("{{ decoy }}", encoding="utf-8")

    def evil(rows: list[dict]) -> None:
        rows.append({**rows[0], "arxiv_id": "../../theme/templates/base",
                     "categories": ["../x", "cs.CV"], "primary_category": "../x"})
        # an old-style id is a path too, one level deeper (its slash kept: arXiv's own URLs)
        # (cross-listed to cs.CV: in the site's scope)
        rows.append({**rows[0], "arxiv_id": "math.GT/0309136",
                     "categories": ["math.GT", "cs.CV"], "primary_category": "math.GT"})

    _rewrite_papers(store, evil)
    theme = {p: hashlib.sha256(p.read_bytes()).hexdigest()
             for p in (REPO / "theme").rglob("*") if p.is_file()}
    outside = {k: v for k, v in _files(tmp_path).items() if not k.startswith("out/")}
    build_at_last_run(cfg)
    assert {k: v for k, v in _files(tmp_path).items() if not k.startswith("out/")} == outside
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (REPO / "theme").rglob("*") if p.is_file()} == theme
    out = cfg.output_path
    assert not (out / "x").exists() and not (out / "feeds" / "x.atom.xml").exists()
    listing = (out / "library" / "updated" / "all" / "index.html").read_text("utf-8")
    assert "../../theme/templates/base" in listing  # shown, as text
    assert "category/../x" not in listing and "paper/../../theme" not in listing
    assert (out / "category" / "cs.CV" / "index.html").is_file()
    old_style = (out / "paper" / "math.GT" / "0309136.html").read_text("utf-8")
    assert 'href="../../theme/style.css"' in old_style
    assert 'href="../../category/cs.CV/"' in old_style


def test_an_output_folder_holding_the_theme_is_refused(tmp_path):
    inside = REPO / "theme" / "templates" / "_test_output"
    try:
        with pytest.raises(config_mod.ConfigError, match="theme"):
            _config(tmp_path, "en", output=str(inside))
        # A Config changed in memory (as the demo changes one) is refused by the build.
        cfg = _config(tmp_path, "en")
        moved = dataclasses.replace(cfg, site=dataclasses.replace(cfg.site, output=inside))
        with pytest.raises(config_mod.ConfigError, match="theme"):
            build_mod.build(moved)
        assert not inside.exists()
    finally:
        shutil.rmtree(inside, ignore_errors=True)  # only there if the refusal failed


# -- (d, e) any stored string renders, as text --------------------------------------------------

# A lone surrogate as a store holds one: its WTF-8 bytes, which are not UTF-8.
_SURROGATE_BYTES = b"lone \xed\xa0\x80 surrogate"


def _with_raw_bytes(table: pa.Table, column: str, row: int, raw: bytes) -> pa.Table:
    values = [v.encode("utf-8") if v is not None else None for v in table[column].to_pylist()]
    values[row] = raw
    array = pa.array(values, pa.binary()).view(pa.string())  # not checked as UTF-8 here
    return table.set_column(table.schema.get_field_index(column), column, array)


def _site_with(root: Path, junk: str) -> tuple[Path, str]:
    """A built site whose first paper, its digest and the last run carry `junk` in every
    text field; returns (output folder, that paper's id)."""
    cfg = make_config(root)
    store = run_pipeline(cfg, DAYS[:1])
    rows = _rewrite_papers(store, lambda rows: rows[0].update(
        title=f"Hostile{junk} title", authors=[f"\u202eEve{junk}", f"Nul{junk}l"],
        abstract=f"An abstract{junk}\r\nwith\tcontrols.", comment=f"a comment{junk}"))
    target = rows[0]["arxiv_id"]
    add_digest(store, target, rows[0]["version"], _last_run(store), f"tl;dr{junk}")
    store.append_run({"run_id": "hostile", "source": "arxiv", "started": _last_run(store),
                      "finished": _last_run(store), "status": "partial", "fetched": 1,
                      "new": 0, "error": f"HTTP 503{junk}", "details": f"[not{junk} JSON"})
    build_at_last_run(cfg)
    return cfg.output_path, target


@pytest.fixture(scope="module")
def controls(tmp_path_factory) -> tuple[Path, str]:
    return _site_with(tmp_path_factory.mktemp("controls"), CONTROLS + BIDI)


@pytest.fixture(scope="module")
def bidi(tmp_path_factory) -> tuple[Path, str]:
    return _site_with(tmp_path_factory.mktemp("bidi"), BIDI)


def test_every_feed_and_json_file_parses_whatever_the_store_holds(controls):
    out, target = controls
    feeds = sorted((out / "feeds").rglob("*.xml"))
    assert feeds
    for path in feeds:
        feed = feedparser.parse(path.read_bytes())
        assert not feed.bozo, (path, feed.get("bozo_exception"))
    digests = feedparser.parse((out / "feeds" / "digests.atom.xml").read_bytes())
    assert any(e.id.endswith(f"paper/{target}v1/digest") for e in digests.entries)
    for path in out.rglob("*.json"):
        json.loads(path.read_bytes().decode("utf-8"))


def test_no_page_feed_or_json_file_carries_a_control_character(controls):
    out, target = controls
    for path in [*out.rglob("*.html"), *out.rglob("*.xml"), *out.rglob("*.json")]:
        text = path.read_bytes().decode("utf-8")  # strict: a lone surrogate cannot be here
        assert not _FORBIDDEN.search(text), (path, _FORBIDDEN.search(text))
    page = (out / "paper" / f"{target}.html").read_text("utf-8")
    assert "Hostile title" in page and "a comment" in page
    assert "HTTP 503" in (out / "sources" / "index.html").read_text("utf-8")


def test_no_page_feed_or_json_file_carries_a_bidi_control(bidi):
    out, _ = bidi
    for path in [*out.rglob("*.html"), *out.rglob("*.xml"), *out.rglob("*.json")]:
        found = re.search(f"[{BIDI}]", path.read_text("utf-8"))
        assert not found, (path, found)


def test_names_and_titles_shown_inline_are_isolated_from_the_text_around_them(bidi):
    out, target = bidi
    page = (out / "paper" / f"{target}.html").read_text("utf-8")
    assert "<bdi>Eve</bdi>, <bdi>Null</bdi>" in page
    listing = (out / "library" / "updated" / "all" / "index.html").read_text("utf-8")
    card = listing[listing.index(f'id="p-{target}"'):]
    assert re.search(r'<h2><a [^>]+><bdi lang="en">Hostile title</bdi></a></h2>', card)
    assert '<p class="authors"><bdi>Eve</bdi>, <bdi>Null</bdi></p>' in card


# The build's own placeholders (site/output.py), as a stored title could carry them.
PLACEHOLDERS = "".join(f"\ue000{p}\ue000" for p in
                       ("meta", "title", "main", "root", "when", "h", "href")) + "\ue000"


def test_private_use_characters_in_stored_text_are_not_shown(tmp_path):
    """Else the build's placeholders in a title put the head's tags into <title>, drop the
    citation tags and change words on cards."""
    out, target = _site_with(tmp_path, PLACEHOLDERS)
    for path in [*out.rglob("*.html"), *out.rglob("*.xml"), *out.rglob("*.json")]:
        found = re.search("[\ue000-\uf8ff]", path.read_text("utf-8"))
        assert not found, (path, found)
    page = (out / "paper" / f"{target}.html").read_text("utf-8")
    assert re.search(r"<title>Hostilemetatitlemainrootwhenhhref title [^<]*</title>", page)
    assert page.count('<meta name="citation_title" content="Hostilemeta') == 1
    listing = (out / "library" / "updated" / "all" / "index.html").read_text("utf-8")
    card = listing[listing.index(f'id="p-{target}"'):]
    assert '<bdi lang="en">Hostilemetatitlemainrootwhenhhref title</bdi>' in card


def test_a_digest_links_only_what_the_paper_links(tmp_path):
    """A prompt injection in an abstract can make the model write any link; the reader
    sees its address, and only the paper's own links are links."""
    cfg = make_config(tmp_path)
    store = run_pipeline(cfg, DAYS[:1])
    rows = _rewrite_papers(store, lambda rows: rows[0].update(
        abstract="We release code at https://github.com/authors/code."))
    target = rows[0]["arxiv_id"]
    add_digest(store, target, rows[0]["version"], _last_run(store),
               r"Code: \href{https://evil.example/steal}{github.com/authors/code}, "
               r"https://evil.example/two and \url{https://github.com/authors/code}")
    build_at_last_run(cfg)
    out = cfg.output_path
    page = (out / "paper" / f"{target}.html").read_text("utf-8")
    home = (out / "index.html").read_text("utf-8")
    for html in (page, home):
        [tldr] = re.findall(r"</span> ?(Code: .*?)</p>", html)
        assert tldr == ("Code: github.com/authors/code (https://evil.example/steal), "
                        "https://evil.example/two and <a href=\"https://github.com/authors/"
                        'code" rel="nofollow">https://github.com/authors/code</a>')
    for path in out.rglob("*.html"):
        assert 'href="https://evil.example' not in path.read_text("utf-8"), path
    for ext in ("atom", "rss"):
        feed = feedparser.parse((out / "feeds" / f"digests.{ext}.xml").read_bytes())
        [entry] = [e for e in feed.entries if target in e.link]
        content = entry["content"][0]["value"] if "content" in entry else entry["summary"]
        assert "github.com/authors/code (https://evil.example/steal)" in content
        assert "evil.example" not in "".join(re.findall(r"<a [^>]*>", content))


def test_a_stored_lone_surrogate_fails_no_build(tmp_path):
    cfg = make_config(tmp_path)
    store = run_pipeline(cfg, DAYS[:1])
    target = store.read("papers").to_pylist()[0]
    add_digest(store, target["arxiv_id"], target["version"], _last_run(store), "tl;dr")
    digests = store.read("digests")
    store.write("digests", _with_raw_bytes(digests, "motivation", digests.num_rows - 1,
                                           _SURROGATE_BYTES))
    # and one that JSON text holds, escaped: json.loads makes it a lone surrogate
    store.append_run({"run_id": "escaped", "source": "arxiv", "started": _last_run(store),
                      "finished": _last_run(store), "status": "ok", "fetched": 1, "new": 0,
                      "details": json.dumps({"per_category": {"cs.CV\ud800": 1}})})
    build_at_last_run(cfg)
    out = cfg.output_path
    page = (out / "paper" / f"{target['arxiv_id']}.html").read_bytes().decode("utf-8")
    assert "\ufffd surrogate" in page
    assert "cs.CV\ufffd" in (out / "sources" / "index.html").read_text("utf-8")
    for ext in ("atom", "rss"):
        assert not feedparser.parse((out / "feeds" / f"digests.{ext}.xml").read_bytes()).bozo


# -- (f) the site's clock is the build's ----------------------------------------------------------


def test_no_stored_time_becomes_the_sites_clock(tmp_path):
    cfg = make_config(tmp_path)
    store = run_pipeline(cfg, DAYS[:1])
    real = dt.datetime.now(dt.UTC)
    future = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)

    def recent(rows: list[dict]) -> None:  # seen an hour ago, updated three days ago
        for row in rows:
            row.update(first_seen=real - dt.timedelta(hours=1),
                       version_seen_at=real - dt.timedelta(hours=1),
                       updated=real - dt.timedelta(days=3), published=real - dt.timedelta(days=3))
        rows[0]["updated"] = future

    rows = _rewrite_papers(store, recent)
    store.append_run({"run_id": "skewed", "source": "arxiv", "started": future,
                      "finished": future, "status": "ok", "fetched": 0, "new": 0})
    build_mod.build(cfg)
    out = cfg.output_path
    status = json.loads((out / "status.json").read_text("utf-8"))
    assert abs(dt.datetime.fromisoformat(status["as_of"]) - real) < dt.timedelta(minutes=5)
    assert status["new_papers"] == len(rows)
    assert all((out / "paper" / f"{r['arxiv_id']}.html").is_file() for r in rows)
    last_day = (out / "library" / "updated" / "24h" / "index.html").read_text("utf-8")
    assert f'id="p-{rows[0]["arxiv_id"]}"' not in last_day  # not "updated in the last 24 h"


def test_the_writer_refuses_a_path_outside_the_output_even_through_a_link(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    writer = SkipUnchangedWriter(str(out))
    (out / "elsewhere").symlink_to(tmp_path)
    for path in (out / "paper" / ".." / ".." / "evil.html", out / "elsewhere" / "evil.html"):
        with pytest.raises(UnsafePathError, match="outside"):
            writer.put(path, b"evil")
    assert not (tmp_path / "evil.html").exists()
    writer.put(out / "paper" / "2401.12345.html", b"fine")
    assert (out / "paper" / "2401.12345.html").read_bytes() == b"fine"


def test_the_writer_returns_the_stamp_of_what_it_wrote_or_left(tmp_path):
    """A page's key records this stamp (pages.paper._fresh), so it must be the file's own,
    whether the file was written, left as it was, or replaced atomically."""
    out = tmp_path / "out"
    writer = SkipUnchangedWriter(str(out))
    page, record = out / "paper" / "2401.12345.html", out / ".papertrail" / "pages.json"
    written = writer.put(page, b"<p>first</p>" * 1000)
    assert written == stamp(page) and written[0] == 12_000
    assert writer.put(page, b"<p>first</p>" * 1000) == written and writer.unchanged == 1
    assert writer.put(page, b"second") == stamp(page) != written
    assert writer.put(record, b"{}", atomic=True) == stamp(record) == [2, ANY]
    assert page.read_bytes() == b"second" and writer.written == 3
