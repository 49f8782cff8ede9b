"""The one bounded JSON reader: every JSON input of ad-diff is parsed here.

``json.loads`` is not bounded: 1,001 nested brackets end in ``RecursionError``, a duplicate key silently
keeps the last value (two answers to one question, and a reader downstream sees only one of them), a
100,000-digit integer costs quadratic time in ``int()`` or raises where it is first printed, and ``NaN`` is
not JSON at all. :func:`parse` refuses all of that before or while the parser builds objects:

* nesting deeper than ``depth`` levels, found by one linear scan of the bytes *before* the parser runs (so
  no recursion is ever entered);
* duplicate keys in any object;
* integers longer than ``digits`` digits (never handed to ``int()``);
* ``NaN``, ``Infinity``, ``-Infinity`` (not JSON), and floats altogether where the caller wants none;
* text that is not strict UTF-8.

A refusal is a :class:`JsonProblem` (the problem and the 1-based line where there is one); :func:`load_json`
turns it into an :class:`~ad_diff.errors.InputError` naming the file, the line and what was expected. The
size of what is parsed is bounded by whoever read the bytes (:func:`ad_diff.core.safepath.read_json` reads
a run-folder file within a byte cap). The YAML loader (:mod:`ad_diff.core.yamlsafe`) reads JSON layers
through here too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core import lazy
from ad_diff.core.limits import INT_DIGITS, JSON_DEPTH
from ad_diff.errors import InputError

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")



class JsonProblem(ValueError):
    """Why a JSON text was refused (:attr:`problem`, without the file) and where (:attr:`line`)."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.problem, self.line = problem, line


_CHUNK = 8 << 20
"""Bytes :func:`json_depth` looks at in one vectorised pass (its arrays cost about 30 bytes a byte)."""


def json_depth(raw: bytes) -> int:
    """Deepest ``[``/``{`` nesting of ``raw`` outside strings: vectorised passes over the bytes, a chunk at a
    time, with no recursion and no regular expression (a string of escaped quotes that never ends made the
    pattern this replaced scan the rest of the text from every quote: 40,000 of them took 20 s)."""
    deepest = depth = 0
    inside = False  # within a string at the chunk's start
    run = 0  # backslashes right before the chunk's first byte
    for at in range(0, len(raw), _CHUNK):
        body = np.frombuffer(raw, dtype=np.uint8, count=min(_CHUNK, len(raw) - at), offset=at)
        idx = np.arange(body.size, dtype=np.int32)
        # the backslashes right before each byte: a quote after an odd run of them is escaped
        plain = np.maximum.accumulate(np.where(body != 0x5C, idx, -1 - run))
        before = np.empty(body.size, dtype=np.int32)
        before[0] = run
        before[1:] = idx[:-1] - plain[:-1]
        quote = (body == 0x22) & (before % 2 == 0)
        opened = np.cumsum(quote, dtype=np.int32) - quote
        here = (opened % 2 == 1) != inside  # after an opening quote, up to its closing one
        step = np.zeros(body.size, dtype=np.int8)
        step[((body == 0x5B) | (body == 0x7B)) & ~here] = 1
        step[((body == 0x5D) | (body == 0x7D)) & ~here] = -1
        levels = np.cumsum(step, dtype=np.int64)
        deepest = max(deepest, depth + int(levels.max()))
        depth += int(levels[-1])
        inside = inside != bool((int(opened[-1]) + int(quote[-1])) % 2)
        run = int(idx[-1] - plain[-1])
    return deepest


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def parse(raw: bytes | str, *, depth: int = JSON_DEPTH, digits: int = INT_DIGITS,
          floats: bool = True) -> Any:
    """``raw`` parsed as JSON within the bounds of the module docstring; :class:`JsonProblem` otherwise.
    ``floats=False`` refuses every number with a fraction or an exponent."""
    if isinstance(raw, str):
        text, data = raw, raw.encode("utf-8", "surrogatepass")
    else:
        data = raw
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise JsonProblem(f"is not UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start:,})",
                              raw.count(b"\n", 0, e.start) + 1) from None
    found = json_depth(data)
    if found > depth:
        raise JsonProblem(f"JSON nested {found:,} levels deep (the cap is {depth})")

    def bounded_int(s: str) -> int:
        n = len(s.lstrip("-"))
        if n > digits:
            raise JsonProblem(f"integer of {n:,} digits is too long (limit {digits:,})")
        return int(s)

    def no_float(s: str) -> Any:
        raise JsonProblem(f"number {_short(s, 40)} is not an integer")

    def no_constant(s: str) -> Any:
        raise JsonProblem(f"number {s} is not JSON" if floats else f"number {s} is not an integer")

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                raise JsonProblem(f"duplicate key {_short(k)!r}")
            out[k] = v
        return out

    try:
        return json.loads(text, parse_int=bounded_int, parse_float=None if floats else no_float,
                          parse_constant=no_constant, object_pairs_hook=unique)
    except json.JSONDecodeError as e:
        raise JsonProblem(f"invalid JSON: {e.msg}", e.lineno) from None
    except RecursionError:  # not reached: the depth is checked first (kept as the last line of defence)
        raise JsonProblem(f"JSON nested more than {depth} levels deep") from None


def load_json(raw: bytes | str, path: Path | str, what: str | None = None, *, depth: int = JSON_DEPTH,
              digits: int = INT_DIGITS, floats: bool = True) -> Any:
    """:func:`parse`, a refusal an :class:`InputError` naming ``path``, the line and ``what`` was expected."""
    try:
        return parse(raw, depth=depth, digits=digits, floats=floats)
    except JsonProblem as e:
        tail = f"; expected {what}" if what else ""
        raise InputError(path, f"{e.problem}{tail}", e.line) from None


__all__ = ["INT_DIGITS", "JSON_DEPTH", "JsonProblem", "json_depth", "load_json", "parse"]
