"""A local OpenAI-compatible server: chat answered with the bundled real digests (and
change notes made from the change asked about), and embeddings (POST /v1/embeddings)
made from the words of each input.

POST /v1/chat/completions finds the paper in the prompt's data block (the JSON line
after BEGIN_PAPER_DATA that `pipeline.digest.prompt` writes), answers with that
paper's real Chinese digest as a JSON object, and reports usage tokens. A change-note
request (BEGIN_CHANGE_DATA, `pipeline.digest.notes_prompt`) is answered with a Chinese
note listing what its data says changed. A model answers in the language its system
message asks for ("Write every field in English", "Write it in English"): the sample
holds Chinese digests only, so an English request gets an English stand-in, labelled
as the replay's, made from the paper's own abstract (modelled, not recorded). It honours
max_tokens (a longer answer is cut, finish_reason "length"), can wait a fixed
latency per response, counts simultaneous requests, and misbehaves on request:
invalid JSON content, a missing or over-long field, an obeyed prompt injection,
control characters or a lone surrogate in a field, no usage in the answer; for embeddings,
a component of 1e300 (finite in JSON and float64, not in float32); and every HTTP-level
fault of pipeline/replay/faults.py (429 with Retry-After, 500, a stall, an HTML page
instead of JSON, …), errors in OpenAI's JSON `{"error": {"message", "type"}}`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from pipeline.replay import sample
from pipeline.replay._server import Answer, LocalServer, ReplayHandler
from pipeline.replay.faults import TRANSPORT, Fault, FaultKind

_DATA = re.compile(r"^BEGIN_(PAPER|CHANGE)_DATA\n(.*?)\nEND_\1_DATA$", re.M | re.S)
_ENGLISH = re.compile(r"\bWrite (?:every field|it) in English\b")
# What an English stand-in says of itself, in every field but the tldr.
ENGLISH_STAND_IN = "(replay: the bundled sample holds this paper's real digest in Chinese only)"
# What the control fault puts into the tldr: NUL, BEL, ESC, CR, DEL, and the C1 NEL and APC.
CONTROLS = "\x00\x07\x1b\r\x7f\x85\x9f"


@functools.lru_cache(maxsize=65536)
def _word_vector(word: str, dimensions: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(dimensions)


def count_tokens(text: str) -> int:
    """The replay's tokenizer: about one token per Chinese character or 3 bytes of English."""
    return math.ceil(len(text.encode()) / 3)


def _data(messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """What the prompt's data block holds, PAPER or CHANGE, and its object; ("PAPER", {})
    when there is none (the stand-in answers)."""
    for message in messages:
        m = _DATA.search(str(message.get("content", "")))
        if not m:
            continue
        try:
            data = json.loads(m.group(2))
        except ValueError:
            continue
        if isinstance(data, dict):
            return m.group(1), data
    return "PAPER", {}


def _asks_english(messages: list[dict[str, Any]]) -> bool:
    return any(m.get("role") == "system" and _ENGLISH.search(str(m.get("content", "")))
               for m in messages)


def note_for(change: dict[str, Any], english: bool = False) -> dict[str, str]:
    """The answer a well-behaved model gives to a change-note request: what changed, by
    the data it was sent, in Chinese or English."""
    parts = []
    if change.get("title_before"):
        parts.append("title changed" if english else "标题有改动")
    if isinstance(runs := change.get("abstract_changes"), list) and runs:
        parts.append(f"{len(runs)} changes in the abstract" if english
                     else f"摘要改动 {len(runs)} 处")
    for key, zh, en in (("comment", "注释", "comment"), ("journal_ref", "期刊信息",
                                                        "journal reference")):
        pair = change.get(key)
        if isinstance(pair, dict) and pair.get("after"):
            after = str(pair["after"])[:80]
            parts.append(f"{en} now {after}" if english else f"{zh}更新为 {after}")
    if english:
        return {"note": "; ".join(parts) or "wording only"}
    return {"note": "；".join(parts) or "仅措辞改动"}


def english_stand_in(paper: dict[str, Any]) -> dict[str, str]:
    """An English request's answer: the abstract's first sentence as the line, each other
    field saying it stands in."""
    abstract = " ".join(str(paper.get("abstract", "")).split())
    first = re.split(r"(?<=[.!?])\s", abstract, maxsplit=1)[0][:300]
    return {"tldr": first or str(paper.get("title", "")) or ENGLISH_STAND_IN,
            **{field: ENGLISH_STAND_IN
               for field in ("motivation", "method", "results", "conclusion")}}


class OpenAIReplay(LocalServer):
    """A threaded HTTP server on 127.0.0.1 speaking the chat.completions API.

    >>> with OpenAIReplay(latency=0.2) as llm:  # doctest: +SKIP
    ...     llm.url  # 'http://127.0.0.1:PORT/v1' — the base_url for the openai client
    """

    models = TRANSPORT | {FaultKind.INVALID, FaultKind.MISSING, FaultKind.OVERLONG,
                          FaultKind.OBEY, FaultKind.CONTROL, FaultKind.SURROGATE,
                          FaultKind.NOUSAGE, FaultKind.OVERFLOW}

    def __init__(self, digests: Mapping[str, dict[str, str]] | None = None, *, latency: float = 0.0,
                 port: int = 0) -> None:
        self.digests = sample.digests() if digests is None else digests
        self.latency = latency
        self.requests: list[dict[str, Any]] = []  # every chat request body, in arrival order
        self.embedding_requests: list[dict[str, Any]] = []  # every /v1/embeddings request body
        self.arrivals: list[float] = []  # time.monotonic() of each, for timing tests
        self.authorization: list[str] = []  # each request's Authorization header
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests ever being answered at once
        super().__init__(port)

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def digest_for(self, paper: dict[str, Any]) -> dict[str, str]:
        """The answer a well-behaved model gives: the real digest, in the prompt's field names."""
        real = self.digests.get(str(paper.get("arxiv_id", "")))
        if real is None:  # not in the sample: a plain, clearly labelled stand-in
            title = str(paper.get("title", "")) or "未知论文"
            note = "（回放服务器：样本中没有这篇论文的真实导读）"
            return {"tldr": f"{title}{note}", "motivation": note, "method": note,
                    "results": note, "conclusion": note}
        return {"tldr": real.get("tldr", ""), "motivation": real.get("motivation", ""),
                "method": real.get("method", ""), "results": real.get("result", ""),
                "conclusion": real.get("conclusion", "")}

    def content_for(self, body: dict[str, Any], fault: Fault | None) -> str:
        asked, data = _data(body.get("messages") or [])
        english = _asks_english(body.get("messages") or [])
        if asked == "CHANGE":
            answer = note_for(data, english)
        else:
            answer = english_stand_in(data) if english else self.digest_for(data)
        first, inner = ("tldr", "method") if asked == "PAPER" else ("note", "note")
        kind = fault.kind if fault else None
        if kind is FaultKind.INVALID:
            return "好的，以下是导读：" + json.dumps(answer, ensure_ascii=False)[:-2]
        if kind is FaultKind.MISSING:
            answer.pop(inner)
        elif kind is FaultKind.OVERLONG:
            answer[first] += " " + "and so on, " * 40  # 440 more characters, few tokens
        elif kind is FaultKind.OBEY:  # a model that fell for an injection in the abstract
            answer[first] = str(data.get("abstract", ""))
        elif kind is FaultKind.CONTROL:
            answer[first] = answer[first][:2] + CONTROLS + answer[first][2:]
        elif kind is FaultKind.SURROGATE:  # ASCII JSON writes it as the escape \ud800
            answer[inner] += "\ud800"
            return json.dumps(answer)
        return json.dumps(answer, ensure_ascii=False)

    def embeddings(self, body: dict[str, Any], fault: Fault | None) -> dict[str, object]:
        """A vector per input: the sum of a fixed random vector per word (not a stop word),
        so papers sharing words point alike, as a model's embeddings of them would."""
        # here, not above: sklearn takes ~2 s to import, and a replay serving digests only
        # (every test's) would pay it
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts if isinstance(texts, list) else []
        dimensions = body.get("dimensions")
        if not isinstance(dimensions, int) or not 1 <= dimensions <= 4096:
            dimensions = 256
        data = []
        for i, text in enumerate(texts):
            vector = np.zeros(dimensions)
            for word in re.findall(r"[a-z]{3,}", str(text).lower()):
                if word not in ENGLISH_STOP_WORDS:
                    vector += _word_vector(word, dimensions)
            if fault and fault.kind is FaultKind.OVERFLOW and i == 0:
                vector[0] = 1e300
            data.append({"object": "embedding", "index": i, "embedding": vector.tolist()})
        tokens = sum(count_tokens(str(t)) for t in texts)
        return {"object": "list", "data": data, "model": body.get("model", "replay"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def completion(self, body: dict[str, Any], fault: Fault | None) -> dict[str, object]:
        """The chat completion answering `body`, cut at its max_tokens, with usage."""
        content = self.content_for(body, fault)
        finish = "stop"
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        if isinstance(limit, int) and count_tokens(content) > limit:
            content = content.encode()[: limit * 3].decode(errors="ignore")
            finish = "length"
        prompt = sum(count_tokens(str(m.get("content", ""))) + 4
                     for m in body.get("messages") or [])
        completion = count_tokens(content)
        answer = {
            "id": f"chatcmpl-replay-{len(self.requests)}",
            "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "replay"),
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }
        if fault and fault.kind is FaultKind.NOUSAGE:
            del answer["usage"]
        return answer

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        replay = self

        class Handler(ReplayHandler):

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.rstrip("/")
                if path not in ("/v1/chat/completions", "/v1/embeddings"):
                    self._json(404, {"error": {"message": "not found", "type": "not_found"}})
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._json(400, {"error": {"message": "body is not JSON",
                                               "type": "invalid_request_error"}})
                    return
                embedding = path == "/v1/embeddings"
                with replay._lock:
                    (replay.embedding_requests if embedding else replay.requests).append(body)
                    replay.arrivals.append(time.monotonic())
                    replay.authorization.append(self.headers.get("Authorization", ""))
                    fault = replay.faults.popleft() if replay.faults else None  # under the lock
                    replay.in_flight += 1
                    replay.max_in_flight = max(replay.max_in_flight, replay.in_flight)
                try:
                    self._answer(body, fault, embedding)
                finally:
                    with replay._lock:
                        replay.in_flight -= 1

            def _answer(self, body: dict[str, Any], fault: Fault | None, embedding: bool) -> None:
                def answer() -> Answer:
                    if replay.latency:
                        time.sleep(replay.latency)
                    payload = (replay.embeddings(body, fault) if embedding
                               else replay.completion(body, fault))
                    return (200, json.dumps(payload, ensure_ascii=False).encode(),
                            "application/json", {})

                self.respond(fault, answer)

            def error_page(self, status: int, seconds: float) -> tuple[bytes, str]:
                kind = {429: "rate_limit_error", 404: "not_found"}.get(status, "server_error")
                message = {429: "Rate limit reached", 404: "not found",
                           503: "The server is overloaded"}.get(status, "The server had an error")
                return json.dumps({"error": {"message": message, "type": kind}}).encode(), \
                    "application/json"

            def _json(self, status: int, payload: dict[str, object],
                      headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode()
                self._send(status, data, "application/json", headers)


        return Handler
