"""What GitHub shows of the Markdown the job summary writes."""

from __future__ import annotations

import html
import re


def shown(text: str) -> str:
    """`text` with its backslash escapes and entities read back: the characters a reader of
    the rendered summary sees."""
    return html.unescape(re.sub(r"\\(.)", r"\1", text))
