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
import contextlib
import hashlib
import hmac
import html
import json
import os
import re
import smtplib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, fields, replace
from email.message import EmailMessage
from typing import Any

from pipeline import config as config_mod
from pipeline import outbound
from pipeline.notify.items import Item
from pipeline.site import i18n
from pipeline.text.untrusted import clean_text

ERROR_CHARS = 300  # of a server's error text, kept in the ledger
USER_AGENT = "papertrail/0.1 (notify)"


class ChannelError(outbound.Failed):
    """The channel did not take a message: recorded on its items, which the next run
    sends again. The text names no secret."""


class MessageRefused(ChannelError):
    """The service refused this one message (a 4xx: too long, bad markup): its items are
    recorded as failed, the channel's other messages still go."""


@dataclass(frozen=True)
class Policy:
    """A channel's requests as outbound.Requests takes them: no pause between messages,
    backoff from 1 s; a Retry-After is honoured as long as max_run_seconds allows."""

    timeout_seconds: float
    max_retries: int
    delay_seconds: float = 0.0
    backoff_seconds: float = 1.0
    max_backoff_seconds: float = 60.0


@dataclass(frozen=True)
class Entry:
    """One paper of a message, said once: its items (the paper, a watched paper's news)."""

    items: tuple[Item, ...]
    heading: str = ""  # a weekly digest's group, on the group's first entry

    @property
    def paper(self) -> Item:
        return self.items[0]

    @property
    def link(self) -> str:
        """The paper's page on the site, else arXiv's (then no second link beside it)."""
        return self.paper.page or self.paper.url

    def lines(self, s: Mapping[str, str]) -> list[str]:
        """The plain lines under its title: authors, its line, topics, why and news."""
        p = self.paper
        said = [*dict.fromkeys(i.why for i in self.items if i.why),
                *dict.fromkeys(i.note for i in self.items if i.note)]
        topics = s["notify_topics"].format(names=", ".join(p.topics)) if p.topics else ""
        return [x for x in (p.authors, p.line, topics, " · ".join(said)) if x]


@dataclass(frozen=True)
class Message:
    heading: str  # a digest's line on top ("" for one paper sent on its own)
    items: list[Item]
    more: str = ""  # "12 more in your feed" (or "Your feed"), linked to `link`
    link: str = ""  # the personal feed's page, when the site has a base_url
    grouped: bool = False  # a weekly digest: its entries under their group's heading

    @property
    def entries(self) -> list[Entry]:
        """The items by paper, each paper once (_by_paper), a group's heading on its first."""
        out: list[Entry] = []
        for items in _by_paper(self.items, self.grouped):
            group = items[0].group if self.grouped else ""
            fresh = group and (not out or group != out[-1].paper.group)
            out.append(Entry(tuple(items), group if fresh else ""))
        return out

    @property
    def subject(self) -> str:
        return self.heading or (self.items[0].title if self.items else "")


Verdict = tuple[str, float | None] | None  # None: accepted; else (problem, retry_after)


class Sender:
    """One configured channel. `limit`: the most characters one message may hold (the
    service's own limit, or less), None for none; `size` measures a message so."""

    limit: int | None = None

    def __init__(self, cfg: config_mod.Channel, env: Mapping[str, str], language: str
                 ) -> None:
        self.cfg, self.env, self.language = cfg, env, language
        self.s = i18n.strings(language)
        self.secrets: dict[str, str] = {}  # value → the variable's name, for redacting
        # Every request of the channel's run, retries and waits, within max_run_seconds.
        self.calls = outbound.Requests(
            Policy(cfg.timeout_seconds, cfg.max_retries),
            time.monotonic() + cfg.max_run_seconds, name=f"notify {cfg.label}",
            limit=f"max_run_seconds ({cfg.max_run_seconds:g} s)", error=ChannelError)
        self.open()

    @property
    def requests(self) -> int:
        return self.calls.stats.requests

    @property
    def retries(self) -> int:
        return self.calls.stats.retries

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

    def _post(self, url: str, body: Mapping[str, Any] | bytes,
              verdict: Callable[[outbound.Answer], Verdict],
              headers: Mapping[str, str] | None = None) -> None:
        """POST JSON (`body`, or its bytes as written) through outbound (bounded as a whole,
        never redirected); retried on 429 (after the wait asked for), 5xx and transport
        errors, the same bytes each time."""
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **(headers or {})}

        def check(answer: outbound.Answer) -> None:
            told = verdict(answer)
            if told is None:
                return
            problem, wait = told
            if answer.status == 429 or answer.status >= 500:
                raise outbound.Transient(problem, wait)
            raise MessageRefused(self.redact(problem))  # ours to fix: no retry

        try:
            self.calls.call(lambda deadline: outbound.post(url, content, sent, deadline),
                            check, url)
        except MessageRefused:
            raise
        except ChannelError as exc:
            raise ChannelError(self.redact(str(exc))) from None


def _json(answer: outbound.Answer) -> dict[str, Any]:
    try:
        body = json.loads(answer.body)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _retry_after(answer: outbound.Answer) -> float | None:
    return outbound.retry_after(answer.headers.get("Retry-After"))


def _http(answer: outbound.Answer, said: object = "") -> str:
    text = said or answer.body[:200].decode(errors="replace")
    return f"HTTP {answer.status}: {text}"


def _ok(answer: outbound.Answer) -> bool:
    return 200 <= answer.status < 300


# -- e-mail ---------------------------------------------------------------------------------------


def _text(m: Message, s: Mapping[str, str]) -> str:
    out = [m.heading, ""] if m.heading else []
    for e in m.entries:
        out += [f"== {e.heading} ==", ""] if e.heading else []
        out += [e.paper.title, *e.lines(s), e.link]
        out += [f"arXiv: {e.paper.url}"] if e.paper.page else []
        out.append("")
    if m.more:
        out.append(" ".join(filter(None, (m.more, m.link))))
    return "\n".join(out).strip() + "\n"


def _email_html(m: Message, s: Mapping[str, str]) -> str:
    e = html.escape
    out = [f"<h2>{e(m.heading)}</h2>"] if m.heading else []
    for entry in m.entries:
        out += [f"<h3>{e(entry.heading)}</h3>"] if entry.heading else []
        arxiv = f' · <a href="{e(entry.paper.url)}">arXiv</a>' if entry.paper.page else ""
        lines = "".join(f"<br>{e(line)}" for line in entry.lines(s))
        out.append(f'<p><a href="{e(entry.link)}"><b>{e(entry.paper.title)}</b></a>{arxiv}'
                   f"{lines}</p>")
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
        mail.set_content(_text(message, self.s))
        mail.add_alternative(_email_html(message, self.s), subtype="html")
        try:
            self.calls.call(lambda deadline: self._deliver(mail, deadline), lambda _: None,
                            f"{cfg.host}:{cfg.port}")
        except ChannelError as exc:
            raise ChannelError(self.redact(str(exc))) from None

    def _deliver(self, mail: EmailMessage, deadline: float) -> None:
        """One delivery by `deadline`: smtplib's timeout is per read, so a watchdog shuts
        the connection when the deadline passes (TooSlow); a 4xx is Transient, a 5xx
        refused."""
        cfg, context = self.cfg, ssl.create_default_context()
        timeout = max(deadline - time.monotonic(), 0.01)
        watch = _Watchdog(timeout)
        try:
            smtp: smtplib.SMTP
            if cfg.security == "tls":
                smtp = watch.on(smtplib.SMTP_SSL(context=context, timeout=timeout))
            else:
                smtp = watch.on(smtplib.SMTP(timeout=timeout))
            # Connected after the watchdog holds it; the host the constructor would have set
            # is the name TLS checks the certificate against.
            smtp._host = cfg.host  # type: ignore[attr-defined]
            try:
                smtp.connect(cfg.host, cfg.port)
                if cfg.security == "starttls":
                    smtp.starttls(context=context)  # refused: SMTPNotSupportedError
                if cfg.username:
                    smtp.login(cfg.username, self.password)
                smtp.send_message(mail)
            finally:
                smtp.close()
        except smtplib.SMTPResponseException as exc:  # 4xx: for now; 5xx: refused
            said = exc.smtp_error
            problem = f"SMTP {exc.smtp_code}: " + (
                said.decode(errors="replace") if isinstance(said, bytes) else str(said))
            if 400 <= exc.smtp_code < 500:
                raise outbound.Transient(problem) from None
            raise MessageRefused(self.redact(problem)) from None
        except (smtplib.SMTPException, OSError) as exc:
            if watch.fired.is_set():
                raise outbound.TooSlow from None
            raise outbound.Transient(f"{type(exc).__name__}: {exc}") from None
        finally:
            watch.timer.cancel()


class _Watchdog:
    """Shuts an SMTP connection's socket after `seconds`: a blocked read returns, and the
    delivery fails instead of waiting on a server that answers a byte at a time."""

    def __init__(self, seconds: float) -> None:
        self.fired = threading.Event()
        self.smtp: smtplib.SMTP | None = None
        self.timer = threading.Timer(seconds, self._cut)
        self.timer.daemon = True
        self.timer.start()

    def on(self, smtp: smtplib.SMTP) -> smtplib.SMTP:
        self.smtp = smtp
        return smtp

    def _cut(self) -> None:
        self.fired.set()
        sock = self.smtp.sock if self.smtp is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


# -- Telegram -------------------------------------------------------------------------------------


def _telegram_html(m: Message, s: Mapping[str, str]) -> str:
    e, a = telegram_escape, html.escape  # text; a URL inside an attribute
    out = [f"<b>{e(m.heading)}</b>"] if m.heading else []
    for entry in m.entries:
        head = f"<b>{e(entry.heading)}</b>\n" if entry.heading else ""
        arxiv = f' · <a href="{a(entry.paper.url)}">arXiv</a>' if entry.paper.page else ""
        out.append("\n".join([f'{head}<a href="{a(entry.link)}">{e(entry.paper.title)}</a>'
                              f"{arxiv}", *map(e, entry.lines(s))]))
    if m.more:
        out.append(f'<a href="{a(m.link)}">{e(m.more)}</a>' if m.link else e(m.more))
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
        return len(_telegram_html(message, self.s))

    def send(self, message: Message) -> None:
        body = {"chat_id": self.cfg.chat_id, "text": _telegram_html(message, self.s),
                "parse_mode": "HTML", "link_preview_options": {"is_disabled": True}}
        self._post(f"{self.cfg.api_url.rstrip('/')}/bot{self.token}/sendMessage", body,
                   _telegram_verdict)


def _telegram_verdict(response: outbound.Answer) -> Verdict:
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
        for e in m.entries:
            rows += [[{"tag": "text", "text": f"【{e.heading}】"}]] if e.heading else []
            arxiv = [{"tag": "text", "text": " · "}, {"tag": "a", "text": "arXiv",
                                                       "href": e.paper.url}]
            rows.append([{"tag": "a", "text": e.paper.title, "href": e.link},
                         *(arxiv if e.paper.page else [])])
            rows += [[{"tag": "text", "text": line}] for line in e.lines(self.s)]
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


def _feishu_verdict(response: outbound.Answer) -> Verdict:
    body = _json(response)
    if _ok(response) and body.get("code", body.get("StatusCode")) == 0:
        return None
    said = f"code {body.get('code')}: {body.get('msg', '')}" if "code" in body else ""
    return _http(response, said), _retry_after(response)


# -- Slack ----------------------------------------------------------------------------------------


def slack_escape(text: str) -> str:
    """mrkdwn's control characters as its entities (Slack escapes nothing else)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_text(m: Message, s: Mapping[str, str]) -> str:
    e = slack_escape
    out = [f"*{e(m.heading)}*"] if m.heading else []
    for entry in m.entries:
        head = f"*{e(entry.heading)}*\n" if entry.heading else ""
        arxiv = f" · <{_slack_url(entry.paper.url)}|arXiv>" if entry.paper.page else ""
        out.append("\n".join([f"{head}<{_slack_url(entry.link)}|{e(entry.paper.title)}>{arxiv}",
                              *map(e, entry.lines(s))]))
    if m.more:
        out.append(f"<{_slack_url(m.link)}|{e(m.more)}>" if m.link else e(m.more))
    return "\n\n".join(out)


def _slack_url(url: str) -> str:
    """A URL inside <…|…>: its `|` and `>` would end it (arXiv's and the site's have none)."""
    return slack_escape(url).replace("|", "%7C")


class Slack(Sender):
    """An incoming webhook: {"text": mrkdwn}; the answer is the body `ok`."""

    cfg: config_mod.SlackChannel
    limit = 3_000  # Slack truncates a text past 40,000 and advises well under 4,000

    def open(self) -> None:
        self.url = self.secret(self.cfg.url_env)

    def size(self, message: Message) -> int:
        return len(_slack_text(message, self.s))

    def send(self, message: Message) -> None:
        self._post(self.url, {"text": _slack_text(message, self.s)}, _slack_verdict)


def _slack_verdict(response: outbound.Answer) -> Verdict:
    if response.status == 200 and response.body.strip() == b"ok":
        return None
    return _http(response), _retry_after(response)


# -- Discord --------------------------------------------------------------------------------------

_MARKDOWN = re.compile(r"([\\*_~`|<>#\-\[\]()@:!])")


def discord_escape(text: str) -> str:
    """A backslash before every character Discord's Markdown (or a mention, an emoji, a
    link) could read: the text shows as typed."""
    return _MARKDOWN.sub(r"\\\1", text)


def _discord_text(m: Message, s: Mapping[str, str]) -> str:
    e = discord_escape
    out = [f"**{e(m.heading)}**"] if m.heading else []
    for entry in m.entries:
        head = f"__{e(entry.heading)}__\n" if entry.heading else ""
        arxiv = f" · [arXiv](<{entry.paper.url}>)" if entry.paper.page else ""
        out.append("\n".join([f"{head}**[{e(entry.paper.title)}](<{entry.link}>)**{arxiv}",
                              *map(e, entry.lines(s))]))
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
        return len(_discord_text(message, self.s))

    def send(self, message: Message) -> None:
        body = {"content": _discord_text(message, self.s), "allowed_mentions": {"parse": []},
                "flags": self.SUPPRESS_EMBEDS}
        self._post(self.url, body, _discord_verdict)


def _discord_verdict(response: outbound.Answer) -> Verdict:
    if 200 <= response.status < 300:
        return None
    body = _json(response)
    wait = body.get("retry_after")
    return (_http(response, body.get("message", "")),
            float(wait) if isinstance(wait, int | float) else _retry_after(response))


# -- a generic webhook ----------------------------------------------------------------------------


class Webhook(Sender):
    """POSTs each message as JSON: its subject, the arXiv ids it names, and each item;
    any 2xx is success. With `secret_env`, signed (SIGNATURE): the receiver can tell the
    message came from here, unaltered and recent."""

    cfg: config_mod.WebhookChannel

    def open(self) -> None:
        self.url = self.cfg.url or self.secret(self.cfg.url_env)
        self.signing = self.secret(self.cfg.secret_env).encode() if self.cfg.secret_env \
            else b""

    def send(self, message: Message) -> None:
        body = json.dumps({
            "subject": message.subject,
            "arxiv_ids": list(dict.fromkeys(i.arxiv_id for i in message.items)),
            "items": [asdict(i) for i in message.items],
            "more": message.more, "link": message.link}).encode()
        delivery = hashlib.sha256("\n".join([self.cfg.label, *(i.key for i in message.items),
                                             message.more]).encode()).hexdigest()[:32]
        headers = {"X-PaperTrail-Delivery": delivery}
        if self.signing:
            headers |= signature(self.signing, delivery, int(time.time()), body)
        self._post(self.url, body, lambda r: None if _ok(r) else (_http(r), _retry_after(r)),
                   headers)


def signature(secret: bytes, delivery: str, stamp: int, body: bytes) -> dict[str, str]:
    """A webhook's signature headers: HMAC-SHA256, keyed with the secret, of
    "<timestamp>.<delivery id>." and the body's exact bytes (docs/CONFIG.md has a receiver
    that checks it). The timestamp lets a receiver refuse an old message replayed; the
    delivery id, the same for the same items sent again, lets it drop a repeat."""
    signed = f"{stamp}.{delivery}.".encode() + body
    return {"X-PaperTrail-Timestamp": str(stamp),
            "X-PaperTrail-Signature": "sha256=" + hmac.new(secret, signed,
                                                           hashlib.sha256).hexdigest()}


CHANNELS: dict[str, type[Sender]] = {
    "email": Email, "telegram": Telegram, "feishu": Feishu, "slack": Slack,
    "discord": Discord, "webhook": Webhook}


def open_channel(cfg: config_mod.Channel, language: str, env: Mapping[str, str] | None = None,
                 kinds: Mapping[str, type[Sender]] = CHANNELS) -> Sender:
    """The channel ready to send, in the site's language: raises ChannelError when a secret
    it needs is not set. `kinds`: the sender of each kind (`papertrail try` records e-mail)."""
    return kinds[cfg.kind](cfg, os.environ if env is None else env, language)


# The most characters of an item's fields in a message (an ellipsis ends a longer one): an
# item then fits every channel's limit, so one hostile item (a 5,000-character author
# list) cannot make the service refuse the whole digest.
FIELD_CHARS = {"title": 300, "authors": 200, "why": 160, "note": 200, "line": 250,
               "group": 80}


def bounded(item: Item) -> Item:
    """The item with each text field cut to FIELD_CHARS."""
    cut: dict[str, Any] = {f.name: _cut(getattr(item, f.name), FIELD_CHARS[f.name])
                           for f in fields(item) if f.name in FIELD_CHARS}
    return replace(item, **cut)


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def _by_paper(items: list[Item], grouped: bool) -> list[list[Item]]:
    """The items by paper (a watched paper's news beside it), in the order papers first
    come; a weekly digest's by group first, each group where its first paper is."""
    papers: dict[str, list[Item]] = {}
    for item in items:
        papers.setdefault(item.arxiv_id, []).append(item)
    # the paper itself first (its why, its group), then its news
    out = [sorted(p, key=lambda i: not i.key.startswith("paper/")) for p in papers.values()]
    if grouped:
        order = {g: n for n, g in enumerate(dict.fromkeys(p[0].group for p in out))}
        out.sort(key=lambda p: order[p[0].group])  # stable: newest first within a group
    return out


def messages(sender: Sender, heading: str, items: list[Item], more: str,
             link: str) -> Iterator[Message]:
    """The channel's messages, each item's fields bounded and each paper once: a digest
    (`daily`, or `weekly` grouped by what matched), split where it would pass the channel's
    limit (a paper too long even so goes alone, to fail alone); or one message per paper
    (`immediate`, linking the personal feed), the count of those left out last."""
    grouped = sender.cfg.format == "weekly"
    papers = _by_paper([bounded(i) for i in items], grouped)
    if sender.cfg.format == "immediate":
        feed = sender.s["notify_feed"] if link else ""
        yield from (Message("", paper, feed, link) for paper in papers)
        if more:
            yield Message(heading, [], more, link)
        return

    def fits(message: Message) -> bool:
        return not sender.limit or sender.size(message) <= sender.limit

    chunk: list[Item] = []
    for paper in papers:
        if chunk and not fits(Message(heading, [*chunk, *paper], grouped=grouped)):
            yield Message(heading, chunk, grouped=grouped)
            chunk = []
        chunk += paper
        if not fits(Message(heading, chunk, grouped=grouped)):
            yield Message(heading, chunk, grouped=grouped)  # this one paper alone
            chunk = []
    last = Message(heading, chunk, more, link, grouped)
    if chunk and not fits(last):  # the count apart
        yield Message(heading, chunk, grouped=grouped)
        last = replace(last, items=[])
    if last.items or last.more:
        yield last
