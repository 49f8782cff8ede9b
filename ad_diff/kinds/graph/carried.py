"""A section's alignment in the carried form of :mod:`ad_diff.kinds.graph.carry`: pairs by node object, so
that it survives the next transform's parse (the parser hands out one object per line text), and each
run's readers by name, updated with what the run changed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

from ad_diff.kinds.graph.align import AlignedSection, SectionAlignment
from ad_diff.kinds.graph.diff import MetaChange
from ad_diff.kinds.graph.index import has_counter, meta_agrees, meta_key, norm_target, strip_counter
from ad_diff.kinds.graph.measure import SectionOutcome
from ad_diff.kinds.graph.model import GraphNode, GraphSection, MatchKind, Region

NAME = attrgetter("name")
Readers = dict[str, dict[int, GraphNode]]
Full = tuple[str, tuple[GraphNode, ...], tuple[GraphNode, ...], tuple[Sequence[int], ...],
              list["MatchKind | None"], SectionOutcome]
"""A full alignment as kept for the next transform: the section, both runs' nodes, the pairing both ways and
the signatures (``mb, mc, fwd_b, fwd_c, bwd_b, bwd_c``: the indexes' other columns are let go), the match
kinds and the outcome (made into a :class:`Carried` only when the next transform aligns incrementally)."""
"""One run's section: node name -> the nodes whose arguments name it (by object id)."""


def readers_of(nodes: tuple[GraphNode, ...]) -> Readers:
    out: Readers = {}
    for n in nodes:
        for x in n.inputs():
            out.setdefault(x, {})[id(n)] = n
    return out


def update_readers(readers: Readers, gone: list[GraphNode], new: list[GraphNode]) -> None:
    for n in gone:
        for x in n.inputs():
            got = readers.get(x)
            if got is not None:
                got.pop(id(n), None)
    for n in new:
        for x in n.inputs():
            readers.setdefault(x, {})[id(n)] = n


Wiring = tuple[list[str], tuple[str, ...], tuple[str, ...]]
"""A node's inputs (names), external names and literals."""


def wiring(node: GraphNode, i: int, pos: dict[str, int]) -> Wiring:
    """A node's inputs (names), external names and literals as :class:`GraphIndex` resolves them."""
    if node.op == "placeholder":
        return [], (), ()
    ins: list[str] = []
    ext: list[str] = []
    lits: list[str] = []
    for a in node.args:
        if a.node:
            j = pos.get(a.text)
            if j is None or j >= i:
                ext.append(strip_counter(a.text))
            else:
                ins.append(a.text)
        elif a.refs:
            resolved = False
            for r in a.refs:
                j = pos.get(r)
                if j is not None and j < i:
                    resolved = True
                    ins.append(r)
            if not resolved:
                lits.append(a.text)
        else:
            lits.append(a.text)
    return ins, tuple(ext), tuple(lits)


def uses(reader: GraphNode, name: str) -> int:
    """How many user entries ``reader`` gives node ``name`` in a :class:`GraphIndex`."""
    return sum(int(a.text == name) if a.node else a.refs.count(name) for a in reader.args)


class Carried:
    """One section's alignment as the next transform reads it: pairs by node object."""

    __slots__ = ("section", "nodes_b", "nodes_c", "partner", "back", "kind", "same", "rewired", "meta",
                 "free_b", "free_c", "outcome", "readers_b", "readers_c")

    def __init__(self, section: str, nodes_b: tuple[GraphNode, ...], nodes_c: tuple[GraphNode, ...]
                 ) -> None:
        self.section = section
        self.nodes_b, self.nodes_c = nodes_b, nodes_c
        self.partner: dict[int, GraphNode] = {}
        """Baseline node id -> its candidate counterpart."""
        self.back: dict[int, GraphNode] = {}
        """Candidate node id -> its baseline counterpart."""
        self.kind: dict[int, MatchKind] = {}
        self.same: dict[int, tuple[bool, bool]] = {}
        """Whether a pair's forward and backward signatures are equal (as far as the steps saw them)."""
        self.rewired: dict[int, tuple[str, str]] = {}
        self.meta: dict[int, MetaChange] = {}
        self.free_b: dict[int, GraphNode] = {}
        self.free_c: dict[int, GraphNode] = {}
        self.outcome: SectionOutcome | None = None
        self.readers_b: Readers = {}
        self.readers_c: Readers = {}

    @classmethod
    def of_full(cls, src: Full) -> Carried:
        """The carried form of a full alignment."""
        section, nb, nc, (mb, mc, fb, fc, bb, bc), kinds, out = src
        c = cls(section, nb, nc)
        for i, j in enumerate(mb):
            if j >= 0:
                x, y = nb[i], nc[j]
                c.partner[id(x)], c.back[id(y)] = y, x
                c.kind[id(x)] = kinds[i] or MatchKind.STRUCTURAL
                c.same[id(x)] = (fb[i] == fc[j], bb[i] == bc[j])
            else:
                c.free_b[id(nb[i])] = nb[i]
        c.free_c = {id(y): y for j, y in enumerate(nc) if mc[j] < 0}
        by_b = dict(zip(map(NAME, nb), nb, strict=True))
        c.rewired = {id(by_b[p[0]]): p for p in out.rewired}
        c.meta = {id(by_b[m.baseline]): m for m in out.changes}
        c.outcome = out
        c.readers_b, c.readers_c = readers_of(nb), readers_of(nc)
        return c

    def aligned(self, regions: tuple[Region, ...]) -> AlignedSection:
        """The :class:`AlignedSection` of this alignment (made when the hints or the tensor step read it)."""
        nb, nc = self.nodes_b, self.nodes_c
        names_b, names_c = list(map(NAME, nb)), list(map(NAME, nc))
        pos_b = dict(zip(names_b, range(len(nb)), strict=True))
        pos_c = dict(zip(names_c, range(len(nc)), strict=True))
        partner = self.partner
        mb = [pos_c[p.name] if (p := partner.get(id(x))) is not None else -1 for x in nb]
        inputs_c = [[pos_c[n] for n in wiring(y, j, pos_c)[0]] for j, y in enumerate(nc)]
        return AlignedSection(self.section, names_b, pos_b, _targets(nb), mb, names_c, pos_c, _targets(nc),
                              inputs_c, regions)


def _targets(nodes: tuple[GraphNode, ...]) -> list[str]:
    return [strip_counter(n.name) if n.op == "placeholder" else norm_target(n.target) for n in nodes]


@dataclass
class Side:
    """One run's section at the new transform, by name."""

    nodes: tuple[GraphNode, ...]
    by_name: dict[str, GraphNode]
    pos: dict[str, int]

    @classmethod
    def of(cls, sec: GraphSection) -> Side:
        names = list(map(NAME, sec.nodes))
        return cls(sec.nodes, dict(zip(names, sec.nodes, strict=True)), dict(zip(names, range(len(names)),
                                                                                  strict=True)))


def exact_now(x: GraphNode, y: GraphNode, c: Carried, sb: Side, sc: Side) -> bool:
    """Whether the ``exact`` step would pair ``x`` and ``y`` given the pairs in ``c`` (by their inputs; the
    signature test is not made)."""
    if x.name != y.name or _target(x) != _target(y):
        return False
    agree = meta_agrees(meta_key(x.meta), meta_key(y.meta))
    if x.op != "call":
        return agree or x.op == "output" or not has_counter(x.name)
    return agree and _inputs_exact(x, y, c, sb, sc)


def _target(n: GraphNode) -> str:
    return strip_counter(n.name) if n.op == "placeholder" else norm_target(n.target)


def _inputs_exact(x: GraphNode, y: GraphNode, c: Carried, sb: Side, sc: Side) -> bool:
    ib, eb, lb = wiring(x, sb.pos[x.name], sb.pos)
    ic, ec, lc = wiring(y, sc.pos[y.name], sc.pos)
    if len(ib) != len(ic) or eb != ec or lb != lc:
        return False
    for u, v in zip(ib, ic, strict=True):
        p = c.partner.get(id(sb.by_name[u]))
        if p is None or p.name != v or c.kind[id(sb.by_name[u])] is not MatchKind.EXACT:
            return False
    return True


def rewired_at(al: SectionAlignment, i: int, j: int) -> bool:
    """The rewired test of the chain on a pair of the part (all its inputs are in the part)."""
    B, C = al.b, al.c
    ib, ic = B.inputs[i], C.inputs[j]
    if len(ib) != len(ic) or B.lits[i] != C.lits[j] or B.ext[i] != C.ext[j]:
        return True
    got = [al.mb[x] for x in ib]
    return got != ic and any(m >= 0 and m != v for m, v in zip(got, ic, strict=True))


def is_rewired(x: GraphNode, y: GraphNode, c: Carried, sb: Side, sc: Side) -> bool:
    """The rewired test of the chain (inputs not aligned to each other, or literals changed), by name."""
    ib, eb, lb = wiring(x, sb.pos[x.name], sb.pos)
    ic, ec, lc = wiring(y, sc.pos[y.name], sc.pos)
    if len(ib) != len(ic) or lb != lc or eb != ec:
        return True
    got = [p.name if (p := c.partner.get(id(sb.by_name[u]))) is not None else None for u in ib]
    return got != ic and any(m is not None and m != v for m, v in zip(got, ic, strict=True))
