"""Escaping of untrusted text (node, tensor, transform names, messages) for GitHub-flavoured markdown."""

from __future__ import annotations

import re

# Characters with markdown meaning inside table cells and inline text. '|' breaks tables, '`' opens
# code spans, '<' / '>' / '&' could inject HTML (GitHub sanitises, but we must not rely on it).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def md_escape(text: object) -> str:
    """Return ``text`` safe to embed in markdown prose or a table cell (HTML entities + backslashes)."""
    s = str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace("\r", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", s)


def md_code(text: object) -> str:
    """Return ``text`` as an inline code span that cannot be broken out of (backticks neutralised)."""
    s = str(text).replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    fence = "``" if "`" in s else "`"
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def fence_block(text: str, lang: str = "") -> str:
    """Return ``text`` in a fenced code block whose fence is longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"
