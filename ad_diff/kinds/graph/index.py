"""Array view of one GraphSection used by node alignment: inputs/users by index and structural signatures.

Signatures are Weisfeiler-Lehman style hashes computed to full depth in one linear pass each:
``fwd`` from placeholders and external names (weights) down the graph, ``bwd`` from the output up. Node
names of call nodes never enter a signature (they shift when a pass is added); names of placeholders and of
external references (weights, buffers: ``get_attr`` nodes are not dumped) do, counter suffix removed,
because AD derives them from the module path and they anchor each layer.
"""

from __future__ import annotations

import re

from ad_diff.kinds.graph.model import GraphSection, NodeMeta

_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
_COUNTER = re.compile(r"_\d+$")
_PY_CALLABLE = re.compile(r"<(?:built-in )?(?:function|method) (\w+)")
_SYM = re.compile(r"\bs\d+\b")

MetaKey = tuple[str | None, str] | None
"""A node's metadata as compared across runs: ``(shape with symbols as s?, dtype)``; ``None`` if unknown."""


def meta_key(meta: NodeMeta | None) -> MetaKey:
    """``meta`` as compared across runs (symbolic dimension names such as ``s44`` vs ``s70`` are numbered
    per export, so they are not compared); ``None`` when the node has no known metadata."""
    if meta is None or not meta.known:
        return None
    return (None if meta.shape is None else _SYM.sub("s?", meta.shape), meta.dtype)


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

    (``ad_diff.workflows.candidates.ops.op_name`` is the same function, still written out there.)
    """
    if target.startswith("<"):
        m = _PY_CALLABLE.match(target)
        return m.group(1) if m else target
    parts = target.split(".")
    return parts[1] if len(parts) >= 2 else target


def strip_counter(name: str) -> str:
    """``linear_3`` -> ``linear``; ``model_layers_0_q_weight`` unchanged (only a trailing counter goes)."""
    return _COUNTER.sub("", name) if name[-1:].isdigit() else name


def has_counter(name: str) -> bool:
    """True for FX counter names (``fused_weight_1``, ``getitem_12``), which shift with upstream edits."""
    return name[-1:].isdigit() and _COUNTER.search(name) is not None


class GraphIndex:
    """Positions, edges and signatures of one section's nodes (dump order = topological order)."""

    __slots__ = ("section", "names", "targets", "pos", "inputs", "ext", "users", "fwd", "bwd", "lits",
                 "metas")

    def __init__(self, section: GraphSection) -> None:
        self.section = section
        nodes = section.nodes
        self.names = [n.name for n in nodes]
        # A placeholder's target is its name; a counter name (``fused_weight_3``) is no identity, so those
        # pair by the structure around them, like call nodes.
        self.targets = [strip_counter(n.name) if n.op == "placeholder" else norm_target(n.target)
                        for n in nodes]
        keys: dict[NodeMeta | None, MetaKey] = {}  # few distinct metadata texts: compare each once
        self.metas = [keys[n.meta] if n.meta in keys else keys.setdefault(n.meta, meta_key(n.meta))
                      for n in nodes]
        """:func:`meta_key` of every node."""
        pos = {name: i for i, name in enumerate(self.names)}
        self.pos = pos
        n = len(nodes)
        self.inputs: list[list[int]] = [[] for _ in range(n)]
        self.users: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.ext: list[tuple[str, ...]] = [()] * n
        """External (undumped) names each node reads, e.g. weights."""
        self.lits: list[tuple[str, ...]] = [()] * n
        """Literal args, with list literals reduced to their non-node text."""
        fwd = [0] * n
        for i, node in enumerate(nodes):
            if node.op == "placeholder":
                fwd[i] = hash(("P", strip_counter(node.name)))  # a counter name is no identity
                continue
            labels: list[object] = []
            ins = self.inputs[i]
            ext: list[str] = []
            lits: list[str] = []
            for k, a in enumerate(node.args):
                if a.node:
                    j = pos.get(a.text)
                    if j is None or j >= i:
                        ext.append(a.text)
                        labels.append(("W", strip_counter(a.text)))
                    else:
                        ins.append(j)
                        self.users[j].append((i, k))
                        labels.append(fwd[j])
                elif a.refs:
                    sub: list[object] = []
                    resolved = False
                    for r in a.refs:
                        j = pos.get(r)
                        if j is None or j >= i:
                            sub.append(r)  # not a node: a symbol such as s44 printed inside a list
                        else:
                            resolved = True
                            ins.append(j)
                            self.users[j].append((i, k))
                            sub.append(fwd[j])
                    labels.append(("R", tuple(sub)))
                    if not resolved:  # node names inside lists are compared through the inputs instead
                        lits.append(a.text)
                else:
                    labels.append(a.text)
                    lits.append(a.text)
            if ext:
                self.ext[i] = tuple(ext)
            if lits:
                self.lits[i] = tuple(lits)
            fwd[i] = hash((self.targets[i], tuple(labels)))
        self.fwd = fwd
        bwd = [0] * n
        for i in range(n - 1, -1, -1):
            us = self.users[i]
            key = tuple(sorted((bwd[u], k) for u, k in us)) if us else ()
            if nodes[i].op == "placeholder":
                bwd[i] = hash(("P", strip_counter(self.names[i]), key))
            else:
                bwd[i] = hash((self.targets[i], key))
        self.bwd = bwd

    def __len__(self) -> int:
        return len(self.names)
