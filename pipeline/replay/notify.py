"""Local stand-ins for the chat services `papertrail notify` posts to, one server, one path
prefix each, recording every request (`received`), as each service documents its answers:

- Telegram (`/telegram/bot<token>/sendMessage`), https://core.telegram.org/bots/api:
  "The response contains a JSON object, which always has a Boolean field 'ok'"; on
  success `{"ok":true,"result":Message}`, else `{"ok":false,"error_code":…,
  "description":…}` and, when flood control bites, `"parameters":{"retry_after":N}` with
  HTTP 429 ("Too Many Requests: retry after N"). A wrong token is 401 "Unauthorized".
  sendMessage's text is 1-4096 characters after entities are parsed ("Bad Request:
  message is too long"); parse_mode HTML accepts only its listed tags (b, strong, i, em,
  u, ins, s, strike, del, span, tg-spoiler, a, code, pre, blockquote) and the entities
  &lt; &gt; &amp; &quot; ("Bad Request: can't parse entities: …" otherwise).
- Slack (`/slack/…`), https://api.slack.com/messaging/webhooks: an incoming webhook
  answers 200 with the body `ok`; a payload without text 400 `no_text`; a bad JSON body
  400 `invalid_payload`; rate limited: 429 with Retry-After (docs.slack.dev, rate limits).
- Discord (`/discord/…`), https://discord.com/developers/docs/resources/webhook#execute-webhook:
  without `?wait=true` success is 204 No Content; content over 2,000 characters is 400
  `{"code":50035,"message":"Invalid Form Body",…}`; rate limited
  (https://discord.com/developers/docs/topics/rate-limits) 429 with
  `{"message":"You are being rate limited.","retry_after":s,"global":false}` and
  Retry-After.
- Feishu / Lark custom bots (`/feishu/…`),
  https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot: HTTP 200 with
  `{"code":0,"msg":"success","data":{}}`; with signature verification on, a request whose
  `sign` is not Base64(HmacSHA256(key = timestamp + "\\n" + secret, message = "")) or whose
  timestamp is over an hour off gets `{"code":19021,"msg":"sign match fail or timestamp
  is not within one hour from current time"}` (still HTTP 200; the algorithm as Gitea's
  Feishu webhook implements it, go-gitea/gitea#34802).
- A generic webhook (`/hook/…`): 200 and `{}`; what it expects is ours (docs/CONFIG.md:
  the JSON, and the X-PaperTrail-* headers, recorded with the request; tests check the
  signature with the receiver CONFIG.md gives, on a server of their own).

Modelled, not recorded: the bodies of errors beyond the fields above, and faults on demand
(`fail`, one service's queue): the HTTP-level faults of pipeline/replay/faults.py (429 with
Retry-After, and retry_after in the body where the service puts it; 500; a reset; a
stall; …), or a service `down` answering 500 to every request until it is taken back up.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from pipeline.replay._server import Answer, LocalServer, ReplayHandler
from pipeline.replay.faults import TRANSPORT, Fault, FaultKind

SERVICES = ("telegram", "slack", "discord", "feishu", "hook")
TELEGRAM_TAGS = frozenset({"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span",
                           "tg-spoiler", "a", "code", "pre", "blockquote"})


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: Any  # the JSON it carried


@dataclass
class _State:
    received: dict[str, list[Received]] = field(
        default_factory=lambda: {s: [] for s in SERVICES})
    faults: dict[str, deque[Fault | None]] = field(
        default_factory=lambda: {s: deque() for s in SERVICES})
    down: set[str] = field(default_factory=set)


class _TelegramHTML(HTMLParser):
    """Telegram's HTML parse mode, as strict as its answers say: known tags only, closed
    in order; the text it shows."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.text: list[str] = []
        self.problem = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TELEGRAM_TAGS:
            self.problem = self.problem or f'Unsupported start tag "{tag}"'
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open.pop() != tag:
            self.problem = self.problem or f'Unexpected end tag "{tag}"'

    def handle_data(self, data: str) -> None:
        self.text.append(data)


class NotifyReplay(LocalServer):
    models = TRANSPORT

    def __init__(self, telegram_token: str = "123456:replay-token", feishu_secret: str = "",
                 port: int = 0) -> None:
        self.token, self.feishu_secret = telegram_token, feishu_secret
        self.state = _State()
        self._state_lock = threading.Lock()
        super().__init__(port)

    # -- where each service is --------------------------------------------------------------

    @property
    def telegram_api(self) -> str:
        return f"{self.base}/telegram"

    @property
    def slack_url(self) -> str:
        return f"{self.base}/slack/services/T0001/B0001/replaysecret"

    @property
    def discord_url(self) -> str:
        return f"{self.base}/discord/api/webhooks/1/replaysecret"

    @property
    def feishu_url(self) -> str:
        return f"{self.base}/feishu/open-apis/bot/v2/hook/replaysecret"

    @property
    def hook_url(self) -> str:
        return f"{self.base}/hook/papers"

    def received(self, service: str) -> list[Received]:
        with self._state_lock:
            return list(self.state.received[service])

    def fail(self, service: str, *faults: Fault | FaultKind | str | None) -> None:
        """Queue faults for one service: each of its requests consumes one."""
        queued = self.checked(faults)
        with self._state_lock:
            self.state.faults[service].extend(queued)

    def inject(self, *faults: Fault | FaultKind | str | None) -> None:
        """Faults here are per service: one queue for all would leave them unread."""
        raise TypeError("NotifyReplay queues faults per service: fail(service, *faults)")

    def set_down(self, service: str, down: bool = True) -> None:
        with self._state_lock:
            (self.state.down.add if down else self.state.down.discard)(service)

    def _take(self, service: str, body: Any, path: str, headers: dict[str, str]
              ) -> Fault | None:
        with self._state_lock:
            self.state.received[service].append(Received(path, headers, body))
            if service in self.state.down:
                return Fault(FaultKind.ERROR)
            queue = self.state.faults[service]
            return queue.popleft() if queue else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"replay": self})


def _json(status: int, value: object) -> Answer:
    return status, json.dumps(value).encode(), "application/json", {}


def _telegram_no(code: int, description: str, **extra: Any) -> Answer:
    return _json(code, {"ok": False, "error_code": code, "description": description, **extra})


def _telegram(replay: NotifyReplay, body: Any) -> Answer:
    if not isinstance(body, dict) or "chat_id" not in body:
        return _telegram_no(400, "Bad Request: chat_id is empty")
    text = str(body.get("text", ""))
    shown = text
    if body.get("parse_mode") == "HTML":
        parser = _TelegramHTML()
        parser.feed(text)
        parser.close()
        if parser.problem or parser.open:
            problem = parser.problem or f'Unclosed tag "{parser.open[-1]}"'
            return _telegram_no(400, f"Bad Request: can't parse entities: {problem}")
        shown = html.unescape("".join(parser.text))
    if not shown.strip():
        return _telegram_no(400, "Bad Request: message text is empty")
    if len(shown) > 4096:
        return _telegram_no(400, "Bad Request: message is too long")
    return _json(200, {"ok": True, "result": {
        "message_id": len(replay.received("telegram")), "date": int(time.time()),
        "chat": {"id": body["chat_id"]}, "text": shown}})


def _slack(replay: NotifyReplay, body: Any) -> Answer:
    if not isinstance(body, dict):
        return 400, b"invalid_payload", "text/plain", {}
    if not body.get("text"):
        return 400, b"no_text", "text/plain", {}
    return 200, b"ok", "text/html", {}


def _discord(replay: NotifyReplay, body: Any) -> Answer:
    content = body.get("content", "") if isinstance(body, dict) else ""
    if not content or len(content) > 2000:
        return _json(400, {"code": 50035, "message": "Invalid Form Body",
                           "errors": {"content": {}}})
    return 204, b"", "text/plain", {}


def _feishu(replay: NotifyReplay, body: Any) -> Answer:
    if not isinstance(body, dict) or body.get("msg_type") not in (
            "text", "post", "image", "share_chat", "interactive"):
        return _json(200, {"code": 19001, "msg": "param invalid: incoming webhook access "
                           "token invalid", "data": {}})
    if replay.feishu_secret:
        stamp = str(body.get("timestamp", ""))
        key = f"{stamp}\n{replay.feishu_secret}".encode()
        sign = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest())
        fresh = stamp.isdigit() and abs(time.time() - int(stamp)) < 3600
        if not fresh or body.get("sign", "").encode() != sign:
            return _json(200, {"code": 19021, "data": {}, "msg": "sign match fail or "
                               "timestamp is not within one hour from current time"})
    return _json(200, {"code": 0, "msg": "success", "data": {}})


def _hook(replay: NotifyReplay, body: Any) -> Answer:
    return _json(200 if isinstance(body, dict) else 400, {})


_ANSWERS: dict[str, Callable[[NotifyReplay, Any], Answer]] = {
    "telegram": _telegram, "slack": _slack, "discord": _discord, "feishu": _feishu,
    "hook": _hook}


def _error(service: str, status: int, seconds: float) -> Answer:
    """Each service's error answer (modelled beyond the fields its documents name)."""
    if service == "telegram":
        description = (f"Too Many Requests: retry after {seconds:g}" if status == 429
                       else "Internal Server Error")
        extra = {"parameters": {"retry_after": seconds}} if status == 429 else {}
        return _telegram_no(status, description, **extra)
    if service == "slack":
        return status, b"rate_limited" if status == 429 else b"internal_error", "text/plain", {}
    if service == "discord":
        if status == 429:
            return _json(429, {"message": "You are being rate limited.",
                               "retry_after": seconds, "global": False})
        return _json(status, {"message": f"{status}: Internal Server Error", "code": 0})
    if service == "feishu":
        return _json(status, {"code": status, "msg": "internal error"})
    return _json(status, {"error": "down"})


class _Handler(ReplayHandler):
    replay: ClassVar[NotifyReplay]

    def do_POST(self) -> None:
        service = self.path.split("/")[1]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if service not in SERVICES:
            self._send(404, b"not found", "text/plain")
            return
        fault = self.replay._take(service, body, self.path, dict(self.headers.items()))
        if service == "telegram" and self.path != f"/telegram/bot{self.replay.token}/sendMessage":
            self._send(*_telegram_no(401, "Unauthorized"))
            return
        self.respond(fault, lambda: _ANSWERS[service](self.replay, body))

    def error_page(self, status: int, seconds: float) -> tuple[bytes, str]:
        _, body, ctype, _ = _error(self.path.split("/")[1], status, seconds)
        return body, ctype
