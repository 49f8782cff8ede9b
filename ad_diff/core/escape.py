"""Escaping of untrusted text (node, tensor, transform names, messages) for GitHub-flavoured markdown."""

from __future__ import annotations

import re

# Characters with markdown meaning inside table cells and inline text: '|' breaks tables, '`' opens code
# spans, '*' '~' emphasis, '[' ']' links/images. '_' only matters at a word boundary (GFM ignores
# intraword underscores), so names like match_rope_pattern stay readable in the raw comment. '<' and '&'
# become entities so no HTML can be injected (GitHub sanitises, but we must not rely on it).
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


_PIPE = re.compile(r"(\\*)\|")


def md_escape(text: object) -> str:
    """Return ``text`` safe to embed in markdown prose or a table cell (HTML entities + backslashes)."""
    s = str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;")
    s = s.replace("\r", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), s)


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


# Characters that HTML or markdown would interpret, as numeric entities: safe both inside an HTML block
# (where markdown is not parsed and the browser decodes the entity) and in a table cell (where markdown is
# parsed first: an entity is never a delimiter, a pipe entity never splits the cell). '_' only at a word
# boundary, as in md_escape (intraword underscores never emphasise), so names stay readable in the raw text.
_HTML_SPECIAL = re.compile(r"[&<>`*\[\]|\\~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def html_text(text: object) -> str:
    """Return ``text`` as HTML text safe in table cells, ``<summary>`` and other raw HTML (one line)."""
    s = str(text).replace("\r", " ").replace("\n", " ")
    return _HTML_SPECIAL.sub(lambda m: f"&#{ord(m.group(0))};", s)


def html_code(text: object) -> str:
    """Return ``text`` as a ``<code>`` element: renders as code inside table cells and HTML blocks, where a
    backtick code span would not (GitHub shows ``\\``` `` literally there) and cannot be closed early."""
    return f"<code>{html_text(text)}</code>"


_SPAN = re.compile(r"`([^`\r\n]+)`")


def md_text(text: object) -> str:
    """:func:`md_escape`, with backticks as entities: safe right next to a code span (an escaped backtick
    before a code span's opening fence would read as one longer fence to simpler markdown readers)."""
    return md_escape(text).replace("\\`", "&#96;")


def md_inline(text: object) -> str:
    """Return ``text`` escaped like :func:`md_escape`, except that ```…``` spans in it (op names in messages
    written by ad-diff) render as code spans. Every piece is escaped, so hostile text stays inert."""
    s = str(text)
    out, last = [], 0
    for m in _SPAN.finditer(s):
        out += [md_text(s[last:m.start()]), md_code(m.group(1))]
        last = m.end()
    out.append(md_text(s[last:]))
    return "".join(out)
