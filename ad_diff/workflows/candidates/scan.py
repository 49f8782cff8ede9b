"""Mine repeated unfused patterns from one parsed graph dump.

Near-linear in the number of nodes:

1. **Fusion regions.** Pointwise/reduction/layout nodes are joined to their consumer when that consumer is the
   only one (the producer's output would not be materialised by a fused kernel); a producer whose several
   consumers all ended up in one region joins it too (the ``x`` of ``x * rsqrt(mean(x^2))``). A residual
   stream read by the next layer therefore never chains layers together.
2. **Peeling.** Layout nodes at the edge of a region (no producer or no consumer inside it) are dropped: a
   leading ``view -> transpose`` is not part of the maths. Regions left without arithmetic dissolve.
3. **Anchors.** A GEMM whose only consumers lie in a region is attached to it (GEMM epilogue; two GEMMs
   reading the same input into ``silu * mul`` make a SwiGLU).
4. **Layout glue.** Chains of layout nodes feeding or fed by an attention/RoPE op are kept apart.
5. **Signatures.** Each instance gets a canonical signature (targets in dump order, in-pattern wiring as local
   indices, external inputs numbered, parameters marked, literals kept with node names blanked): no node names
   and no layer indices, so the same pattern in every layer yields the same string.

Instances are grouped by signature and counted; the layer of an instance is read from the node and
parameter names (``model_layers_3_...``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ad_diff.kinds.graph.model import GraphDump, GraphNode, GraphSection
from ad_diff.workflows.candidates.families import classify_family
from ad_diff.workflows.candidates.model import Instance
from ad_diff.workflows.candidates.ops import COMPUTE, kind, op_name

_LAYER = re.compile(r"(?:^|_)(?:layers|layer|h|blocks|block|decoder_layers)_(\d+)(?:_|$)")
_ATTN_KINDS = frozenset({"attention", "rope"})


@dataclass(frozen=True, slots=True)
class Group:
    """Instances of one signature (before lookup and recommendation)."""

    family: str
    description: str
    pattern: tuple[str, ...]
    signature: str
    instances: tuple[Instance, ...]
    removed_per_instance: int

    @property
    def nodes_removed(self) -> int:
        """Nodes a fusion removes over all instances."""
        return self.removed_per_instance * len(self.instances)


class _Section:
    """Per-section indexes: nodes by name, distinct users, kinds."""

    def __init__(self, sec: GraphSection) -> None:
        self.name = sec.name
        self.nodes = {n.name: n for n in sec.nodes if n.op != "output"}
        self.order = {n.name: i for i, n in enumerate(sec.nodes)}
        self.users: dict[str, list[str]] = {n: [] for n in self.nodes}
        self.inputs: dict[str, list[str]] = {}
        for n in sec.nodes:
            ins = [i for i in dict.fromkeys(n.inputs()) if i in self.nodes]
            self.inputs[n.name] = ins
            for i in ins:
                self.users[i].append(n.name)
        self.kinds = {name: _kind(n) for name, n in self.nodes.items()}
        self._running: dict[str, int | None] | None = None

    def running_layer(self, name: str) -> int | None:
        """The last layer index named at or before ``name`` in dump order (graphs run layer by layer), for
        patterns (layout glue, attention) whose own and neighbouring names carry no index."""
        if self._running is None:
            self._running, last = {}, None
            for n in sorted(self.nodes, key=self.order.__getitem__):
                for x in (n, *self.params(self.nodes[n])):
                    if m := _LAYER.search(x):
                        last = int(m.group(1))
                self._running[n] = last
        return self._running.get(name)

    def params(self, node: GraphNode) -> list[str]:
        """``%name`` arguments with no node of their own: weights and buffers (get_attr is never dumped)."""
        return [a.text for a in node.args if a.node and a.text not in self.nodes]


def _kind(n: GraphNode) -> str:
    if n.op == "placeholder":
        return "input"
    return kind(n.target, n.meta.dtype if n.meta else None)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while x != root:  # path compression keeps this near-linear
            self.parent[x], x = root, self.parent.get(x, x)
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _regions(s: _Section) -> list[list[str]]:
    """Fusion regions (steps 1-2): lists of node names in dump order, each holding arithmetic."""
    joinable = {n for n, k in s.kinds.items() if k in COMPUTE or k == "layout"}
    uf = _UnionFind()
    for u in joinable:
        us = s.users[u]
        if len(us) == 1 and us[0] in joinable:
            uf.union(u, us[0])
    for _ in range(3):  # multi-consumer producers whose consumers converged (bounded: regions are small)
        changed = False
        for u in joinable:
            us = s.users[u]
            if len(us) > 1 and all(v in joinable for v in us):
                roots = {uf.find(v) for v in us}
                if len(roots) == 1 and uf.find(u) not in roots:
                    uf.union(u, next(iter(roots)))
                    changed = True
        if not changed:
            break
    groups: dict[str, list[str]] = {}
    for u in joinable:
        groups.setdefault(uf.find(u), []).append(u)
    out: list[list[str]] = []
    for members in groups.values():
        for piece in _peel(s, set(members)):
            if any(s.kinds[n] in COMPUTE for n in piece):
                out.append(sorted(piece, key=s.order.__getitem__))
    return out


def _peel(s: _Section, members: set[str]) -> list[set[str]]:
    """Drop layout nodes on the edge of a region, then split what is left into connected pieces."""
    changed = True
    while changed:
        changed = False
        for n in sorted(members):
            if s.kinds[n] != "layout":
                continue
            has_in = any(i in members for i in s.inputs[n])
            has_out = any(u in members for u in s.users[n])
            if not (has_in and has_out):
                members.discard(n)
                changed = True
    pieces: list[set[str]] = []
    seen: set[str] = set()
    for start in sorted(members):
        if start in seen:
            continue
        piece, stack = set(), [start]
        while stack:
            n = stack.pop()
            if n in piece:
                continue
            piece.add(n)
            stack.extend(x for x in (*s.inputs[n], *s.users[n]) if x in members and x not in piece)
        seen |= piece
        pieces.append(piece)
    return pieces


def _anchors(s: _Section, region: list[str]) -> list[str]:
    """GEMMs whose every consumer lies in ``region`` (they fuse with it)."""
    inside = set(region)
    out = []
    for n in region:
        for p in s.inputs[n]:
            if s.kinds.get(p) == "gemm" and p not in out and all(u in inside for u in s.users[p]):
                out.append(p)
    return out


def _layout_chains(s: _Section, used: set[str]) -> list[list[str]]:
    """Single-consumer chains of layout nodes next to an attention/RoPE op (step 4)."""
    layout = {n for n, k in s.kinds.items() if k == "layout" and n not in used}
    uf = _UnionFind()
    for u in layout:
        us = s.users[u]
        if len(us) == 1 and us[0] in layout:
            uf.union(u, us[0])
    groups: dict[str, list[str]] = {}
    for u in layout:
        groups.setdefault(uf.find(u), []).append(u)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        near = {s.kinds.get(x) for n in members for x in (*s.inputs[n], *s.users[n]) if x not in members}
        if near & _ATTN_KINDS:
            out.append(sorted(members, key=s.order.__getitem__))
    return out


def signature(s: _Section, nodes: list[str]) -> str:
    """Canonical text of a pattern instance: no node names, no layer indices."""
    local = {n: i for i, n in enumerate(nodes)}
    ext: dict[str, str] = {}
    parts = []
    for n in nodes:
        node = s.nodes[n]
        args = []
        for a in node.args:
            if a.node:
                if a.text in local:
                    args.append(f"#{local[a.text]}")
                else:
                    prefix = "$" if a.text in s.nodes else "p"
                    if a.text not in ext:
                        ext[a.text] = f"{prefix}{sum(1 for v in ext.values() if v[0] == prefix)}"
                    args.append(ext[a.text])
            elif a.refs:
                text = a.text
                for r in a.refs:
                    text = re.sub(rf"\b{re.escape(r)}\b", "?", text)
                args.append(text)
            else:
                args.append(a.text)
        parts.append(f"{node.target}({', '.join(args)})")
    return "; ".join(parts)


def _layer(s: _Section, nodes: list[str]) -> int | None:
    """Layer index from node names and their parameters; from neighbours' parameters if the pattern has none.

    A pattern that reads parameters none of which carries an index sits outside the layer stack (final norm).
    """
    names = list(nodes)
    params = [p for n in nodes for p in s.params(s.nodes[n])]
    found = [int(m.group(1)) for x in names + params if (m := _LAYER.search(x))]
    if not found and not params:
        near = [x for n in nodes for x in (*s.inputs[n], *s.users[n]) if x not in nodes]
        found = [int(m.group(1)) for x in near for p in [x, *s.params(s.nodes[x])] if (m := _LAYER.search(p))]
    if not found and not params:
        return s.running_layer(nodes[0])
    if not found:
        return None
    return Counter(found).most_common(1)[0][0] if len(set(found)) > 1 else found[0]


def _instances(s: _Section) -> list[tuple[str, str, tuple[str, ...], int, Instance]]:
    """``(family, description, pattern, removed, instance)`` for every instance in one section."""
    out = []
    used: set[str] = set()
    for region in _regions(s):
        anchors = _anchors(s, region)
        nodes = sorted([*anchors, *region], key=s.order.__getitem__)
        used.update(region)
        adjacent = {s.kinds.get(x) for n in region for x in (*s.inputs[n], *s.users[n])} & _ATTN_KINDS
        fam = classify_family(
            [op_name(s.nodes[n].target) for n in region],
            [s.nodes[a] for a in anchors],
            bool(adjacent),
            [s.nodes[n] for n in region],
            s.nodes,
        )
        if fam is None or len(nodes) < 2:
            continue
        family, description = fam
        out.append((family, description, nodes, len(nodes) - 1))
    for chain in _layout_chains(s, used):
        out.append(("attention_layout", _layout_description(s, chain), chain, len(chain)))
    result = []
    for family, description, nodes, removed in out:
        inst = Instance(s.name, tuple(nodes), _layer(s, nodes), s.nodes[nodes[0]].line)
        result.append((family, description, signature(s, nodes), removed, inst))
    return result


def _layout_description(s: _Section, chain: list[str]) -> str:
    targets = [s.nodes[n] for n in chain]
    for a, b in zip(targets, targets[1:], strict=False):
        if op_name(a.target) == op_name(b.target) == "transpose" and [x.text for x in a.args[1:]] == [
            x.text for x in b.args[1:]
        ]:
            return "layout glue next to attention/RoPE, including two transposes that cancel"
    return "layout glue next to attention/RoPE (a kernel taking the other layout would absorb it)"


def scan_dump(dump: GraphDump, min_count: int = 2) -> list[Group]:
    """Group the unfused patterns of ``dump`` by signature; keep those seen at least ``min_count`` times."""
    by_sig: dict[str, list[tuple[str, str, int, Instance]]] = {}
    for sec in dump.sections:
        s = _Section(sec)
        for family, description, sig, removed, inst in _instances(s):
            by_sig.setdefault(sig, []).append((family, description, removed, inst))
    groups = []
    for sig, items in by_sig.items():
        if len(items) < min_count:
            continue
        family, description, removed, _ = items[0]
        instances = tuple(sorted((i[3] for i in items), key=lambda x: (x.section, x.line)))
        pattern = tuple(_targets(dump, instances[0]))
        groups.append(Group(family, description, pattern, sig, instances, removed))
    # Layout glue last: removing it is a layout transform's job, not a new kernel's.
    groups.sort(
        key=lambda g: (
            g.family == "attention_layout",
            -g.nodes_removed,
            -len(g.instances),
            g.family,
            g.signature,
        )
    )
    return groups


def _targets(dump: GraphDump, inst: Instance) -> list[str]:
    sec = next(s for s in dump.sections if s.name == inst.section)
    by_name = {n.name: n.target for n in sec.nodes}
    return [by_name[n] for n in inst.nodes]
