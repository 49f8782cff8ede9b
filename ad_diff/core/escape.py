"""Escaping of untrusted text (node, tensor, transform names, messages) for GitHub-flavoured markdown.

Text from the inputs must render as the same text, and must not act on GitHub: ``@user`` and
``@org/team`` would notify people, ``#123`` and ``owner/repo#123`` would post cross-references, and bare
URLs and e-mail addresses become links. :func:`md_escape` puts each of those in an inline code span, where
GitHub neither links nor mentions, so it stays readable as written. Long text is cut by :func:`excerpt`.
"""

from __future__ import annotations

import re

# Characters with markdown meaning inside table cells and inline text: '|' breaks tables, '`' opens code
# spans, '*' '~' emphasis, '[' ']' links/images. '_' only matters at a word boundary (GFM ignores
# intraword underscores), so names like match_rope_pattern stay readable in the raw comment. '<' and '&'
# become entities so no HTML can be injected (GitHub sanitises, but we must not rely on it).
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")

# What GitHub turns into a link, a mention or a cross-reference in prose (never inside a code span).
_ACTIVE = re.compile(
    r"(?i:(?:https?|ftp)://|www\.)[^\s<>`]*[^\s<>`.,;:!?'\")\]]"  # bare URLs (GFM extended autolinks)
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail addresses (mailto links)
    r"|(?<![\w`])@[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9](?:[\w.-]*[\w-])?)?"  # @user, @org/team
    r"|(?<![\w`])(?:[\w.-]+/[\w.-]+)?#\d+\b"  # #123, owner/repo#123
    r"|(?<![\w`])GH-\d+\b"
)

_PIPE = re.compile(r"(\\*)\|")


def _escape_plain(s: str) -> str:
    s = s.replace("&", "&amp;").replace("<", "&lt;")
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), s)


def md_escape(text: object) -> str:
    """Return ``text`` safe to embed in markdown prose or a table cell: HTML entities and backslashes for
    markup, and mentions, issue references, URLs and e-mail addresses as inline code (see module doc)."""
    s = str(text).replace("\r", " ").replace("\n", " ")
    out: list[str] = []
    pos = 0
    for m in _ACTIVE.finditer(s):
        out.append(_escape_plain(s[pos:m.start()]))
        out.append(md_code(m.group(0)))
        pos = m.end()
    out.append(_escape_plain(s[pos:]))
    return "".join(out)


def md_code(text: object) -> str:
    """Return ``text`` as an inline code span that cannot be broken out of (backticks neutralised)."""
    s = str(text).replace("\r", " ").replace("\n", " ")
    # GFM splits table cells before parsing code spans, and a backslash escapes the next character there:
    # a '|' after an even run of backslashes ('\\|') would still split the cell, so it gets one more.
    s = _PIPE.sub(lambda m: m.group(1) + ("|" if len(m.group(1)) % 2 else "\\|"), s)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def fence_block(text: str, lang: str = "") -> str:
    """Return ``text`` in a fenced code block whose fence is longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def excerpt(text: str, limit: int = 300) -> str:
    """``text`` when it has at most ``limit`` characters, else its start and end around a note saying how
    much was left out (``abc… [99,700 characters omitted] …xyz``)."""
    if len(text) <= limit:
        return text
    tail = max(limit // 5, 1)
    head = max(limit - tail - 40, 1)
    return f"{text[:head]}… [{len(text) - head - tail:,} characters omitted] …{text[-tail:]}"


def surrogate_safe(text: str) -> str:
    """``text`` with lone surrogates (from undecodable file names or JSON ``"\\ud800"``) written as
    ``\\ud800`` escapes, so it can be encoded as UTF-8 anywhere it is written."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
