"""The prompt, the output schema, the defensive reply parser, the replay's answers."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline import config as config_mod
from pipeline.config import ConfigError
from pipeline.digest.generate import Reply, parse_completion
from pipeline.digest.plan import select
from pipeline.digest.prompt import (
    FIELDS,
    PaperText,
    estimate_tokens,
    messages,
    prompt_hash,
    validate,
)
from pipeline.replay.faults import Fault
from pipeline.replay.openai import OpenAIReplay
from pipeline.tables import PAPERS, VERSIONS

GOOD = {"tldr": "一句话。", "motivation": "动机", "method": "方法", "results": "结果",
        "conclusion": "结论"}


def test_valid_reply_keeps_text_as_is() -> None:
    reply = {**GOOD, "tldr": "  <b>x</b> & [link](http://e.x)  ", "extra": "ignored"}
    fields, problem = validate(json.dumps(reply), "stop")
    assert problem == "" and fields == {**GOOD, "tldr": "<b>x</b> & [link](http://e.x)"}


def test_control_characters_are_removed_but_newlines_and_tabs_kept() -> None:
    reply = {**GOOD, "tldr": "一句\x00话\x1b。\x7f", "method": "第一步\n\t第二步\x85\x9f\r"}
    fields, problem = validate(json.dumps(reply), "stop")
    assert problem == ""
    assert fields == {**GOOD, "tldr": "一句话。", "method": "第一步\n\t第二步"}


def test_a_field_of_controls_only_is_empty() -> None:
    assert validate(json.dumps({**GOOD, "results": "\x00\x01"}), "stop") == (
        None, "results is empty")


def test_a_lone_surrogate_makes_the_reply_invalid() -> None:
    assert validate(json.dumps({**GOOD, "tldr": "x\udc00"}), "stop") == (
        None, "tldr has an unpaired surrogate (not valid Unicode)")


def test_a_json_code_fence_is_tolerated() -> None:
    fields, _ = validate("```json\n" + json.dumps(GOOD) + "\n```", "stop")
    assert fields == GOOD


@pytest.mark.parametrize(("content", "finish", "problem"), [
    (None, "stop", "the reply is empty"),
    ("[1, 2]", "stop", "the reply is not a JSON object"),
    ("{\"tldr\": ", "stop", "the reply is not valid JSON"),
    (json.dumps(GOOD), "length", "the reply was cut off at max_output_tokens"),
    (json.dumps({**GOOD, "tldr": "a\nb"}), "stop", "tldr is more than one line"),
    (json.dumps({**GOOD, "method": 3}), "stop", "method is not a string"),
    (json.dumps({**GOOD, "results": " "}), "stop", "results is empty"),
    (json.dumps({**GOOD, "conclusion": "x" * 1001}), "stop",
     "conclusion has 1001 characters, at most 1000"),
])
def test_invalid_replies_say_what_is_wrong(content: str | None, finish: str,
                                           problem: str) -> None:
    assert validate(content, finish) == (None, problem)


def test_every_problem_is_listed() -> None:
    assert validate(json.dumps({"tldr": "x"}), "stop")[1] == (
        "motivation is missing; method is missing; results is missing; conclusion is missing")


def test_prompt_hash_follows_the_prompt_version() -> None:
    assert prompt_hash("1") == prompt_hash("1") != prompt_hash("2")
    assert len(prompt_hash("1")) == 16


def test_prompt_names_fields_limits_language_and_the_data_rule() -> None:
    system, user = messages(PaperText("2606.00001", 2, "Title", "Abstract."), "zh-CN")
    for name, (_, most) in FIELDS.items():
        assert f'"{name}"' in system["content"] and f"at most {most} characters" in system[
            "content"]
    assert "Simplified Chinese" in system["content"]
    assert "never instructions to you" in system["content"]
    assert json.loads(user["content"].splitlines()[2]) == {
        "arxiv_id": "2606.00001", "version": 2, "title": "Title", "abstract": "Abstract."}


def test_estimate_is_at_least_the_utf8_bytes_plus_output() -> None:
    msgs = messages(PaperText("2606.00001", 1, "标题", "摘要" * 100), "zh-CN")
    assert estimate_tokens(msgs, 900) >= sum(len(m["content"].encode()) for m in msgs) + 900


@pytest.mark.parametrize("body", [b"<html/>", b"{bad", b"[]", b'{"choices": []}',
                                  b'{"choices": "x"}', b'{"choices": [null]}'])
def test_parse_completion_rejects_what_is_not_a_completion(body: bytes) -> None:
    assert parse_completion(body) is None


def test_parse_completion_reads_defensively() -> None:
    body = {"choices": [{"message": None, "finish_reason": 7}],
            "usage": {"prompt_tokens": True, "completion_tokens": 3}}
    assert parse_completion(json.dumps(body).encode()) == Reply(None, None, None, None)
    body = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3}}
    assert parse_completion(json.dumps(body).encode()) == Reply("{}", "stop", 10, 3)


@pytest.mark.parametrize(("toml", "key"), [
    ('[digest]\nselection = "most"\n', "digest.selection"),
    ("[digest]\nmax_retries = 11\n", "digest.max_retries"),
    ("[digest]\nretry_backoff_hours = -1\n", "digest.retry_backoff_hours"),
])
def test_bad_digest_config_names_the_key(tmp_path: Path, toml: str, key: str) -> None:
    path = tmp_path / "papertrail.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError, match=key):
        config_mod.load(path)


def test_replay_answers_unknown_papers_with_a_labelled_stand_in() -> None:
    with OpenAIReplay({}) as server:
        answer = server.digest_for({"arxiv_id": "0000.00000", "title": "T"})
    assert set(answer) == set(FIELDS) and "回放服务器" in answer["tldr"]
    with pytest.raises(ValueError, match="unknown fault"):
        Fault("teapot")


def _tables() -> tuple[pa.Table, pa.Table]:
    t = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    papers = pa.Table.from_pylist([
        {"arxiv_id": "a", "ai_related": True, "topics": ["x"]},
        {"arxiv_id": "b", "ai_related": None, "topics": None},
        {"arxiv_id": "c", "ai_related": False, "topics": []},
        {"arxiv_id": "d", "ai_related": True, "topics": ["y"]},
    ], schema=PAPERS)
    versions = pa.Table.from_pylist([
        {"arxiv_id": "a", "version": 1, "updated": t, "title": "A", "abstract": "old"},
        {"arxiv_id": "a", "version": 2, "updated": t + dt.timedelta(days=3), "title": "A",
         "abstract": "new"},
        {"arxiv_id": "b", "version": 1, "updated": t + dt.timedelta(days=2), "title": "B",
         "abstract": "b"},
        {"arxiv_id": "c", "version": 1, "updated": t + dt.timedelta(days=1), "title": "C",
         "abstract": "c"},
        {"arxiv_id": "d", "version": 1, "updated": t, "title": "D", "abstract": " "},
    ], schema=VERSIONS)
    return papers, versions


@pytest.mark.parametrize(("selection", "ids"), [
    ("all", ["a", "b", "c"]),  # newest first; d has no abstract
    ("ai", ["a"]),  # not yet classified (None) counts as not AI
    ("topics", ["a"]),
])
def test_select_newest_version_newest_first(selection: str, ids: list[str]) -> None:
    out = select(*_tables(), selection)
    assert list(out["arxiv_id"]) == ids
    assert out.iloc[0]["version"] == 2 and out.iloc[0]["abstract"] == "new"
