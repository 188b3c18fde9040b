"""`papertrail try`: a fork's own papertrail.toml over the bundled replays, nothing edited,
its channels' messages recorded locally, what is missing said as in Actions; topics tuned
on its store; an English fork's digests in English."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline import trial
from pipeline.cli import cli
from pipeline.digest import notes_prompt, prompt
from pipeline.replay import sample
from pipeline.replay.notify import NotifyReplay
from pipeline.replay.openai import ENGLISH_STAND_IN, OpenAIReplay
from pipeline.store import Store
from tests.support.site import make_config

FOLLOWED = "Guangcheng Chen"  # two cs.RO papers of the sample

FORK = f"""
[site]
title = "Robot and security radar"
language = "en"

[sources.arxiv]
categories = ["cs.RO", "cs.CR"]

[[topics]]
slug = "manipulation"
name = {{ zh = "机器人操作", en = "Manipulation" }}
keywords = ["manipulation", "grasping"]

[[follows]]
name = "Lab"
authors = ["{FOLLOWED}"]

[[notify]]
kind = "webhook"
url = "https://example.org/hook"

[[notify]]
kind = "telegram"
chat_id = "-1001234567890"

[digest]
base_url = "https://api.deepseek.com/v1"
model = "deepseek-v4-flash"
api_key_env = "DEEPSEEK_API_KEY"
"""

# One [[notify]] table of each kind, as small as the config allows, and its secrets.
CHANNEL_TABLES: dict[str, str] = {
    "email": 'host = "smtp.example.org"\nusername = "me"\nsender = "me@example.org"\n'
             'to = ["me@example.org"]',
    "telegram": 'chat_id = "-1001234567890"',
    "feishu": 'secret_env = "FEISHU_SECRET"',
    "slack": "",
    "discord": "",
    "webhook": 'url_env = "NOTIFY_WEBHOOK_URL"',
}
SECRETS = {name: f"REAL-{name}-value" for name in (
    "SMTP_PASSWORD", "TELEGRAM_BOT_TOKEN", "FEISHU_WEBHOOK_URL", "FEISHU_SECRET",
    "SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK_URL", "NOTIFY_WEBHOOK_URL")}


def every_kind(tmp_path: Path) -> config_mod.Config:
    """A fork with a channel of every kind the config knows, each asking the day's top."""
    tables = "".join(f'\n[[notify]]\nkind = "{kind}"\ntop = 3\n{CHANNEL_TABLES[kind]}\n'
                     for kind in config_mod.CHANNEL_KINDS)
    return make_config(tmp_path, None, '[sources.arxiv]\ncategories = ["cs.RO"]\n' + tables,
                       store=None)


@pytest.mark.parametrize("kind", list(config_mod.CHANNEL_KINDS))
def test_every_kind_is_aimed_at_its_recorder_and_no_secret_reaches_it(kind, tmp_path):
    (channel,) = [c for c in every_kind(tmp_path).notify if c.kind == kind]
    with NotifyReplay() as server:
        recorder = trial.Recorder(channel, server)
        stand_ins = recorder.stand_ins(SECRETS)
        aimed = recorder.aimed()
    named = {getattr(channel, f) for f in vars(channel) if f.endswith("_env")} - {""}
    assert set(stand_ins) == named  # every secret it names, and only those
    assert not set(stand_ins.values()) & set(SECRETS.values())
    # whatever address it sends to is the recorder's, from the file or from a secret
    urls = [v for v in [*vars(aimed).values(), *stand_ins.values()]
            if isinstance(v, str) and v.startswith("http")]
    assert all(u.startswith(server.base) for u in urls), urls
    assert recorder.stand_ins({}) == {}  # unset here: unset there, as in Actions


@pytest.mark.slow
def test_a_fork_is_tried_as_it_is_scoped_with_its_channels_recorded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("DEEPSEEK_API_KEY", "TELEGRAM_BOT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "papertrail.toml").write_text(FORK, encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(cli, ["try", "--no-serve"])
    assert result.exit_code == 0, result.output
    said = result.output
    folder = tmp_path / ".try"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".try", "papertrail.toml"]

    # the site: branded, and only the fork's categories
    output = folder / "output"
    assert "Robot and security radar" in (output / "index.html").read_text(encoding="utf-8")
    shown = {p.stem for p in (output / "paper").glob("*.html")}
    in_scope = {e.arxiv_id for e in sample.entries() if {"cs.RO", "cs.CR"} & set(e.categories)}
    assert shown and shown <= in_scope
    assert (output / "topic" / "manipulation" / "index.html").is_file()

    # the digests: skipped with the reason Actions gives, none made
    assert "digest: skipped (no API key: $DEEPSEEK_API_KEY is not set" in said
    assert Store(folder / "data").read("digests").num_rows == 0

    # the webhook got the followed author's papers, kept as sent; Telegram said why not
    hook = (folder / "notify" / "webhook.txt").read_text(encoding="utf-8")
    followed = {e.arxiv_id for e in sample.entries() if FOLLOWED in e.authors}
    body = json.loads(hook.split("--- message 1 ---\n", 1)[1])
    assert set(body["arxiv_ids"]) == followed and "subject" in body
    assert "webhook: 1 message, 2 items" in said
    assert "telegram: 2 items not sent: $TELEGRAM_BOT_TOKEN is not set" in said
    assert not (folder / "notify" / "telegram.txt").exists()

    # the command it prints tunes a topic on that store
    (hint,) = [line for line in said.splitlines() if line.startswith("tune a topic")]
    args = hint.split("papertrail ", 1)[1].split()
    preview = runner.invoke(cli, args)
    assert preview.exit_code == 0, preview.output
    assert re.match(r"manipulation: [1-9]\d* of [1-9]\d* papers\n", preview.output)


@pytest.mark.slow
def test_every_channel_kind_records_what_it_would_receive(tmp_path, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    cfg = every_kind(tmp_path)
    lines: list[str] = []
    trial.run(cfg, tmp_path / ".try", lines.append)
    said = "\n".join(lines)
    told = set()
    for channel in cfg.notify:
        text = (tmp_path / ".try" / "notify" / f"{channel.label}.txt").read_text("utf-8")
        assert "--- message 1 ---" in text, channel.kind
        assert not any(v in text for v in SECRETS.values())
        (count,) = re.findall(rf"^  {channel.label}: (\d+ messages?, \d+ items) → ", said,
                              re.M)
        told.add(count)
    assert len(told) == 1  # each kind got the same days' top papers
    assert "not sent" not in said


def test_topics_preview_on_an_empty_store_says_where_a_filled_one_is(tmp_path):
    path = tmp_path / "papertrail.toml"
    path.write_text(FORK, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(path), "topics", "preview",
                                      "manipulation"])
    assert result.exit_code == 0, result.output
    assert "holds no papers: run `papertrail try` and add `--store .try/data`" \
        in result.output


@pytest.mark.parametrize("language", ["en", "zh-CN"])
def test_the_replay_model_answers_in_the_language_asked(language):
    import openai  # here: every worker imports this module, few tests need it

    entry = next(e for e in sample.entries() if e.arxiv_id in sample.digests())
    paper = prompt.PaperText(entry.arxiv_id, 1, entry.title, entry.abstract)
    change = notes_prompt.Change(entry.arxiv_id, 1, 2, entry.title, entry.title + " (v2)",
                                 entry.abstract, entry.abstract + " We add a benchmark.")
    with OpenAIReplay() as llm:
        client = openai.OpenAI(base_url=llm.url, api_key="any")

        def ask(messages: list[dict[str, str]]) -> dict[str, str]:
            answer = client.chat.completions.create(model="replay", messages=messages)
            return json.loads(answer.choices[0].message.content or "")

        digest = ask(prompt.messages(paper, language))
        note = ask(notes_prompt.messages(change, language))["note"]
    if language == "en":
        assert entry.abstract.startswith(digest["tldr"])
        assert digest["method"] == ENGLISH_STAND_IN
        assert note == "title changed; 1 changes in the abstract"
    else:
        assert digest["tldr"] == sample.digests()[entry.arxiv_id]["tldr"]
        assert note == "标题有改动；摘要改动 1 处"
