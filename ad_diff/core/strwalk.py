"""Every string of a model, found and replaced in one walk: what redaction and the sinks' value pass share.

A result is frozen dataclasses, tuples, lists and dicts, thousands of objects of a few dozen types, many of
them shared (the verdict and the result hold the same findings; reports index findings by identity).
:func:`strings` lists every string in it by ``id`` (iteratively: no recursion limit), and
:func:`map_strings` returns a copy with a function applied to some of them, sharing every part that held
none of those and keeping one object seen twice one object.

A dataclass field declared with :data:`UNRENDERED` metadata is left out of both: it holds what only the
comparison reads (a transform's unclaimed log lines, read by the accounting), never a renderer, and a log
of tens of thousands of such lines would otherwise cost every output pass a walk over them. What such a
field holds reaches a report only as a finding's own strings, which are walked.
tests/unit/test_layout.py checks that no renderer reads one.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import Any

_UNRENDERED_KEY = "ad_diff.unrendered"
UNRENDERED: Mapping[str, bool] = MappingProxyType({_UNRENDERED_KEY: True})
"""``field(metadata=UNRENDERED)``: a field no renderer reads, which :func:`strings` and
:func:`map_strings` (redaction, the sinks' value pass) leave out."""


@functools.cache
def _init_fields(cls: type) -> tuple[str, ...] | None:
    """The ``__init__`` fields of a dataclass type that a renderer may read (``None``: not a dataclass),
    looked up once per type: a result holds thousands of dataclass objects of a few dozen types."""
    if not dataclasses.is_dataclass(cls):
        return None
    shown = (f for f in dataclasses.fields(cls) if not f.metadata.get(_UNRENDERED_KEY))
    return tuple(f.name for f in shown if f.init)


def strings(obj: Any) -> dict[int, str]:
    """Every string in ``obj`` (tuples, lists, dict keys and values, dataclass fields, any depth), by id."""
    out: dict[int, str] = {}
    seen: set[int] = set()
    stack = [obj]
    while stack:
        x = stack.pop()
        if type(x) is str:
            out[id(x)] = x
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif (names := _init_fields(x.__class__)) is not None:
            stack.extend(getattr(x, name) for name in names)
    return out


def map_strings(obj: Any, fn: Callable[[str], str], only: Collection[int] | None = None) -> Any:
    """A copy of ``obj`` with ``fn`` applied to its strings (those whose ``id`` is in ``only``; all when
    ``None``), sharing every part in which nothing changed; one object seen twice stays one object."""
    memo: dict[int, tuple[Any, Any]] = {}

    def walk(x: Any) -> Any:
        hit = memo.get(id(x))
        if hit is not None:
            return hit[1]
        out = x
        if type(x) is str:
            out = fn(x) if only is None or id(x) in only else x
        elif isinstance(x, (tuple, list)):
            items = [walk(v) for v in x]
            if any(a is not b for a, b in zip(items, x, strict=True)):
                out = type(x)(items) if type(x) in (tuple, list) else x
        elif isinstance(x, dict):
            pairs = [(walk(k), walk(v)) for k, v in x.items()]
            if any(a is not k or b is not v for (a, b), (k, v) in zip(pairs, x.items(), strict=True)):
                out = dict(pairs)
        elif (names := _init_fields(x.__class__)) is not None:
            changes = {name: new for name in names if (new := walk(getattr(x, name))) is not getattr(x, name)}
            out = dataclasses.replace(x, **changes) if changes else x
        memo[id(x)] = (x, out)  # x kept alive: its id is not reused while the walk runs
        return out

    return walk(obj)


__all__ = ["UNRENDERED", "map_strings", "strings"]
