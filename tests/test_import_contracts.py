"""The import contracts in pyproject.toml ([tool.importlinter]: docs/ARCHITECTURE.md's
rooms), which `make test` checks with lint-imports: they can fail. A copy of pipeline/ where a
text helper imports the site breaks them, and lint-imports names the import."""

from __future__ import annotations

import ast
import graphlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.code import file_nodes

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports over the pipeline/ under `root`, with the contracts of its pyproject."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)


def test_a_low_room_importing_a_high_one_breaks_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(REPO / "pipeline", tmp_path / "pipeline",
                    ignore=shutil.ignore_patterns("__pycache__", "sample"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    kept = lint_imports(tmp_path)
    assert kept.returncode == 0, kept.stdout
    ids = tmp_path / "pipeline" / "text" / "ids.py"
    ids.write_text(ids.read_text() + "\nfrom pipeline.site import i18n\n")

    broken = lint_imports(tmp_path)

    assert broken.returncode == 1
    assert "pipeline.text is not allowed to import pipeline.site" in broken.stdout
    assert "pipeline.text.ids -> pipeline.site.i18n" in broken.stdout


def imports(root: Path) -> dict[str, set[str]]:
    """Each module of pipeline/ and the modules of ours it imports (any import statement,
    those under TYPE_CHECKING too): `from P import m` imports the module P.m when there is
    one, else P itself, so a submodule importing its package's names counts as importing
    the package."""
    modules = {}
    for path in (root / "pipeline").rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in file_nodes(path):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{up}.{base}".rstrip(".")
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if sub in modules else base)
        graph[name] = (found & set(modules)) - {name}
    return graph


def test_no_import_cycle_package_and_submodule_included() -> None:
    """No module imports one that imports it back, however long the way round: a cycle
    between a package and its submodule (the store and its migrations were one) too."""
    try:
        graphlib.TopologicalSorter(imports(REPO)).prepare()
    except graphlib.CycleError as cycle:
        raise AssertionError(f"import cycle: {' -> '.join(cycle.args[1])}") from None


def test_a_cycle_is_found(tmp_path: Path) -> None:
    shutil.copytree(REPO / "pipeline", tmp_path / "pipeline",
                    ignore=shutil.ignore_patterns("__pycache__", "sample"))
    migrations = tmp_path / "pipeline" / "store" / "migrations.py"
    migrations.write_text(migrations.read_text() + "\nfrom pipeline.store import Store\n")
    graph = imports(tmp_path)
    assert "pipeline.store" in graph["pipeline.store.migrations"]
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(graph).prepare()
