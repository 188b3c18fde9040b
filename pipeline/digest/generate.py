"""Asking the model: the async openai client, a semaphore, hard budgets, one retry on bad output.

What is asked is the caller's: digests and change notes each pass their items, how to
make an item's messages and how to check a reply (`Asking`).

Requests are dispatched strictly in item order, so "newest first" holds and the budget
decision for each request is made once, in that order. Before each request
(the corrective retry included) its token estimate is reserved against the budget;
when the answer arrives the reservation is replaced by the reported usage. A request
that could overshoot is never sent, and nothing after it is sent either; but an item too
big for any run's budget is a failed attempt with its reason, and the queue goes on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, TypeVar, cast

from pipeline import outbound
from pipeline.config import DigestConfig
from pipeline.digest.prompt import estimate_tokens, firmer
from pipeline.text.untrusted import clean_text

# openai is imported where a request is made, not here: it takes ~1 s to import, and the
# site and every other reader of pipeline.digest would pay it.
if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam

T = TypeVar("T")
Messages = list[dict[str, str]]
# A reply's content and finish_reason → (fields, "") when usable, else (None, what is wrong).
Check = Callable[[str | None, str | None], tuple[dict[str, str] | None, str]]

# This many HTTP-level failures in a row (any error status after the client's own retries,
# a timeout, a refused connection, a body that is not a chat completion) means the server
# is down, throttling us or refusing our key: stop dispatching instead of spending an
# attempt of every remaining paper on it.
OUTAGE_AFTER = 3


@dataclass(frozen=True)
class Reply:
    content: str | None
    finish_reason: str | None
    prompt_tokens: int | None  # None: the server reported no (usable) usage
    completion_tokens: int | None


def parse_completion(body: bytes) -> Reply | None:
    """The parts of a chat completion we use, read defensively: the body comes from a server
    we do not control, and the openai package's own parsing raises arbitrary errors (or
    returns a str) on a body that is not a chat completion. None: not a chat completion."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    raw_message, raw_usage = choice.get("message"), data.get("usage")
    message = raw_message if isinstance(raw_message, dict) else {}
    usage = raw_usage if isinstance(raw_usage, dict) else {}

    def text(value: object) -> str | None:
        return value if isinstance(value, str) else None

    def count(value: object) -> int | None:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        return None

    prompt, completion = count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))
    if prompt is None or completion is None:
        prompt = completion = None
    return Reply(text(message.get("content")), text(choice.get("finish_reason")), prompt,
                 completion)


@dataclass
class Outcome(Generic[T]):
    item: T
    status: Literal["ok", "failed", "budget"]  # budget: not sent, it could have exceeded it
    fields: dict[str, str] | None = None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    requests: int = 0
    corrective: int = 0  # 1 when the first reply was rejected and asked again
    transport: bool = False  # failed in HTTP, not in the reply's content


class Budget:
    """Hard token budget. Single event loop, so no lock is needed."""

    def __init__(self, limit: int, most: int | None = None) -> None:
        self.limit = limit
        self.most = limit if most is None else most  # what any run of this config may have
        self.used = 0  # reported usage, or the estimate where usage is unknown
        self.reserved = 0  # estimates of requests in flight
        self.closed = False  # once a request did not fit, no later (smaller) one jumps ahead

    def reserve(self, estimate: int) -> bool:
        if self.closed or self.used + self.reserved + estimate > self.limit:
            self.closed = True
            return False
        self.reserved += estimate
        return True

    def settle(self, estimate: int, used: int) -> None:
        self.reserved -= estimate
        self.used += used

    def never_fits(self, estimate: int) -> str | None:
        """Why a request can be sent in no run (it would stop the queue in every one)."""
        if estimate <= self.most:
            return None
        return (f"needs ~{estimate:,} tokens with its longest reply, more than a run's token "
                f"budget ({self.most:,})")


@dataclass
class Dispatch:
    """What happened to the candidates that were not sent."""

    skipped_budget: int = 0  # max_per_run or the token budget stopped them
    left_outage: int = 0  # the server looked down; left for the next run


def describe(exc: openai.OpenAIError, cfg: DigestConfig) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        text = f"timed out after {cfg.timeout_seconds:g} s"
    elif isinstance(exc.__cause__, outbound.TooBig):
        text = str(exc.__cause__)
    elif isinstance(exc, openai.APIConnectionError):
        text = f"cannot connect: {exc.__cause__ or exc}"
    elif isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        text = f"HTTP {exc.status_code}: {body.get('message') or exc.message}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, openai.APIConnectionError | openai.RateLimitError |
                  openai.InternalServerError):
        text += f" (after {cfg.max_retries} client retries)"
    return clean_text(text)[:500]  # the server's own message: it is stored


@dataclass
class Asking(Generic[T]):
    """What to ask the model: items in order, each one's messages, how a reply is checked."""

    items: list[T]
    messages: Callable[[T], Messages]
    check: Check
    max_per_run: int
    budget: Budget
    max_output_tokens: int  # a reply's most tokens: asked of the server, counted in estimates


class _Generator(Generic[T]):
    def __init__(self, cfg: DigestConfig, client: openai.AsyncOpenAI, asking: Asking[T]) -> None:
        self.cfg, self.client, self.budget, self.check = cfg, client, asking.budget, asking.check
        self.max_output_tokens = asking.max_output_tokens
        self.failures_in_a_row = 0  # HTTP-level failures; a usable answer resets it

    async def attempt(self, item: T, msgs: Messages, estimate: int) -> Outcome[T]:
        """One attempt: a request, and one firmer request when the reply is unusable.
        The caller has reserved `estimate` for the first request."""
        import openai

        out, problem = Outcome(item, "failed"), ""
        for corrective in (False, True):
            if corrective:
                msgs = firmer(msgs, problem)
                estimate = estimate_tokens(msgs, self.max_output_tokens)
                if not self.budget.reserve(estimate):
                    out.status = "budget"
                    return out
                out.corrective = 1
            out.requests += 1
            try:
                raw = await self.client.chat.completions.with_raw_response.create(
                    model=self.cfg.model, messages=cast("list[ChatCompletionMessageParam]", msgs),
                    temperature=self.cfg.temperature, max_tokens=self.max_output_tokens,
                    response_format={"type": "json_object"})
            except openai.OpenAIError as exc:
                # Error statuses are not billed; a timed-out request may still have been.
                timed_out = isinstance(exc, openai.APITimeoutError)
                self.budget.settle(estimate, estimate if timed_out else 0)
                self.failures_in_a_row += 1
                out.error, out.transport = describe(exc, self.cfg), True
                return out
            reply = parse_completion(raw.content)
            if reply is None:  # a broken server or proxy, not a bad answer: no firmer retry
                self.budget.settle(estimate, estimate)
                self.failures_in_a_row += 1
                out.error, out.transport = "the server's answer is not a chat completion", True
                return out
            self.failures_in_a_row = 0
            if reply.prompt_tokens is None or reply.completion_tokens is None:
                self.budget.settle(estimate, estimate)  # no usage reported: charge the estimate
            else:
                out.tokens_in += reply.prompt_tokens
                out.tokens_out += reply.completion_tokens
                self.budget.settle(estimate, reply.prompt_tokens + reply.completion_tokens)
            fields, problem = self.check(reply.content, reply.finish_reason)
            if fields is not None:
                out.status, out.fields = "ok", fields
                return out
        out.error = f"unusable reply twice: {problem}"
        return out


async def generate(asking: Asking[T], cfg: DigestConfig, api_key: str,
                   on_outcome: Callable[[Outcome[T]], None]) -> Dispatch:
    """Ask for the items in order with at most cfg.concurrency requests in flight."""
    import openai

    client = openai.AsyncOpenAI(base_url=cfg.base_url, api_key=api_key,
                                timeout=cfg.timeout_seconds, max_retries=cfg.max_retries,
                                http_client=outbound.model_client(cfg.timeout_seconds))
    budget, items = asking.budget, asking.items
    gen: _Generator[T] = _Generator(cfg, client, asking)
    sem = asyncio.Semaphore(cfg.concurrency)
    dispatch = Dispatch()
    tasks: list[asyncio.Task[None]] = []

    async def run(item: T, msgs: Messages, estimate: int) -> None:
        try:
            on_outcome(await gen.attempt(item, msgs, estimate))
        finally:
            sem.release()

    async with client:
        for i, item in enumerate(items):
            if len(tasks) >= asking.max_per_run:  # items sent: one too big for any run is not
                dispatch.skipped_budget = len(items) - i
                break
            await sem.acquire()  # a free slot first: answers in flight settle their tokens
            msgs = asking.messages(item)
            estimate = estimate_tokens(msgs, asking.max_output_tokens)
            if why := budget.never_fits(estimate):  # a failure with its reason, not a stop
                sem.release()
                on_outcome(Outcome(item, "failed", error=why))
                continue
            if gen.failures_in_a_row >= OUTAGE_AFTER:
                dispatch.left_outage = len(items) - i
            elif not budget.reserve(estimate):
                dispatch.skipped_budget = len(items) - i
            else:
                tasks.append(asyncio.create_task(run(item, msgs, estimate)))
                continue
            sem.release()
            break
        await asyncio.gather(*tasks)
    return dispatch
