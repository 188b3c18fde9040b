"""Sizes a reader can hold: no function over 60 lines, no class over 200, anywhere in
pipeline/ (the replays included). Lines from a definition's first to its last, decorators
and docstring in."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.code import file_nodes

PIPELINE = Path(__file__).resolve().parent.parent / "pipeline"
MAX_FUNCTION, MAX_CLASS = 60, 200


def _oversized() -> list[str]:
    found = []
    for path in sorted(PIPELINE.rglob("*.py")):
        for node in file_nodes(path):
            limit = (MAX_CLASS if isinstance(node, ast.ClassDef) else MAX_FUNCTION
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None)
            if limit is None:
                continue
            assert isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            name = f"{path.relative_to(PIPELINE).as_posix()}:{node.name}"
            if length > limit:
                found.append(f"{name} {length} lines (limit {limit})")
    return found


def test_no_function_over_60_lines_and_no_class_over_200() -> None:
    assert _oversized() == []
