"""Array view of one GraphSection used by node alignment: inputs/users by index and structural signatures.

Signatures are Weisfeiler-Lehman style hashes computed to full depth in one linear pass each:
``fwd`` from placeholders and external names (weights) down the graph, ``bwd`` from the output up. Node
names of call nodes never enter a signature (they shift when a pass is added); names of placeholders and of
external references (weights, buffers: ``get_attr`` nodes are not dumped) do, counter suffix removed,
because AD derives them from the module path and they anchor each layer.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from sys import intern

from ad_diff.kinds.graph.model import GraphNode, GraphSection, NodeMeta

_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
_COUNTER = re.compile(r"_\d+$")
_PY_CALLABLE = re.compile(r"<(?:built-in )?(?:function|method) (\w+)")
_SYM = re.compile(r"\bs\d+\b")

USER_SHIFT = 32
"""A user entry packs the reading node's index and the argument position it reads at into one int,
``u << USER_SHIFT | k``: a tuple per edge was the largest part of an index. Entries sort as the
``(u, k)`` pairs do (a line holds far fewer than 2**32 arguments)."""
USER_ARG = (1 << USER_SHIFT) - 1
"""Mask of a user entry's argument position."""

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

    (``ad_diff.candidates.ops.op_name`` is the same function, still written out there.)
    """
    if target.startswith("<"):
        m = _PY_CALLABLE.match(target)
        return m.group(1) if m else target
    parts = target.split(".")
    return parts[1] if len(parts) >= 2 else target


_STRIPPED: dict[str, str] = {}
_STRIPPED_MAX = 1 << 18


def strip_counter(name: str) -> str:
    """``linear_3`` -> ``linear``; ``model_layers_0_q_weight`` unchanged (only a trailing counter goes)."""
    if not name[-1:].isdigit():
        return name
    # The same names come back in every index and alignment step of a comparison: remember them (a bounded
    # memo: emptied when it gets large, never grown past a size).
    got = _STRIPPED.get(name)
    if got is None:
        if len(_STRIPPED) >= _STRIPPED_MAX:
            _STRIPPED.clear()
        got = _STRIPPED[name] = intern(_COUNTER.sub("", name))  # a few hundred bases: one string each
    return got


def has_counter(name: str) -> bool:
    """True for FX counter names (``fused_weight_1``, ``getitem_12``), which shift with upstream edits."""
    return name[-1:].isdigit() and _COUNTER.search(name) is not None


def input_names(ref: tuple[GraphNode, ...], nodes: tuple[GraphNode, ...]) -> dict[int, str]:
    """The graph inputs of ``nodes`` that are the inputs of ``ref`` under another name: ``{index in nodes:
    the ref input's name without its counter}``.

    A graph input (placeholder) is the forward's positional parameter: its name is its identity when both runs
    use it, its position when they do not (a torch upgrade names inputs anew, ``arg0_1`` for ``input_ids``).
    The inputs whose names the other run lacks are paired in order, and only when both runs have as many of
    them and each pair agrees in shape and dtype: an added or removed input keeps its own name.
    """
    def inputs(xs: tuple[GraphNode, ...]) -> list[tuple[int, str, GraphNode]]:
        return [(i, strip_counter(n.name), n) for i, n in enumerate(xs) if n.op == "placeholder"]

    mine, theirs = inputs(nodes), inputs(ref)
    names_mine, names_theirs = {b for _, b, _ in mine}, {b for _, b, _ in theirs}
    left = [x for x in mine if x[1] not in names_theirs]
    right = [x for x in theirs if x[1] not in names_mine]
    if not left or len(left) != len(right):
        return {}
    if not all(meta_agrees(meta_key(a.meta), meta_key(b.meta)) for (_, _, a), (_, _, b) in zip(left, right,
                                                                                                 strict=True)):
        return {}
    return {i: base for (i, _, _), (_, base, _) in zip(left, right, strict=True)}


def shared_prefix(a: tuple[GraphNode, ...], b: tuple[GraphNode, ...]) -> int:
    """How many leading nodes ``a`` and ``b`` share as the same objects (the parser's memo hands out one
    object per line text and line number, so this is the run of identical leading lines)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x is not y:
            break
        n += 1
    return n


_NORM: dict[str, str] = {}


def _targets(nodes: tuple[GraphNode, ...]) -> list[str]:
    """Each node's target as compared: a placeholder's name without its counter, else :func:`norm_target`
    (remembered per target text: the same few hundred targets come back in every index of a comparison)."""
    norm = _NORM
    if len(norm) >= _STRIPPED_MAX:
        norm.clear()
    out: list[str] = []
    add = out.append
    for n in nodes:
        if n.op == "placeholder":
            add(strip_counter(n.name))
            continue
        t = n.target
        got = norm.get(t)
        if got is None:
            got = norm[t] = norm_target(t)
        add(got)
    return out


def _metas(nodes: tuple[GraphNode, ...]) -> list[MetaKey]:
    """:func:`meta_key` of every node, computed once per metadata object (the parser shares one per text;
    the nodes keep every one of them alive meanwhile, so no id is reused)."""
    keys: dict[int, MetaKey] = {}
    out: list[MetaKey] = []
    add = out.append
    for n in nodes:
        m = n.meta
        k = id(m)
        if k in keys:
            add(keys[k])
        else:
            add(keys.setdefault(k, meta_key(m)))
    return out


class GraphIndex:
    """Positions, edges and signatures of one section's nodes (dump order = topological order).

    ``GraphIndex(section, like)`` takes what it can from the index ``like`` of the other run's section: where
    both begin with the same nodes and neither repeats a name, the leading nodes resolve their inputs to the
    same positions and so get the same inputs, literals and forward signatures; only their users (and so
    their backward signatures) can differ. :attr:`shared` says how many were taken.
    """

    __slots__ = ("section", "names", "targets", "pos", "inputs", "ext", "users", "fwd", "bwd", "lits",
                 "metas", "shared")
    fwd: array[int]
    """Forward signature of each node (machine integers: a list of int objects was 40 bytes a node)."""
    bwd: array[int]

    def __init__(self, section: GraphSection, like: GraphIndex | None = None) -> None:
        self.section = section
        nodes = section.nodes
        self.names = names = [n.name for n in nodes]
        self.pos = pos = dict(zip(names, range(len(names)), strict=True))
        n = len(nodes)
        shared = 0
        if like is not None and len(pos) == n and len(like.pos) == len(like):
            shared = shared_prefix(like.section.nodes, nodes)
        self.shared = shared
        """Leading nodes whose inputs, literals and forward signatures were taken from ``like``."""
        # A placeholder's target is its name; a counter name (``fused_weight_3``) is no identity, so those
        # pair by the structure around them, like call nodes. A renamed graph input takes the other run's name
        # (see :func:`input_names`), so a rename reaches no signature.
        self.targets = targets = _targets(nodes)
        if like is not None:
            for i, name in input_names(like.section.nodes, nodes).items():
                targets[i] = name
        self.metas = _metas(nodes)
        """:func:`meta_key` of every node."""
        self.inputs: list[list[int]] = [[] for _ in range(n)]
        self.users: list[list[int]] = [[] for _ in range(n)]
        """Per node, who reads it: ``u << USER_SHIFT | k`` for node ``u`` reading it at argument ``k``, in
        ascending order (see :data:`USER_SHIFT`)."""
        self.ext: list[tuple[str, ...]] = [()] * n
        """External (undumped) names each node reads, e.g. weights, counter suffix removed."""
        self.lits: list[tuple[str, ...]] = [()] * n
        """Literal args, with list literals reduced to their non-node text."""
        self.fwd = array("q", bytes(8 * n))
        if like is not None and shared:
            self._take(like, shared)
        placeholder = self._forward(shared)
        for i in range(shared):  # the shared leading nodes were not visited by _forward
            placeholder[i] = nodes[i].op == "placeholder"
        self.bwd = self._backward(placeholder)

    def _take(self, like: GraphIndex, shared: int) -> None:
        """Take the leading ``shared`` nodes' inputs, literals, forward signatures and their users among
        themselves from ``like`` (read-only once built, so the lists can be the same objects in both)."""
        self.inputs[:shared] = like.inputs[:shared]
        self.ext[:shared] = like.ext[:shared]
        self.lits[:shared] = like.lits[:shared]
        self.fwd[:shared] = like.fwd[:shared]
        users = self.users
        cut = shared << USER_SHIFT  # users are appended in node order: the leading nodes' users come first
        for q, us in enumerate(like.users[:shared]):
            if us:
                users[q] = us[:bisect_left(us, cut)]

    def _forward(self, start: int) -> list[bool]:
        """Inputs, users, external names, literals and forward signatures of the nodes from ``start`` on, in
        dump order (an input's signature is made before its readers'); returns which are placeholders."""
        nodes, targets, fwd, users = self.section.nodes, self.targets, self.fwd, self.users
        get = self.pos.get
        inputs_all, ext_all, lits_all = self.inputs, self.ext, self.lits
        placeholder = [False] * len(nodes)
        for i in range(start, len(nodes)):
            node = nodes[i]
            if node.op == "placeholder":
                placeholder[i] = True
                fwd[i] = hash(("P", targets[i]))  # the name without its counter: a counter is no identity
                continue
            labels: list[object] = []
            ins = inputs_all[i]
            me = i << USER_SHIFT  # (one int object for every edge read at argument 0: most of them)
            ext: list[str] | None = None
            lits: list[str] | None = None
            for k, a in enumerate(node.args):
                if a.node:
                    j = get(a.text)
                    if j is None or j >= i:
                        w = strip_counter(a.text)
                        if ext is None:
                            ext = []
                        ext.append(w)
                        labels.append(("W", w))
                    else:
                        ins.append(j)
                        users[j].append(me | k if k else me)
                        labels.append(fwd[j])
                elif a.refs:
                    sub: list[object] = []
                    resolved = False
                    for r in a.refs:
                        j = get(r)
                        if j is None or j >= i:
                            sub.append(r)  # not a node: a symbol such as s44 printed inside a list
                        else:
                            resolved = True
                            ins.append(j)
                            users[j].append(me | k if k else me)
                            sub.append(fwd[j])
                    labels.append(("R", tuple(sub)))
                    if not resolved:  # node names inside lists are compared through the inputs instead
                        if lits is None:
                            lits = []
                        lits.append(a.text)
                else:
                    labels.append(a.text)
                    if lits is None:
                        lits = []
                    lits.append(a.text)
            if ext is not None:
                ext_all[i] = tuple(ext)
            if lits is not None:
                lits_all[i] = tuple(lits)
            fwd[i] = hash((targets[i], tuple(labels)))
        return placeholder

    def _backward(self, placeholder: list[bool]) -> array[int]:
        """Backward signatures, from the output up (a user's signature is made before its inputs')."""
        targets, users = self.targets, self.users
        n = len(users)
        bwd = array("q", bytes(8 * n))
        for i in range(n - 1, -1, -1):
            us = users[i]
            if not us:
                key: tuple[tuple[int, int], ...] = ()
            elif len(us) == 1:  # most nodes have one user: nothing to sort
                x = us[0]
                key = ((bwd[x >> USER_SHIFT], x & USER_ARG),)
            else:
                key = tuple(sorted([(bwd[x >> USER_SHIFT], x & USER_ARG) for x in us]))
            bwd[i] = hash(("P", targets[i], key)) if placeholder[i] else hash((targets[i], key))
        return bwd

    def __len__(self) -> int:
        return len(self.names)
