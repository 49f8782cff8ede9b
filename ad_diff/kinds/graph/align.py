"""Node alignment across runs: an explicit fallback chain, each pair recording how it was found.

FX names shift when a pass is added (``linear_3`` becomes ``linear_4``), so a name alone is never trusted.
The chain, applied to the nodes still unmatched after each step:

1. ``exact``      same name, target, literals and shape, and the same inputs: an equal forward structural
                  signature, or inputs that are exact pairs themselves. FX counter names (``getitem_12``,
                  ``fused_weight_1``) shift when an upstream rewrite adds or removes a node, so a name is
                  confirmed, never trusted: a same-name pair whose target, inputs or shape disagree is not
                  exact (placeholders need the name and, for counter names, the same shape);
2. ``renamed``    same name with the counter suffix removed, same target, same signature (unique both sides);
3. ``structural`` same target and full-depth signature (unique both sides), then rounds of local signatures
                  built from already-matched neighbours (target, literals, pair ids of inputs / of users);
4. ``sequence``   what remains between the same two matched anchors, aligned by target sequence
                  (``difflib``), never across module scopes (``..._layers_<N>_`` in AD names), and never
                  two nodes of different known shapes (position alone is weak evidence).

Pairs of steps 1-3 are confident: a shape change on them is reported as such (``shape_change``).

Unmatched nodes are grouped into rewritten regions: connected unmatched nodes of both runs that share the
matched frontier around them (a fusion is many-to-one, so it is one region, not a list of adds and removes:
:mod:`ad_diff.kinds.graph.regions`).
Every step is a linear pass with dict lookups; only ``sequence`` is quadratic, and only inside one segment
between anchors, which is capped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from ad_diff.core.gcpause import paused_gc
from ad_diff.kinds.graph.index import (
    USER_ARG,
    USER_SHIFT,
    GraphIndex,
    has_counter,
    meta_agrees,
    strip_counter,
)
from ad_diff.kinds.graph.model import GraphSection, MatchKind, NodePair, Region, Unmatched
from ad_diff.kinds.graph.regions import group_regions

NodeKey = Callable[[GraphIndex, int], object]
"""A node's matching key within its graph (nodes of both runs with one unique key are paired)."""

MAX_SEGMENT = 2000
"""Longest run of unmatched nodes (per side) given to sequence alignment; longer ones stay unmatched."""
_SCOPE = re.compile(r"^(.*?layers?_\d+)_")


def scope_of(name: str) -> str | None:
    """The module scope encoded in an AD node name (``model_layers_3_..`` -> ``model_layers_3``)."""
    m = _SCOPE.match(name)
    return m.group(1) if m else None


class SectionAlignment:
    """Result of aligning one GraphModule section of both runs (internal to the graph analysis)."""

    __slots__ = ("section", "b", "c", "mb", "mc", "kind", "unmatched", "regions", "rewired")

    def __init__(self, section: str, b: GraphIndex, c: GraphIndex) -> None:
        self.section = section
        self.b, self.c = b, c
        self.mb = [-1] * len(b)
        """Baseline index -> candidate index (-1 unmatched)."""
        self.mc = [-1] * len(c)
        self.kind: list[MatchKind | None] = [None] * len(b)
        self.unmatched: list[Unmatched] = []
        self.regions: list[Region] = []
        self.rewired: list[tuple[str, str]] = []

    def pair(self, i: int, j: int, kind: MatchKind) -> None:
        """Record baseline node ``i`` aligned to candidate node ``j``."""
        self.mb[i], self.mc[j], self.kind[i] = j, i, kind

    def pairs(self) -> list[NodePair]:
        """All pairs, in baseline dump order."""
        names_b, names_c = self.b.names, self.c.names
        return [
            NodePair(names_b[i], names_c[j], self.kind[i] or MatchKind.STRUCTURAL, self.section)
            for i, j in enumerate(self.mb)
            if j >= 0
        ]

    def counts(self) -> Counter[MatchKind]:
        """Pairs per match kind."""
        return Counter(k for k in self.kind if k)

    @property
    def structure_equal(self) -> bool:
        """Every node aligned and no aligned node reads different inputs or literals."""
        return not self.unmatched and not self.rewired

    def kept(self) -> AlignedSection:
        """What the next transform's hints read of this alignment (see :class:`AlignedSection`)."""
        b, c = self.b, self.c
        return AlignedSection(self.section, b.names, b.pos, b.targets, self.mb, c.names, c.pos, c.targets,
                              c.inputs, tuple(self.regions))


@dataclass(frozen=True, slots=True)
class AlignedSection:
    """The part of a :class:`SectionAlignment` kept after it, for the root-cause hints of the next transform
    (:mod:`ad_diff.kinds.graph.hints`): names, positions and targets of both sides, the pairing, the
    candidate's inputs and the regions. Signatures, users, literals and the parsed nodes are dropped, which
    is most of an index's memory."""

    section: str
    names_b: list[str]
    pos_b: dict[str, int]
    targets_b: list[str]
    mb: list[int]
    """Baseline index -> candidate index (-1 unmatched)."""
    names_c: list[str]
    pos_c: dict[str, int]
    targets_c: list[str]
    inputs_c: list[list[int]]
    regions: tuple[Region, ...]


def align_sections(
    b: GraphSection, c: GraphSection, fmt_b: str = "D3", fmt_c: str = "D3"
) -> SectionAlignment:
    """Align the nodes of two sections (same GraphModule in both runs)."""
    with paused_gc():
        return _align(b, c, fmt_b, fmt_c)


def _align(b: GraphSection, c: GraphSection, fmt_b: str, fmt_c: str) -> SectionAlignment:
    B = GraphIndex(b)
    al = SectionAlignment(b.name, B, GraphIndex(c, like=B))
    match_chain(al)
    _rewired(al)
    group_regions(al, fmt_b, fmt_c)
    return al


def match_chain(al: SectionAlignment) -> None:
    """Steps 1-4 of the chain."""
    _exact(al)
    base_b, base_c = _bases(al.b, al.mb), _bases(al.c, al.mc)
    _unique(al, MatchKind.RENAMED, (base_b, al.b.targets, al.b.fwd), (base_c, al.c.targets, al.c.fwd))
    _unique(al, MatchKind.RENAMED, (base_b, al.b.targets, al.b.bwd), (base_c, al.c.targets, al.c.bwd))
    _unique(al, MatchKind.STRUCTURAL, (al.b.targets, al.b.fwd), (al.c.targets, al.c.fwd))
    _unique(al, MatchKind.STRUCTURAL, (al.b.targets, al.b.bwd), (al.c.targets, al.c.bwd))
    _propagate(al)
    _sequence(al)
    _propagate(al)


def identical_alignment(sec: GraphSection) -> list[NodePair]:
    """Pairs for byte-identical dumps (no alignment work)."""
    return [NodePair(n.name, n.name, MatchKind.IDENTICAL, sec.name) for n in sec.nodes]


def _exact(al: SectionAlignment) -> None:
    """Same-name pairs that the structure confirms (see the module docstring). Candidate nodes are visited in
    dump order, so every input's own decision is made before its users are looked at.

    The leading nodes both sections share (:attr:`GraphIndex.shared`) pair with themselves without a look:
    each has its own name at its own position on both sides (no name repeats there), the same target,
    metadata, inputs and forward signature, which is everything this step compares."""
    B, C, mb = al.b, al.c, al.mb
    shared = C.shared
    if shared:
        same = list(range(shared))  # one int object per position, in both lists
        al.mb[:shared] = al.mc[:shared] = same
        al.kind[:shared] = [MatchKind.EXACT] * shared
    nodes_c = C.section.nodes
    pos_b, tb, tc, metas_b, metas_c = B.pos, B.targets, C.targets, B.metas, C.metas
    for j in range(shared, len(C)):
        name = C.names[j]
        i = pos_b.get(name)
        if i is None or tb[i] != tc[j] or mb[i] != -1:
            continue
        agree = meta_agrees(metas_b[i], metas_c[j])
        op = nodes_c[j].op
        if op != "call":  # a placeholder's own name is its identity, unless it is a counter name
            if agree or op == "output" or not has_counter(name):
                al.pair(i, j, MatchKind.EXACT)
            continue
        ib, ic = B.inputs[i], C.inputs[j]
        if not agree or len(ib) != len(ic) or B.lits[i] != C.lits[j] or B.ext[i] != C.ext[j]:
            continue
        if B.fwd[i] == C.fwd[j] or [mb[x] for x in ib] == ic:
            al.pair(i, j, MatchKind.EXACT)


def _bases(x: GraphIndex, m: list[int]) -> list[str]:
    """Each node's name without its counter, for the nodes still unmatched (``""`` for the others)."""
    names = x.names
    out = [""] * len(m)
    for i, j in enumerate(m):
        if j < 0:
            out[i] = strip_counter(names[i])
    return out


def _keys(free: list[int], cols: tuple[Sequence[Any], ...]) -> Iterator[tuple[Any, ...]]:
    """The key of each node of ``free``: its values in the columns ``cols`` (made one at a time)."""
    return zip(*[map(col.__getitem__, free) for col in cols], strict=True)


def _unique(al: SectionAlignment, kind: MatchKind, cols_b: tuple[Sequence[Any], ...],
            cols_c: tuple[Sequence[Any], ...]) -> int:
    """Pair unmatched nodes whose key (their values in the columns ``cols_*``, one list per key part) is
    unique among the unmatched nodes of each side. Keys are made for the unmatched nodes alone."""
    kb: dict[object, int] = {}
    free_b = [i for i, j in enumerate(al.mb) if j < 0]
    for i, k in zip(free_b, _keys(free_b, cols_b), strict=True):
        kb[k] = -1 if k in kb else i
    kc: dict[object, int] = {}
    free_c = [j for j, i in enumerate(al.mc) if i < 0]
    for j, k in zip(free_c, _keys(free_c, cols_c), strict=True):
        kc[k] = -1 if k in kc else j
    n = 0
    for key, j in kc.items():
        if j >= 0:
            i = kb.get(key, -1)
            if i >= 0:
                al.pair(i, j, kind)
                n += 1
    return n


def _propagate(al: SectionAlignment, rounds: int = 12) -> None:
    """Match nodes by target, literals and the pair ids of matched inputs (then users), until no progress."""
    mb, mc = al.mb, al.mc

    def fwd_b(x: GraphIndex, i: int) -> object:
        ins = tuple(k if mb[k] >= 0 else -1 for k in x.inputs[i])
        return (x.targets[i], x.lits[i], ins, x.ext[i]) if any(k >= 0 for k in ins) else ("-", i)

    def fwd_c(x: GraphIndex, j: int) -> object:
        ins = tuple(mc[k] for k in x.inputs[j])
        return (x.targets[j], x.lits[j], ins, x.ext[j]) if any(k >= 0 for k in ins) else ("+", j)

    def bwd_b(x: GraphIndex, i: int) -> object:
        us = tuple(sorted((v >> USER_SHIFT, v & USER_ARG) for v in x.users[i] if mb[v >> USER_SHIFT] >= 0))
        return (x.targets[i], x.lits[i], us) if us else ("-", i)

    def bwd_c(x: GraphIndex, j: int) -> object:
        us = tuple(sorted((mc[v >> USER_SHIFT], v & USER_ARG) for v in x.users[j]
                          if mc[v >> USER_SHIFT] >= 0))
        return (x.targets[j], x.lits[j], us) if us else ("+", j)

    # The unmatched nodes, found once and narrowed as pairs are made: a round looks at them alone, not at
    # every node again (up to 24 passes over a 75,000-node section cost a MoE pair a second).
    free = ([i for i, j in enumerate(mb) if j < 0], [j for j, i in enumerate(mc) if i < 0])
    for _ in range(rounds):
        n = _unique2(al, MatchKind.STRUCTURAL, fwd_b, fwd_c, free)
        n += _unique2(al, MatchKind.STRUCTURAL, bwd_b, bwd_c, free)
        if not n:
            break


def _unique2(al: SectionAlignment, kind: MatchKind, key_b: NodeKey, key_c: NodeKey,
             free: tuple[list[int], list[int]]) -> int:
    """Pair the nodes of ``free`` (each side's unmatched nodes, in dump order; narrowed here to those still
    unmatched) whose key is unique among them on each side."""
    mb, mc = al.mb, al.mc
    free[0][:] = [i for i in free[0] if mb[i] < 0]
    free[1][:] = [j for j in free[1] if mc[j] < 0]
    kb: dict[object, int] = {}
    for i in free[0]:
        k = key_b(al.b, i)
        kb[k] = -1 if k in kb else i
    n = 0
    kc: dict[object, int] = {}
    for j in free[1]:
        k = key_c(al.c, j)
        kc[k] = -1 if k in kc else j
    for k, j in kc.items():
        if j >= 0:
            i = kb.get(k, -1)
            if i >= 0 and al.mb[i] < 0:
                al.pair(i, j, kind)
                n += 1
    return n


def _segments(m: list[int], to_b: bool) -> dict[int, list[int]]:
    """Unmatched positions grouped by the (baseline index of the) last matched node before them."""
    out: dict[int, list[int]] = {}
    anchor = -1
    for p, q in enumerate(m):
        if q >= 0:
            anchor = q if to_b else p
        else:
            out.setdefault(anchor, []).append(p)
    return out


def _sequence(al: SectionAlignment) -> None:
    B, C = al.b, al.c
    seg_b = _segments(al.mb, to_b=False)
    seg_c = _segments(al.mc, to_b=True)
    for anchor, bs in seg_b.items():
        cs = seg_c.get(anchor)
        if not cs or len(bs) > MAX_SEGMENT or len(cs) > MAX_SEGMENT:
            continue
        sm = SequenceMatcher(None, [B.targets[i] for i in bs], [C.targets[j] for j in cs], autojunk=False)
        for blk in sm.get_matching_blocks():
            for t in range(blk.size):
                i, j = bs[blk.a + t], cs[blk.b + t]
                sb, sc = scope_of(B.names[i]), scope_of(C.names[j])
                if sb is not None and sc is not None and sb != sc:
                    continue
                if B.section.nodes[i].op == C.section.nodes[j].op and meta_agrees(B.metas[i], C.metas[j]):
                    al.pair(i, j, MatchKind.SEQUENCE)


def _rewired(al: SectionAlignment) -> None:
    B, C, mb = al.b, al.c, al.mb
    for i in range(C.shared, len(mb)):  # the shared leading nodes read the same paired inputs: see _exact
        j = mb[i]
        if j < 0:
            continue
        ib, ic = B.inputs[i], C.inputs[j]
        if len(ib) != len(ic) or B.lits[i] != C.lits[j] or B.ext[i] != C.ext[j]:
            al.rewired.append((B.names[i], C.names[j]))
        else:
            got = [mb[x] for x in ib]  # the candidate nodes this node's inputs are paired with
            if got != ic and any(_reads_other(C, m, y) for m, y in zip(got, ic, strict=True)):
                al.rewired.append((B.names[i], C.names[j]))


def _reads_other(C: GraphIndex, paired: int, read: int) -> bool:
    """True if a node reads candidate node ``read`` where its counterpart reads the node paired with
    ``paired`` (-1: unpaired), and the two compute different things. Two nodes of one run with equal forward
    signatures compute the same value (``unsqueeze`` of ``cos`` in every layer): reading either is the same
    wiring, and which of them a name pairs with is chance (a rename deals the name to the other)."""
    return paired >= 0 and paired != read and C.fwd[paired] != C.fwd[read]
