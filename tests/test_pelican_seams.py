"""Pelican through its public seams only: nothing in pipeline/ reaches into a name Pelican
keeps private (`_open_w`, `_written_files`, ...), and a class built on one of Pelican's
holds no `_` name of its own, which a later Pelican could define and we would override
unseen. Read from the source (AST), against the Pelican installed."""

from __future__ import annotations

import ast
from pathlib import Path

import pelican
import pytest
from jinja2 import Template
from pelican.writers import FileOverwriteFailedError, Writer

from pipeline.site.writer import PelicanWriter
from tests.support.code import file_nodes, nodes

PIPELINE = Path(__file__).resolve().parents[1] / "pipeline"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def pelicans_private_names() -> set[str]:
    """Every `_` name Pelican's own code uses as an attribute or defines as a function."""
    names = set()
    for path in Path(pelican.__file__).parent.rglob("*.py"):
        if "tests" in path.parts:
            continue
        for node in file_nodes(path):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                names.add(node.attr)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                    _private(node.name):
                names.add(node.name)
    return names


def _pelican_names(trees: list[tuple[ast.AST, ...]]) -> set[str]:
    """The names of Pelican's classes imported anywhere, and of our classes built on
    them (to a fixed point: a subclass of a subclass counts)."""
    names = {alias.asname or alias.name for tree in trees for node in tree
             if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] ==
             "pelican" for alias in node.names}
    classes = [node for tree in trees for node in tree if isinstance(node, ast.ClassDef)]
    while True:
        more = {c.name for c in classes if c.name not in names and any(
            ast.unparse(base) in names or ast.unparse(base).startswith("pelican.")
            for base in c.bases)}
        if not more:
            return names
        names |= more


def trespasses(sources: dict[str, str], private: set[str]) -> list[str]:
    """Where code reaches Pelican's private state: a private name imported from Pelican;
    an attribute Pelican keeps private, on anything but a class's own `self` (ours may
    share a name, e.g. a cache called _content); and in a class built on Pelican's, any
    `_` attribute of self or `_` method at all."""
    trees = {name: nodes(text) for name, text in sources.items()}  # each walked, in order
    pelicans = _pelican_names(list(trees.values()))
    found = []
    for name, tree in trees.items():
        built_on = {id(n) for c in tree if isinstance(c, ast.ClassDef)
                    and c.name in pelicans for n in ast.walk(c)}
        for node in tree:
            where = f"{name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pelican"):
                found += [f"{where} imports {a.name}" for a in node.names if _private(a.name)]
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if (id(node) in built_on and on_self) or (node.attr in private and not on_self):
                    found.append(f"{where} {ast.unparse(node)}")
            elif isinstance(node, ast.FunctionDef) and id(node) in built_on and \
                    _private(node.name):
                found.append(f"{where} defines {node.name}")
    return found


def test_pipeline_uses_no_private_name_of_pelican():
    sources = {str(p.relative_to(PIPELINE.parent)): p.read_text("utf-8")
               for p in sorted(PIPELINE.rglob("*.py"))}
    assert len(sources) > 50
    assert trespasses(sources, pelicans_private_names()) == []


def test_the_check_finds_the_writer_that_reached_into_pelicans():
    # The writer as it was: Pelican's Writer with _open_w and _written_files overridden,
    # and the workers reading the written files off a writer.
    private = pelicans_private_names()
    assert {"_open_w", "_written_files", "_get_writer"} <= private
    old = {
        "writer.py": "from pelican.writers import Writer\n"
                     "class Ours(Writer):\n"
                     "    def _open_w(self, filename, encoding, override=False):\n"
                     "        self._written_files.add(filename)\n"
                     "class Recorded(Ours):\n"
                     "    def __init__(self):\n"
                     "        self._mine = 0\n",
        "workers.py": "def run(w):\n    return w._written_files\n",
        "build.py": "from pelican import Pelican\n"
                    "def writer(p: Pelican):\n    return p._get_writer()\n",
        "ours.py": "class Cache:\n    def _content(self):\n        return self._content\n",
    }
    assert sorted(trespasses(old, private)) == [
        "build.py:3 p._get_writer", "workers.py:2 w._written_files",
        "writer.py:3 defines _open_w", "writer.py:4 self._written_files",
        "writer.py:7 self._mine"]


def test_pelicans_own_pages_are_written_through_ours(tmp_path):
    # As PagesGenerator calls it: relative URLs, the page as a keyword argument; the same
    # bytes and context as Pelican's own Writer gives.
    settings = {"PAGINATED_TEMPLATES": {"index": None}}
    template = Template("{{ SITEURL }}|{{ output_file }}|{{ page }}|{{ localsiteurl }}")
    stock_context = {"SITEURL": "", "localsiteurl": ""}
    Writer(str(tmp_path / "stock"), settings=settings).write_file(
        "about/index.html", template, stock_context, relative_urls=True, page="p")
    writer = PelicanWriter(str(tmp_path / "out"), settings=settings)
    context = {"SITEURL": "", "localsiteurl": ""}
    writer.write_file("about/index.html", template, context, relative_urls=True, page="p")
    about = tmp_path / "out" / "about" / "index.html"
    stock = (tmp_path / "stock" / "about" / "index.html").read_bytes()
    assert about.read_bytes() == stock == b"..|about/index.html|p|.."
    assert context == stock_context  # localsiteurl: where the content resolves its links
    assert (writer.ours.written, writer.ours.files()) == (1, {str(about): len(stock)})

    with pytest.raises(FileOverwriteFailedError):  # one path once per build
        writer.write_file("about/index.html", template, context, relative_urls=True)
    again = PelicanWriter(str(tmp_path / "out"), settings=settings)
    stamp = about.stat().st_mtime_ns
    again.write_file("about/index.html", template, context, relative_urls=True, page="p")
    assert (again.ours.written, again.ours.unchanged, about.stat().st_mtime_ns) == \
        (0, 1, stamp)
    with pytest.raises(ValueError, match="paginated"):
        again.write_file("index.html", template, context, template_name="index")
