"""The one JSON serializer: frozen dataclasses (and the values inside them) to plain JSON data.

Reports never hand-write JSON for a model. A dataclass says how it serialises through its fields' metadata:

* ``field(metadata=json_omit())``: left out (large or derived data kept for rendering only);
* ``field(metadata=json_as("name"))``: written under another key;
* ``field(metadata=json_pairs())``: a tuple of ``(key, value)`` pairs written as an object;
* ``field(metadata=json_capped(500))``: a long list written as ``{count, items (first N), truncated}``;
* ``field(metadata=json_with(fn))``: written as ``fn(value)`` (a summary or another spelling of the value);
* ``field(metadata=json_first(500))``: a long list written as its first N items only (the count is
  elsewhere in the data);

and through a class attribute ``__json_extra__ = ("prop", ...)``: properties written beside the fields.
Enums become their value, paths strings, tuples lists, non-finite floats the strings ``"nan"``/``"inf"``/
``"-inf"`` (strict JSON has no NaN), mapping keys strings. The result is deterministic: rendering sorts keys.

:func:`dumps` is the one place JSON text is written for a report: strict (``allow_nan=False``, a non-finite
number anywhere in the data becomes the same strings), and the characters :func:`ad_diff.core.sinks.visible`
escapes elsewhere are written as ``\\uXXXX`` escapes (the same string for a parser, inert on a terminal), and
so is the ``[`` of ``##[`` (a GitHub runner's legacy workflow command, wherever a line of the job log
holds it: JSON printed on stdout lands there).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import PurePath
from typing import Any

from ad_diff.core.sinks import unsafe

_OMIT = "json_omit"
_NAME = "json_name"
_PAIRS = "json_pairs"
_CAP = "json_cap"
_WITH = "json_with"
_FIRST = "json_first"


def json_omit() -> dict[str, Any]:
    """Field metadata: leave this field out of the JSON."""
    return {_OMIT: True}


def json_as(name: str) -> dict[str, Any]:
    """Field metadata: write this field under ``name``."""
    return {_NAME: name}


def json_pairs() -> dict[str, Any]:
    """Field metadata: a tuple of ``(key, value)`` pairs, written as a JSON object."""
    return {_PAIRS: True}


def json_capped(limit: int) -> dict[str, Any]:
    """Field metadata: a list written as ``{"count", "items" (at most ``limit``), "truncated"}``."""
    return {_CAP: limit}


def json_with(fn: Callable[[Any], Any]) -> dict[str, Any]:
    """Field metadata: write ``fn(value)`` (then serialised like any value) instead of the value itself."""
    return {_WITH: fn}


def json_first(limit: int) -> dict[str, Any]:
    """Field metadata: a list written as its first ``limit`` items (no wrapper)."""
    return {_FIRST: limit}


_SCALARS = frozenset({str, int, bool, type(None)})


def to_jsonable(obj: Any) -> Any:
    """``obj`` as JSON-ready data (dicts, lists, str, int, float, bool, None)."""
    t = type(obj)
    if t in _SCALARS:  # the exact types: an IntEnum or a str subclass goes on below
        return obj
    if t is tuple or t is list:
        return [to_jsonable(v) for v in obj]
    if t is float:
        return obj if math.isfinite(obj) else str(obj)
    plan = _PLANS.get(t)
    if plan is not None:
        return _dataclass(obj, plan)
    if isinstance(obj, Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, PurePath):
        return str(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        legacy = getattr(obj, "to_json", None)  # transitional: models not yet described by field metadata
        return legacy() if callable(legacy) else _dataclass(obj, _plan(t))
    if isinstance(obj, Mapping):
        return {str(to_jsonable(k)): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [to_jsonable(v) for v in items]
    raise TypeError(f"no JSON form for {type(obj).__name__}")


_Plan = tuple[tuple[str, str, Any], ...]
_PLANS: dict[type, _Plan] = {}
"""Per dataclass (without ``to_json``): what :func:`_dataclass` writes, read from its fields' metadata once
per class rather than once per object (a report serialises thousands of objects of a few classes)."""


def _plan(cls: type) -> _Plan:
    steps: list[tuple[str, str, Any]] = []
    for f in dataclasses.fields(cls):
        meta = f.metadata
        if meta.get(_OMIT):
            continue
        how: Any = None
        if _WITH in meta:
            how = (_WITH, meta[_WITH])
        elif meta.get(_PAIRS):
            how = (_PAIRS, None)
        elif _CAP in meta:
            how = (_CAP, meta[_CAP])
        elif _FIRST in meta:
            how = (_FIRST, meta[_FIRST])
        steps.append((f.name, meta.get(_NAME, f.name), how))
    steps.extend((name, name, None) for name in getattr(cls, "__json_extra__", ()))
    plan = _PLANS[cls] = tuple(steps)
    return plan


def _dataclass(obj: Any, plan: _Plan) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, key, how in plan:
        value = getattr(obj, name)
        if how is not None:
            kind, arg = how
            if kind is _WITH:
                value = arg(value)
            elif kind is _PAIRS:
                value = {str(to_jsonable(k)): v for k, v in value}
            elif kind is _CAP:
                items = list(value)
                value = {"count": len(items), "items": items[:arg], "truncated": max(0, len(items) - arg)}
            else:
                value = list(value)[:arg]
        out[key] = to_jsonable(value)
    return out


def finite(obj: Any) -> Any:
    """``obj`` (JSON-ready data) with every non-finite float, at any depth, as ``"nan"``, ``"inf"`` or
    ``"-inf"``."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def _u_escape(ch: str) -> str:
    n = ord(ch)
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def _encode(data: Any, kw: dict[str, Any]) -> str:
    """``json.dumps(data, **kw)``. With ``indent`` the standard library encodes in Python and joins a list
    of every piece it wrote (a megabyte report: hundreds of thousands of small strings at once, several
    times the text's size); written into a ``StringIO`` instead, the pieces are let go as they come."""
    if kw["indent"] is None:
        return json.dumps(data, **kw)
    out = io.StringIO()
    write = out.write
    for piece in json.JSONEncoder(**kw).iterencode(data):
        write(piece)
    return out.getvalue()


def dumps(data: Any, *, indent: int | None = 2, sort_keys: bool = False, ensure_ascii: bool = False,
          separators: tuple[str, str] | None = None) -> str:
    """``data`` as strict JSON text (see module doc): parsers that reject ``NaN`` read it, and no control,
    bidi or zero-width character is written raw (JSON strings are the only place they can be)."""
    kw: dict[str, Any] = {"indent": indent, "sort_keys": sort_keys, "ensure_ascii": ensure_ascii,
                          "separators": separators, "default": str, "allow_nan": False}
    try:
        text = _encode(data, kw)
    except ValueError:  # a NaN or infinity somewhere: rewrite them (the common case pays no walk)
        text = _encode(finite(data), kw)
    if "##[" in text:  # only inside a string (JSON has no '#'): a CI runner acts on it anywhere in a line
        text = text.replace("##[", "##\\u005b")
    if text.isascii():  # (ensure_ascii gives ASCII too) DEL is the one ASCII control json leaves raw
        return text.replace("\x7f", "\\u007f") if "\x7f" in text else text
    bad = {ch for ch in set(text) if unsafe(ch)}
    return "".join(_u_escape(ch) if ch in bad else ch for ch in text) if bad else text
