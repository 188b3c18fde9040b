"""The faults a replay can be told to show, one list for every replay.

A replay names the kinds it models (`LocalServer.models`): every HTTP-level kind
(`TRANSPORT`, implemented once in pipeline/replay/_server.py) and those that change its own
answer. Queuing a kind it does not model, or a misspelled one, is a ValueError naming what
it models: a fault that silently did nothing would pass the test it was meant to fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class FaultKind(StrEnum):
    """One misbehaviour for one request."""

    # HTTP level, one implementation for every replay (`ReplayHandler.respond`)
    NOT_FOUND = "404"  # refused: 404 with the service's error body
    TOO_MANY = "429"  # refused: 429, Retry-After: the fault's seconds
    ERROR = "500"  # refused: 500 with the service's error body
    UNAVAILABLE = "503"  # refused: 503, Retry-After when the fault has seconds
    RESET = "reset"  # the connection reset (TCP RST) before any answer
    STALL = "stall"  # the answer waits the fault's seconds (a stop() ends the wait)
    TRICKLE = "trickle"  # headers at once, then the body a byte every `seconds`
    TRUNCATE = "truncate"  # HTTP 200, the first half of the answer's body (whatever its status)
    PAGE = "page"  # an HTML page with HTTP 200 in place of the answer (a proxy, maintenance)
    # the answer itself, applied by the replay that models it
    EMPTY = "empty"  # the answer's list with no items (arXiv)
    INVALID = "invalid"  # the model's content is not JSON (a model replay, as each below)
    MISSING = "missing"  # a field missing
    OVERLONG = "overlong"  # a field over its length
    OBEY = "obey"  # the model fell for a prompt injection in the abstract
    CONTROL = "control"  # control characters in a field
    SURROGATE = "surrogate"  # a lone surrogate in a field
    NOUSAGE = "nousage"  # no usage in the answer
    OVERFLOW = "overflow"  # an embedding component of 1e300 (finite in float64, not float32)


TRANSPORT = frozenset({FaultKind.NOT_FOUND, FaultKind.TOO_MANY, FaultKind.ERROR,
                       FaultKind.UNAVAILABLE, FaultKind.RESET, FaultKind.STALL,
                       FaultKind.TRICKLE, FaultKind.TRUNCATE, FaultKind.PAGE})
# The kinds that replace the answer with an error status.
REFUSALS = {FaultKind.NOT_FOUND: 404, FaultKind.TOO_MANY: 429, FaultKind.ERROR: 500,
            FaultKind.UNAVAILABLE: 503}


def fault_kind(kind: FaultKind | str) -> FaultKind:
    try:
        return FaultKind(kind)
    except ValueError:
        raise ValueError(f"unknown fault {kind!r}; one of "
                         f"{', '.join(k.value for k in FaultKind)}") from None


@dataclass(frozen=True, init=False)
class Fault:
    """A fault and its seconds: Retry-After of a 429 or 503 (fractions allowed: the openai
    client honours them), a stall's length, a trickle's pause per byte."""

    kind: FaultKind
    seconds: float

    def __init__(self, kind: FaultKind | str, seconds: float = 0.0) -> None:
        object.__setattr__(self, "kind", fault_kind(kind))
        object.__setattr__(self, "seconds", seconds)


