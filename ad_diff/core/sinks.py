"""The sink layer: one escaper per output medium, for every string that comes from an input.

Names, messages, paths and config values come from files nobody reviewed. Whatever they hold, they reach an
output only through the escaper of that output's medium, and each escaper lives here (or, for the markup
of markdown and HTML, in :mod:`ad_diff.core.escape`, which calls :func:`visible` first):

* every medium: characters that are invisible or act on the reader -- controls (C0 but tab and newline,
  DEL, C1), format characters (bidi overrides and isolates, zero-width characters, U+FEFF, soft hyphen, tag
  characters), line and paragraph separators, lone surrogates, unassigned code points and noncharacters,
  and the invisible Hangul fillers -- are written as visible escapes (``\\x1b``, ``\\u202e``,
  ``\\U000e0001``) by :func:`visible`. So ``ESC[2J``, OSC 52 and OSC 0 strings reach no terminal whole
  (their ESC and BEL are shown, the rest is plain text), and one name cannot look like another;
* terminal: :func:`terminal` (the rich console of :mod:`ad_diff.core.terminal` applies it to every text it
  renders), and :func:`output`, the last pass of everything the CLI writes, which lets through only the
  colour (SGR) sequences rich itself writes;
* markdown and HTML: :mod:`ad_diff.core.escape` (markup) over :func:`visible`; the HTML templates apply
  :func:`visible` to every value they print (Jinja ``finalize``);
* XML (JUnit): :func:`xml` (every character XML 1.0 forbids is among those :func:`visible` escapes);
* CSV: :func:`csv_cell` (formula neutralisation of input strings, numbers left as they are);
* JSON: :func:`ad_diff.core.jsonable.dumps` (strict: no NaN/Infinity; the same characters as ``\\uXXXX``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})
"""Controls, format characters, line and paragraph separators, surrogates, unassigned code points (the
noncharacters among them)."""
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0")
"""Letters that render as nothing (Hangul fillers): a name made of them looks empty or like another."""
_KEEP = frozenset("\t\n")
"""Layout characters every medium handles itself (a markdown table cell gets no newline: escape.py)."""
_ASCII_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

_verdicts: dict[str, bool] = {}


def unsafe(ch: str) -> bool:
    """Whether ``ch`` (one character) is written as a visible escape by :func:`visible`."""
    v = _verdicts.get(ch)
    if v is None:
        v = _verdicts[ch] = ch not in _KEEP and (
            unicodedata.category(ch) in _UNSAFE_CATEGORIES or ch in _INVISIBLE
        )
    return v


def escape_char(ch: str) -> str:
    """``ch`` as a visible escape: ``\\x1b``, ``\\u202e`` or ``\\U000e0001`` (Python's spelling)."""
    n = ord(ch)
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def _escape_match(m: re.Match[str]) -> str:
    return escape_char(m.group(0))


def visible(text: str) -> str:
    """``text`` with every unsafe character (see module doc) written as a visible escape; tab and newline
    are kept. Plain text comes back unchanged (the same object)."""
    if text.isascii():
        return _ASCII_UNSAFE.sub(_escape_match, text) if _ASCII_UNSAFE.search(text) else text
    bad = {ch for ch in set(text) if unsafe(ch)}
    if not bad:
        return text
    return "".join(escape_char(ch) if ch in bad else ch for ch in text)


def terminal(text: str) -> str:
    """``text`` safe to show in a terminal: nothing in it moves the cursor, clears, retitles, writes the
    clipboard or reorders what is shown; newlines and tabs stay (rich lays them out)."""
    return visible(text)


_SGR = re.compile(r"(\x1b\[[0-9;]*m)")


def output(text: str) -> str:
    """The last pass over every text the CLI writes (any medium): :func:`visible` everywhere except the
    colour (SGR) sequences of a coloured terminal report, which rich writes and which only colour text.
    A renderer that escaped its fields leaves nothing here to do; one that missed a field is still safe."""
    if "\x1b" not in text:
        return visible(text)
    return "".join(piece if i % 2 else visible(piece) for i, piece in enumerate(_SGR.split(text)))


def xml(text: object) -> str:
    """``text`` for XML 1.0 text or attribute values (ElementTree adds the entities for ``<&>"``): the
    characters XML forbids (most controls, surrogates, U+FFFE/U+FFFF) and the invisible ones as visible
    escapes, so a tool that shows the JUnit report shows what the input held."""
    return visible(str(text))


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP CSV injection)."""


def csv_cell(value: Any) -> Any:
    """One CSV cell: a string from an input that a spreadsheet would run as a formula gets a leading
    ``'``; its invisible characters are escaped (:func:`visible`); anything else (numbers) is unchanged."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA):
        value = "'" + value
    return visible(value)


__all__ = ["csv_cell", "escape_char", "output", "terminal", "unsafe", "visible", "xml"]
