"""Real local servers the tests talk to: a built site as GitHub Pages serves it, a model
server that trickles, and where `papertrail notify` sends (chat replay, SMTP mailbox)."""

from __future__ import annotations

import contextlib
import dataclasses
import email
import email.policy
import functools
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pipeline.demo import PagesHandler
from pipeline.replay.notify import NotifyReplay


class _Quiet(PagesHandler):  # 404.html for what the site lacks, as GitHub Pages does
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each response waits out a delayed ACK


@contextlib.contextmanager
def running(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 answering with `handler`; yields its base URL. Closing it
    does not wait for a handler still answering (a trickling one never ends by itself)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def serve(directory: Path) -> contextlib.AbstractContextManager[str]:
    """A built site served on 127.0.0.1; yields its base URL."""
    return running(functools.partial(_Quiet, directory=str(directory)))


class Trickle(BaseHTTPRequestHandler):
    """Answers every POST a byte at a time, 0.05 s apart: each read is quick, the whole
    never ends. `part`: "headers" trickles from the status line, "body" after them."""

    part = "body"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000\r\n\r\n")
        if self.part == "body":
            self.wfile.write(head)
            head = b""
        try:
            for byte in head + b" " * 100000:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:  # the client gave up
            pass

    def log_message(self, *args: object) -> None:
        pass


FEISHU_SECRET = "feishu-signing-secret"
SMTP_USER, SMTP_PASSWORD = "robot", "smtp-pa55"


@dataclass
class Mailbox:
    """What the SMTP server accepted, as parsed messages."""

    mails: list[email.message.EmailMessage] = dataclasses.field(default_factory=list)

    async def handle_DATA(self, server, session, envelope):
        self.mails.append(email.message_from_bytes(envelope.content,
                                                   policy=email.policy.default))
        return "250 OK"


@dataclass(frozen=True)
class Services:
    chat: NotifyReplay
    mailbox: Mailbox
    smtp_port: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hostile(BaseHTTPRequestHandler):
    """What a broken or hostile server answers, to GET and POST alike, by `case`:
    trickle (the body a byte every 0.05 s), oversized (80 MB, saying so), endless (80 MB,
    its length not given), redirect-301/302/307/308 (to `elsewhere`), loop (a 302 to itself),
    retry-within / retry-over (429 asking 1 s / an hour), 500, reset (the connection
    reset once the request is read). Every request is logged as (method, monotonic time)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    case = ""
    elsewhere = ""
    log: list[tuple[str, float]]

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def _answer(self) -> None:
        self.log.append((self.command, time.monotonic()))
        case = self.case
        try:
            if case == "trickle":
                self._head(200, {"Content-Length": "100000"})
                for _ in range(100000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
            elif case in ("oversized", "endless"):  # 80 MB, more than any cap
                self.close_connection = True
                length = {"Content-Length": str(80 << 20)} if case == "oversized" else {}
                self._head(200, {"Connection": "close", **length})
                for _ in range(80):
                    self.wfile.write(b"x" * (1 << 20))
            elif case.startswith("redirect-"):
                self._head(int(case.removeprefix("redirect-")),
                           {"Location": self.elsewhere + self.path, "Content-Length": "0"})
            elif case == "loop":
                self._head(302, {"Location": self.path, "Content-Length": "0"})
            elif case.startswith("retry-"):
                wait = "1" if case == "retry-within" else "3600"
                self._head(429, {"Retry-After": wait, "Content-Length": "0"})
            elif case == "500":
                self._head(500, {"Content-Length": "4"})
                self.wfile.write(b"boom")
            elif case == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
        except OSError:  # the client gave up
            self.close_connection = True

    def _head(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def hostile(case: str) -> Iterator[tuple[str, list[tuple[str, float]], list[tuple[str, float]]]]:
    """A Hostile server answering `case`, and the server it redirects to (which answers
    200 "ok" to anything); yields (the hostile URL, its log, the other's log)."""
    logs: tuple[list[tuple[str, float]], list[tuple[str, float]]] = ([], [])
    other = ThreadingHTTPServer(("127.0.0.1", 0), type("Elsewhere", (Hostile,), {
        "case": "ok", "log": logs[1], "_answer": _ok}))
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Case", (Hostile,), {
        "case": case, "log": logs[0],
        "elsewhere": f"http://127.0.0.1:{other.server_port}"}))
    for s in (server, other):
        s.daemon_threads = True
        # a short poll: shutdown() waits one out, and there are 100-odd cases
        threading.Thread(target=s.serve_forever, args=(0.02,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", *logs
    finally:
        for s in (server, other):
            s.shutdown()
            s.server_close()


def _ok(self: Hostile) -> None:
    self.log.append((self.command, time.monotonic()))
    self._head(200, {"Content-Length": "2"})
    self.wfile.write(b"ok")
