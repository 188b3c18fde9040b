"""Real local servers the tests talk to: a built site as GitHub Pages serves it, a model
server that trickles, and where `papertrail notify` sends (chat replay, SMTP mailbox)."""

from __future__ import annotations

import contextlib
import dataclasses
import email
import email.policy
import functools
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pipeline.demo import PagesHandler
from pipeline.replay.notify import NotifyReplay


class _Quiet(PagesHandler):  # 404.html for what the site lacks, as GitHub Pages does
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each response waits out a delayed ACK


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """A built site served on 127.0.0.1; yields its base URL."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


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
