"""The arXiv source against arXiv's own recorded responses, served verbatim over HTTP."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip

import arxiv
import pytest
from pytest_httpserver import HTTPServer

from pipeline.outbound import retry_after
from pipeline.sources import arxiv as source
from pipeline.sources._atom import Unreadable, parse_page
from tests.support.replays import FIXTURES

API = FIXTURES / "arxiv-api"
NOW = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)


def recorded(name: str) -> bytes:
    return (API / name).read_bytes()


@pytest.fixture
def api_config(config, httpserver: HTTPServer):
    return dataclasses.replace(config.sources.arxiv, api_url=httpserver.url_for("/api/query"),
                               delay_seconds=0.0, backoff_seconds=0.01, timeout_seconds=2.0)


def test_pages_of_a_recorded_query(api_config, httpserver):
    for start in (0, 10):
        httpserver.expect_request("/api/query", query_string={
            "search_query": "all:testing", "id_list": "", "sortBy": "relevance",
            "sortOrder": "descending", "start": str(start), "max_results": "10",
        }).respond_with_data(recorded(f"arxiv_api_query_testing_start{start}_max10.xml"),
                             content_type="application/atom+xml")
    cfg = dataclasses.replace(api_config, page_size=10)
    client = source.PoliteClient(cfg, deadline=float("inf"))
    results = list(client.results(arxiv.Search("all:testing", max_results=20)))
    rows = [source.to_row(r, NOW) for r in results]
    assert len(rows) == 20 and client.stats.requests == 2
    first = rows[0]
    assert first["arxiv_id"] == "2202.12139" and first["version"] == 1
    assert first["primary_category"] == "cs.SE" and first["categories"] == ["cs.SE", "cs.LG"]
    assert first["doi"] == "10.1109/ICSTW55395.2022.00035"
    assert first["journal_ref"].startswith("Artificial Intelligence in Software Testing")
    assert first["published"] == dt.datetime(2022, 2, 24, 15, 5, 19, tzinfo=dt.UTC)
    assert "\n" not in first["abstract"]
    assert any(r["version"] > 1 for r in rows)  # the fixture holds v2/v3 ids
    assert len({r["arxiv_id"] for r in rows}) == 20


def test_old_style_id_with_affiliations(api_config, httpserver):
    httpserver.expect_request("/api/query").respond_with_data(
        recorded("arxiv_api_id_astro-ph_0601001_affiliations.xml"))
    fetch = source.fetch_ids(api_config, ["astro-ph/0601001"], NOW)
    assert fetch.complete
    [row] = fetch.rows
    assert row["arxiv_id"] == "astro-ph/0601001" and row["version"] >= 1
    assert row["authors"] and all(isinstance(a, str) for a in row["authors"])


def test_single_id(api_config, httpserver):
    httpserver.expect_request("/api/query", query_string={
        "search_query": "", "id_list": "1605.08386", "sortBy": "relevance",
        "sortOrder": "descending", "start": "0", "max_results": "1",
    }).respond_with_data(recorded("arxiv_api_id_1605.08386.xml"))
    fetch = source.fetch_ids(api_config, ["1605.08386"], NOW)
    assert [(r["arxiv_id"], r["version"], r["title"]) for r in fetch.rows] == [
        ("1605.08386", 1, "Heat-bath random walks with Markov bases")]
    assert fetch.rows[0]["comment"] == "20 pages, 3 figures"
    assert fetch.rows[0]["journal_ref"] is None


def test_a_compressed_response_is_decoded(api_config, httpserver):
    httpserver.expect_request("/api/query").respond_with_data(
        gzip.compress(recorded("arxiv_api_id_1605.08386.xml")),
        headers={"Content-Encoding": "gzip"})
    fetch = source.fetch_ids(api_config, ["1605.08386"], NOW)
    assert fetch.complete and [r["arxiv_id"] for r in fetch.rows] == ["1605.08386"]


def test_unknown_id_is_an_empty_answer_not_an_error(api_config, httpserver):
    httpserver.expect_request("/api/query").respond_with_data(
        recorded("arxiv_api_empty_id_0000.0000.xml"))
    fetch = source.fetch_ids(api_config, ["0000.0000"], NOW)
    assert fetch.complete and fetch.rows == []
    assert len(httpserver.log) == 1  # an honest empty answer is not retried


def test_error_feed_with_http_400_is_reported_not_retried(api_config, httpserver):
    httpserver.expect_request("/api/query").respond_with_data(
        recorded("arxiv_api_error_id_abc_http400.xml"), status=400)
    fetch = source.fetch_ids(api_config, ["abc"], NOW)
    assert not fetch.complete
    assert "arXiv API error (HTTP 400): incorrect id format for abc" in fetch.error
    assert len(httpserver.log) == 1


def test_retry_after_as_http_date():
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30)
    wait = retry_after(soon.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    assert 25 <= wait <= 30
    assert retry_after("7") == 7.0
    assert retry_after("soon") is None


@pytest.mark.parametrize(("short", "expected"), [
    ("2202.12139v3", ("2202.12139", 3)), ("2202.12139", ("2202.12139", 1)),
    ("astro-ph/0601001v1", ("astro-ph/0601001", 1)), ("hep-th/9901001v12", ("hep-th/9901001", 12)),
])
def test_split_id(short, expected):
    assert source.split_id(short) == expected


def test_a_truncated_page_is_refused_not_read_short():
    body = recorded("arxiv_api_query_testing_start0_max10.xml")
    assert len(parse_page(body).results) == 10
    with pytest.raises(Unreadable, match="truncated or malformed XML"):
        parse_page(body[: len(body) // 2])
