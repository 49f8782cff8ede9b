"""Incremental cross-run alignment: the alignment of one transform's dumps carried to the next one's.

Consecutive dumps of one run share almost every node object (the parser hands out one object per line
text), and a transform that rewrites one pattern per layer changes a few lines per layer. So once two dumps
are aligned, the next pair's alignment is the previous one with the nodes the two runs' changes touch
aligned again:

* **free**: the nodes either run added, the survivors of a pair one of whose nodes went, the nodes that had no
  counterpart, and the pairs in the changes' neighbourhood: a node whose name appeared or went in either run,
  a node that reads a changed node, a node a changed node reads;
* **anchors**: the pairs around the free nodes: their inputs and users, and the pair just before each free
  node in dump order (where the sequence step cuts its segments);
* the free nodes and the anchors form a part of the section on each side, in dump order; the anchors are
  preset as pairs and stand for everything outside (their signature is the pair's, the same in both runs),
  and the chain of :mod:`ad_diff.kinds.graph.align` runs on the free nodes, then regions are grouped there.

Every other pair is carried with its match kind, its rewiring and its metadata change. A transform that
changes neither run carries the whole alignment, at no cost. The full chain runs instead where the carried
alignment cannot be trusted: the first pair after a divergence (nothing to carry), a dump that is not simple
(a repeated section, node name or line: :class:`~ad_diff.kinds.graph.measure.NodeTable`), a section that
appears or goes, more than :data:`MAX_SHARE` of a section to align again (the full chain costs about the
same), and an anchor the new pairs contradict: an ``exact`` anchor whose inputs no longer pair ``exact``
with its counterpart's, or a same-name anchor the ``exact`` step would now pair.

Where the methods can differ, and why that is safe, is in docs/graph-dumps.md ("Incremental alignment").
"""

from __future__ import annotations

from itertools import filterfalse

from ad_diff.kinds.graph.align import (
    SectionAlignment,
    align_sections,
    mark_regions,
    match_exact,
    match_rest,
)
from ad_diff.kinds.graph.carried import (
    Carried,
    Full,
    Side,
    exact_now,
    is_rewired,
    rewired_at,
    update_readers,
    uses,
)
from ad_diff.kinds.graph.index import (
    GraphIndex,
)
from ad_diff.kinds.graph.measure import (
    BodyChange,
    DumpAlignment,
    SectionOutcome,
    align_dumps,
    full_outcome,
    meta_change,
)
from ad_diff.kinds.graph.model import GraphDump, GraphNode, GraphSection, MatchKind

MAX_SHARE = 0.08
"""Largest share of a section's nodes (both runs) the incremental step aligns again (free nodes and twice the
anchors); above it the full chain runs. Measured on the 160-layer worst-case Llama pair (shares of 0.2 to
0.6): a step costs about 1.3 times the full chain (its per-node work, by node object, is heavier than the
chain's by position), so it pays only well below that; 0.08 is an estimate, not a measured break-even. The
step is tried only where three times the nodes the two runs added fit the share (the free nodes are about
three times the new ones), so a transform that rewrites every layer costs no failed attempt."""

def _release(c: Carried, x: GraphNode, gone_b: set[int], gone_c: set[int]) -> None:
    """Unpair baseline node ``x`` (paired) and free the survivors."""
    y = c.partner.pop(id(x))
    del c.back[id(y)]
    del c.kind[id(x)]
    del c.same[id(x)]
    c.rewired.pop(id(x), None)
    c.meta.pop(id(x), None)
    if id(x) not in gone_b:
        c.free_b[id(x)] = x
    if id(y) not in gone_c:
        c.free_c[id(y)] = y


def _free(prev: Carried, sb: Side, sc: Side, change_b: tuple[list[GraphNode], list[GraphNode]],
          change_c: tuple[list[GraphNode], list[GraphNode]], extra: dict[int, GraphNode]) -> Carried:
    """The carried pairs that survive the two runs' changes, and the nodes to align again."""
    (gone_b, new_b), (gone_c, new_c) = change_b, change_c
    c = Carried(prev.section, sb.nodes, sc.nodes)
    c.partner, c.back = dict(prev.partner), dict(prev.back)
    c.kind, c.same = dict(prev.kind), dict(prev.same)
    c.rewired, c.meta = dict(prev.rewired), dict(prev.meta)
    c.readers_b, c.readers_c = prev.readers_b, prev.readers_c  # they follow each run (updated in place)
    update_readers(c.readers_b, gone_b, new_b)
    update_readers(c.readers_c, gone_c, new_c)
    ids_b, ids_c = set(map(id, gone_b)), set(map(id, gone_c))
    c.free_b = {k: x for k, x in prev.free_b.items() if k not in ids_b}
    c.free_c = {k: y for k, y in prev.free_c.items() if k not in ids_c}
    for x in gone_b:
        if id(x) in c.partner:
            _release(c, x, ids_b, ids_c)
    for y in gone_c:
        xb = c.back.get(id(y))
        if xb is not None:
            _release(c, xb, ids_b, ids_c)
    c.free_b.update((id(x), x) for x in new_b)
    c.free_c.update((id(y), y) for y in new_c)
    names_b = {x.name for x in gone_b} | {x.name for x in new_b}
    names_c = {y.name for y in gone_c} | {y.name for y in new_c}
    read_b = {n for x in (*gone_b, *new_b) for n in x.inputs()}
    read_c = {n for y in (*gone_c, *new_c) for n in y.inputs()}
    by_b, by_c = sb.by_name, sc.by_name
    doomed = {k: x for k, x in extra.items() if k in c.partner}
    for name in names_b | read_b | names_c:
        xb = by_b.get(name)
        if xb is not None and id(xb) in c.partner:
            doomed[id(xb)] = xb
    for name in names_c | read_c | names_b:
        yc = by_c.get(name)
        xb = c.back.get(id(yc)) if yc is not None else None
        if xb is not None:
            doomed[id(xb)] = xb
    for name in names_b:
        for r in c.readers_b.get(name, {}).values():
            if id(r) in c.partner:
                doomed[id(r)] = r
    for name in names_c:
        for r in c.readers_c.get(name, {}).values():
            xb = c.back.get(id(r))
            if xb is not None:
                doomed[id(xb)] = xb
    for x in doomed.values():
        _release(c, x, ids_b, ids_c)
    return c


def _anchors(c: Carried, sb: Side, sc: Side) -> tuple[dict[int, GraphNode], set[int]]:
    """The pairs (by baseline node) around the free nodes: inputs, users, and the pair before each; and the
    ones among them that read a free node (the only carried pairs whose exact or rewired test can change)."""
    out: dict[int, GraphNode] = {}
    users: set[int] = set()
    sides = ((sb, c.free_b, c.readers_b, c.partner, None), (sc, c.free_c, c.readers_c, c.back, c.back))
    for side, free, readers, paired, to_b in sides:
        last: dict[int, int] = {}
        for p in sorted(side.pos[x.name] for x in free.values()):
            x = side.nodes[p]
            near = [side.by_name.get(name) for name in x.inputs()]
            q = p - 1
            last[p] = last[q] if q >= 0 and id(side.nodes[q]) in free else q
            if last[p] >= 0:
                near.append(side.nodes[last[p]])
            for y in near:
                if y is not None and id(y) in paired:
                    b = y if to_b is None else to_b[id(y)]
                    out[id(b)] = b
            for k, y in readers.get(x.name, {}).items():
                if k in paired:
                    b = y if to_b is None else to_b[k]
                    out[id(b)] = b
                    users.add(id(b))
    return out, users


def _kept_order(old: tuple[GraphNode, ...], new: tuple[GraphNode, ...],
                change: tuple[list[GraphNode], list[GraphNode]]) -> bool:
    """Whether the nodes a run kept are in the same order (positions decide segments and inputs)."""
    gone, added = set(map(id, change[0])), set(map(id, change[1]))
    return list(filterfalse(gone.__contains__, map(id, old))) == list(filterfalse(added.__contains__,
                                                                                   map(id, new)))


ROUNDS = 4
"""Times a step is made again with the anchors the new pairs contradicted freed, before the full chain."""


def step(prev: Carried, sec_b: GraphSection, sec_c: GraphSection,
         change_b: tuple[list[GraphNode], list[GraphNode]], change_c: tuple[list[GraphNode], list[GraphNode]],
         fmts: tuple[str, str]) -> Carried | None:
    """``prev`` carried to the sections ``sec_b``/``sec_c`` given what each run changed in them (``None``:
    align fully instead)."""
    sb, sc = Side.of(sec_b), Side.of(sec_c)
    if not (_kept_order(prev.nodes_b, sb.nodes, change_b) and _kept_order(prev.nodes_c, sc.nodes, change_c)):
        return None
    extra: dict[int, GraphNode] = {}
    for _ in range(ROUNDS):
        got = _attempt(prev, sb, sc, change_b, change_c, fmts, extra)
        if not isinstance(got, dict):
            return got
        extra.update(got)
    return None


def _attempt(prev: Carried, sb: Side, sc: Side, change_b: tuple[list[GraphNode], list[GraphNode]],
             change_c: tuple[list[GraphNode], list[GraphNode]], fmts: tuple[str, str],
             extra: dict[int, GraphNode]) -> Carried | dict[int, GraphNode] | None:
    """One try of :func:`step` with the pairs of ``extra`` (baseline nodes) freed too: the carried alignment,
    or the anchors the new pairs contradict, or ``None`` when too much is to be aligned again."""
    c = _free(prev, sb, sc, change_b, change_c, extra)
    anchors, users = _anchors(c, sb, sc)
    if len(c.free_b) + len(c.free_c) + 2 * len(anchors) > MAX_SHARE * (len(sb.nodes) + len(sc.nodes)):
        return None
    al, part_b, part_c, seeds_b = _align_part(c, anchors, sb, sc)
    # An anchor the new pairs contradict (the exact step would now decide it otherwise) is freed next time.
    wrong = {}
    for i in seeds_b:
        x = part_b[i]
        if id(x) not in users:
            continue
        y = c.partner[id(x)]
        exact = exact_now(x, y, c, sb, sc)
        if exact != (c.kind[id(x)] is MatchKind.EXACT) and (exact or x.name == y.name):
            wrong[id(x)] = x
    if wrong:
        return wrong
    for i, j in enumerate(al.mb):  # the rewired test, by name for anchors (their inputs lie outside)
        if j >= 0 and (i not in seeds_b or id(part_b[i]) in users):
            x, y = part_b[i], part_c[j]
            if is_rewired(x, y, c, sb, sc) if i in seeds_b else rewired_at(al, i, j):
                c.rewired[id(x)] = (x.name, y.name)
            else:
                c.rewired.pop(id(x), None)
    mark_regions(al, *fmts)
    counts: dict[MatchKind, int] = {}
    for k in c.kind.values():
        counts[k] = counts.get(k, 0) + 1
    metas = sorted(c.meta.values(), key=lambda m: sb.pos[m.baseline])
    regions = tuple(al.regions)
    c.outcome = SectionOutcome(lambda: c.aligned(regions), counts, al.regions, al.unmatched,
                               list(c.rewired.values()), metas)
    return c


def _part(c: Carried, anchors: dict[int, GraphNode], sb: Side, sc: Side
          ) -> tuple[GraphIndex, GraphIndex, list[GraphNode], list[GraphNode], dict[int, tuple[int, int]]]:
    """The indexes of the part to align again (the free nodes and the anchors, in dump order), each anchor
    seeded with its pair's signatures, and the part's nodes and baseline seeds."""
    part_b = sorted([*c.free_b.values(), *anchors.values()], key=lambda x: sb.pos[x.name])
    part_c = sorted([*c.free_c.values(), *(c.partner[k] for k in anchors)], key=lambda y: sc.pos[y.name])
    # An anchor stands for its pair: the same signature in both runs where the pair's own were equal.
    seeds_b: dict[int, tuple[int, int]] = {}
    for i, x in enumerate(part_b):
        if id(x) in anchors:
            seeds_b[i] = (hash(("F", id(x))), hash(("B", id(x))))
    seeds_c: dict[int, tuple[int, int]] = {}
    for j, y in enumerate(part_c):
        xb = c.back.get(id(y))
        if xb is not None:
            f, b = c.same[id(xb)]  # a pair whose own signatures differ gets the candidate's own seed
            seeds_c[j] = (hash(("F", id(xb))) if f else hash(("F", id(xb), 0)),
                          hash(("B", id(xb))) if b else hash(("B", id(xb), 0)))
    B = GraphIndex(GraphSection("", tuple(part_b)), seeds=seeds_b)
    C = GraphIndex(GraphSection("", tuple(part_c)), seeds=seeds_c)
    B.fanout = [sum(uses(r, x.name) for r in c.readers_b.get(x.name, {}).values()
                    if sb.pos.get(r.name, -1) > sb.pos[x.name]) if i in seeds_b else len(B.users[i])
                for i, x in enumerate(part_b)]
    return B, C, part_b, part_c, seeds_b


def _align_part(c: Carried, anchors: dict[int, GraphNode], sb: Side, sc: Side
                ) -> tuple[SectionAlignment, list[GraphNode], list[GraphNode], dict[int, tuple[int, int]]]:
    """The chain on the part, the carried anchors preset; its new pairs are entered into ``c``."""
    B, C, part_b, part_c, seeds_b = _part(c, anchors, sb, sc)
    al = SectionAlignment(c.section, B, C)
    # The exact step sees the carried exact pairs only: the others are made after it by the full chain.
    later = []
    for i in seeds_b:
        x = part_b[i]
        j = C.pos[c.partner[id(x)].name]
        if c.kind[id(x)] is MatchKind.EXACT:
            al.pair(i, j, MatchKind.EXACT)
        else:
            al.mb[i] = al.mc[j] = -2
            later.append((i, j, c.kind[id(x)]))
    match_exact(al)
    for i, j, k in later:
        al.pair(i, j, k)
    match_rest(al)
    for i, j in enumerate(al.mb):
        if j >= 0 and i not in seeds_b:
            x, y = part_b[i], part_c[j]
            c.partner[id(x)], c.back[id(y)] = y, x
            c.kind[id(x)] = al.kind[i] or MatchKind.STRUCTURAL
            c.same[id(x)] = (B.fwd[i] == C.fwd[j], B.bwd[i] == C.bwd[j])
            del c.free_b[id(x)], c.free_c[id(y)]
            m = meta_change(x, y, B.metas[i], C.metas[j])
            if m is not None:
                c.meta[id(x)] = m
    return al, part_b, part_c, seeds_b


class Aligner:
    """Aligns the dump pairs of a comparison transform after transform, carrying each section's alignment
    forward where the runs' changes allow (``incremental=False``: the full chain every time: the
    reference)."""

    keep_all = False
    """Keep every section's alignment, not only those likely to be carried (for :meth:`pairs`: tests)."""

    def __init__(self, incremental: bool = True) -> None:
        self.incremental = incremental
        self.carried: dict[str, Carried | Full] = {}
        self.last: tuple[object, object] | None = None
        """The sections of the last dumps aligned (what ``carried`` describes)."""

    def align(self, db: GraphDump, dc: GraphDump, base: tuple[object, object],
              changes: tuple[BodyChange | None, BodyChange | None]) -> DumpAlignment:
        """Align ``db`` and ``dc``; ``base``: the sections of each run's dump the ``changes`` lead from (a
        change ``[]``: the same body as the run's previous dump; ``None``: not known)."""
        ok = self.incremental and self.last is not None and all(
            ch is not None and pv is last for ch, pv, last in zip(changes, base, self.last, strict=True))
        by_b = {s: (g, n) for s, g, n in changes[0] or ()}
        by_c = {s: (g, n) for s, g, n in changes[1] or ()}
        known = all(ch is not None for ch in changes)
        prev = self.carried if ok else {}
        self.carried = {}  # what is not carried on is let go before the full chain runs (memory)
        carried: dict[str, Carried | Full] = {}

        def one(sb: GraphSection, sc: GraphSection, fmt_b: str, fmt_c: str) -> SectionOutcome:
            p = prev.pop(sb.name, None)
            got: Carried | Full | None = None
            cb, cc = by_b.get(sb.name, ([], [])), by_c.get(sc.name, ([], []))
            # Small changes now are the sign of small changes next (a pass that touches every layer makes
            # every later pass touch it too): only then is a full alignment kept to be carried forward.
            share = MAX_SHARE * (len(sb.nodes) + len(sc.nodes))
            small = self.incremental and known and 3 * (len(cb[1]) + len(cc[1])) <= share
            if p is not None:
                if not (cb[0] or cb[1] or cc[0] or cc[1]):
                    nodes = (p.nodes_b, p.nodes_c) if isinstance(p, Carried) else p[1:3]
                    got = p if nodes == (sb.nodes, sc.nodes) else None
                elif small:
                    got = step(p if isinstance(p, Carried) else Carried.of_full(p), sb, sc, cb, cc,
                               (fmt_b, fmt_c))
            if got is None:
                p = None
                al = align_sections(sb, sc, fmt_b, fmt_c)
                out = full_outcome(al)
                if not (small or self.keep_all):  # kept, it would hold this pair's nodes through the next
                    return out
                got = (sb.name, sb.nodes, sc.nodes, (al.mb, al.mc, al.b.fwd, al.c.fwd, al.b.bwd, al.c.bwd),
                       al.kind, out)
            carried[sb.name] = got
            o = got.outcome if isinstance(got, Carried) else got[5]
            assert o is not None
            return o

        a = align_dumps(db, dc, one)
        # Kept only to carry from: it would hold this pair's nodes through the next pair's alignment.
        self.carried, self.last = carried, (db.sections, dc.sections) if self.incremental else None
        return a

    def pairs(self) -> list[tuple[str, str, str, str]]:
        """``(section, baseline node, candidate node, match kind)`` of the last dumps aligned, in section and
        baseline order (what the tests compare between the two methods; complete with :attr:`keep_all`)."""
        out: list[tuple[str, str, str, str]] = []
        for name, got in self.carried.items():
            if isinstance(got, Carried):
                out += [(name, x.name, got.partner[id(x)].name, got.kind[id(x)].value)
                        for x in got.nodes_b if id(x) in got.partner]
            else:
                _, nb, nc, (mb, *_), kinds, _ = got
                out += [(name, nb[i].name, nc[j].name, (kinds[i] or MatchKind.STRUCTURAL).value)
                        for i, j in enumerate(mb) if j >= 0]
        return out


__all__ = ["MAX_SHARE", "Aligner", "Carried", "step"]
