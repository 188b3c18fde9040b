"""Every kind of `[[notify]]` channel (CHANNELS, keyed as config.CHANNEL_KINDS): how a
message is written in its markup, how long one may be, and how it is sent.

Untrusted text (titles, authors, reasons, digests) is escaped for each markup: HTML for
e-mail and Telegram (`&`, `<`, `>`; quotes too inside an attribute), Slack's mrkdwn (`&`,
`<`, `>`: all its control characters), Discord's Markdown (a backslash before each
formatting character; and `allowed_mentions` parses no mention, so `@everyone` in a title
pings nobody), Feishu's post (text elements, which it renders as they are, never `<at>`)
and JSON (the webhook). Secrets come only from the environment, by the names the config
gives, and are cut out of every error text (a Telegram URL holds its token, a webhook URL
is one).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import os
import re
import smtplib
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from email.message import EmailMessage
from typing import Any

import requests

from pipeline import config as config_mod
from pipeline.notify.items import Item
from pipeline.text.untrusted import clean_text

MAX_WAIT = 60.0  # seconds a 429's retry_after may ask; longer: the channel waits a run
ERROR_CHARS = 300  # of a server's error text, kept in the ledger


class ChannelError(Exception):
    """The channel did not take a message: recorded on its items, which the next run
    sends again. The text names no secret."""


@dataclass(frozen=True)
class Message:
    heading: str  # a digest's line on top ("" for one item sent on its own)
    items: list[Item]
    more: str = ""  # "12 more in your feed", when max_items left some out
    link: str = ""  # the personal feed's page, when the site has a base_url

    @property
    def subject(self) -> str:
        return self.heading or (self.items[0].title if self.items else "")


Verdict = tuple[str, float | None] | None  # None: accepted; else (problem, retry_after)


class Sender:
    """One configured channel. `limit`: the most characters one message may hold (the
    service's own limit, or less), None for none; `size` measures a message so."""

    limit: int | None = None

    def __init__(self, cfg: config_mod.Channel, env: Mapping[str, str],
                 session: requests.Session, language: str) -> None:
        self.cfg, self.env, self.session, self.language = cfg, env, session, language
        self.secrets: dict[str, str] = {}  # value → the variable's name, for redacting
        self.requests = self.retries = 0
        self.open()

    def open(self) -> None:
        """Read the secrets the channel needs (ChannelError when one is not set)."""

    def secret(self, name: str) -> str:
        value = self.env.get(name, "")
        if not value:
            why = f"${name} is not set"
            if self.env.get("GITHUB_ACTIONS") == "true" and \
                    name not in config_mod.WORKFLOW_NOTIFY_ENVS:
                why += (" (the update workflow passes only the secrets "
                        f"{', '.join(config_mod.WORKFLOW_NOTIFY_ENVS)})")
            raise ChannelError(why)
        self.secrets[value] = name
        return value

    def redact(self, text: str) -> str:
        for value, name in self.secrets.items():
            text = text.replace(value, f"${name}")
        return clean_text(text)[:ERROR_CHARS]

    def size(self, message: Message) -> int:
        return 0

    def send(self, message: Message) -> None:
        raise NotImplementedError

    def _post(self, url: str, body: Mapping[str, Any],
              verdict: Callable[[requests.Response], Verdict],
              headers: Mapping[str, str] | None = None) -> None:
        """POST JSON; retry on 429 (after the wait asked for), 5xx and transport errors."""
        for attempt in range(self.cfg.max_retries + 1):
            self.requests += 1
            wait: float | None = None
            try:
                response = self.session.post(url, json=body, timeout=self.cfg.timeout_seconds,
                                             headers=headers)
            except requests.RequestException as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                told = verdict(response)
                if told is None:
                    return
                problem, wait = told
                if response.status_code != 429 and response.status_code < 500:
                    raise ChannelError(self.redact(problem))  # ours to fix: no retry
            wait = 2.0 ** attempt if wait is None else wait
            if attempt == self.cfg.max_retries or wait > MAX_WAIT:
                raise ChannelError(self.redact(problem))
            self.retries += 1
            time.sleep(wait)


def _retry_after(response: requests.Response) -> float | None:
    try:
        return float(response.headers.get("Retry-After", ""))
    except ValueError:
        return None


def _json(response: requests.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _http(response: requests.Response, said: object = "") -> str:
    text = said or response.text[:200]
    return f"HTTP {response.status_code}: {text}"


# -- e-mail ---------------------------------------------------------------------------------------


def _text(m: Message) -> str:
    out = [m.heading, ""] if m.heading else []
    for i in m.items:
        out += [i.title, i.authors, " · ".join(filter(None, (i.why, i.note))), i.url, ""]
    if m.more:
        out.append(" ".join(filter(None, (m.more, m.link))))
    return "\n".join(out).strip() + "\n"


def _email_html(m: Message) -> str:
    e = html.escape
    out = [f"<h2>{e(m.heading)}</h2>"] if m.heading else []
    for i in m.items:
        out.append(f'<p><a href="{e(i.url)}"><b>{e(i.title)}</b></a><br>{e(i.authors)}<br>'
                   f"<small>{e(' · '.join(filter(None, (i.why, i.note))))}</small></p>")
    if m.more:
        more = e(m.more)
        out.append(f'<p><a href="{e(m.link)}">{more}</a></p>' if m.link else f"<p>{more}</p>")
    return "<!DOCTYPE html><html><body>" + "".join(out) + "</body></html>"


class Email(Sender):
    """SMTP with STARTTLS (port 587) or TLS from the first byte (465), the server's
    certificate verified against the system's CAs; never in clear."""

    cfg: config_mod.EmailChannel

    def open(self) -> None:
        self.password = self.secret(self.cfg.password_env) if self.cfg.username else ""

    def send(self, message: Message) -> None:
        cfg = self.cfg
        mail = EmailMessage()
        mail["Subject"], mail["From"], mail["To"] = message.subject, cfg.sender, ", ".join(cfg.to)
        mail.set_content(_text(message))
        mail.add_alternative(_email_html(message), subtype="html")
        for attempt in range(cfg.max_retries + 1):
            self.requests += 1
            try:
                self._deliver(mail)
                return
            except smtplib.SMTPResponseException as exc:  # 4xx: for now; 5xx: refused
                said = exc.smtp_error
                problem = f"SMTP {exc.smtp_code}: " + (
                    said.decode(errors="replace") if isinstance(said, bytes) else str(said))
                transient = 400 <= exc.smtp_code < 500
            except (smtplib.SMTPException, OSError) as exc:
                problem, transient = f"{type(exc).__name__}: {exc}", True
            if not transient or attempt == cfg.max_retries:
                raise ChannelError(self.redact(problem))
            self.retries += 1
            time.sleep(2.0 ** attempt)

    def _deliver(self, mail: EmailMessage) -> None:
        cfg, context = self.cfg, ssl.create_default_context()
        smtp: smtplib.SMTP
        if cfg.security == "tls":
            smtp = smtplib.SMTP_SSL(cfg.host, cfg.port, timeout=cfg.timeout_seconds,
                                    context=context)
        else:
            smtp = smtplib.SMTP(cfg.host, cfg.port, timeout=cfg.timeout_seconds)
        with smtp:
            if cfg.security == "starttls":
                smtp.starttls(context=context)  # refused: SMTPNotSupportedError, nothing sent
            if cfg.username:
                smtp.login(cfg.username, self.password)
            smtp.send_message(mail)


# -- Telegram -------------------------------------------------------------------------------------


def _telegram_html(m: Message) -> str:
    e = telegram_escape
    out = [f"<b>{e(m.heading)}</b>"] if m.heading else []
    for i in m.items:
        lines = [f'<a href="{html.escape(i.url)}">{e(i.title)}</a>']
        lines += [f"<i>{e(i.authors)}</i>"] if i.authors else []
        lines += [e(" · ".join(filter(None, (i.why, i.note))))]
        out.append("\n".join(lines))
    if m.more:
        out.append(f'<a href="{html.escape(m.link)}">{e(m.more)}</a>' if m.link
                   else e(m.more))
    return "\n\n".join(out)


def telegram_escape(text: str) -> str:
    """Telegram's HTML: `<`, `>` and `&` as entities, all it asks outside an attribute."""
    return html.escape(text, quote=False)


class Telegram(Sender):
    """The Bot API's sendMessage, parse_mode HTML, link previews off."""

    cfg: config_mod.TelegramChannel
    limit = 4096  # characters of text, after entities (the markup counted too: safe side)

    def open(self) -> None:
        self.token = self.secret(self.cfg.token_env)

    def size(self, message: Message) -> int:
        return len(_telegram_html(message))

    def send(self, message: Message) -> None:
        body = {"chat_id": self.cfg.chat_id, "text": _telegram_html(message),
                "parse_mode": "HTML", "link_preview_options": {"is_disabled": True}}
        self._post(f"{self.cfg.api_url.rstrip('/')}/bot{self.token}/sendMessage", body,
                   _telegram_verdict)


def _telegram_verdict(response: requests.Response) -> Verdict:
    body = _json(response)
    if body.get("ok") is True:
        return None
    parameters = body.get("parameters")
    wait = parameters.get("retry_after") if isinstance(parameters, dict) else None
    return (_http(response, body.get("description", "")),
            float(wait) if isinstance(wait, int | float) else _retry_after(response))


# -- Feishu / Lark --------------------------------------------------------------------------------


class Feishu(Sender):
    """A custom bot's webhook, msg_type post (text and link elements), signed when the bot
    asks for it."""

    cfg: config_mod.FeishuChannel
    limit = 18_000  # bytes of the request body; Feishu takes 20 KB

    def open(self) -> None:
        self.url = self.secret(self.cfg.url_env)
        self.signing = self.secret(self.cfg.secret_env) if self.cfg.secret_env else ""

    def body(self, m: Message) -> dict[str, object]:
        rows: list[list[dict[str, str]]] = []
        for i in m.items:
            rows.append([{"tag": "a", "text": i.title, "href": i.url}])
            rows += [[{"tag": "text", "text": i.authors}]] if i.authors else []
            rows.append([{"tag": "text", "text": " · ".join(filter(None, (i.why, i.note)))}])
        if m.more:
            rows.append([{"tag": "a", "text": m.more, "href": m.link} if m.link
                         else {"tag": "text", "text": m.more}])
        language = "zh_cn" if self.language == "zh-CN" else "en_us"
        return {"msg_type": "post", "content": {"post": {language: {
            "title": m.subject, "content": rows}}}}

    def size(self, message: Message) -> int:
        return len(json.dumps(self.body(message)).encode())

    def send(self, message: Message) -> None:
        body = self.body(message)
        if self.signing:
            stamp = str(int(time.time()))
            key = f"{stamp}\n{self.signing}".encode()
            body |= {"timestamp": stamp, "sign": base64.b64encode(
                hmac.new(key, b"", hashlib.sha256).digest()).decode()}
        self._post(self.url, body, _feishu_verdict)


def _feishu_verdict(response: requests.Response) -> Verdict:
    body = _json(response)
    if response.ok and body.get("code", body.get("StatusCode")) == 0:
        return None
    said = f"code {body.get('code')}: {body.get('msg', '')}" if "code" in body else ""
    return _http(response, said), _retry_after(response)


# -- Slack ----------------------------------------------------------------------------------------


def slack_escape(text: str) -> str:
    """mrkdwn's control characters as its entities (Slack escapes nothing else)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_text(m: Message) -> str:
    e = slack_escape
    out = [f"*{e(m.heading)}*"] if m.heading else []
    for i in m.items:
        lines = [f"<{i.url}|{e(i.title)}>"]
        lines += [e(i.authors)] if i.authors else []
        lines += [e(" · ".join(filter(None, (i.why, i.note))))]
        out.append("\n".join(lines))
    if m.more:
        out.append(f"<{m.link}|{e(m.more)}>" if m.link else e(m.more))
    return "\n\n".join(out)


class Slack(Sender):
    """An incoming webhook: {"text": mrkdwn}; the answer is the body `ok`."""

    cfg: config_mod.SlackChannel
    limit = 3_000  # Slack truncates a text past 40,000 and advises well under 4,000

    def open(self) -> None:
        self.url = self.secret(self.cfg.url_env)

    def size(self, message: Message) -> int:
        return len(_slack_text(message))

    def send(self, message: Message) -> None:
        self._post(self.url, {"text": _slack_text(message)}, _slack_verdict)


def _slack_verdict(response: requests.Response) -> Verdict:
    if response.status_code == 200 and response.text.strip() == "ok":
        return None
    return _http(response), _retry_after(response)


# -- Discord --------------------------------------------------------------------------------------

_MARKDOWN = re.compile(r"([\\*_~`|<>#\-\[\]()@:!])")


def discord_escape(text: str) -> str:
    """A backslash before every character Discord's Markdown (or a mention, an emoji, a
    link) could read: the text shows as typed."""
    return _MARKDOWN.sub(r"\\\1", text)


def _discord_text(m: Message) -> str:
    e = discord_escape
    out = [f"**{e(m.heading)}**"] if m.heading else []
    for i in m.items:
        lines = [f"**[{e(i.title)}](<{i.url}>)**"]
        lines += [e(i.authors)] if i.authors else []
        lines += [e(" · ".join(filter(None, (i.why, i.note))))]
        out.append("\n".join(lines))
    if m.more:
        out.append(f"[{e(m.more)}](<{m.link}>)" if m.link else e(m.more))
    return "\n\n".join(out)


class Discord(Sender):
    """A webhook's execute: content (2,000 characters), mentions parsed from none of it,
    link embeds suppressed; 204 is success."""

    cfg: config_mod.DiscordChannel
    limit = 2_000
    SUPPRESS_EMBEDS = 1 << 2

    def open(self) -> None:
        self.url = self.secret(self.cfg.url_env)

    def size(self, message: Message) -> int:
        return len(_discord_text(message))

    def send(self, message: Message) -> None:
        body = {"content": _discord_text(message), "allowed_mentions": {"parse": []},
                "flags": self.SUPPRESS_EMBEDS}
        self._post(self.url, body, _discord_verdict)


def _discord_verdict(response: requests.Response) -> Verdict:
    if 200 <= response.status_code < 300:
        return None
    body = _json(response)
    wait = body.get("retry_after")
    return (_http(response, body.get("message", "")),
            float(wait) if isinstance(wait, int | float) else _retry_after(response))


# -- a generic webhook ----------------------------------------------------------------------------


class Webhook(Sender):
    """POSTs each message as JSON: its subject, the arXiv ids it names, and each item;
    any 2xx is success."""

    cfg: config_mod.WebhookChannel

    def open(self) -> None:
        self.url = self.cfg.url or self.secret(self.cfg.url_env)

    def send(self, message: Message) -> None:
        body = {"subject": message.subject,
                "arxiv_ids": list(dict.fromkeys(i.arxiv_id for i in message.items)),
                "items": [asdict(i) for i in message.items],
                "more": message.more, "link": message.link}
        self._post(self.url, body, lambda r: None if r.ok else (_http(r), _retry_after(r)))


CHANNELS: dict[str, type[Sender]] = {
    "email": Email, "telegram": Telegram, "feishu": Feishu, "slack": Slack,
    "discord": Discord, "webhook": Webhook}


def open_channel(cfg: config_mod.Channel, language: str, env: Mapping[str, str] | None = None,
                 session: requests.Session | None = None,
                 kinds: Mapping[str, type[Sender]] = CHANNELS) -> Sender:
    """The channel ready to send, in the site's language: raises ChannelError when a secret
    it needs is not set. `kinds`: the sender of each kind (`papertrail try` records e-mail)."""
    return kinds[cfg.kind](cfg, os.environ if env is None else env,
                           session or requests.Session(), language)


def messages(sender: Sender, heading: str, items: list[Item], more: str,
             link: str) -> Iterator[Message]:
    """The channel's messages: a digest (`daily`), split where it would pass the channel's
    limit; or one message per item (`immediate`), the count of those left out last."""
    if sender.cfg.format == "immediate":
        yield from (Message("", [i]) for i in items)
        if more:
            yield Message(heading, [], more, link)
        return
    chunk: list[Item] = []
    for item in items:
        wanted = Message(heading, [*chunk, item])
        if chunk and sender.limit and sender.size(wanted) > sender.limit:
            yield Message(heading, chunk)
            chunk = [item]
        else:
            chunk.append(item)
    last = Message(heading, chunk, more, link)
    if sender.limit and sender.size(last) > sender.limit and chunk:  # the count apart
        yield Message(heading, chunk)
        last = replace(last, items=[])
    if last.items or last.more:
        yield last
