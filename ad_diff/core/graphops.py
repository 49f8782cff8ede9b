"""Graph helpers the graph kind, the tensors kind, ``candidates`` and ``history`` share.

* :class:`UnionFind`: disjoint sets over comparable items (node names, node indices). The representative of
  a set is always its smallest member, so which item ends up the root never depends on the order the unions
  came in, and :meth:`UnionFind.groups` gives the same groups in the same order for any union order.
* :func:`op_name`: an FX node target's short op name (``aten.add.Tensor`` -> ``add``).

Only the standard library: every layer may import this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Generic, Protocol, TypeVar


class _Ordered(Protocol):
    def __lt__(self, other: Any, /) -> bool: ...


T = TypeVar("T", bound=_Ordered)

# ``<built-in function getitem>``, ``<built-in method add of ...>``, ``<function f at 0x7f..>``
_PY_CALLABLE = re.compile(r"<(?:built-in )?(?:function|method) (\w+)")


class UnionFind(Generic[T]):
    """Disjoint sets with path compression; an item never passed in is a set of its own.

    The root of a set is its smallest member (a union links the larger root under the smaller one), so
    :meth:`find` names each set by its minimum whatever the union order.
    """

    __slots__ = ("parent",)

    def __init__(self) -> None:
        self.parent: dict[T, T] = {}

    def find(self, x: T) -> T:
        """The smallest member of ``x``'s set."""
        parent = self.parent
        root = x
        while (up := parent.get(root, root)) != root:
            root = up
        while x != root:  # point the whole path at the root: later finds are one step
            parent[x], x = root, parent[x]
        return root

    def union(self, a: T, b: T) -> None:
        """Merge the sets of ``a`` and ``b``."""
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            if rb < ra:
                ra, rb = rb, ra
            self.parent[rb] = ra

    def groups(self, order: Iterable[T]) -> list[list[T]]:
        """The items of ``order`` grouped by set: groups in the order their first member appears in
        ``order``, members in ``order``'s order (so the result does not depend on hashing)."""
        out: dict[T, list[T]] = {}
        for x in order:
            out.setdefault(self.find(x), []).append(x)
        return list(out.values())


def op_name(target: str) -> str:
    """The op's short name of an FX node target (``str(node.target)``, see FORMATS.md):
    ``aten.split_with_sizes.default`` -> ``split_with_sizes``, ``aten.add`` -> ``add``,
    ``auto_deploy.torch_rmsnorm.default`` -> ``torch_rmsnorm``, ``<built-in function getitem>`` ->
    ``getitem``, ``<function f at 0x..>`` -> ``f``, ``view`` -> ``view``."""
    if target.startswith("<"):
        m = _PY_CALLABLE.match(target)
        return m.group(1) if m else target
    parts = target.split(".")
    return parts[1] if len(parts) >= 2 else target


__all__ = ["UnionFind", "op_name"]
