"""Python source as the tests that read it see it (sizes, imports, dependencies, catalogue
keys, Pelican's seams): each text parsed and walked once per worker, not once per test."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def nodes(text: str) -> tuple[ast.AST, ...]:
    """Every node of the module `text`, in ast.walk's order: the module first."""
    return tuple(ast.walk(ast.parse(text)))


def file_nodes(path: Path) -> tuple[ast.AST, ...]:
    return nodes(path.read_text("utf-8"))
