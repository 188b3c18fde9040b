"""What the pipeline imports is what pyproject.toml declares (or the standard library), and
the packages that take a second or more to import are imported only where they are used."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.support.code import file_nodes

REPO = Path(__file__).resolve().parents[1]
# Each takes ~0.2–2 s of CPU to import. A module that needs one in a single function imports
# it there, so what only reads (the site's model of the store, digest planning, the replays
# serving digests, the tests' fixtures: every test worker) never pays for it.
HEAVY = ("sklearn", "openai", "scipy.special")
READERS = ("pipeline.site.model.views", "pipeline.digest", "pipeline.derive.similar",
           "pipeline.derive.scope", "pipeline.derive.encoder", "pipeline.replay.openai")


def _imported() -> dict[str, str]:
    """Top-level module → a file that imports it, for every module under pipeline/."""
    found: dict[str, str] = {}
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        for node in file_nodes(path):
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


def test_reading_the_store_and_planning_imports_no_model_or_learning_package():
    code = (f"import sys, {', '.join(READERS)}; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=REPO).stdout.split()
    assert loaded == []
