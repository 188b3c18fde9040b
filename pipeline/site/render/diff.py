"""Word-level diff of two versions of a title or abstract, as escaped HTML."""

from __future__ import annotations

import difflib
import re

from markupsafe import Markup, escape

# A token is a word with the whitespace after it (plus any leading whitespace on its own),
# so a lone space never anchors a match and splits an edited run in two.
_TOKENS = re.compile(r"\s+|\S+\s*")


def changed(old: str, new: str) -> bool:
    """Whether the texts differ in more than whitespace (re-wrapping is not a revision)."""
    return old.split() != new.split()


def word_diff(old: str, new: str, context: int | None = None) -> Markup:
    """``new`` escaped, with removed runs of ``old`` in ``<del>`` and added runs in ``<ins>``;
    with `context`, of each unchanged run only that many words next to a change, and "…"
    for the rest (a reader sees what changed, not the whole abstract again)."""
    a = _TOKENS.findall(old)
    b = _TOKENS.findall(new)
    # Match on the bare words so re-wrapping diffs as unchanged; autojunk would treat
    # frequent words ("the", "of") in a long abstract as junk and miss real matches.
    matcher = difflib.SequenceMatcher(None, _words(a), _words(b), autojunk=False)
    out: list[str] = []
    ops = matcher.get_opcodes()
    for k, (op, i1, i2, j1, j2) in enumerate(ops):
        if op == "equal":
            out.append(escape(_unchanged(b[j1:j2], context, k > 0, k < len(ops) - 1)))
            continue
        if op in ("delete", "replace"):
            removed = "".join(a[i1:i2]).strip()
            if removed:
                # The new text's spacing carries on after this run; a deletion at the end
                # would otherwise stick to the word before it.
                gap = " " if out and not out[-1][-1:].isspace() else ""
                tail = " " if op == "delete" and j1 < len(b) and not gap else ""
                out.append(f"{gap}<del>{escape(removed)}</del>{tail}")
        if op in ("insert", "replace"):
            added = "".join(b[j1:j2])
            core = added.rstrip()
            out.append(f"<ins>{escape(core)}</ins>{escape(added[len(core):])}" if core else added)
    return Markup("".join(out))


def _unchanged(run: list[str], context: int | None, after: bool, before: bool) -> str:
    """An unchanged run of tokens: whole, or its `context` words after the change before it
    and before the change after it, "… " in place of the rest."""
    if context is None:
        return "".join(run)
    head, tail = context if after else 0, context if before else 0
    if head + tail + 2 >= len(run):  # "…" never stands for a word or two
        return "".join(run)
    return "".join(run[:head]) + ("… " if tail else "…") + "".join(run[len(run) - tail:])


def _words(tokens: list[str]) -> list[str]:
    return [t.strip() for t in tokens]
