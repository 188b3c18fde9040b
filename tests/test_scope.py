"""A fork's scope: seeded from an all-of-cs store, a robotics fork (cs.RO only) shows,
counts, feeds and digests only cs.RO (cross-lists into it included) and what its follows
name; `data restore --seed-from` keeps only that; Hugging Face picks of other fields only
when asked."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest
from lxml import etree

from pipeline import config as config_mod
from pipeline import databranch
from pipeline.derive import scope
from pipeline.digest.plan import scoped
from pipeline.store import Store
from tests.support.site import DAYS, build_at_last_run, make_config, run_pipeline

pytestmark = pytest.mark.slow  # runs the pipeline and builds a fork's site

ALL_CS = '[store]\npath = "data"\n[site]\nlanguage = "en"\noutput = "out"\n'
ROBOTICS = ALL_CS + '[sources.arxiv]\ncategories = ["cs.RO"]\n'
# The first author of a cs.CL paper of the sample's first day, as an advisor listed by
# initials.
ADVISOR = '[[follows]]\nname = "advisor"\nauthors = ["M. Pelossi"]\nmatch_initials = true\n'
ADVISORS_PAPER = "2606.19344"
_ATOM = "{http://www.w3.org/2005/Atom}"
_PAPER = re.compile(r"paper/(\d{4}\.\d{4,5})")


def _write(root: Path, text: str) -> config_mod.Config:
    return make_config(root, None, text, store=None)


@pytest.fixture(scope="module")
def seeded_fork(tmp_path_factory) -> tuple[config_mod.Config, set[str]]:
    """A store of all of cs (the sample's first day), then the robotics fork's config over
    it, built: the config and the ids of the store's cs.RO papers."""
    root = tmp_path_factory.mktemp("fork")
    store = run_pipeline(_write(root, ALL_CS), DAYS[:1])
    papers = store.read("papers").select(["arxiv_id", "categories"]).to_pylist()
    robotics = {p["arxiv_id"] for p in papers if "cs.RO" in p["categories"]}
    assert 0 < len(robotics) < len(papers) and ADVISORS_PAPER not in robotics
    cfg = _write(root, ROBOTICS + ADVISOR)
    build_at_last_run(cfg)
    return cfg, robotics


def _feed_ids(path: Path) -> set[str]:
    """Every paper an entry of the feed names: its own entry, or a brief's links."""
    entries = etree.parse(path).getroot().iter(f"{_ATOM}entry")
    return {m for e in entries for m in _PAPER.findall(etree.tostring(e, encoding="unicode"))}


def test_the_site_counts_and_lists_only_the_forks_categories_and_follows(seeded_fork):
    cfg, robotics = seeded_fork
    out = cfg.output_path
    status = json.loads((out / "status.json").read_text(encoding="utf-8"))
    assert status["new_papers"] == len(robotics) + 1  # and the advisor's paper
    assert sorted(p.name for p in (out / "category").iterdir() if p.is_dir()) == ["cs.RO"]
    pages = {p.stem for p in (out / "paper").rglob("*.html")}
    assert pages == robotics | {ADVISORS_PAPER}
    # A paper's other categories are named, not linked to pages the site does not have.
    linked = {m for page in [out / "index.html", *(out / "paper").rglob("*.html")]
              for m in re.findall(r'href="[./]*category/([^/"]+)/"',
                                  page.read_text(encoding="utf-8"))}
    assert linked == {"cs.RO"}


def test_every_feed_holds_only_cs_ro_and_the_advisors_paper_only_by_the_follow(seeded_fork):
    cfg, robotics = seeded_fork
    feeds = list((cfg.output_path / "feeds").rglob("*.atom.xml"))
    held = {f.relative_to(cfg.output_path / "feeds").as_posix(): _feed_ids(f) for f in feeds}
    assert held["all.atom.xml"] == robotics | {ADVISORS_PAPER}
    assert held["me.atom.xml"] == {ADVISORS_PAPER}
    assert held["category/cs.RO.atom.xml"] == robotics
    assert held["brief/new.atom.xml"] == robotics | {ADVISORS_PAPER}  # the day's list
    assert all(ids <= robotics | {ADVISORS_PAPER} for ids in held.values())


def test_the_digest_queue_holds_only_the_scope(seeded_fork):
    cfg, robotics = seeded_fork
    queued = set(scoped(cfg, Store(cfg.store_path))["arxiv_id"].to_pylist())
    assert queued == robotics | {ADVISORS_PAPER}


def test_hugging_face_picks_of_other_fields_only_when_asked(tmp_path):
    picks = pa.table({"arxiv_id": ["a", "b", "c"], "authors": [["X"], ["Y"], ["Z"]],
                      "categories": [["cs.RO"], ["q-bio.NC"], ["cs.CV"]],
                      "hf_day": pa.array([None, 20600, None], pa.date32())})
    robotics = _write(tmp_path, ROBOTICS)
    assert scope.in_scope(robotics, picks).tolist() == [True, False, False]
    shown = _write(tmp_path, ROBOTICS + '[sources.hf]\noutside_categories = "show"\n')
    assert scope.in_scope(shown, picks).tolist() == [True, True, False]
    every_cs = _write(tmp_path, ALL_CS)  # "auto": the upstream site shows every field's
    assert scope.in_scope(every_cs, picks).tolist() == [True, True, True]
    hidden = _write(tmp_path, ALL_CS + '[sources.hf]\noutside_categories = "hide"\n')
    assert scope.in_scope(hidden, picks).tolist() == [True, False, True]


def test_within_keeps_the_rows_in_scope_and_the_table_itself_when_all_are(tmp_path):
    papers = pa.table({"arxiv_id": ["a", "b"], "authors": [["X"], ["Y"]],
                       "categories": [["cs.RO"], ["cs.CV"]]})
    assert scope.within(_write(tmp_path, ROBOTICS), papers)["arxiv_id"].to_pylist() == ["a"]
    assert scope.within(_write(tmp_path, ALL_CS), papers) is papers  # no copy of the columns


def test_seed_from_keeps_only_what_the_forks_config_selects(tmp_path, remote):
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    subprocess.run(["git", "-C", str(upstream), "init", "--quiet"], check=True)
    subprocess.run(["git", "-C", str(upstream), "remote", "add", "origin", str(remote)],
                   check=True)
    whole = _write(upstream, ALL_CS)
    run_pipeline(whole, DAYS[:1])
    databranch.save(whole, whole.root)
    upstream_papers = Store(whole.store_path).read("papers").num_rows

    fork_remote = tmp_path / "fork.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(fork_remote)], check=True)
    fork_root = tmp_path / "fork"
    fork_root.mkdir()
    subprocess.run(["git", "-C", str(fork_root), "init", "--quiet"], check=True)
    subprocess.run(["git", "-C", str(fork_root), "remote", "add", "origin", str(fork_remote)],
                   check=True)
    fork = _write(fork_root, ROBOTICS + ADVISOR)
    databranch.restore(fork.root, fork.store_path, seed=str(remote), scope_of=fork)
    store = Store(fork.store_path)
    kept = store.read("papers").select(["arxiv_id", "categories"]).to_pylist()
    assert 0 < len(kept) < upstream_papers
    assert all("cs.RO" in p["categories"] or p["arxiv_id"] == ADVISORS_PAPER for p in kept)
    assert ADVISORS_PAPER in {p["arxiv_id"] for p in kept}
    ids = {p["arxiv_id"] for p in kept}
    assert set(store.read("versions")["arxiv_id"].to_pylist()) == ids
    assert not store.check()
    # Run again (a job that stopped after the cut, say): the store is as it was.
    again = databranch.restore(fork.root, fork.store_path, seed=str(remote), scope_of=fork)
    assert again.commit and Store(fork.store_path).read("papers").num_rows == len(kept)
