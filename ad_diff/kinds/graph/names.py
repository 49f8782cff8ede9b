"""Node names, targets and metadata as the alignment compares them (:mod:`ad_diff.kinds.graph.index`,
:mod:`ad_diff.kinds.graph.align`): counters stripped, addresses dropped, symbolic dimensions unnamed."""

from __future__ import annotations

import re
from sys import intern

from ad_diff.kinds.graph.model import NodeMeta

_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
_COUNTER = re.compile(r"_\d+$")
_PY_CALLABLE = re.compile(r"<(?:built-in )?(?:function|method) (\w+)")
_SYM = re.compile(r"\bs\d+\b")

MetaKey = tuple[str | None, str] | None
"""A node's metadata as compared across runs: ``(shape with symbols as s?, dtype)``; ``None`` if unknown."""


_SYM_SHAPES: dict[str, str] = {}
_STRIPPED_MAX = 1 << 18


def sym_shape(shape: str) -> str:
    """``shape`` with symbolic dimension names as ``s?`` (``s44`` and ``s70`` are numbered per export)."""
    got = _SYM_SHAPES.get(shape)
    if got is None:
        if len(_SYM_SHAPES) >= _STRIPPED_MAX:
            _SYM_SHAPES.clear()
        got = _SYM_SHAPES[shape] = _SYM.sub("s?", shape) if "s" in shape else shape
    return got


def meta_key(meta: NodeMeta | None) -> MetaKey:
    """``meta`` as compared across runs (symbolic dimension names such as ``s44`` vs ``s70`` are numbered
    per export, so they are not compared); ``None`` when the node has no known metadata."""
    if meta is None or not meta.known:
        return None
    return (None if meta.shape is None else sym_shape(meta.shape), meta.dtype)


def meta_agrees(a: MetaKey, b: MetaKey) -> bool:
    """True unless both are known and differ (a missing shape, as in D1 dumps, compares the dtype only)."""
    if a is None or b is None:
        return True
    if a[0] is None or b[0] is None:
        return a[1] == b[1]
    return a == b


def norm_target(target: str) -> str:
    """Target without run-specific parts (``<function f at 0x7f..>`` -> ``<function f>``)."""
    return _ADDR.sub("", target) if "0x" in target else target


def short_target(target: str) -> str:
    """The op's short name: ``aten.split_with_sizes.default`` -> ``split_with_sizes``, ``aten.add`` ->
    ``add``, ``<built-in function getitem>`` -> ``getitem``, ``<function f at 0x..>`` -> ``f``, ``view`` ->
    ``view``.

    (``ad_diff.candidates.ops.op_name`` is the same function, still written out there.)
    """
    if target.startswith("<"):
        m = _PY_CALLABLE.match(target)
        return m.group(1) if m else target
    parts = target.split(".")
    return parts[1] if len(parts) >= 2 else target


class _Stripped(dict[str, str]):
    """:func:`strip_counter` of each name, remembered: the same names come back in every index and
    alignment step of a comparison (a bounded memo: emptied when it gets large, never grown past a size).
    ``STRIPPED[name]`` is the fast form (a dict lookup in C when the name was seen)."""

    def __missing__(self, name: str) -> str:
        if len(self) >= _STRIPPED_MAX:
            self.clear()
        got = self[name] = _strip(name)
        return got


def _strip(name: str) -> str:
    """``name`` without an ``_<digits>`` ending: what ``_COUNTER.sub("", name)`` gives, without running the
    pattern for the usual ASCII counter."""
    head = name.rstrip("0123456789")
    if head[-1:] == "_" and head != name:
        return intern(head[:-1])
    if head[-1:].isdecimal():  # a digit of another script, which the pattern's \d also reads
        return intern(_COUNTER.sub("", name))
    return name


STRIPPED = _Stripped()


def strip_counter(name: str) -> str:
    """``linear_3`` -> ``linear``; ``model_layers_0_q_weight`` unchanged (only a trailing counter goes)."""
    if not name[-1:].isdigit():
        return name
    return STRIPPED[name]


def has_counter(name: str) -> bool:
    """True for FX counter names (``fused_weight_1``, ``getitem_12``), which shift with upstream edits."""
    return name[-1:].isdigit() and _COUNTER.search(name) is not None


__all__ = ["STRIPPED", "MetaKey", "has_counter", "meta_agrees", "meta_key", "norm_target", "short_target",
           "strip_counter", "sym_shape"]
