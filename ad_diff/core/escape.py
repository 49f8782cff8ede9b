"""Escaping of untrusted text (node, tensor, transform names, messages) for GitHub-flavoured markdown.

Text from the inputs must render as the same text, and must not act on GitHub: ``@user`` and
``@org/team`` would notify people, ``#123`` and ``owner/repo#123`` would post cross-references, and bare
URLs and e-mail addresses become links. :func:`md_escape` (and :func:`md_text`, :func:`md_inline`) put each
of those in an inline code span, :func:`html_text` in a ``<code>`` element (GitHub links them in raw HTML
text too), where GitHub neither links nor mentions, so it stays readable as written. Long text is cut by
:func:`excerpt`.

These are the markdown and HTML escapers of the sink layer (:mod:`ad_diff.core.sinks`): every one of them
first writes controls, bidi and zero-width characters as visible escapes
(:func:`~ad_diff.core.sinks.visible`), so a name cannot hide or reorder what is shown, in prose, code
spans, fenced blocks and HTML alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ad_diff.core import lazy
from ad_diff.core.sinks import cut, visible

# Characters with markdown meaning inside table cells and inline text: '|' breaks tables, '`' opens code
# spans, '*' '~' emphasis, '[' ']' links/images. '_' only matters at a word boundary (GFM ignores
# intraword underscores), so names like match_rope_pattern stay readable in the raw comment. '<' and '&'
# become entities so no HTML can be injected (GitHub sanitises, but we must not rely on it).
_MD_SPECIAL = lazy.pattern(r"([\\`*\[\]|~])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")

# What GitHub turns into a link, a mention or a cross-reference in prose (never inside a code span).
_ACTIVE = lazy.pattern(
    r"(?i:(?:https?|ftp)://|www\.)[^\s<>`]*[^\s<>`.,;:!?'\")\]]"  # bare URLs (GFM extended autolinks)
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail addresses (mailto links)
    r"|(?<![\w`])@[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9](?:[\w.-]*[\w-])?)?"  # @user, @org/team
    r"|(?<![\w`])(?:[\w.-]+/[\w.-]+)?#\d+\b"  # #123, owner/repo#123
    r"|(?<![\w`])GH-\d+\b"
)

_PIPE = lazy.pattern(r"(\\*)\|")
WORD_CAP = 256
"""Longest word (a run of characters but spaces, ``<`` and ``>``) :data:`_ACTIVE` is run on. Every link,
mention and reference lies inside one word, so running it word by word finds what it finds on the whole
text; and the pattern's work on a word grows with the square of its length (an e-mail address may start
at any of its characters: an 80 KB name took minutes), so a longer word is not searched: if it holds any
mark of an active form it is shown whole as code (inert), else as text. Work: at most ``WORD_CAP`` steps a
character, linear in the text."""
_WORD = lazy.pattern(r"[^\s<>]++")
_MARKS = ("@", "#", "://", "www.", "gh-")
"""What every match of :data:`_ACTIVE` holds (lower case)."""


def active_spans(s: str) -> Iterator[tuple[int, int]]:
    """The spans of ``s`` GitHub would turn into a link, a mention or a reference (see :data:`WORD_CAP`)."""
    for w in _WORD.finditer(s):
        a, b = w.span()
        if b - a <= WORD_CAP:
            for m in _ACTIVE.finditer(s, a, b):
                yield m.span()
        elif any(mark in s[a:b].lower() for mark in _MARKS):
            yield a, b


def _escape_plain(s: str, tick: str) -> str:
    s = s.replace("&", "&amp;").replace("<", "&lt;")
    return _MD_SPECIAL.sub(lambda m: tick if m.group(0) == "`" else "\\" + m.group(0), s)


def _md(text: object, tick: str) -> str:
    s = visible(str(text).replace("\r", " ").replace("\n", " "))
    out: list[str] = []
    pos = 0
    for a, b in active_spans(s):
        out.append(_escape_plain(s[pos:a], tick))
        out.append(md_code(s[a:b]))
        pos = b
    out.append(_escape_plain(s[pos:], tick))
    return "".join(out)


def md_escape(text: object) -> str:
    """Return ``text`` safe to embed in markdown prose or a table cell: HTML entities and backslashes for
    markup, and mentions, issue references, URLs and e-mail addresses as inline code (see module doc)."""
    return _md(text, "\\`")


def md_code(text: object) -> str:
    """Return ``text`` as an inline code span that cannot be broken out of (backticks neutralised)."""
    s = visible(str(text).replace("\r", " ").replace("\n", " "))
    # GFM splits table cells before parsing code spans, and a backslash escapes the next character there:
    # a '|' after an even run of backslashes ('\\|') would still split the cell, so it gets one more.
    s = _PIPE.sub(lambda m: m.group(1) + ("|" if len(m.group(1)) % 2 else "\\|"), s)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def fence_block(text: str, lang: str = "") -> str:
    """Return ``text`` in a fenced code block whose fence is longer than any backtick run inside."""
    text = visible(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def excerpt(text: str, limit: int = 300) -> str:
    """``text`` when it has at most ``limit`` characters, else its start and end around a note saying how
    much was left out (``abc… [99,700 characters omitted] …xyz``): :func:`ad_diff.core.sinks.cut`."""
    return cut(text, limit)


# Characters that HTML or markdown would interpret, as numeric entities: safe both inside an HTML block
# (where markdown is not parsed and the browser decodes the entity) and in a table cell (where markdown is
# parsed first: an entity is never a delimiter, a pipe entity never splits the cell). '_' only at a word
# boundary, as in md_escape (intraword underscores never emphasise), so names stay readable in the raw text.
_HTML_SPECIAL = lazy.pattern(r"[&<>`*\[\]|\\~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _html_plain(s: str) -> str:
    s = visible(s.replace("\r", " ").replace("\n", " "))
    return _HTML_SPECIAL.sub(lambda m: f"&#{ord(m.group(0))};", s)


def html_text(text: object) -> str:
    """Return ``text`` as HTML text safe in table cells, ``<summary>`` and other raw HTML (one line).
    GitHub links mentions, references and URLs in raw HTML text too, so those go in ``<code>``."""
    s = str(text)
    out: list[str] = []
    pos = 0
    for a, b in active_spans(s):
        out += [_html_plain(s[pos:a]), f"<code>{_html_plain(s[a:b])}</code>"]
        pos = b
    out.append(_html_plain(s[pos:]))
    return "".join(out)


def html_code(text: object) -> str:
    """Return ``text`` as a ``<code>`` element: renders as code inside table cells and HTML blocks, where a
    backtick code span would not (GitHub shows ``\\``` `` literally there) and cannot be closed early."""
    return f"<code>{_html_plain(str(text))}</code>"


_SPAN = lazy.pattern(r"`([^`\r\n]+)`")


def code_spans(text: object) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, is_code)``: the ```…``` spans ad-diff writes around op names in its own
    sentences, and the text between them (the pieces are raw: each report escapes them its own way)."""
    s = str(text)
    out: list[tuple[str, bool]] = []
    last = 0
    for m in _SPAN.finditer(s):
        if m.start() > last:
            out.append((s[last : m.start()], False))
        out.append((m.group(1), True))
        last = m.end()
    if last < len(s):
        out.append((s[last:], False))
    return out


def md_text(text: object) -> str:
    """:func:`md_escape`, with backticks as entities: safe right next to a code span (an escaped backtick
    before a code span's opening fence would read as one longer fence to simpler markdown readers)."""
    return _md(text, "&#96;")


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
