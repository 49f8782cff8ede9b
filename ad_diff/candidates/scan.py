"""Mine repeated unfused patterns from one parsed graph dump.

Near-linear in the number of nodes:

0. **MoE blocks** (:mod:`~ad_diff.candidates.moe`): a router feeding expert GEMMs is one ``moe``
   instance; its nodes take no part in the steps below (no ``softmax`` or ``silu_mul`` fragments of it).
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
parameter names (``model_layers_3_...``). The output line is never a node of a pattern or of a neighbourhood
(:class:`~ad_diff.candidates.graphview.Section`), so a pattern next to it or to a placeholder is
handled like any other.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ad_diff.candidates.attention import find_attention
from ad_diff.candidates.families import DESCRIPTIONS, classify_family
from ad_diff.candidates.formula import graph_formula
from ad_diff.candidates.glue import ATTN_KINDS, layout_chains, layout_description
from ad_diff.candidates.graphview import LAYER, Section
from ad_diff.candidates.model import Instance
from ad_diff.candidates.moe import find_moe
from ad_diff.candidates.ops import COMPUTE, VIEWS, canonical_target
from ad_diff.candidates.sizes import tensor_bytes
from ad_diff.core.graphops import UnionFind, op_name
from ad_diff.kinds.graph.model import GraphDump

_WORD = re.compile(r"\b\w+\b")


@dataclass(frozen=True, slots=True)
class Group:
    """Instances of one signature (before lookup and recommendation)."""

    family: str
    description: str
    pattern: tuple[str, ...]
    """Op targets of the first instance, dump order."""
    signature: str
    instances: tuple[Instance, ...]
    removed_per_instance: int
    unknown_meta: int = 0
    """Instance nodes dumped without shape/dtype metadata (all instances)."""
    formula: str = ""
    """Formula of the first instance (:func:`~ad_diff.candidates.formula.graph_formula`); empty
    for MoE blocks and layout glue."""
    bytes_saved: int = 0
    """Bytes of intermediate tensors a fusion would not write, all instances (symbolic sizes at the
    nominal size of :mod:`~ad_diff.candidates.sizes`)."""
    bytes_unknown: int = 0
    """Intermediate nodes whose size the dump does not give (counted 0 in :attr:`bytes_saved`)."""
    nested: tuple[tuple[str, int, int], ...] = ()
    """Fragments inside the block's instances: ``(family, instances, nodes removed)``, most removed first."""

    @property
    def nodes_removed(self) -> int:
        """Nodes a fusion removes over all instances."""
        return self.removed_per_instance * len(self.instances)

    @property
    def ops(self) -> tuple[str, ...]:
        """Canonical op names of the first instance (what a pattern function is compared with)."""
        return tuple(canonical_target(t) for t in self.pattern)


def _regions(s: Section, taken: set[str]) -> list[list[str]]:
    """Fusion regions (steps 1-2): lists of node names in dump order, each holding arithmetic."""
    # dump order, not set order: the result must not depend on PYTHONHASHSEED; a layout op or cast of a
    # parameter is a parameter, not data: it joins no region
    order = [
        n
        for n, k in s.kinds.items()
        if (k in COMPUTE or k == "layout") and n not in taken and n not in s.param_derived
    ]
    joinable = set(order)
    uf: UnionFind[str] = UnionFind()
    for u in order:
        us = s.users[u]
        # a value the output line reads is materialised anyway: it ends its region
        if len(us) == 1 and us[0] in joinable and u not in s.outputs:
            uf.union(u, us[0])
    for _ in range(3):  # multi-consumer producers whose consumers converged (bounded: regions are small)
        changed = False
        for u in order:
            us = s.users[u]
            if len(us) > 1 and u not in s.outputs and all(v in joinable for v in us):
                roots = {uf.find(v) for v in us}
                if len(roots) == 1 and uf.find(u) not in roots:
                    uf.union(u, next(iter(roots)))
                    changed = True
        if not changed:
            break
    groups: dict[str, list[str]] = {}
    for u in order:
        groups.setdefault(uf.find(u), []).append(u)
    out: list[list[str]] = []
    for members in groups.values():
        for piece in _peel(s, set(members)):
            if any(s.kinds[n] in COMPUTE for n in piece):
                out.append(sorted(piece, key=s.order.__getitem__))
    return out


def _peel(s: Section, members: set[str]) -> list[set[str]]:
    """Drop layout nodes on the edge of a region, then split what is left into connected pieces.

    A worklist keeps this linear: dropping a node only puts its layout neighbours back up for a look."""

    def on_edge(n: str) -> bool:
        return not (any(i in members for i in s.inputs[n]) and any(u in members for u in s.users[n]))

    work = [n for n in sorted(members, key=s.order.__getitem__) if s.kinds[n] == "layout"]
    while work:
        n = work.pop()
        if n in members and on_edge(n):
            members.discard(n)
            work.extend(x for x in s.neighbours(n) if x in members and s.kinds[x] == "layout")
    pieces: list[set[str]] = []
    seen: set[str] = set()
    for start in sorted(members, key=s.order.__getitem__):
        if start in seen:
            continue
        piece, stack = set(), [start]
        while stack:
            n = stack.pop()
            if n in piece:
                continue
            piece.add(n)
            stack.extend(x for x in s.neighbours(n) if x in members and x not in piece)
        seen |= piece
        pieces.append(piece)
    return pieces


def _anchors(s: Section, region: list[str], taken: set[str]) -> list[str]:
    """GEMMs outside ``taken`` whose every consumer lies in ``region`` (they fuse with it). A GEMM a block
    already holds is not offered again: a node belongs to one instance."""
    inside = set(region)
    out = []
    for n in region:
        for p in s.inputs[n]:
            if (
                s.kinds.get(p) == "gemm"
                and p not in out
                and p not in taken
                and p not in s.outputs
                and all(u in inside for u in s.users[p])
            ):
                out.append(p)
    return out


def _blank(text: str, refs: set[str]) -> str:
    """``text`` with the node names ``refs`` replaced by ``?`` (one pass: linear in the text)."""
    return _WORD.sub(lambda m: "?" if m.group(0) in refs else m.group(0), text)


def signature(s: Section, nodes: list[str]) -> str:
    """Canonical text of a pattern instance: no node names, no layer indices."""
    local = {n: i for i, n in enumerate(nodes)}
    ext: dict[str, str] = {}
    seen = {"$": 0, "p": 0}
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
                        ext[a.text] = f"{prefix}{seen[prefix]}"
                        seen[prefix] += 1
                    args.append(ext[a.text])
            elif a.refs:
                args.append(_blank(a.text, set(a.refs)))
            else:
                args.append(a.text)
        parts.append(f"{node.target}({', '.join(args)})")
    return "; ".join(parts)


def _layer(s: Section, nodes: list[str]) -> int | None:
    """Layer index from node names and their parameters; from neighbours' parameters if the pattern has none.

    A pattern that reads parameters none of which carries an index sits outside the layer stack (final norm).
    """
    names = list(nodes)
    params = [p for n in nodes for p in s.params(s.nodes[n])]
    found = [int(m.group(1)) for x in names + params if (m := LAYER.search(x))]
    if not found and not params:
        inside = set(nodes)
        near = [x for n in nodes for x in s.neighbours(n) if x not in inside]
        found = [int(m.group(1)) for x in near for p in [x, *s.params(s.nodes[x])] if (m := LAYER.search(p))]
    if not found and not params:
        return s.running_layer(nodes[0])
    if not found:
        return None
    return Counter(found).most_common(1)[0][0] if len(set(found)) > 1 else found[0]


@dataclass(frozen=True, slots=True)
class _Item:
    family: str
    description: str
    signature: str
    removed: int
    instance: Instance
    unknown_meta: int
    formula: str
    targets: tuple[str, ...]
    size: tuple[int, int]
    """``(bytes not written, intermediate nodes of unknown size)``."""
    nested: tuple[tuple[str, int], ...] = ()
    """``(family, nodes removed)`` of the fragments inside this instance."""


def _fragments(s: Section, taken: set[str]) -> list[tuple[str, str, list[str]]]:
    """``(family, description, nodes)`` of every fusion region outside ``taken`` (steps 1-3)."""
    out = []
    for region in _regions(s, taken):
        anchors = _anchors(s, region, taken)
        nodes = sorted([*anchors, *region], key=s.order.__getitem__)
        adjacent = {s.kinds.get(x) for n in region for x in s.neighbours(n)} & ATTN_KINDS
        fam = classify_family(
            [op_name(s.nodes[n].target) for n in region],
            [s.nodes[a] for a in anchors],
            bool(adjacent),
            [s.nodes[n] for n in region],
            s.nodes,
        )
        if fam is not None and len(nodes) >= 2:
            out.append((fam[0], fam[1], nodes))
    return out


def _saved(s: Section, nodes: list[str]) -> tuple[int, int]:
    """Bytes of the instance's intermediates (outputs read only inside it, views excluded) and the count of
    those whose size is unknown."""
    inside = set(nodes)
    total = unknown = 0
    for n in nodes:
        if n in s.outputs or not s.users[n] or not all(u in inside for u in s.users[n]):
            continue
        node = s.nodes[n]
        if op_name(node.target) in VIEWS:
            continue
        b = tensor_bytes(node.meta.shape, node.meta.dtype) if node.meta else None
        if b is None:
            unknown += 1
        else:
            total += b
    return total, unknown


def _nested(s: Section, blocks: list[list[str]]) -> list[list[tuple[str, int]]]:
    """For each block, the fusion regions lying wholly inside it (what a block fusion subsumes)."""
    owner = {n: k for k, b in enumerate(blocks) for n in b}
    out: list[list[tuple[str, int]]] = [[] for _ in blocks]
    for family, _, nodes in _fragments(s, set()):
        ks = {owner.get(n) for n in nodes}
        if len(ks) == 1 and (k := next(iter(ks))) is not None:
            out[k].append((family, len(nodes) - 1))
    return out


def _instances(s: Section) -> list[_Item]:
    """Every pattern instance of one section."""
    found: list[tuple[str, str, list[str], int, str | None]] = []
    taken: set[str] = set()
    for block in find_moe(s):
        taken.update(block.nodes)
        found.append(("moe", DESCRIPTIONS["moe"], list(block.nodes), len(block.nodes) - 1, block.signature))
    for att in find_attention(s, taken):
        taken.update(att.nodes)
        found.append(
            ("attention", DESCRIPTIONS["attention"], list(att.nodes), len(att.nodes) - 1, att.signature)
        )
    nested = _nested(s, [f[2] for f in found]) if found else []
    used = set(taken)
    for family, description, nodes in _fragments(s, taken):
        used.update(n for n in nodes if s.kinds[n] != "gemm")
        found.append((family, description, nodes, len(nodes) - 1, None))
    for chain in layout_chains(s, used):
        found.append(("attention_layout", layout_description(s, chain), chain, len(chain), None))
    result = []
    for k, (family, description, nodes, removed, sig) in enumerate(found):
        inst = Instance(s.name, tuple(nodes), _layer(s, nodes), s.line[nodes[0]])
        meta = sum(1 for n in nodes if (m := s.nodes[n].meta) is not None and not m.known)
        formula = (
            ""
            if family in ("moe", "attention", "attention_layout")
            else graph_formula([s.nodes[n] for n in nodes], lambda x: x not in s.nodes)
        )
        targets = tuple(s.nodes[n].target for n in nodes)
        result.append(
            _Item(
                family,
                description,
                sig or signature(s, nodes),
                removed,
                inst,
                meta,
                formula,
                targets,
                _saved(s, nodes),
                tuple(nested[k]) if k < len(nested) else (),
            )
        )
    return result


def _group(items: list[_Item]) -> Group:
    first = min(items, key=lambda x: (x.instance.section, x.instance.line))
    instances = tuple(sorted((i.instance for i in items), key=lambda x: (x.section, x.line)))
    counts: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    for it in items:
        for fam, r in it.nested:
            counts[fam] += 1
            removed[fam] += r
    nested = tuple(sorted(((f, counts[f], removed[f]) for f in counts), key=lambda x: (-x[2], x[0])))
    return Group(
        first.family,
        first.description,
        first.targets,
        first.signature,
        instances,
        first.removed,
        sum(i.unknown_meta for i in items),
        first.formula,
        sum(i.size[0] for i in items),
        sum(i.size[1] for i in items),
        nested,
    )


def scan_dump(dump: GraphDump, min_count: int = 2) -> list[Group]:
    """Group the unfused patterns of ``dump`` by signature; keep those seen at least ``min_count`` times.

    Ranked by what a fusion saves: bytes of intermediates not written, then nodes removed, then
    recurrence; layout glue last (removing it is a layout transform's job, not a new kernel's)."""
    by_sig: dict[str, list[_Item]] = {}
    for i, sec in enumerate(dump.sections):
        for item in _instances(Section(i, sec)):
            by_sig.setdefault(item.signature, []).append(item)
    groups = [_group(items) for items in by_sig.values() if len(items) >= min_count]
    groups.sort(
        key=lambda g: (
            g.family == "attention_layout",
            -g.bytes_saved,
            -g.nodes_removed,
            -len(g.instances),
            g.family,
            g.signature,
        )
    )
    return groups
