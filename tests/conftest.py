"""Shared fixtures: real local servers and real stores on disk, named for the state they give.
What they are made of lives in tests/support/; this file holds fixtures and the hook that
sorts tests into tiers (docs/TESTING.md)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from pipeline import config as config_mod
from pipeline import demo
from pipeline.config import Config
from pipeline.merge import merge_arxiv
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.hf import HFReplay
from pipeline.replay.notify import NotifyReplay
from pipeline.replay.openai import OpenAIReplay
from pipeline.store import Store
from pipeline.tables import ARXIV_SNAPSHOT, PAPERS, VERSIONS, empty
from pipeline.text.taxonomy import CS_CATEGORIES
from tests.support.browser import ARGS, CHROMIUM
from tests.support.replays import fast_arxiv, fast_hf
from tests.support.servers import (
    FEISHU_SECRET,
    SMTP_PASSWORD,
    SMTP_USER,
    Mailbox,
    Services,
    Trickle,
    free_port,
)
from tests.support.site import BuiltSite, build_in_english, build_sample_site, make_config

# A test is tiered by what it uses, so a new one lands in its tier without a thought:
# `make test-fast` leaves out what drives chromium and what needs a built site.
TIERS = {"browser": "browser", "zh_site": "slow", "en_site": "slow", "demo_site": "slow"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in TIERS.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(TIERS[fixture])


@pytest.fixture
def base_config(tmp_path: Path) -> Config:
    return make_config(tmp_path, None)


@pytest.fixture
def replay() -> Iterator[ArxivReplay]:
    """The arXiv replay over the bundled sample, showing everything announced."""
    with ArxivReplay(sample.entries()) as server:
        yield server


@pytest.fixture
def config(base_config: Config, replay: ArxivReplay) -> Config:
    return fast_arxiv(base_config, replay.url)


@pytest.fixture
def store(config: Config) -> Store:
    return Store(config.store_path)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """An empty bare repository standing in for the project on GitHub."""
    bare = tmp_path / "github.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    return bare


# -- the Hugging Face replay, and the sample's papers as a table -----------------------------------


@pytest.fixture
def hf_replay() -> Iterator[HFReplay]:
    """The HF daily-papers replay over the bundled sample days (2026-06-22 … 26)."""
    with HFReplay() as server:
        yield server


@pytest.fixture
def hf_config(config: Config, hf_replay: HFReplay) -> Config:
    """Both sources pointed at their local replays."""
    return fast_hf(config, hf_replay.endpoint)


@pytest.fixture
def llm() -> Iterator[OpenAIReplay]:
    """The model replay: chat (digests, change notes) and embeddings over the sample."""
    with OpenAIReplay() as server:
        yield server


@pytest.fixture(params=["headers", "body"])
def trickle(request: pytest.FixtureRequest) -> Iterator[str]:
    """A model server that trickles its answer (the status line and headers, or the body);
    yields its base URL."""
    handler = type("Trickle", (Trickle,), {"part": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def sample_papers() -> pa.Table:
    """The bundled sample's newest versions as a papers table (no server needed)."""
    rows = [{**{k: v for k, v in e.__dict__.items() if k != "announced"},
             "authors": list(e.authors), "categories": list(e.categories),
             "primary_category": e.primary_category, "fetched_at": e.announced}
            for e in sample.entries()]
    batch = pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT)
    return merge_arxiv(empty(PAPERS), empty(VERSIONS), batch, CS_CATEGORIES).papers


# -- a built site in a real browser: Debian's chromium via Playwright -----------------------------

@pytest.fixture(scope="module")
def browser():
    """Per module: Playwright's sync API keeps an event loop running in this thread while it
    is open, and a later test's asyncio.run() (the digest step) refuses to run inside it.
    No skip when Playwright or chromium is missing: .ci/run installs both, and a skipped
    browser test would hide a broken set-up."""
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh profile per test; fails the test on any console error, page error or a
    request to anywhere but 127.0.0.1. A page asked for at an address the site lacks
    (404.html, status 404: the test checks it) is not an error; its resources are."""
    context = browser.new_context(accept_downloads=True)
    errors: list[str] = []
    hosts: list[str] = []
    missing: set[str] = set()  # documents that came with status 404

    def console(m):
        if m.type == "error" and not (m.text.startswith("Failed to load resource: the server "
                                                       "responded with a status of 404")
                                      and m.location.get("url") in missing):
            errors.append(m.text)

    def response(r):
        if r.request.is_navigation_request() and r.status == 404:
            missing.add(r.url)

    def route(r):
        host = urlparse(r.request.url).hostname
        hosts.append(host or r.request.url)
        if host == "127.0.0.1":
            r.continue_()
        else:
            r.abort()

    context.route("**/*", route)
    pg = context.new_page()
    pg.on("response", response)
    pg.on("console", console)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert errors == []
    assert set(hosts) <= {"127.0.0.1"}, set(hosts)


# -- the services `papertrail notify` sends to: real local servers ------------------------------

@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, which the client is told to trust."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True,
                   capture_output=True)
    return cert, key


@pytest.fixture
def services(certificate, monkeypatch) -> Iterator[Services]:
    import ssl

    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # what create_default_context trusts
    mailbox = Mailbox()

    def login(server, session, envelope, mechanism, auth_data):
        return AuthResult(success=(auth_data.login, auth_data.password)
                          == (SMTP_USER.encode(), SMTP_PASSWORD.encode()))

    port = free_port()
    smtp = Controller(mailbox, hostname="127.0.0.1", port=port, tls_context=context,
                      require_starttls=True, authenticator=login, auth_require_tls=True)
    smtp.start()
    try:
        with NotifyReplay(feishu_secret=FEISHU_SECRET) as chat:
            yield Services(chat, mailbox, port)
    finally:
        smtp.stop()


# -- the sample's site, built once per session (per xdist worker) --------------------------------


@pytest.fixture(scope="session")
def zh_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The Chinese site of every sample day (tests/support/site.py). Shared: read only; a
    test that changes the store or the output copies them first."""
    return build_sample_site(tmp_path_factory.mktemp("zh-site"))


@pytest.fixture(scope="session")
def en_site(zh_site: BuiltSite, tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The same store's site in English. Shared: read only."""
    return build_in_english(zh_site, tmp_path_factory.mktemp("en-site"))


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """The demo run over every sample day, then its site (pipeline/demo.py): its config.
    Shared: read only."""
    return demo.run(config_mod.load(demo.CONFIG), tmp_path_factory.mktemp("demo"),
                    lambda line: None)
