"""What the pipeline imports is what pyproject.toml declares (or the standard library)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _imported() -> dict[str, str]:
    """Top-level module → a file that imports it, for every module under pipeline/."""
    found: dict[str, str] = {}
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module
                     and not node.level else [])
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_third_party_import_is_a_declared_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_normal(re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0])
                for d in project["dependencies"]}
    providers = importlib.metadata.packages_distributions()
    undeclared = {}
    for module, where in _imported().items():
        if module in sys.stdlib_module_names or module == "pipeline":
            continue
        dists = {_normal(d) for d in providers.get(module, [module])}
        if not dists & declared:
            undeclared[module] = where
    assert undeclared == {}
