"""What the HTTP sources add to the outbound layer (pipeline/outbound.py): their own
failure, which the run records against the source, and the retry loop raising it."""

from __future__ import annotations

from pipeline import outbound


class SourceError(outbound.Failed):
    """The source could not deliver (after retries); the run records it and goes on."""


class Requests(outbound.Requests):
    """outbound.Requests, failing with SourceError."""

    def __init__(self, cfg: outbound.Politeness, deadline: float, *, name: str,
                 limit: str) -> None:
        super().__init__(cfg, deadline, name=name, limit=limit, error=SourceError)
