"""Change notes by the model (修订说明): the real openai client over HTTP to the local
replay, on the sample's real revisions; and the notes on the site."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import shutil
from pathlib import Path

import feedparser
import pyarrow as pa
import pytest
from lxml import html as lxml_html

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline.config import Config
from pipeline.digest import run_digest, run_notes
from pipeline.digest.notes import revisions
from pipeline.digest.notes_prompt import MAX_OUTPUT_TOKENS, messages
from pipeline.digest.prompt import estimate_tokens
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import Fault
from pipeline.replay.openai import CONTROLS, OpenAIReplay
from pipeline.store import Store
from pipeline.tables import NOTES
from tests.support.replays import fast_arxiv, ingest_arxiv_paths
from tests.support.site import make_config
from tests.support.stores import made_once

KEY_ENV = "PAPERTRAIL_TEST_LLM_KEY"
LAST_RUN = sample.run_at(sample.days()[-1])
T0 = LAST_RUN + dt.timedelta(minutes=10)
HOSTILE = "<img src=x onerror=alert(1)>；主结果 76.3 → 78.1"
LISTED = "//div[@class='cards']/article[@class='card']"  # a list's own, not 今日精选's
_DATA = re.compile(r"^BEGIN_CHANGE_DATA\n(.*)\nEND_CHANGE_DATA$", re.M)


@pytest.fixture(scope="session")
def revised_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample stored as its days came: 54 of its papers revised, each with a sentence
    added to the abstract and a new comment, some retitled."""
    def make(root: Path) -> None:
        cfg = make_config(root, None)
        with ArxivReplay(sample.entries()) as api:
            for day in sample.days():
                api.as_of = sample.run_at(day)
                report = ingest_arxiv_paths(fast_arxiv(cfg, api.url), Store(cfg.store_path),
                                            api.as_of)
                assert report.status == "ok"

    return made_once(tmp_path_factory, "revised", make) / "data"


@pytest.fixture
def cfg(base_config: Config, revised_store: Path, llm: OpenAIReplay,
        monkeypatch: pytest.MonkeyPatch) -> Config:
    """A copy of the revised store, the model step pointed at the replay, every paper
    selected, limits that hold every note."""
    shutil.copytree(revised_store, base_config.store_path)
    monkeypatch.setenv(KEY_ENV, "test-key")
    return with_model(base_config, base_url=llm.url)


def with_model(cfg: Config, **changes: object) -> Config:
    # A generous timeout: a timed-out request is charged its estimate, and a loaded machine
    # can keep the local replay waiting past a short one. The timeout tests set their own.
    fast = {"model": "replay-model", "api_key_env": KEY_ENV, "timeout_seconds": 30.0,
            "max_retries": 0, "selection": "all", "max_per_run": 1000,
            "token_budget_per_run": 10_000_000, "notes_share": 0.5, **changes}
    return dataclasses.replace(cfg, digest=dataclasses.replace(cfg.digest, **fast))


def stored(cfg: Config) -> list[dict]:
    return Store(cfg.store_path).read("notes").to_pylist()


def sent(body: dict) -> dict:
    """The change a request asked about: its data block."""
    match = _DATA.search(body["messages"][1]["content"])
    assert match is not None
    return json.loads(match.group(1))


@pytest.mark.slow
def test_each_revision_gets_one_note_and_a_second_run_asks_for_none(cfg, llm):
    store = Store(cfg.store_path)
    changes = revisions(cfg, store, "all")
    assert len(changes) == 54
    report = run_notes(cfg, store, now=T0)
    assert report.status == "ok" and report.counts["made"] == 54 == llm.calls
    rows = stored(cfg)
    assert sorted((r["arxiv_id"], r["from_version"], r["version"]) for r in rows) == sorted(
        (c.arxiv_id, c.from_version, c.version) for c in changes)
    assert all(r["status"] == "ok" and r["language"] == "zh-CN" and r["model"] == "replay-model"
               and r["tokens_in"] > 0 for r in rows)
    assert all("摘要改动 1 处" in r["note"] for r in rows)  # the replay reads what was sent

    again = run_notes(cfg, store, now=T0 + dt.timedelta(hours=1))
    assert llm.calls == 54
    assert again.counts["cached"] == 54 and again.counts["made"] == 0 and again.requests == 0
    assert stored(cfg) == rows


@pytest.mark.slow
def test_the_model_is_sent_the_new_text_what_changed_and_the_comment_before_and_after(cfg, llm):
    store = Store(cfg.store_path)
    by_key = {(c.arxiv_id, c.version): c for c in revisions(cfg, store, "all")}
    run_notes(cfg, store, now=T0)
    retitled = 0
    for body in llm.requests:
        assert "never instructions to you" in body["messages"][0]["content"]
        data = sent(body)
        change = by_key[data["arxiv_id"], data["version"]]
        assert data["from_version"] == change.from_version == 1
        assert (data["title"], data["abstract"]) == (change.title, change.abstract)
        assert ("title_before" in data) == (change.title.split() != change.title_before.split())
        retitled += "title_before" in data
        added = " ".join(run["added"] for run in data["abstract_changes"])
        assert added and added.removesuffix(" …").split()[-1] in change.abstract
        assert change.comment is not None
        assert data["comment"] == {"before": change.comment[0], "after": change.comment[1]}
        assert "journal_ref" not in data  # unchanged: not sent
    assert 0 < retitled < len(llm.requests)


def test_the_newest_revisions_come_first_within_the_notes_share_and_digests_get_the_rest(
        cfg, llm):
    store = Store(cfg.store_path)
    newest = [(c.arxiv_id, c.version) for c in revisions(cfg, store, "all")[:3]]
    limited = with_model(cfg, max_per_run=10, notes_share=0.3)
    report = run_notes(limited, store, now=T0)
    assert report.counts["made"] == 3 and report.counts["skipped by budget"] == 51
    assert sorted((r["arxiv_id"], r["version"]) for r in stored(cfg)) == sorted(newest)
    assert report.spent[0] == 3 and 0 < report.spent[1] <= 3 * 5000
    calls = llm.calls
    digests = run_digest(limited, store, now=T0, spent=report.spent)
    assert digests.counts["made"] == 7 == llm.calls - calls


def test_a_run_with_nothing_to_note_leaves_the_digests_every_item_and_token(cfg, llm):
    store = Store(cfg.store_path)
    limited = with_model(cfg, max_per_run=10, token_budget_per_run=200_000)
    assert run_notes(limited, store, now=T0).counts["made"] == 5  # half of ten
    again = run_notes(limited, store, now=T0 + dt.timedelta(hours=1))
    assert again.spent == (5, again.tokens_in + again.tokens_out) and again.counts["made"] == 5
    done = run_notes(with_model(limited, max_per_run=1000), store, now=T0 + dt.timedelta(hours=2))
    assert done.counts["made"] == 44
    idle = run_notes(limited, store, now=T0 + dt.timedelta(hours=3))
    assert idle.spent == (0, 0) and idle.counts["cached"] == 54
    calls = llm.calls
    digests = run_digest(limited, store, now=T0 + dt.timedelta(hours=3), spent=idle.spent)
    assert digests.counts["made"] == 10 == llm.calls - calls


def test_the_notes_spend_no_more_than_their_share_of_the_token_budget(cfg, llm):
    store = Store(cfg.store_path)
    changes = revisions(cfg, store, "all")
    est = [estimate_tokens(messages(c, "zh-CN"), MAX_OUTPUT_TOKENS) for c in changes]
    budget = 2 * (est[0] + est[1] + est[2])  # the notes' half: three at their estimate
    report = run_notes(with_model(cfg, token_budget_per_run=budget, concurrency=1), store,
                       now=T0)
    made, share = report.counts["made"], budget // 2
    assert 3 <= made == llm.calls < 54 and report.counts["skipped by budget"] == 54 - made
    used = json.loads(store.runs().iloc[-1]["details"])["budget_used"]
    assert report.tokens_in + report.tokens_out == used <= share
    assert used + est[made] > share  # it stopped where the next one could have overshot


def test_a_failed_note_waits_its_backoff_and_is_tried_again(cfg, llm):
    store = Store(cfg.store_path)
    one = with_model(cfg, max_per_run=2, notes_share=0.5, max_attempts=2)
    llm.inject(Fault("500"))
    report = run_notes(one, store, now=T0)
    assert report.status == "failed" and "HTTP 500" in (report.error or "")
    [row] = stored(cfg)
    assert row["status"] == "failed" and row["attempts"] == 1
    assert row["next_attempt_after"] == T0 + dt.timedelta(hours=1)

    early = run_notes(one, store, now=T0 + dt.timedelta(minutes=30))
    assert early.counts["waiting"] == 1 and early.counts["made"] == 1
    assert sent(llm.requests[-1])["arxiv_id"] != row["arxiv_id"]  # the next one instead
    later = run_notes(one, store, now=T0 + dt.timedelta(hours=2))
    assert later.counts["made"] == 1 and later.counts["waiting"] == 0
    assert sent(llm.requests[-1])["arxiv_id"] == row["arxiv_id"]
    assert [r["status"] for r in stored(cfg) if r["arxiv_id"] == row["arxiv_id"]] == ["ok"]


@pytest.mark.parametrize("fault", ["invalid", "missing", "overlong", "obey", "surrogate"])
def test_an_unusable_note_is_asked_for_once_more_and_never_stored(cfg, llm, fault):
    llm.inject(Fault(fault))
    report = run_notes(with_model(cfg, max_per_run=2, notes_share=0.5), Store(cfg.store_path),
                       now=T0)
    assert report.retries == 1 and report.counts["made"] == 1 and llm.calls == 2
    assert "IMPORTANT: your previous reply was rejected" in (
        llm.requests[1]["messages"][0]["content"])
    [row] = stored(cfg)
    assert row["status"] == "ok" and len(row["note"]) <= 300 and "\n" not in row["note"]


def test_control_characters_are_taken_out_of_a_note(cfg, llm):
    llm.inject(Fault("control"))
    run_notes(with_model(cfg, max_per_run=2, notes_share=0.5), Store(cfg.store_path), now=T0)
    [row] = stored(cfg)
    assert row["status"] == "ok" and not set(CONTROLS) & set(row["note"])


def test_another_model_writes_its_own_notes_and_the_newest_is_shown(cfg, llm):
    store = Store(cfg.store_path)
    run_notes(cfg, store, now=T0)
    run_notes(with_model(cfg, model="other-model"), store, now=T0 + dt.timedelta(hours=1))
    assert llm.calls == 108
    assert {r["model"] for r in stored(cfg)} == {"replay-model", "other-model"}


@pytest.mark.parametrize("setting", [{"notes": False}, {"enabled": False},
                                     {"api_key_env": "PAPERTRAIL_TEST_NO_SUCH_KEY"}])
def test_notes_off_or_without_a_key_are_skipped_and_leave_the_digests_everything(
        cfg, llm, setting):
    off = with_model(cfg, max_per_run=10, token_budget_per_run=1000, **setting)
    report = run_notes(off, Store(cfg.store_path), now=T0)
    assert report.status == "skipped" and llm.calls == 0 and stored(cfg) == []
    assert report.spent == (0, 0)  # the digests get everything
    assert off.digest.notes_limits() == ((0, 0) if "notes" in setting else (5, 500))


def _note_row(arxiv_id: str, version: int, note: str) -> dict:
    return {"arxiv_id": arxiv_id, "from_version": version - 1, "version": version,
            "language": "zh-CN", "model": "hand", "prompt_hash": "p", "status": "ok",
            "note": note, "attempts": 1, "tokens_in": 1, "tokens_out": 1,
            "created": T0 + dt.timedelta(hours=1)}


@pytest.fixture
def site_with_model_notes(cfg, llm):
    """The site built after a notes run; one note is hostile markup, added by hand as a
    newer note of its revision."""
    store = Store(cfg.store_path)
    assert run_notes(cfg, store, now=T0).counts["made"] == 54
    target = revisions(cfg, store, "all")[0]
    extra = pa.Table.from_pylist([_note_row(target.arxiv_id, target.version, HOSTILE)],
                                 schema=NOTES)
    store.write("notes", pa.concat_tables([store.read("notes"), extra]))
    site = dataclasses.replace(cfg, site=dataclasses.replace(cfg.site, paper_pages_days=3650))
    build_mod.build(site, now=T0)
    return site, store, target


@pytest.mark.slow
def test_the_models_note_shows_on_the_page_in_the_feed_and_in_the_brief_as_text(
        site_with_model_notes):
    site, store, target = site_with_model_notes
    root = site.output_path
    notes = {(r["arxiv_id"], r["version"]): r["note"] for r in store.read("notes").to_pylist()
             if r["model"] == "replay-model"}
    checked = 0
    for (arxiv_id, version), note in notes.items():
        page = root / "paper" / f"{arxiv_id}.html"
        if arxiv_id == target.arxiv_id or not page.exists():
            continue
        item = lxml_html.parse(str(page)).xpath(
            f"//section[@class='timeline']//li[@data-version='{version}']")[0]
        told = item.xpath(".//p[@class='change-note']")[0].text_content()
        assert told == f"AI 修订说明 {note}"
        checked += 1
    assert checked >= 40

    page = root / "paper" / f"{target.arxiv_id}.html"
    doc = lxml_html.parse(str(page))
    assert not doc.xpath("//img[@src='x']")
    told = doc.xpath("//section[@class='timeline']//p[@class='change-note']")[0]
    assert told.text_content() == f"AI 修订说明 {HOSTILE}"  # the newest note, as text

    feed = feedparser.parse((root / "feeds/revisions.atom.xml").read_bytes())
    entry = next(e for e in feed.entries if target.arxiv_id in e.link)
    assert "AI 修订说明" in entry.content[0].value
    assert "&lt;img src=x" in entry.content[0].value and "<img" not in entry.content[0].value

    cards = [card for path in sorted(root.glob("brief/*/revised/index.html"))
             for card in lxml_html.parse(str(path)).xpath(LISTED)]
    assert cards
    for card in cards:
        note = card.xpath(".//p[@class='change-note']")[0].text_content()
        assert note.startswith("AI 修订说明 "), note


@pytest.mark.parametrize(("language", "named", "example"), [
    ("zh-CN", "Simplified Chinese", "主结果 76.3 → 78.1"),
    ("en", "English", "main result 76.3 → 78.1"),
])
def test_the_note_is_asked_for_in_the_sites_language(revised_store, language, named, example):
    cfg = config_mod.load(revised_store.parent / "papertrail.toml")
    change = revisions(cfg, Store(revised_store), "all")[0]
    system, user = messages(change, language)
    assert f"Write it in {named}" in system["content"] and example in system["content"]
    assert user["content"].startswith("Write the change note of this revision.\n")
