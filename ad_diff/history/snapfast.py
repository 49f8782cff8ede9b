"""A fast reader for snapshot files in exactly the form ``ad-diff snapshot`` writes them.

A year of nightly snapshots is 18,000 files; a YAML parser takes milliseconds per file, this reader
tens of microseconds. It accepts only text whose meaning cannot differ from what ``yaml.safe_load``
would read: header lines ``key: scalar`` with plain scalars that are certainly strings, quoted strings,
integers and ``null``; transform lines ``  - {stage: S, transform: T, state: X, matches: N[, occurrence:
K]}`` whose names are plain words that YAML reads as strings; and, after them, ``metadata_coverage`` lines
of four counts. Anything else (a hand-edited file, a name that needs quoting, CRLF) returns ``None`` and
the caller reads the file with :func:`ad_diff.discover.snapshot.load_as_run`, which also gives the
error messages. A test compares both readers on generated snapshots.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ad_diff.history.columns import NO_COUNT, ROW, STATE_CODE, Columns
from ad_diff.history.logkind import LogEnd

_ROW = re.compile(
    r"  - \{stage: ([A-Za-z_][A-Za-z0-9_]*), transform: ([A-Za-z_][A-Za-z0-9_]*), state: ([a-z]+), "
    r"matches: (0|[1-9][0-9]*|null)(?:, occurrence: (0|[1-9][0-9]*))?\}",
    re.A,
)
_COVERAGE = re.compile(
    r"  [A-Za-z_][A-Za-z0-9_/#]*: \{args: (?:0|[1-9][0-9]*), args_with_meta: (?:0|[1-9][0-9]*), "
    r"nodes: (?:0|[1-9][0-9]*), with_meta: (?:0|[1-9][0-9]*)\}",
    re.A,
)
# Plain scalars YAML reads as strings: no ':' or '#', no quote or indicator first, ASCII only. Without a
# space they must start with a letter, '_' or '/' (digits may be numbers or dates, '.' may be .inf).
# With a space inside they may also start with a digit or '(' (no number, date or time holds a space
# without a ':').
_PLAIN_1 = re.compile(r"[A-Za-z_/][A-Za-z0-9_./+()=,-]*", re.A)
_PLAIN_N = re.compile(r"[A-Za-z0-9_/(][A-Za-z0-9_./+()=,-]*(?: [A-Za-z0-9_./+()=,-]+)+", re.A)
# Single-quoted, one line: no control characters, no line or paragraph separator (YAML breaks lines there).
_QUOTED = re.compile(r"'((?:[^'\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]|'')*)'")
_INT = re.compile(r"0|[1-9][0-9]*", re.A)
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?", re.A)
_ITEM = re.compile(r"- (.*)")
# A comment: printable ASCII only (YAML also breaks lines at U+0085/U+2028 and rejects control characters).
_COMMENT = re.compile(r"#[\t\x20-\x7e]*")
#: Words YAML 1.1 (PyYAML) reads as booleans or null when unquoted.
RESERVED = frozenset(
    [
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "null",
        "Null",
        "NULL",
    ]
)
_ENDS = frozenset(e.value for e in LogEnd)
_TRANSFORMS = "\ntransforms:\n"
_COVERAGE_KEY = "metadata_coverage:\n"
_NO: Any = object()
_CACHE_LIMIT = 200_000
_BLOCKS = 256
"""Whole transform blocks remembered (a few per model: a model's block changes only when a count does)."""
"""Distinct lines remembered per history (a history of all-distinct lines is still read, just slower)."""
_header_lines: dict[str, tuple[Any, ...] | None] = {}
_coverage_lines: set[str] = set()


@dataclass(frozen=True, slots=True)
class FastSnapshot:
    """The parts of a snapshot history needs: how the run ended and its transforms as packed rows."""

    end: str
    end_detail: str
    rows: bytes
    """One :data:`~ad_diff.history.columns.ROW` per transform line."""


def _scalar(text: str | None) -> Any:
    """The value YAML gives a block scalar, or :data:`_NO` when that is not certain."""
    if text is None or text in ("null", "~"):
        return None
    if text == "[]":
        return ()
    if _INT.fullmatch(text):
        return int(text)
    m = _QUOTED.fullmatch(text)
    if m:
        return m.group(1).replace("''", "'")
    if (_PLAIN_1.fullmatch(text) or _PLAIN_N.fullmatch(text)) and text not in RESERVED:
        return text
    return _NO


def _header_line(line: str) -> tuple[Any, ...] | None:
    """``("skip",)``, ``("item", v)``, ``("block", key)``, ``("key", key, v)``; ``None``: not certain."""
    if not line or _COMMENT.fullmatch(line):
        return ("skip",)
    m = _ITEM.fullmatch(line)
    if m:
        value = _scalar(m.group(1))
        return None if value is _NO or value == () else ("item", value)
    m = _KEY.fullmatch(line)
    if m is None:
        return None
    if m.group(2) is None:
        return ("block", m.group(1))
    value = _scalar(m.group(2))
    return None if value is _NO else ("key", m.group(1), value)


def _header(head: str) -> dict[str, Any] | None:
    """The ``key: value`` lines (and ``- item`` lists) before ``transforms:``; ``None`` when not certain."""
    out: dict[str, Any] = {}
    items: list[Any] | None = None
    block_keys: list[str] = []
    if len(_header_lines) > _CACHE_LIMIT:
        _header_lines.clear()
    for line in head.split("\n"):
        if line in _header_lines:
            parsed = _header_lines[line]
        else:
            parsed = _header_lines[line] = _header_line(line)
        if parsed is None:
            return None
        kind = parsed[0]
        if kind == "item":
            if items is None:
                return None
            items.append(parsed[1])
        elif kind == "block":  # `key:` alone: a block list follows, or it is null
            items = out[parsed[1]] = []
            block_keys.append(parsed[1])
        elif kind == "key":
            items = None
            out[parsed[1]] = parsed[2]
    for key in block_keys:  # `key:` with no items below it is null, not an empty list
        if out.get(key) == []:
            out[key] = None
    return out


def _row(line: str, cols: Columns) -> bytes | None:
    m = _ROW.fullmatch(line)
    if m is None:
        return None
    stage, transform, state, matches, occ = m.groups()
    if (
        stage in RESERVED
        or transform in RESERVED
        or state not in STATE_CODE
        or len(matches) > 18
        or len(occ or "") > 18
    ):
        return None  # (18 digits: beyond them a count may not fit 64 bits; the YAML reader says so)
    return ROW.pack(
        cols.stages.code(stage),
        cols.transforms.code(transform),
        int(occ or 0),
        STATE_CODE[state],
        NO_COUNT if matches == "null" else int(matches),
    )


def _rows(block: str, cols: Columns) -> bytes | None:
    """Packed rows of the transform lines (most lines repeat night after night: they come from a cache)."""
    lines = block.split("\n")
    cache = cols.lines
    rows = list(map(cache.get, lines))
    if None in rows:
        for i, line in enumerate(lines):
            if rows[i] is None:
                parsed = _row(line, cols)
                if parsed is None:
                    return None
                rows[i] = parsed
                if len(cache) < _CACHE_LIMIT:
                    cache[line] = parsed
    return b"".join(rows)  # type: ignore[arg-type]


def _coverage_ok(tail: str) -> bool:
    if len(_coverage_lines) > _CACHE_LIMIT:
        _coverage_lines.clear()
    for line in tail.split("\n"):
        if line not in _coverage_lines:
            if not _COVERAGE.fullmatch(line):
                return False
            _coverage_lines.add(line)
    return True


def read(text: str, cols: Columns) -> FastSnapshot | None:
    """Read snapshot ``text`` when it is in the canonical form; ``None`` means: use the YAML reader."""
    cut = text.find(_TRANSFORMS)
    if cut < 0:
        return None
    head = _header(text[: cut + 1])
    if head is None or head.get("ad_diff_snapshot") != 1:
        return None
    end = head.get("end", "complete")
    if end not in _ENDS:
        return None
    start = cut + len(_TRANSFORMS)
    split = text.find("\n" + _COVERAGE_KEY, start - 1)
    stop = len(text) if split < 0 else split + 1  # the transform lines end here (after their newline)
    if split >= 0:
        tail = text[split + 1 + len(_COVERAGE_KEY) :]
        if tail and (not tail.endswith("\n") or not _coverage_ok(tail[:-1])):
            return None
    if stop - start < 2 or text[stop - 1] != "\n":
        return None
    block = text[start : stop - 1]
    rows = cols.blocks.get(block)
    if rows is None:
        rows = _rows(block, cols)
        if not rows:
            return None
        if len(cols.blocks) >= _BLOCKS:
            del cols.blocks[next(iter(cols.blocks))]  # the oldest
        cols.blocks[block] = rows
    return FastSnapshot(str(end), str(head.get("end_detail", "")), rows)
