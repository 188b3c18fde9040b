"""`papertrail notify` against real local servers: an SMTP server (aiosmtpd) that demands
STARTTLS with a certificate the client verifies and a login, and the replay of Telegram,
Slack, Discord, Feishu and a webhook (pipeline/replay/notify.py). A store the arXiv replay
filled: two papers by a followed author (one titled to break every markup), a watched
paper, and papers nobody follows."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, cast

import pytest
from aiosmtpd.controller import Controller
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline import ingest
from pipeline import notify as notify_mod
from pipeline.cli import cli
from pipeline.notify import channels
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import Fault
from pipeline.replay.sample import Entry
from pipeline.store import Store
from tests.support.markdown import shown
from tests.support.replays import fast_arxiv
from tests.support.servers import (
    FEISHU_SECRET,
    SMTP_PASSWORD,
    SMTP_USER,
    Mailbox,
    Services,
    Trickle,
    free_port,
    hostile,
    running,
)
from tests.support.site import add_digest, write_config
from tests.support.stores import made_once

T0 = dt.datetime(2026, 6, 22, 1, 0, tzinfo=dt.UTC)
HOSTILE = "<script>alert(1)</script> *bold* _it_ ~gone~ `code` @everyone & <b>Q&A</b>"
FOLLOWED = ("2606.20001", "2606.20002")
WATCHED = "2606.20003"
ITEMS = {f"paper/{FOLLOWED[0]}", f"paper/{FOLLOWED[1]}", f"paper/{WATCHED}",
         f"watch/{WATCHED}/v1"}


def _entry(n: int, title: str, authors: tuple[str, ...], comment: str | None = None
           ) -> Entry:
    return Entry(arxiv_id=f"2606.{20000 + n}", version=1, title=title,
                 abstract=f"Abstract {n} finds 3.5 times the grip. It says more.",
                 authors=authors, categories=("cs.RO",),
                 comment=comment, journal_ref=None, doi=None,
                 published=T0 - dt.timedelta(hours=3), updated=T0 - dt.timedelta(hours=3),
                 announced=T0 - dt.timedelta(hours=1))


def _env(s: Services) -> dict[str, str]:
    return {"SMTP_PASSWORD": SMTP_PASSWORD, "TELEGRAM_BOT_TOKEN": s.chat.token,
            "FEISHU_WEBHOOK_URL": s.chat.feishu_url, "FEISHU_SECRET": FEISHU_SECRET,
            "SLACK_WEBHOOK_URL": s.chat.slack_url, "DISCORD_WEBHOOK_URL": s.chat.discord_url,
            "NOTIFY_WEBHOOK_URL": s.chat.hook_url}


def _channels(s: Services, extra: str = "", **per_kind: str) -> str:
    tables = {
        "email": f'host = "127.0.0.1"\nport = {s.smtp_port}\nusername = "{SMTP_USER}"\n'
                 'sender = "papers@example.org"\nto = ["me@example.org"]\n',
        "telegram": f'chat_id = "-100123"\napi_url = "{s.chat.telegram_api}"\n',
        "feishu": 'secret_env = "FEISHU_SECRET"\n',
        "slack": "", "discord": "",
        "webhook": 'url_env = "NOTIFY_WEBHOOK_URL"\n'}
    out = ""
    for kind, body in tables.items():
        own = per_kind.get(kind, "")
        quick = "" if "max_retries" in own else "max_retries = 0\n"  # no backoff waits
        out += f'\n[[notify]]\nkind = "{kind}"\ntimeout_seconds = 5\n{quick}{body}{own}'
    return out + extra


@pytest.fixture
def project(tmp_path, tmp_path_factory) -> Path:
    """A fork following one author and watching one paper, its store filled by the arXiv
    replay (config written per test: `_write`)."""
    return _project(tmp_path, tmp_path_factory, ("Ada Lovelace", "B. Person"))


def _project(tmp_path: Path, factory: pytest.TempPathFactory, first_authors: tuple[str, ...],
             extra: str = "") -> Path:
    """The store is ingested once per session for each `first_authors` and `extra`
    (made_once), and copied."""
    _write(tmp_path, extra)
    key = hashlib.sha256(repr((first_authors, extra)).encode()).hexdigest()[:16]
    made = made_once(factory, f"notify-project-{key}",
                     lambda root: _ingested(root, first_authors, extra))
    shutil.copytree(made / "data", tmp_path / "data")
    return tmp_path


def _ingested(root: Path, first_authors: tuple[str, ...], extra: str) -> None:
    entries = [_entry(1, HOSTILE, first_authors),
               _entry(2, "Grasping with $\\alpha$-hands", ("Ada Lovelace",)),
               _entry(3, "A watched paper", ("C. Someone",)),
               *(_entry(n, f"Unfollowed {n}", ("Nobody Here",)) for n in (4, 5)),
               # 今日精选's first: accepted at a venue, the others have no signal
               _entry(6, "Unfollowed 6", ("Nobody Here",), comment="Accepted at ICRA 2026"),
               _entry(7, "Unfollowed 7", ("Nobody Here",), comment="Code: https://github.com/x/y")]
    _write(root, extra)
    cfg = config_mod.load(root / "papertrail.toml")
    with ArxivReplay(entries) as api:
        api.as_of = T0
        ingest.ingest_arxiv(fast_arxiv(cfg, api.url, categories=("cs.RO",)),
                            Store(cfg.store_path), now=T0)


def _write(root: Path, notify: str) -> Path:
    return write_config(root, "en", '[sources.arxiv]\ncategories = ["cs.RO"]\n'
                       '[[follows]]\nname = "advisor"\nauthors = ["Ada Lovelace"]\n'
                       f'watch = ["{WATCHED}"]\n{notify}', title="Robot radar",
                       output="output")


def _notify(root: Path, env: dict[str, str], monkeypatch) -> str:
    for name in config_mod.WORKFLOW_NOTIFY_ENVS:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli, ["--config", str(root / "papertrail.toml"), "notify"])
    assert result.exit_code == 0, result.output
    return result.output


def _ledger(root: Path) -> dict[tuple[str, str], dict]:
    rows = Store(root / "data").read("notified").to_pylist()
    return {(r["channel"], r["item"]): r for r in rows}


def _bodies(s: Services, service: str) -> list:
    return [r.body for r in s.chat.received(service)]


def test_every_channel_gets_each_new_item_once_across_two_runs(project, services,
                                                               monkeypatch):
    _write(project, _channels(services))
    out = _notify(project, _env(services), monkeypatch)
    assert "notify: ok · sent 24 · failed 0 · skipped 0" in out
    for service in ("telegram", "slack", "discord", "feishu", "hook"):
        assert len(services.chat.received(service)) == 1, service  # daily: one digest
    (mail,) = services.mailbox.mails
    assert mail["Subject"] == "Robot radar: 3 new for you"  # papers, not items
    (hook,) = _bodies(services, "hook")
    assert {i["key"] for i in hook["items"]} == ITEMS
    assert sorted(hook["arxiv_ids"]) == sorted([*FOLLOWED, WATCHED])
    assert "Unfollowed" not in json.dumps(hook)
    ledger = _ledger(project)
    assert {item for _, item in ledger} == ITEMS and len(ledger) == 24
    assert {r["status"] for r in ledger.values()} == {"sent"}

    again = _notify(project, _env(services), monkeypatch)
    assert "sent 0 · failed 0" in again
    for service in ("telegram", "slack", "discord", "feishu", "hook"):
        assert len(services.chat.received(service)) == 1, service
    assert len(services.mailbox.mails) == 1
    assert _ledger(project) == ledger


def test_a_failing_channel_is_recorded_and_retried_next_run_while_the_others_send(
        project, services, monkeypatch):
    _write(project, _channels(services))
    services.chat.set_down("slack")
    out = _notify(project, _env(services), monkeypatch)
    assert "notify: partial · sent 20 · failed 4" in out
    assert "slack: HTTP 500: internal_error" in out
    assert "replaysecret" not in out  # the webhook URL is the secret: never printed
    ledger = _ledger(project)
    assert {r["status"] for (c, _), r in ledger.items() if c == "slack"} == {"failed"}
    assert {r["status"] for (c, _), r in ledger.items() if c != "slack"} == {"sent"}
    status = CliRunner().invoke(cli, ["--config", str(project / "papertrail.toml"), "status",
                                      "--json"])
    (row,) = [r for r in json.loads(status.output) if r["source"] == "notify"]
    assert row["status"] == "partial" and row["last error"].startswith("slack: HTTP 500")

    services.chat.set_down("slack", False)
    out = _notify(project, _env(services), monkeypatch)
    assert "notify: ok · sent 4 · failed 0" in out
    assert len(services.chat.received("slack")) == 2  # the failed try, then the digest
    assert len(services.chat.received("telegram")) == 1  # nothing new for the others
    slack = {item: r for (c, item), r in _ledger(project).items() if c == "slack"}
    assert {r["status"] for r in slack.values()} == {"sent"}
    assert {r["attempts"] for r in slack.values()} == {2}


def test_a_429_waits_the_retry_after_asked_for_and_a_long_one_waits_a_run(
        project, services, monkeypatch):
    _write(project, _channels(services, telegram="max_retries = 2\n",
                              discord="max_retries = 2\n"))
    services.chat.fail("telegram", Fault("429", 0.3))
    services.chat.fail("discord", Fault("429", 3600))  # an hour: not worth holding the run
    started = time.monotonic()
    out = _notify(project, _env(services), monkeypatch)
    assert time.monotonic() - started < 30
    assert "discord: HTTP 429: You are being rate limited." in out
    assert len(services.chat.received("telegram")) == 2
    ledger = _ledger(project)
    assert {r["status"] for (c, _), r in ledger.items() if c == "telegram"} == {"sent"}
    assert {r["status"] for (c, _), r in ledger.items() if c == "discord"} == {"failed"}


def test_hostile_text_stays_text_in_each_channels_markup(project, services, monkeypatch):
    _write(project, _channels(services))
    _notify(project, _env(services), monkeypatch)
    (telegram,) = _bodies(services, "telegram")
    assert telegram["parse_mode"] == "HTML"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in telegram["text"]
    assert "&amp; &lt;b&gt;Q&amp;A&lt;/b&gt;" in telegram["text"]
    assert "<script>" not in telegram["text"] and "<b>Q" not in telegram["text"]
    (slack,) = _bodies(services, "slack")
    assert "&lt;script&gt;" in slack["text"] and "&amp; &lt;b&gt;Q&amp;A" in slack["text"]
    assert "<script>" not in slack["text"]
    (discord,) = _bodies(services, "discord")
    assert discord["allowed_mentions"] == {"parse": []}
    content = discord["content"]
    for escaped in (r"\*bold\*", r"\_it\_", r"\~gone\~", r"\`code\`", r"\@everyone",
                    r"\<script\>"):
        assert escaped in content, escaped
    (feishu,) = _bodies(services, "feishu")
    post = feishu["content"]["post"]["en_us"]
    texts = [e["text"] for row in post["content"] for e in row]
    assert HOSTILE in texts  # a text element shows it as it is; no `<at>` is made of it
    assert all(e["tag"] in ("a", "text") for row in post["content"] for e in row)
    (hook,) = _bodies(services, "hook")
    assert HOSTILE in [i["title"] for i in hook["items"]]
    (mail,) = services.mailbox.mails
    html = mail.get_body(("html",)).get_content()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert HOSTILE in mail.get_body(("plain",)).get_content()
    assert "Grasping with α-hands" in mail.get_body(("plain",)).get_content()


def test_a_missing_secret_fails_only_its_channel_and_names_the_variable(
        project, services, monkeypatch):
    _write(project, _channels(services))
    env = _env(services)
    del env["TELEGRAM_BOT_TOKEN"]
    out = _notify(project, env, monkeypatch)
    assert "notify: partial · sent 20 · failed 4" in out
    assert "telegram: $TELEGRAM_BOT_TOKEN is not set" in out
    assert services.chat.received("telegram") == []

    _write(project, _channels(services, slack='url_env = "MY_SLACK"\n'))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    out = _notify(project, _env(services), monkeypatch)
    assert "slack: $MY_SLACK is not set (the update workflow passes only the secrets " \
           "SMTP_PASSWORD, TELEGRAM_BOT_TOKEN" in out


def test_immediate_sends_one_message_per_paper_and_daily_one_digest(project, services,
                                                                    monkeypatch):
    _write(project, _channels(services, telegram='format = "immediate"\n'))
    _notify(project, _env(services), monkeypatch)
    sent = _bodies(services, "telegram")
    assert len(sent) == 3 and len(_bodies(services, "slack")) == 1  # the watched paper once
    assert all(m["text"].count("<a href=") == 1 for m in sent)  # no base_url: arXiv alone
    assert "Robot radar" not in sent[0]["text"]  # one item: its title is the message


def test_over_max_items_the_rest_are_counted_and_linked_not_sent_later(
        project, services, monkeypatch):
    _write(project, _channels(services, slack="max_items = 1\n"))
    path = project / "papertrail.toml"
    path.write_text(path.read_text().replace(
        "[site]\n", '[site]\nbase_url = "https://radar.example"\n'), encoding="utf-8")
    _notify(project, _env(services), monkeypatch)
    (slack,) = _bodies(services, "slack")
    # max_items counts papers: the watched one goes whole, its news beside it
    assert "<https://radar.example/me/|2 more in your feed>" in slack["text"]
    statuses = {item: r["status"] for (c, item), r in _ledger(project).items() if c == "slack"}
    assert statuses == {f"paper/{WATCHED}": "sent", f"watch/{WATCHED}/v1": "sent",
                        f"paper/{FOLLOWED[0]}": "skipped", f"paper/{FOLLOWED[1]}": "skipped"}
    _notify(project, _env(services), monkeypatch)
    assert len(_bodies(services, "slack")) == 1


def test_a_digest_past_a_channels_limit_is_split_into_messages(project, services,
                                                              monkeypatch):
    _write(project, _channels(services))
    cfg = config_mod.load(project / "papertrail.toml")
    discord = next(c for c in cfg.notify if c.kind == "discord")
    sender = channels.open_channel(discord, "en", _env(services))
    from pipeline.notify.items import Item

    items = [Item(f"paper/2606.{30000 + i}", f"2606.{30000 + i}", "T" * 300, "A", "https://x",
                  "why") for i in range(20)]
    sent = list(channels.messages(sender, "Head", items, "", ""))
    assert len(sent) > 1 and sum(len(m.items) for m in sent) == 20
    assert all(sender.size(m) <= 2000 for m in sent)


def test_the_top_papers_of_the_last_announcement_when_a_channel_asks(project, services,
                                                                     monkeypatch):
    _write(project, _channels(services, webhook="top = 2\n"))
    _notify(project, _env(services), monkeypatch)
    (hook,) = _bodies(services, "hook")
    tops = [i for i in hook["items"] if i["why"].startswith("Top pick today")]
    assert [i["title"] for i in tops] == ["Unfollowed 6", "Unfollowed 7"]  # 今日精选's order
    assert tops[0]["why"] == "Top pick today: ICRA 2026 · main conference"  # and why
    (slack,) = _bodies(services, "slack")
    assert "Unfollowed" not in slack["text"]


def test_no_channels_writes_nothing(project, monkeypatch):
    before = Store(project / "data").files()
    out = _notify(project, {}, monkeypatch)
    assert out.startswith("notify: skipped (no [[notify]] channels")
    assert Store(project / "data").files() == before


BAD_CHANNELS = [
    ('kind = "sms"', "notify[0].kind = 'sms'", "one of email, telegram, feishu, slack"),
    ('kind = "telegram"', "notify[0].chat_id = (missing)", "as a string"),
    ('kind = "telegram"\nchat_id = 42', "notify[0].chat_id = 42", "expected a string"),
    ('kind = "email"\nhost = "h"\nsender = "a@b.c"\nto = ["nobody"]', "notify[0].to",
     "'nobody' is not an e-mail address"),
    ('kind = "email"\nhost = "h"\nsender = "a@b.c"\nto = ["x@y.z"]\nsecurity = "none"',
     "notify[0].security = 'none'", "'starttls' | 'tls'"),
    ('kind = "slack"\nurl_env = "https://hooks.slack.com/x"', "notify[0].url_env",
     "an environment variable name"),
    ('kind = "slack"\nurl = "https://hooks.slack.com/x"', "notify[0].url", "unknown key"),
    ('kind = "webhook"', "notify[0] = {'kind': 'webhook'}", "either url"),
    ('kind = "webhook"\nurl = "javascript:alert(1)"', "notify[0].url", "http(s) URL"),
    ('kind = "discord"\nformat = "hourly"', "notify[0].format", "'daily' | 'immediate' | 'weekly'"),
    ('kind = "discord"\ntop = 51', "notify[0].top", "0 to 50 papers"),
    ('kind = "webhook"\nurl = "https://h.example/"\nsecret_env = "whsec_1234 5678"',
     "notify[0].secret_env", "an environment variable name"),
    ('kind = "discord"\nformat = "weekly"\nweekday = "mon"', "notify[0].weekday",
     "'monday' | 'tuesday'"),
    ('kind = "discord"\n[[notify]]\nkind = "discord"', "notify[1].name",
     "notify[0] is named 'discord' too"),
]


def test_a_channel_with_nothing_to_send_is_refused(tmp_path):
    path = tmp_path / "papertrail.toml"
    path.write_text('[[notify]]\nkind = "discord"\n', encoding="utf-8")
    with pytest.raises(config_mod.ConfigError) as info:
        config_mod.load(path)
    assert str(info.value) == (f"{path}: notify[0] = {{'kind': 'discord'}}: this channel would "
                               "send nothing; allowed: [[follows]] tables (what is sent), "
                               "or top ≥ 1")
    path.write_text('[[notify]]\nkind = "discord"\ntop = 3\n', encoding="utf-8")
    assert config_mod.load(path).notify[0].top == 3


@pytest.mark.parametrize(("table", "key", "allowed"), BAD_CHANNELS)
def test_a_bad_channel_is_one_clear_error_exit_2(tmp_path, table, key, allowed):
    path = _write(tmp_path, f"\n[[notify]]\n{table}\n")
    result = CliRunner().invoke(cli, ["--config", str(path), "notify"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"papertrail: config error: {path}: {key}")
    assert allowed in result.output
    assert not (tmp_path / "data").exists()


def test_every_channel_kind_is_registered_and_each_key_documented():
    assert list(channels.CHANNELS) == list(config_mod.CHANNEL_KINDS)
    doc = (Path(__file__).resolve().parents[1] / "docs" / "CONFIG.md").read_text("utf-8")
    section = doc.split("## [[notify]]", 1)[1].split("\n## ", 1)[0]
    for kind, cls in config_mod.CHANNEL_KINDS.items():
        for f in dataclasses.fields(cls):
            assert f"| `{f.name}` |" in section, (kind, f.name)


def test_the_job_summary_names_a_failing_channel(project, services, monkeypatch):
    _write(project, _channels(services))
    services.chat.set_down("discord")
    _notify(project, _env(services), monkeypatch)
    summary = CliRunner().invoke(cli, ["--config", str(project / "papertrail.toml"), "data",
                                       "summary"])
    assert ("- ⚠ notify partial: discord: HTTP 500: 500: Internal Server Error"
            in shown(summary.output))


def test_email_over_tls_from_the_first_byte(project, certificate, monkeypatch):
    import ssl

    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    mailbox, port = Mailbox(), free_port()
    smtp = Controller(mailbox, hostname="127.0.0.1", port=port, ssl_context=context)
    smtp.start()
    try:
        _write(project, f'\n[[notify]]\nkind = "email"\nhost = "127.0.0.1"\nport = {port}\n'
                        'security = "tls"\nsender = "a@example.org"\nto = ["b@example.org"]\n'
                        'format = "immediate"\n')
        assert "sent 4" in _notify(project, {}, monkeypatch)
    finally:
        smtp.stop()
    subjects = {str(m["Subject"]).strip() for m in mailbox.mails}  # one mail per paper
    assert len(mailbox.mails) == 3 and {"A watched paper", HOSTILE} <= subjects


def test_a_server_without_starttls_gets_no_mail_in_clear(project, monkeypatch):
    mailbox, port = Mailbox(), free_port()
    smtp = Controller(mailbox, hostname="127.0.0.1", port=port)  # no TLS on offer
    smtp.start()
    try:
        _write(project, f'\n[[notify]]\nkind = "email"\nhost = "127.0.0.1"\nport = {port}\n'
                        'sender = "a@example.org"\nto = ["b@example.org"]\nmax_retries = 0\n')
        out = _notify(project, {}, monkeypatch)
    finally:
        smtp.stop()
    assert "notify: failed" in out and "STARTTLS extension not supported" in out
    assert mailbox.mails == []


def test_a_transport_error_names_the_variable_never_the_token(project, monkeypatch):
    port = free_port()  # nothing listens there
    _write(project, '\n[[notify]]\nkind = "telegram"\nchat_id = "1"\nmax_retries = 0\n'
                    f'api_url = "http://127.0.0.1:{port}"\n')
    out = _notify(project, {"TELEGRAM_BOT_TOKEN": "999:very-secret"}, monkeypatch)
    assert "notify: failed" in out and "connection failed (ConnectError)" in out
    assert "very-secret" not in out and "$TELEGRAM_BOT_TOKEN" in out
    rows = Store(project / "data").read("notified").to_pylist()
    assert rows and not any("very-secret" in (r["error"] or "") for r in rows)


@pytest.fixture
def trickling_hook() -> Iterator[str]:
    """A webhook answering every POST a byte at a time (headers at once); its URL."""
    with running(Trickle) as url:
        yield f"{url}hook"


def test_a_trickling_webhook_fails_within_its_bound_and_the_others_send(
        project, services, trickling_hook, monkeypatch):
    _write(project, _channels(services, webhook="max_run_seconds = 2\n"))
    env = {**_env(services), "NOTIFY_WEBHOOK_URL": trickling_hook}
    started = time.monotonic()
    out = _notify(project, env, monkeypatch)
    assert time.monotonic() - started < 2 + 8  # the webhook's bound, the others' sending
    assert "notify: partial · sent 20 · failed 4" in out
    assert "webhook: no complete response within 5 s" in out \
        or "webhook: max_run_seconds (2 s) reached" in out, out
    ledger = _ledger(project)
    assert {r["status"] for (c, _), r in ledger.items() if c == "webhook"} == {"failed"}
    assert {r["status"] for (c, _), r in ledger.items() if c != "webhook"} == {"sent"}


def test_a_notify_failure_says_what_notify_does_next_not_what_ingest_does(
        project, services, monkeypatch):
    _write(project, _channels(services))
    services.chat.set_down("slack")
    out = _notify(project, _env(services), monkeypatch)
    line = next(x for x in out.splitlines() if x.startswith("notify: partial"))
    assert line.endswith("— the failed items are recorded as failed and sent again next run")
    assert "backfill window" not in out and "stored data kept" not in out


@pytest.mark.parametrize("code", [301, 302, 307, 308])
def test_a_redirect_is_a_failure_for_every_http_channel_never_sent(
        project, services, monkeypatch, code):
    """A 302 would turn the POST into a GET that the other host answers 200; a 307 would
    post the message there."""
    _write(project, _channels(services))
    with hostile(f"redirect-{code}") as (url, log, elsewhere):
        env = {**_env(services), **{k: url for k in _env(services) if k.endswith("_URL")}}
        _write(project, _channels(services, telegram=f'api_url = "{url}"\n').replace(
            f'api_url = "{services.chat.telegram_api}"\n', ""))
        out = _notify(project, env, monkeypatch)
    assert elsewhere == [] and len(log) == 5  # each channel posted once, never elsewhere
    assert f"HTTP {code} redirect to 127.0.0.1, not followed" in out
    ledger = _ledger(project)
    assert {r["status"] for (c, _), r in ledger.items() if c != "email"} == {"failed"}
    assert {r["status"] for (c, _), r in ledger.items() if c == "email"} == {"sent"}


def test_an_item_with_a_5000_character_author_list_cannot_sink_the_digest(
        tmp_path, tmp_path_factory, services, monkeypatch):
    """Cut to a bounded length, every item fits every channel's limit: all are sent."""
    root = _project(tmp_path, tmp_path_factory, ("Ada Lovelace", "Z" * 5000))
    _write(root, _channels(services))
    out = _notify(root, _env(services), monkeypatch)
    assert "notify: ok · sent 24 · failed 0" in out, out
    content = "".join(m["content"] for m in _bodies(services, "discord"))
    assert "Z" * 150 + "…" in content and "Z" * 200 not in content
    assert all(len(m["content"]) <= 2000 for m in _bodies(services, "discord"))
    assert all("Z" * 200 not in m["text"] for m in _bodies(services, "telegram"))


class _Picky(BaseHTTPRequestHandler):
    """A webhook refusing (400) any message naming the watched paper, taking the rest."""

    received: list[bytes]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append(body)
        refuse = WATCHED.encode() in body
        self.send_response(400 if refuse else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_message_the_service_refuses_fails_only_its_own_items(project, monkeypatch):
    handler = type("Picky", (_Picky,), {"received": []})
    with running(handler) as url:
        _write(project, f'\n[[notify]]\nkind = "webhook"\nformat = "immediate"\nurl = "{url}"\n')
        out = _notify(project, {}, monkeypatch)
    assert len(handler.received) == 3  # each paper tried, after the refusal too
    assert "notify: failed · sent 2 · failed 2" in out and "HTTP 400" in out
    ledger = _ledger(project)
    failed = {item for (_, item), r in ledger.items() if r["status"] == "failed"}
    assert failed == {f"paper/{WATCHED}", f"watch/{WATCHED}/v1"}


# -- what each paper says, in every channel ---------------------------------------------------

SITE = "https://radar.example"
TOPIC = '\n[[topics]]\nslug = "grasping"\nname = { en = "Robot grasping", zh = "抓取" }\n' \
        'keywords = ["grasping"]\n'
LINE = "Hands that grasp anything, in three tries"


def _text(s: Services, kind: str) -> str:
    """Everything the channel of `kind` received, as its reader gets it (one string)."""
    if kind == "email":
        return "".join(m.get_body(("plain",)).get_content() + m.get_body(("html",)).get_content()
                       for m in s.mailbox.mails)
    service = "hook" if kind == "webhook" else kind
    out = []
    for body in _bodies(s, service):
        if kind == "feishu":
            post = body["content"]["post"]["en_us"]
            out.append("\n".join([post["title"], *(e.get("text", "") + " " + e.get("href", "")
                                                  for row in post["content"] for e in row)]))
        else:
            out.append(body.get("text") or body.get("content") or json.dumps(body))
    return "\n".join(out)


@pytest.fixture
def site_project(tmp_path, tmp_path_factory) -> Path:
    """The fork with a base_url, a topic the second paper is in, and that paper's digest."""
    root = _project(tmp_path, tmp_path_factory, ("Ada Lovelace", "B. Person"), TOPIC)
    add_digest(Store(root / "data"), FOLLOWED[1], 1, T0, LINE, language="en")
    return root


def _site_write(root: Path, notify: str) -> None:
    _write(root, TOPIC + notify)
    path = root / "papertrail.toml"
    path.write_text(path.read_text().replace("[site]\n", f'[site]\nbase_url = "{SITE}"\n'),
                    encoding="utf-8")


@pytest.mark.parametrize("kind", list(channels.CHANNELS))
def test_each_paper_links_its_site_page_and_arxiv_and_says_its_line_topics_and_why(
        site_project, services, monkeypatch, kind):
    _site_write(site_project, _channels(services))
    _notify(site_project, _env(services), monkeypatch)
    said = _text(services, kind)
    # the site's page (Paper.path under base_url), arXiv's beside it
    assert f"{SITE}/paper/{FOLLOWED[1]}.html" in said
    assert f"https://arxiv.org/abs/{FOLLOWED[1]}v1" in said
    assert LINE in said  # the digest's one line
    assert "Abstract 1 finds 3.5 times the grip" in said  # no digest: the first sentence
    assert "It says more" not in said
    assert "Robot grasping" in said and "topic grasping" not in said  # by name, not slug
    assert "Matches what you follow" in said  # why it came
    assert "In the library now" in said  # a watched paper's first appearance …
    assert "New version v1" not in said  # … is no new version
    if kind != "webhook":  # the webhook's items are the ledger's (grouped by arxiv_id)
        # once (in e-mail's text and its HTML), with its news beside it
        assert said.count("A watched paper") == 1 + (kind == "email"), said


def test_an_immediate_message_links_the_personal_feed(site_project, services, monkeypatch):
    _site_write(site_project, _channels(services, slack='format = "immediate"\n'))
    _notify(site_project, _env(services), monkeypatch)
    sent = _bodies(services, "slack")
    assert len(sent) == 3
    assert all(m["text"].endswith(f"<{SITE}/me/|Your feed>") for m in sent)


# -- a signed webhook -------------------------------------------------------------------------

WEBHOOK_SECRET = "whsec-test-key"


def _receiver_check() -> Callable[..., bool]:
    """The receiver's check as docs/CONFIG.md gives it, run as it is written there."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "CONFIG.md").read_text("utf-8")
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "def verified" in b]
    space: dict[str, Any] = {}
    exec(code, space)  # the doc's own example, from this repository
    return cast(Callable[..., bool], space["verified"])


class _Verifying(BaseHTTPRequestHandler):
    """A webhook receiver that takes only what the doc's check verifies (401 else)."""

    verified: Callable[..., bool]
    received: list[tuple[bool, dict[str, str], bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        ok = self.verified(self.headers, body, WEBHOOK_SECRET.encode())
        self.received.append((ok, dict(self.headers), body))
        self.send_response(200 if ok else 401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def verifying() -> Iterator[tuple[str, type[_Verifying]]]:
    handler = type("Verifying", (_Verifying,), {"verified": staticmethod(_receiver_check()),
                                                "received": []})
    with running(handler) as url:
        yield f"{url}hook", handler


def test_a_signed_webhook_passes_the_documented_receivers_check(project, verifying,
                                                                monkeypatch):
    url, handler = verifying
    _write(project, f'\n[[notify]]\nkind = "webhook"\nurl = "{url}"\n'
                    'secret_env = "NOTIFY_WEBHOOK_SECRET"\nformat = "immediate"\n')
    out = _notify(project, {"NOTIFY_WEBHOOK_SECRET": WEBHOOK_SECRET}, monkeypatch)
    assert "notify: ok · sent 4" in out
    assert [ok for ok, _, _ in handler.received] == [True] * 3
    deliveries = [h["X-PaperTrail-Delivery"] for _, h, _ in handler.received]
    assert len(set(deliveries)) == 3 and all(len(d) == 32 for d in deliveries)
    verified = _receiver_check()
    _, headers, body = handler.received[0]
    secret = WEBHOOK_SECRET.encode()
    assert not verified(headers, body.replace(b"A watched", b"A forged "), secret)
    assert not verified(headers, body, b"another key")
    assert not verified({**headers, "X-PaperTrail-Delivery": "0" * 32}, body, secret)
    old = int(headers["X-PaperTrail-Timestamp"]) - 3600
    replayed = {**headers, **channels.signature(secret, deliveries[0], old, body)}
    assert not verified(replayed, body, secret)  # rightly signed, an hour old


def test_a_webhook_signed_with_another_key_is_refused_and_retried(project, verifying,
                                                                  monkeypatch):
    url, handler = verifying
    _write(project, f'\n[[notify]]\nkind = "webhook"\nurl = "{url}"\n'
                    'secret_env = "HOOK_KEY"\n')
    out = _notify(project, {"HOOK_KEY": "not-the-key"}, monkeypatch)
    assert "notify: failed · sent 0 · failed 4" in out and "HTTP 401" in out
    assert "not-the-key" not in out
    monkeypatch.delenv("HOOK_KEY")
    out = _notify(project, {}, monkeypatch)
    assert "webhook: $HOOK_KEY is not set" in out  # never sent unsigned
    assert len(handler.received) == 1
    out = _notify(project, {"HOOK_KEY": WEBHOOK_SECRET}, monkeypatch)
    assert "notify: ok · sent 4" in out and handler.received[-1][0]


# -- a weekly digest --------------------------------------------------------------------------

WEEK2 = T0 + dt.timedelta(days=7)  # T0 is a Monday


def _week2_paper(root: Path) -> None:
    """A paper by the followed author in the second week's announcement."""
    cfg = config_mod.load(root / "papertrail.toml")
    new = dataclasses.replace(
        _entry(8, "Second week's grasping", ("Ada Lovelace",)),
        published=WEEK2 - dt.timedelta(hours=3), updated=WEEK2 - dt.timedelta(hours=3),
        announced=WEEK2 - dt.timedelta(hours=1))
    with ArxivReplay([new]) as api:
        api.as_of = WEEK2
        ingest.ingest_arxiv(fast_arxiv(cfg, api.url, categories=("cs.RO",)),
                            Store(cfg.store_path), now=WEEK2)


@pytest.mark.parametrize("kind", list(channels.CHANNELS))
def test_weekly_sends_once_a_week_from_its_weekday_each_paper_once_grouped(
        project, services, monkeypatch, kind):
    _write(project, _channels(services, **{kind: 'format = "weekly"\nweekday = "wednesday"\n'}))
    cfg = config_mod.load(project / "papertrail.toml")
    store = Store(cfg.store_path)
    env = _env(services)

    def run(at: dt.datetime) -> list[str]:
        report = notify_mod.notify(dataclasses.replace(
            cfg, notify=tuple(c for c in cfg.notify if c.kind == kind)), store, env=env, now=at)
        assert report.status in ("ok", "skipped"), report.error
        return [r["item"] for r in store.read("notified").to_pylist()]

    assert run(T0) == []  # Monday: before its weekday
    week1 = run(T0 + dt.timedelta(days=2, hours=1))  # Wednesday: the week's digest
    assert sorted(week1) == sorted([*ITEMS, "week/2026-W26"])
    said = _text(services, kind)
    if kind == "email":
        (mail,) = services.mailbox.mails
        assert mail["Subject"] == "Robot radar: your week, 3 papers"
    assert "your week, 3 papers" in said or kind == "webhook"
    if kind != "webhook":
        assert "advisor" in said and "A paper you watch has news" in said  # the groups
        assert said.count("A watched paper") == 1 + (kind == "email")
    assert run(T0 + dt.timedelta(days=2, hours=5)) == week1  # a rerun: nothing new
    assert run(T0 + dt.timedelta(days=5)) == week1  # Saturday: sent this week

    _week2_paper(project)
    assert run(WEEK2) == week1  # the next Monday: before its weekday again
    later = run(WEEK2 + dt.timedelta(days=4))  # Friday: the first run on or after it
    assert sorted(set(later) - set(week1)) == ["paper/2606.20008", "week/2026-W27"]
    assert "Second week's grasping" in _text(services, kind)
    # only the new paper went: the first week's are in its digest alone
    assert _text(services, kind).count("Grasping with") == 1 + (kind == "email")
    assert run(WEEK2 + dt.timedelta(days=4, hours=1)) == later
