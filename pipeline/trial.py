"""`papertrail try`: a fork's own papertrail.toml over the bundled replays, before it is pushed.

The fork's categories, topics, follows, digest settings and `[[notify]]` channels run as
`papertrail run` and `papertrail notify` would, one simulated run per sample day (as the
demo), with everything the config reaches outside pointed at a local stand-in, nothing
edited: arXiv (export API, OAI-PMH, announcement feed) and Hugging Face at the replays of
the sample, the digest model at the replay model server, each channel at a recorder of its
own (pipeline/replay/notify.py). Secrets are read from the environment under the names
the config gives, as the workflow hands them over, so what is missing shows as it would
in Actions; a secret that is set never leaves the process: its recorder gets a stand-in
value in its place. Writes under its folder (`.try/`) only.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from pipeline import build as build_mod
from pipeline.config import Channel, Config, DigestConfig, TelegramChannel, WebhookChannel
from pipeline.demo import DEMO_KEY_ENV, Echo, Replays, demo_config, simulate
from pipeline.notify import notify
from pipeline.notify.channels import CHANNELS, Email, Sender
from pipeline.replay.notify import NotifyReplay, Received
from pipeline.replay.openai import OpenAIReplay
from pipeline.store import Store

FOLDER = Path(".try")
SHOWN_LINES = 12  # of a channel's first message, in the terminal


@dataclass
class Recorder:
    """Where one channel's messages go: its own chat/webhook replay, and for e-mail the
    mails as composed (`outbox`)."""

    channel: Channel
    server: NotifyReplay
    outbox: list[EmailMessage] = field(default_factory=list)

    @property
    def address(self) -> str:
        """The URL a `url_env` of this kind names here."""
        urls = {"feishu": self.server.feishu_url, "slack": self.server.slack_url,
                "discord": self.server.discord_url, "webhook": self.server.hook_url}
        return urls.get(self.channel.kind, "")

    def aimed(self) -> Channel:
        """The channel with the addresses the file gives pointed here."""
        channel = self.channel
        if isinstance(channel, TelegramChannel):
            return dataclasses.replace(channel, api_url=self.server.telegram_api)
        if isinstance(channel, WebhookChannel) and channel.url:
            return dataclasses.replace(channel, url=self.server.hook_url)
        return channel

    def stand_ins(self, env: Mapping[str, str]) -> dict[str, str]:
        """Each secret the channel names that `env` sets, as the value that reaches this
        recorder (every key ending in `_env` names a secret; config.Channel)."""
        values = {"token_env": self.server.token, "url_env": self.address}
        out = {}
        for spec in dataclasses.fields(self.channel):
            name = getattr(self.channel, spec.name)
            if spec.name.endswith("_env") and name and env.get(name):
                out[name] = values.get(spec.name, "try-stand-in")
        return out

    def messages(self) -> list[str]:
        """What the channel would have received, one text per message."""
        if self.channel.kind == "email":
            return [_mail_text(m) for m in self.outbox]
        service = "hook" if self.channel.kind == "webhook" else self.channel.kind
        return [_shown(r) for r in self.server.received(service)]


def _mail_text(mail: EmailMessage) -> str:
    body = mail.get_body(("plain",))
    text = body.get_content() if isinstance(body, EmailMessage) else ""
    return f"Subject: {mail['Subject']}\nTo: {mail['To']}\n\n{text}"


def _shown(received: Received) -> str:
    """A chat message's text as its service takes it (Telegram's HTML, Slack's mrkdwn,
    Discord's Markdown), else the JSON it carried."""
    body = received.body
    if isinstance(body, dict):
        for key in ("text", "content"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return json.dumps(body, ensure_ascii=False, indent=2)


def _kinds(recorders: dict[str, Recorder]) -> dict[str, type[Sender]]:
    """The senders, e-mail's keeping each mail: SMTP has no local stand-in (the channel
    speaks only TLS verified against the system's CAs), so the mail is composed as for the
    server and kept, not delivered."""

    class RecordedEmail(Email):
        def _deliver(self, mail: EmailMessage, deadline: float) -> None:
            recorders[self.cfg.label].outbox.append(mail)

    return {**CHANNELS, "email": RecordedEmail}


def digest_settings(base: DigestConfig, llm: OpenAIReplay, replay_models: bool,
                    language: str, echo: Echo) -> DigestConfig:
    """The fork's [digest] aimed at the replay model server: with its key set (or
    --replay-models) the replay answers, without it digests are skipped as in Actions. The
    fork's own key is never read: the replay takes any."""
    aimed = dataclasses.replace(base, base_url=llm.url)
    if not base.enabled:
        echo("digest: off ([digest] enabled = false), as in Actions")
        return aimed
    if not (replay_models or os.environ.get(base.api_key_env)):
        echo(f"digest: {base.no_key}: skipped, as in Actions (--replay-models answers "
             "from the local replay model server instead)")
        return aimed
    why = "--replay-models" if replay_models else f"${base.api_key_env} is set"
    echo(f"digest: {why}: digests come from the local replay model server, not "
         f"{base.base_url} (no key leaves this machine); change notes are the site's own, "
         "by rule (the replay's would be a rule's diff labelled as a model's)")
    if language == "en":
        echo("digest: language en: the sample's real digests are in Chinese only, so the "
             "replay answers in English with a labelled stand-in (the abstract's first "
             "sentence); your model writes real English digests")
    os.environ.setdefault(DEMO_KEY_ENV, "try")
    return dataclasses.replace(aimed, model="replay", api_key_env=DEMO_KEY_ENV, notes=False)


def _file_name(label: str) -> str:
    return re.sub(r"[^\w.-]", "_", label) + ".txt"


def run(base: Config, folder: Path, echo: Echo, *, port: int = 8000,
        replay_models: bool = False) -> Config:
    """Every sample day as one run of the fork's config from an empty store, each followed
    by its notify; then the site, and what each channel would have received in
    `folder`/notify/. Returns the config as run."""
    for part in ("data", "notify"):
        shutil.rmtree(folder / part, ignore_errors=True)
    cats = ", ".join(base.sources.arxiv.categories)
    echo(f"trying {base.path}: categories {cats} · {len(base.topics)} topics · "
         f"{len(base.follows)} follows · {len(base.notify)} notify channels · "
         f"digests by {base.digest.model} at {base.digest.base_url}")
    servers = [NotifyReplay() for _ in base.notify]
    recorders = {c.label: Recorder(c, s) for c, s in zip(base.notify, servers, strict=True)}
    env: dict[str, str] = {}
    for recorder in recorders.values():
        env |= recorder.stand_ins(os.environ)
    kinds = _kinds(recorders)
    with Replays() as replays:
        for server in servers:
            server.start()
        try:
            cfg = demo_config(base, folder, replays, port)
            cfg = dataclasses.replace(
                cfg, digest=digest_settings(base.digest, replays.llm, replay_models,
                                            cfg.digest_language, echo),
                notify=tuple(r.aimed() for r in recorders.values()))
            store = Store(cfg.store_path)
            now = simulate(cfg, replays, echo, lambda now: echo(
                f"  {notify(cfg, store, env=env, now=now, kinds=kinds).line()}"))
        finally:
            for server in servers:
                server.stop()
    echo(build_mod.build(cfg, now=now).line())
    _report(store, recorders, folder / "notify", echo)
    return cfg


def _report(store: Store, recorders: dict[str, Recorder], out: Path, echo: Echo) -> None:
    """Per channel: what it received (kept in `out`/<channel>.txt, its first message shown)
    or why nothing was sent."""
    if not recorders:
        echo("notify: no [[notify]] channels")
        return
    ledger = store.read("notified", ["channel", "item", "status", "error"]).to_pandas()
    out.mkdir(parents=True, exist_ok=True)
    echo(f"notify: what each channel would have received (in {out}):")
    for label, recorder in recorders.items():
        mine = ledger[ledger["channel"] == label]
        sent = set(mine.loc[mine["status"] == "sent", "item"])
        failed = mine[(mine["status"] == "failed") & ~mine["item"].isin(sent)]
        texts = recorder.messages()
        if texts:
            path = out / _file_name(label)
            path.write_text("".join(f"--- message {i} ---\n{t.rstrip()}\n\n"
                                    for i, t in enumerate(texts, 1)), encoding="utf-8")
            echo(f"  {label}: {len(texts)} message{'s' * (len(texts) != 1)}, "
                 f"{len(sent)} items → {path}")
            for line in texts[0].strip().splitlines()[:SHOWN_LINES]:
                echo(f"    | {line}")
        if not failed.empty:
            error = failed["error"].iloc[-1]
            echo(f"  {label}: {failed['item'].nunique()} items not sent: {error}"
                 + (" (as in Actions; set it here to see this channel's messages: its "
                    "recorder gets a stand-in, never the secret)"
                    if "is not set" in str(error) else ""))
        elif not texts:
            echo(f"  {label}: nothing to send (its follows matched nothing new; `top = N` "
                 "adds the day's top papers)")
