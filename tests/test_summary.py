"""The job summary ($GITHUB_STEP_SUMMARY) shows upstream text as text: an OAI-PMH error
body written as Markdown (a table row, an image, a link, HTML, code) stays one line of
words in its cell, as GitHub renders it (checked with the `markdown` package, GitHub's
tables and escapes)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import markdown
import pytest
from click.testing import CliRunner

from pipeline import runs
from pipeline.cli import cli
from pipeline.store import Store
from pipeline.summary import markdown as summary
from pipeline.summary import plain
from tests.support.markdown import shown

HOSTILE = ("| a | b |\n| c | d |\n![x](http://e/x.png) [link](http://e) <img src=x> "
           "<a href=http://e>a</a> ``code`` www.e.com a@e.com *em* _u_ # h\r\n- item &lt;x&gt; "
           "back\\|slash \\")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _rendered(text: str) -> tuple[str, list[str]]:
    """The summary's HTML and its tags, by name."""
    page = markdown.markdown(text, extensions=["tables"])
    parser = _Tags()
    parser.feed(page)
    return page, [tag for tag, _ in parser.tags]


def _oai_error(httpserver, text: str) -> None:
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
            '<responseDate>2026-06-26T01:00:00Z</responseDate>'
            f'<error code="badArgument">{html.escape(text)}</error></OAI-PMH>')
    httpserver.expect_request("/oai").respond_with_data(body, content_type="text/xml")


def test_an_oai_error_body_lands_in_the_summary_as_text(tmp_path, httpserver):
    _oai_error(httpserver, HOSTILE)
    path = tmp_path / "papertrail.toml"
    path.write_text(f'[store]\npath = "data"\n[sources.arxiv]\n'
                    f'oai_url = "{httpserver.url_for("/oai")}"\ndelay_seconds = 0\n'
                    'max_retries = 0\n[sources.hf]\nenabled = false\n', encoding="utf-8")
    ingest = CliRunner().invoke(cli, ["--config", str(path), "ingest", "--source", "oai"])
    assert "badArgument" in ingest.output, ingest.output
    result = CliRunner().invoke(cli, ["--config", str(path), "data", "summary"])
    assert result.exit_code == 0, result.output
    page, tags = _rendered(result.output)
    assert "img" not in tags and "a" not in tags and "code" not in tags, page
    assert tags.count("tr") == 2, page  # the header and the one source's row
    assert set(tags) <= {"h2", "table", "thead", "tbody", "tr", "th", "td", "p", "ul", "li"}
    row = re.findall(r"<tr>(.*?)</tr>", page, re.S)[1]
    assert row.count("<td>") == 8  # source, status, four counts, tokens, error


@pytest.mark.parametrize("text", [HOSTILE, "`" * 5, "\\" * 3 + "|", "x" * 5000])
def test_any_error_is_one_cell_of_its_row_and_one_line_of_the_list(tmp_path, text):
    store = Store(tmp_path / "data")
    with runs.recorded(store, "oai") as run:
        run.record(status="failed", error=text)
    page, tags = _rendered(summary(Store(tmp_path / "data")))
    assert "img" not in tags and "a" not in tags and "code" not in tags, page
    (row,) = re.findall(r"<tbody>\s*<tr>(.*?)</tr>", page, re.S)
    assert row.count("<td>") == 8
    (item,) = re.findall(r"<li>(.*?)</li>", page, re.S)
    assert item.startswith("⚠ oai failed: ")
    assert "\n" not in plain(text)


def test_plain_text_reads_back_as_typed_in_commonmark():
    """GitHub turns each backslash escape and entity back into the character."""
    typed = "| a | b | ![x](http://e/x.png) <img src=x> ``c`` \\ &amp; ok"
    assert shown(plain(typed)) == typed
    assert shown(plain("x" * 5000)) == "x" * 999 + "…"
