"""FORKING.md works as written: its example papertrail.toml (cs.RO, one advisor, DeepSeek by
docs/DIGESTS.md's recipe, a Telegram chat and an inbox) is a valid config, the workflow hands
it its key, the pipeline runs with it and its first notification arrives; the guide names
this repository and says what each failure looks like."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from pipeline import config as config_mod
from pipeline import demo, schedule
from pipeline.notify import notify
from pipeline.replay import sample
from pipeline.store import Store
from tests.support.servers import SMTP_PASSWORD, SMTP_USER

pytestmark = pytest.mark.slow  # runs FORKING.md's pipeline end to end

REPO = Path(__file__).resolve().parents[1]
GUIDE = (REPO / "FORKING.md").read_text(encoding="utf-8")


def example() -> str:
    (block,) = re.findall(r"```toml\n(.*?)```", GUIDE, re.S)
    return block


def section(title: str) -> str:
    return GUIDE.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def written_as(tmp_path: Path) -> config_mod.Config:
    """The example, as the guide says: the whole of papertrail.toml."""
    path = tmp_path / "papertrail.toml"
    path.write_text(example(), encoding="utf-8")
    return config_mod.load(path)


def test_the_example_is_a_robotics_site_following_one_advisor_with_deepseek(tmp_path):
    cfg = written_as(tmp_path)
    assert cfg.sources.arxiv.categories == ("cs.RO",)
    assert cfg.site.title == "Robot radar" and cfg.site.language == "en"
    (follow,) = cfg.follows
    assert follow.authors == ("Sergey Levine",) and follow.watch == ("2606.19350",)
    assert {t.slug for t in cfg.topics} == {"manipulation", "legged-locomotion"}
    # the [digest] table is docs/DIGESTS.md's DeepSeek recipe, word for word
    digests = (REPO / "docs" / "DIGESTS.md").read_text(encoding="utf-8")
    recipe = re.search(r"### DeepSeek\n\n```toml\n(.*?)```", digests, re.S).group(1)
    assert recipe in example()
    assert tomllib.loads(example())["digest"] == tomllib.loads(recipe)["digest"]
    # ... and the update workflow hands the run step the secret of the name it gives
    update = yaml.safe_load((REPO / ".github/workflows/update.yml").read_text("utf-8"))
    (run,) = [s for s in update["jobs"]["build"]["steps"]
              if s.get("run", "").startswith("papertrail run")]
    assert cfg.digest.api_key_env == "DEEPSEEK_API_KEY"
    assert run["env"]["DEEPSEEK_API_KEY"] == "${{ secrets.DEEPSEEK_API_KEY }}"


def test_the_pipeline_runs_with_the_example_builds_its_site_and_notifies(
        tmp_path, services, monkeypatch):
    # `papertrail --config papertrail.toml demo`; its Telegram chat and inbox are local
    # servers (aiosmtpd with STARTTLS, the replay), so the e-mail really goes over SMTP
    local = example().replace('chat_id = "-1001234567890"\n', 'chat_id = "-1001234567890"\n'
                              f'api_url = "{services.chat.telegram_api}"\n').replace(
        'host = "smtp.gmail.com"\nusername = "you@gmail.com"',
        f'host = "127.0.0.1"\nport = {services.smtp_port}\nusername = "{SMTP_USER}"')
    (tmp_path / "papertrail.toml").write_text(local, encoding="utf-8")
    cfg = demo.run(config_mod.load(tmp_path / "papertrail.toml"), tmp_path / "demo",
                   lambda line: None)
    stored = Store(cfg.store_path).read("papers", columns=["categories"])
    robotics = [c for c in stored.column("categories").to_pylist() if "cs.RO" in c]
    # every cs.RO paper of the sample (all cross-lists there) came through the arXiv sources
    assert len(robotics) == sum("cs.RO" in e.categories for e in sample.entries()) > 0
    home = (cfg.output_path / "index.html").read_text(encoding="utf-8")
    assert "Robot radar" in home and "Robotics on arXiv, and my advisor&#39;s work." in home
    for page in ("topic/manipulation/index.html", "topic/legged-locomotion/index.html",
                 "me/index.html"):
        assert (cfg.output_path / page).is_file(), page
    # the first notification: what the follows bring, to both
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", services.chat.token)
    monkeypatch.setenv("SMTP_PASSWORD", SMTP_PASSWORD)
    first = notify(cfg, Store(cfg.store_path))
    assert first.status == "ok" and first.counts["sent"] > 0, first.line()
    (mail,) = services.mailbox.mails
    (chat,) = [r.body for r in services.chat.received("telegram")]
    watched = cfg.follows[0].watch[0]  # its news: a new version, in both
    assert watched in mail.get_body(("plain",)).get_content() and watched in chat["text"]
    assert notify(cfg, Store(cfg.store_path)).counts["sent"] == 0  # each item once


def test_the_guide_names_this_repository_and_both_ways_to_copy_it():
    assert "This repository is **PaperTrail (研踪)**" in GUIDE
    choice = section('0. Fork, or "Use this template"?')
    assert "**Fork**" in choice and "**Use this template**" in choice
    assert "`data` branch" in choice and "history" in choice


def test_the_schedule_table_is_the_workflows_and_forks_are_told_to_enable_it():
    said = re.findall(r"^\| `([^`]+)` \|", section("The schedule"), re.M)
    assert said == list(schedule.CRONS)
    assert "Enable workflow" in section("3. Enable Actions, the schedules and Pages")
    assert "PUT /repos/{owner}/{repo}/actions/workflows/{id}/enable" in section("The schedule")
    scale = (REPO / "docs" / "SCALE.md").read_text(encoding="utf-8")
    assert "docs/SCALE.md#from-arxivs-announcement-to-the-site" in GUIDE
    assert "\n## From arXiv's announcement to the site\n" in scale


def test_the_notifications_and_follows_sections_point_at_the_config_reference():
    notify = section("Notifications (optional): e-mail and chat")
    assert "docs/CONFIG.md#notify" in notify and "TELEGRAM_BOT_TOKEN" in notify
    assert "(docs/CONFIG.md" in section("Following people")


def test_each_failure_has_its_symptom_cause_and_fix():
    table = section("What each failure looks like").strip().splitlines()
    assert table[0] == "| symptom | cause | fix |"
    rows = [re.split(r"(?<!\\)\|", row)[1:-1] for row in table[2:]]
    assert len(rows) >= 12
    for row in rows:
        assert len(row) == 3 and all(cell.strip() for cell in row), row
