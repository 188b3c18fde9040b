"""Every registered source (SOURCES), every HTTP notify channel (CHANNELS) and the model
client, run through the same hostile servers (tests/support/servers.py `Hostile`): a reply
that trickles, one without end, redirects (to another local port), a redirect loop, 429
asking to wait within and past the run's bound, 500s and a reset connection. Each fails
with a clear message, within its deadline; a channel is never "sent" and never posts
anywhere it was redirected to. A new source or channel is covered by its registry line."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import re
import socket
import socketserver
import struct
import threading
import time

import pytest

from pipeline import config as config_mod
from pipeline import ingest, outbound
from pipeline.config import Config
from pipeline.digest.generate import describe
from pipeline.notify import channels
from pipeline.notify.items import Item
from pipeline.sources import SOURCES
from pipeline.store import Store
from tests.support.served import SERVED
from tests.support.servers import hostile

NOW = dt.datetime(2026, 6, 22, 12, 0, tzinfo=dt.UTC)
TIMEOUT, RUN = 0.5, 2.0  # seconds: each request, each run (a source's, a channel's)
SLACK = 1.5  # seconds past the bound a loaded machine may take to notice and clean up

REDIRECTS = ["redirect-301", "redirect-302", "redirect-307", "redirect-308"]
# What each case's failure says (of a GET, a POST, the model client).
SAYS = {
    "trickle": r"no complete response within 0\.5 s|max_run_seconds \(2 s\) reached",
    "oversized": r"a response of [\d,]+ bytes, over [\d,]+",
    "endless": r"a response over [\d,]+ bytes \(stopped reading\)",
    "loop": r"more than 5 redirects|HTTP 302 redirect to the same host, not followed",
    "retry-within": r"HTTP 429.*\(gave up after 1 retries\)",
    "retry-over": r"HTTP 429.*; retrying would exceed (max_run_seconds \(2 s\)|the run's time)",
    "500": r"HTTP 500.* \(gave up after 1 retries\)",
    "reset": r"connection failed \(\w+\)",
}
CASES = ["trickle", "oversized", "endless", *REDIRECTS, "loop", "retry-within", "retry-over", "500",
         "reset"]
HTTP_CHANNELS = [k for k, cls in channels.CHANNELS.items() if not issubclass(cls, channels.Email)]


def _pointed(cfg: Config, url: str, timeout: float) -> Config:
    """Every source's settings with each URL at `url`, enabled, quick and bounded."""
    quick = {"enabled": True, "timeout_seconds": timeout, "max_retries": 1,
             "delay_seconds": 0.0, "backoff_seconds": 0.01, "max_backoff_seconds": 0.05,
             "max_run_seconds": max(RUN, 2 * timeout)}
    sources = {}
    for f in dataclasses.fields(cfg.sources):
        settings = getattr(cfg.sources, f.name)
        urls = {g.name: url + "/" for g in dataclasses.fields(settings)
                if str(getattr(settings, g.name)).startswith("http")}
        sources[f.name] = dataclasses.replace(settings, **quick, **urls)
    return dataclasses.replace(cfg, sources=dataclasses.replace(cfg.sources, **sources))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", list(SOURCES))
def test_every_source_fails_clearly_within_its_deadline(name: str, case: str,
                                                        base_config: Config) -> None:
    # A source's cap (64 MB) takes a moment to read on a loaded machine.
    timeout = 10 * TIMEOUT if case == "endless" else TIMEOUT
    with hostile(case) as (url, log, _):
        cfg = _pointed(base_config, url, timeout)
        seed = SERVED[name].seed
        if seed is not None:  # a source whose work the store names asks nothing of an empty one
            seed(Store(cfg.store_path))
        began = time.monotonic()
        report = ingest.ingest(cfg, Store(cfg.store_path), name, now=NOW)
        took = time.monotonic() - began
    assert report.status in ("failed", "partial") and report.error, report
    assert took < cfg.sources.arxiv.max_run_seconds + SLACK, took
    assert log, "the source asked nothing"
    if case in SAYS:
        assert re.search(SAYS[case], report.error), report.error
    if case == "retry-within":  # the second try waited the second asked for
        assert log[1][1] - log[0][1] >= 0.95
    if case == "retry-over":  # an hour is past the run's bound: no second try
        assert len(log) == 1


def _channel(kind: str, url: str) -> tuple[config_mod.Channel, dict[str, str]]:
    """The kind's channel with every URL it posts to at `url` (a field, or the variable
    an `_env` field names) and its other secrets set; quick and bounded."""
    cls = config_mod.CHANNEL_KINDS[kind]
    urls, env = {}, {}
    for f in dataclasses.fields(cls):
        if f.name.endswith("url") and isinstance(f.default, str):
            urls[f.name] = url
        elif f.name.endswith("_env") and f.default:
            env[f.default] = url if f.name == "url_env" else "not-a-real-secret"
    return cls(kind=kind, timeout_seconds=TIMEOUT, max_retries=1, max_run_seconds=RUN,
               **urls), env


ITEM = Item("paper/2606.00001", "2606.00001", "A title", "A. Author",
            "https://arxiv.org/abs/2606.00001", "followed")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", HTTP_CHANNELS)
def test_every_channel_fails_clearly_within_its_deadline_and_is_never_redirected(
        kind: str, case: str) -> None:
    with hostile(case) as (url, log, elsewhere):
        cfg, env = _channel(kind, url)
        sender = channels.open_channel(cfg, "en", env)
        began = time.monotonic()
        with pytest.raises(channels.ChannelError) as failed:  # never "sent"
            sender.send(channels.Message("Head", [ITEM]))
        took = time.monotonic() - began
    said = str(failed.value)
    assert took < RUN + SLACK, took
    assert log and elsewhere == []  # a redirect is never followed, whatever its code
    if case in REDIRECTS:
        code = case.removeprefix("redirect-")
        assert f"HTTP {code} redirect to 127.0.0.1, not followed" in said, said
        assert len(log) == 1  # and not retried: it would be redirected again
    else:
        assert re.search(SAYS[case], said), said
    assert not any(secret in said for secret in env.values())  # a webhook's URL is one


class _SMTPHostile(socketserver.BaseRequestHandler):
    """An SMTP server that trickles its greeting a byte every 0.05 s, or resets."""

    case = ""

    def handle(self) -> None:
        if self.case == "reset":
            self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        try:
            for byte in b"220 mail.example ESMTP" + b" " * 10000:
                self.request.sendall(bytes([byte]))
                time.sleep(0.05)
        except OSError:  # the client gave up
            pass


@pytest.mark.parametrize("case", ["trickle", "reset"])
def test_email_fails_clearly_within_its_deadline(case: str) -> None:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), type(
        "Case", (_SMTPHostile,), {"case": case}))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cfg = config_mod.EmailChannel(kind="email", host="127.0.0.1", port=server.server_address[1],
                                  sender="a@example.org", to=("b@example.org",),
                                  timeout_seconds=TIMEOUT, max_retries=1, max_run_seconds=RUN)
    sender = channels.open_channel(cfg, "en", {})
    began = time.monotonic()
    try:
        with pytest.raises(channels.ChannelError) as failed:
            sender.send(channels.Message("Head", [ITEM]))
    finally:
        server.shutdown()
        server.server_close()
    assert time.monotonic() - began < RUN + SLACK
    said = str(failed.value)
    reset = r"(BrokenPipe|ConnectionReset|SMTPServerDisconnected)\w*:.* \(gave up after 1 retries"
    expected = SAYS["trickle"] if case == "trickle" else reset
    assert re.search(expected, said), said


async def _ask(url: str) -> None:
    import openai  # here, as in the pipeline: every worker imports this module

    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=1,
                                timeout=TIMEOUT, http_client=outbound.model_client(TIMEOUT))
    async with client:
        await client.chat.completions.create(model="m", messages=[{"role": "user",
                                                                   "content": "hi"}])


# The model client's own words for what fails (pipeline.digest.generate.describe).
MODEL_SAYS = {
    "trickle": r"timed out after 0\.5 s",
    "oversized": r"a response of [\d,]+ bytes, over 16,777,216",
    "endless": r"a response over 16,777,216 bytes \(stopped reading\)",
    "loop": r"HTTP 302",
    "retry-within": r"HTTP 429",
    "retry-over": r"HTTP 429",
    "500": r"HTTP 500",
    "reset": r"cannot connect",
}


@pytest.mark.parametrize("case", [c for c in CASES if c != "retry-over"])
def test_the_model_client_fails_clearly_within_its_deadline(case: str) -> None:
    """(A 429 asking an hour: the openai client's own retry waits at most a minute.)"""
    import openai

    cfg = config_mod.DigestConfig(timeout_seconds=TIMEOUT, max_retries=1)
    with hostile(case) as (url, log, elsewhere):
        began = time.monotonic()
        with pytest.raises(openai.OpenAIError) as failed:
            asyncio.run(_ask(url))
        took = time.monotonic() - began
    said = describe(failed.value, cfg)
    assert took < 2 * (TIMEOUT + 1) + SLACK, took  # two tries, its backoff between
    assert log and elsewhere == []
    if case in REDIRECTS:
        assert f"HTTP {case.removeprefix('redirect-')}" in said, said
    else:
        assert re.search(MODEL_SAYS[case], said), said


def test_the_system_cas_are_loaded_once_not_per_request(httpserver, monkeypatch,
                                                        tmp_path) -> None:
    """Loading the CAs costs ~75 ms of CPU: a backfill of thousands of pages paid it for
    each. Once per trust setting (SSL_CERT_FILE / SSL_CERT_DIR, read as httpx2 reads them)."""
    import httpcore2

    loads = []
    default = httpcore2.default_ssl_context
    monkeypatch.setattr(httpcore2, "default_ssl_context",
                        lambda **kw: loads.append(1) or default(**kw))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))  # a trust setting not used before
    httpserver.expect_request("/").respond_with_data("ok")
    for _ in range(3):
        assert outbound.get(httpserver.url_for("/"), {}, time.monotonic() + 5).body == b"ok"
    assert len(loads) == 1
