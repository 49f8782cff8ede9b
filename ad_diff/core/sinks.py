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

Every renderer gets its model through :func:`values` first (issue 45): each value owns no line and is
bounded. Line breaks inside a value (a tensor or folder name holding LF, a multi-line config value) are
written as ``\\n``/``\\r``, so no value can start a line of any output (``ad-diff: PASS`` or
``::notice::`` forged at column 0), and a value longer than :data:`VALUE_CHARS` is cut to its start and end
(a 303 KB reason repeated under every finding made a 617 MB report). JSON gets the cut but keeps the line
breaks (its strings escape them, and parse back to the input's).
"""

from __future__ import annotations

import io
import re
import unicodedata
from typing import Any

from ad_diff.core import lazy
from ad_diff.core.strwalk import map_strings, strings

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


VALUE_CHARS = 1_000
"""Longest value (a name, a message, a reason, a config value) any output shows; longer ones keep their
start and end around a note of how much was left out. AD names are under 100 characters."""
_BREAKS = {"\n": "\\n", "\r": "\\r"}


def cut(text: str, limit: int = VALUE_CHARS) -> str:
    """``text`` when it has at most ``limit`` characters, else its start and end around a note saying how
    much was left out (``abc… [99,700 characters omitted] …xyz``)."""
    if len(text) <= limit:
        return text
    tail = max(limit // 5, 1)
    head = max(limit - tail - 40, 1)
    return f"{text[:head]}… [{len(text) - head - tail:,} characters omitted] …{text[-tail:]}"


def one_line(text: str) -> str:
    """``text`` as one line: line feeds and carriage returns written ``\\n`` and ``\\r``."""
    if "\n" not in text and "\r" not in text:
        return text
    return text.replace("\r", _BREAKS["\r"]).replace("\n", _BREAKS["\n"])


_recent: dict[tuple[bool, tuple[int, ...]], tuple[Any, Any]] = {}
"""The last models :func:`values` prepared, by the ids of their parts: every format of one comparison asks
for the same result (the objects are kept alive with it, so an id is not reused while it is held)."""


def values(model: Any, lines: bool = True) -> Any:
    """``model`` (a result, a verdict, any tuple of dataclasses, lists and dicts) as a renderer must see it:
    every string cut to :data:`VALUE_CHARS` and, unless ``lines`` is false (JSON), on one line
    (:func:`one_line`). The same object when nothing needs changing (found in one scan)."""
    key = (lines, tuple(map(id, model)) if type(model) is tuple else (id(model),))
    hit = _recent.get(key)
    if hit is not None and (hit[0] is model or hit[0] == model):
        return hit[1]
    out = _values(model, lines)
    if len(_recent) >= 8:
        _recent.pop(next(iter(_recent)))
    _recent[key] = (model, out)
    return out


def _values(model: Any, lines: bool) -> Any:
    texts = strings(model)
    if not texts:
        return model
    joined = "\x00".join(texts.values())
    breaks = lines and ("\n" in joined or "\r" in joined)
    if not breaks and max(map(len, texts.values())) <= VALUE_CHARS:
        return model
    del joined
    only = {k for k, s in texts.items() if len(s) > VALUE_CHARS or (lines and ("\n" in s or "\r" in s))}

    def fix(s: str) -> str:
        return cut(one_line(s)) if lines else cut(s)  # escaped first: the cut bounds what is shown

    return map_strings(model, fix, only)


def terminal(text: str) -> str:
    """``text`` safe to show in a terminal: nothing in it moves the cursor, clears, retitles, writes the
    clipboard or reorders what is shown; newlines and tabs stay (rich lays them out)."""
    return visible(text)


_SGR = lazy.pattern(r"(\x1b\[[0-9;]*m)")


def output(text: str) -> str:
    """The last pass over every text the CLI writes (any medium): :func:`visible` everywhere except the
    colour (SGR) sequences of a coloured terminal report, which rich writes and which only colour text.
    A renderer that escaped its fields leaves nothing here to do; one that missed a field is still safe."""
    if "\x1b" not in text:
        return visible(text)
    return "".join(piece if i % 2 else visible(piece) for i, piece in enumerate(_SGR.split(text)))


def job_log(text: str) -> str:
    """``text`` safe in a CI job's log, where the runner acts on lines (GitHub: a line whose first
    non-blank characters are ``::`` is a workflow command, and ``##[`` anywhere in a line a legacy one, some
    of which stop all later commands): the ``:`` that would start a command is written ``\\x3a`` and every
    ``[`` after ``##`` as ``\\x5b``. Colour sequences before the ``::`` count as blank (a log viewer drops
    them). Everything else is unchanged."""
    if "::" not in text and "##[" not in text:
        return text
    out = []
    for line in text.split("\n"):
        if "::" in line and _SGR.sub("", line).lstrip().startswith("::"):
            k = line.index(":")  # the first one: blanks and colour sequences hold none
            line = line[:k] + "\\x3a" + line[k + 1:]
        out.append(line.replace("##[", "##\\x5b"))
    return "\n".join(out)


class JobLogStream(io.TextIOBase):
    """A text stream passing every line written to it through :func:`job_log` (whole lines: a partial one
    waits for its end or a flush), onto ``raw``, which escapes what its encoding cannot hold (``\\u2713`` on
    a latin-1 or cp1252 stream: the verdict is never lost to ``UnicodeEncodeError``)."""

    def __init__(self, raw: Any) -> None:
        super().__init__()
        if hasattr(raw, "reconfigure"):
            raw.reconfigure(errors="backslashreplace")
        self.raw = raw
        self._pending = ""

    def write(self, s: str) -> int:
        """Write ``s``: its complete lines now, the rest at the next line end or flush."""
        text = self._pending + s
        cut = text.rfind("\n") + 1
        self._pending = text[cut:]
        if cut:
            self.raw.write(job_log(text[:cut]))
        return len(s)

    def flush(self) -> None:
        """Write what is pending (a last line without its end) and flush ``raw``."""
        if self._pending:
            self.raw.write(job_log(self._pending))
            self._pending = ""
        self.raw.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(self.raw.isatty())

    def fileno(self) -> int:
        return int(self.raw.fileno())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.raw, "encoding", "utf-8"))

    @property
    def buffer(self) -> Any:
        """The raw stream's bytes (``record`` copies the recorded command's own output through it)."""
        return self.raw.buffer


def guard_streams() -> None:
    """Put :class:`JobLogStream` in front of ``sys.stdout`` and ``sys.stderr`` (once): whatever any part of
    the CLI writes, no line acts on a CI runner and no character ends the run with an encoding error."""
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, JobLogStream):
            setattr(sys, name, JobLogStream(stream))


PLOT_CHARS = 120
"""Longest name a plot title shows."""


def plot_text(text: str) -> str:
    """A name as a plot title shows it: visible escapes, one line, at most :data:`PLOT_CHARS` characters.
    The title is drawn with matplotlib's math parsing off (``parse_math=False``): ``$...$`` would be read
    as math, and a ``$`` in a tensor name crashed ``--plots``."""
    return one_line(visible(cut(text, PLOT_CHARS)))


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
    return visible(one_line(value))  # a quoted cell may hold a line break: it would start a line of the file


__all__ = ["VALUE_CHARS", "JobLogStream", "csv_cell", "cut", "escape_char", "guard_streams", "job_log",
           "one_line", "output", "plot_text", "terminal", "unsafe", "values", "visible", "xml"]
