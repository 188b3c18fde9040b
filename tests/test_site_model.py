"""The view model's seams: what an attach step may return is Paper's own fields."""

from __future__ import annotations

import dataclasses
import typing

from pipeline.site.model.views import Fields, Paper


def test_the_fields_a_step_attaches_are_papers_own() -> None:
    """`Fields` (what mypy checks each step's result against) names every field of Paper,
    with the same type: a field added to one and not the other fails here."""
    papers = {f.name: f.type for f in dataclasses.fields(Paper)}
    assert typing.get_type_hints(Fields) == typing.get_type_hints(Paper)
    assert list(Fields.__annotations__) == list(papers)
