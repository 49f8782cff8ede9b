"""Graph order in the tensor comparison: node captures sorted by it, the first drifting node, and the first
capture where an output's bad rows appear. Only a real graph order (the baseline's final dump) names a
node; name order says nothing about where drift starts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ad_diff.kinds.tensors.model import NodeDrift, TensorComparison, TensorKind


def first_drifting_node(
    comparisons: Sequence[TensorComparison],
    node_order: Sequence[str] | None,
    node_transform: Mapping[str, str] | None,
    order_source: str | None = None,
) -> NodeDrift | None:
    """The node captures judged beyond tolerance, and the earliest of them in graph order.

    Only a real graph order names a node: without ``node_order``, or when none of the drifting captures is
    in it, ``node`` is ``None`` (name order says nothing about where drift starts). Captures of tuple outputs
    (``<node>.0``) count as their node; the introducing transform is looked up by the candidate's name.
    """
    drifting = [c for c in comparisons if c.kind is TensorKind.NODE and not c.passed]
    if not drifting:
        return None
    if node_order is None:
        return NodeDrift(None, -1, None, len(drifting), None)
    position = {n: i for i, n in enumerate(node_order)}
    nodes = [(node_of(c.name, position), c) for c in drifting]
    placed = [(position[n], c) for n, c in nodes if n in position]
    if not placed:
        return NodeDrift(None, -1, None, len(drifting), order_source)
    pos, first = min(placed, key=lambda pc: (pc[0], pc[1].name))
    transforms = node_transform or {}
    # node_transform is keyed by candidate node names; a renamed capture keeps its candidate name
    names = (first.candidate.name, node_of(first.candidate.name, {}), node_order[pos])
    transform = next((transforms[n] for n in names if n in transforms), None)
    return NodeDrift(node_order[pos], pos, transform, len(drifting), order_source)


def graph_ordered(
    comparisons: list[TensorComparison], node_order: Sequence[str] | None
) -> list[TensorComparison]:
    """Outputs by name, then node captures in graph order (unknown nodes last, by name)."""
    position = {n: i for i, n in enumerate(node_order or ())}
    outputs = [c for c in comparisons if c.kind is not TensorKind.NODE]
    nodes = sorted(
        (c for c in comparisons if c.kind is TensorKind.NODE),
        key=lambda c: (position.get(node_of(c.name, position), len(position)), c.name),
    )
    return outputs + nodes


def node_of(name: str, position: Mapping[str, int]) -> str:
    if name in position:
        return name
    head, dot, tail = name.rpartition(".")
    return head if dot and tail.isdigit() else name


def rows_origin(comparisons: Sequence[TensorComparison], node_order: Sequence[str] | None) -> str | None:
    """The first node capture in graph order whose outlier rows include an output's outlier row (same leading
    index), i.e. where the bad rows appear; ``None`` without graph order or such a capture."""
    if node_order is None:
        return None
    bad = {
        w.index
        for c in comparisons
        if c.kind is TensorKind.OUTPUT and c.stats and c.stats.rows
        for w in c.stats.rows.worst
        if w.outlier
    }
    if not bad:
        return None
    position = {n: i for i, n in enumerate(node_order)}
    hits = []
    for c in comparisons:
        rows = c.stats.rows if c.kind is TensorKind.NODE and c.stats else None
        node = node_of(c.name, position)
        if rows is None or node not in position:
            continue
        if any(
            w.outlier and any(w.index[: len(i)] == i or i[: len(w.index)] == w.index for i in bad)
            for w in rows.worst
        ):
            hits.append((position[node], c.name))
    return min(hits)[1] if hits else None
