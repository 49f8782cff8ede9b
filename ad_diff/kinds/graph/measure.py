"""Measurements on parsed dumps, no verdicts: metadata coverage, per-run deltas, the alignment of two dumps
and the metadata comparison of their aligned nodes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter

from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.kinds.graph.align import align_sections
from ad_diff.kinds.graph.aligned import AlignedSection, SectionAlignment
from ad_diff.kinds.graph.diff import Coverage, MetaChange, MetaChangeKind, RunDelta
from ad_diff.kinds.graph.index import MetaKey, meta_agrees, norm_target
from ad_diff.kinds.graph.model import (
    UNKNOWN_DTYPES,
    Arg,
    GraphDump,
    GraphNode,
    MatchKind,
    NodeMeta,
    Region,
    Unmatched,
    UnmatchedReason,
)
from ad_diff.kinds.graph.splits import inline_pieces, split_notes


def _count(nodes: Iterable[GraphNode], sign: int, totals: list[int], by_target: dict[str, list[int]]) -> None:
    """Add (``sign`` = 1) or take away (-1) what ``nodes`` count towards a :class:`Coverage`."""
    nk = nt = ak = at = 0
    unknown = UNKNOWN_DTYPES  # NodeMeta.known, inlined: this loop visits every node and argument
    for n in nodes:
        meta = n.meta
        if meta is None:
            continue
        nt += 1
        known = meta.dtype not in unknown
        if known:
            nk += 1
        if n.op == "call":
            counts = by_target.get(n.target)
            if counts is None:
                counts = by_target[n.target] = [0, 0]
            counts[0 if known else 1] += sign
        for a in n.args:
            if a.node:
                at += 1
                # D1 arguments carry no metadata at all: they count as unknown only if D2/D3.
                if a.meta is None or a.meta.dtype not in unknown:
                    ak += 1
    totals[0] += sign * nk
    totals[1] += sign * nt
    totals[2] += sign * ak
    totals[3] += sign * at


def _coverage_of(totals: list[int], by_target: dict[str, list[int]]) -> Coverage:
    merged: dict[str, list[int]] = {}  # addresses in Python targets differ per process: merge them
    for t, (k, u) in by_target.items():
        if k or u:
            counts = merged.setdefault(norm_target(t), [0, 0])
            counts[0] += k
            counts[1] += u
    nk, nt, ak, at = totals
    return Coverage(nk, nt, ak, at, tuple((t, k, u) for t, (k, u) in sorted(merged.items())))


def coverage(dump: GraphDump) -> Coverage:
    """Share of nodes (placeholders, calls) and of ``%name`` arguments with known metadata."""
    totals = [0, 0, 0, 0]
    by_target: dict[str, list[int]] = {}
    for sec in dump.sections:
        _count(sec.nodes, 1, totals, by_target)
    return _coverage_of(totals, by_target)


def coverage_after(before: Coverage, change: BodyChange) -> Coverage:
    """The coverage of a dump from the coverage of the run's previous dump and what changed between them
    (the same counts as :func:`coverage` of the dump, from the changed nodes alone)."""
    totals = [before.nodes_known, before.nodes_total, before.args_known, before.args_total]
    by_target = {t: [k, u] for t, k, u in before.by_target}  # already merged: merging again is a no-op
    for _, gone, new in change:
        _count(gone, -1, totals, by_target)
        _count(new, 1, totals, by_target)
    return _coverage_of(totals, by_target)


def _meta_text(m: NodeMeta | None) -> str:
    if m is None:
        return "-"
    return m.dtype if m.shape is None else f"{m.shape} : {m.dtype}"


_NAME = attrgetter("name")

BodyChange = list[tuple[str, list[GraphNode], list[GraphNode]]]
"""Per section of two dumps of one run: the node objects only the earlier one holds, and those only the later
one holds (a line both hold is one object: :class:`~ad_diff.kinds.graph.linememo.LineMemo`)."""


class NodeTable:
    """One dump's nodes by object identity, per section: how one run's consecutive dumps meet.

    The parser hands out one object per line text, so two dumps differ exactly in the objects one holds and
    the other does not, and dict-key set operations (run in C) find them without a Python loop over every
    node. That holds when the dump is *simple*: no section name twice, and within each section no node name
    and no line twice; otherwise comparisons go by name (:func:`run_delta`'s general path)."""

    __slots__ = ("by_id", "order", "simple")

    def __init__(self, dump: GraphDump, simple: bool | None = None) -> None:
        """``simple``: whether ``dump`` is simple, if known from an earlier table (not checked again)."""
        self.order = [s.name for s in dump.sections]
        self.by_id = {s.name: dict(zip(map(id, s.nodes), s.nodes, strict=True)) for s in dump.sections}
        self.simple = simple if simple is not None else len(self.by_id) == len(dump.sections) and all(
            len(self.by_id[s.name]) == len(s.nodes) == len(set(map(_NAME, s.nodes))) for s in dump.sections)


def body_change(a: NodeTable, b: NodeTable) -> BodyChange | None:
    """What changed from dump ``a`` to dump ``b`` of one run (``None`` unless both are simple)."""
    if not (a.simple and b.simple):
        return None
    out: BodyChange = []
    for name in a.order + [n for n in b.order if n not in a.by_id]:
        x, y = a.by_id.get(name, {}), b.by_id.get(name, {})
        gone, new = x.keys() - y.keys(), y.keys() - x.keys()
        if gone or new:
            out.append((name, [x[i] for i in gone], [y[i] for i in new]))
    return out


def _key(section: str, name: str) -> str:
    return name if section == "(root)" else f"{section}/{name}"


def _by_name(dump: GraphDump) -> dict[str, GraphNode]:
    """``section/name -> node`` (root nodes by name alone; a repeated name keeps its last line)."""
    out: dict[str, GraphNode] = {}
    for sec in dump.sections:
        if sec.name == "(root)":
            out.update({n.name: n for n in sec.nodes})
        else:
            prefix = sec.name + "/"
            out.update({prefix + n.name: n for n in sec.nodes})
    return out


def _same_wiring(x: tuple[Arg, ...], y: tuple[Arg, ...]) -> bool:
    """Whether two nodes read the same: argument texts, kinds and list references, not the metadata written
    beside ``%name`` arguments."""
    if x is y:
        return True
    if len(x) != len(y):
        return False
    for a, b in zip(x, y, strict=True):
        if a is not b and (a.text != b.text or a.node != b.node or a.refs != b.refs):
            return False
    return True


def _changed(old: GraphNode, n: GraphNode) -> tuple[int, int]:
    """``(metadata changed, rewired)`` of a node kept by name."""
    meta = 1 if old.meta is not n.meta and old.meta != n.meta else 0
    rewired = 1 if old.target != n.target or not _same_wiring(old.args, n.args) else 0
    return meta, rewired


def run_delta(prev: GraphDump | None, cur: GraphDump, same_bytes: bool, change: BodyChange | None = None
              ) -> RunDelta:
    """What the transform did to one run: nodes added/removed by name, metadata changed on kept nodes.

    ``change`` (:func:`body_change` of the two dumps, when both are simple) lets it look at the changed
    nodes alone; the result is the same as comparing every node by name.
    """
    if same_bytes:
        return RunDelta(0, 0, 0, False)
    if prev is None:
        return RunDelta(0, 0, 0, True, first=True)
    if change is None:
        return _delta_by_name(prev, cur)
    removed: dict[str, list[GraphNode]] = {}
    added = meta_changed = rewired = 0
    for section, gone, new in change:
        old_by_name = {n.name: n for n in gone}
        for n in new:
            old = old_by_name.pop(n.name, None)
            if old is None:  # names are unique in a simple dump: a name not among the gone nodes is new
                added += 1
                continue
            m, r = _changed(old, n)
            meta_changed += m
            rewired += r
        if old_by_name:
            removed[section] = list(old_by_name.values())
    names: list[str] = []
    for sec in prev.sections:  # in the previous dump's order, as a comparison of all nodes by name lists them
        nodes = removed.get(sec.name)
        if nodes:
            where = dict(zip(map(id, sec.nodes), range(len(sec.nodes)), strict=True))
            nodes.sort(key=lambda n: where[id(n)])
            names.extend(_key(sec.name, n.name) for n in nodes)
    # A node kept by name but given another target or other inputs counts as removed and added.
    return RunDelta(added + rewired, len(names) + rewired, meta_changed, True, tuple(names))


def _delta_by_name(prev: GraphDump, cur: GraphDump) -> RunDelta:
    a, b = _by_name(prev), _by_name(cur)
    removed = [k for k in a if k not in b]
    added = sum(1 for k in b if k not in a)
    meta_changed = rewired = 0
    for k, n in b.items():
        old = a.get(k)
        if old is None or old is n:  # the same object: a line both dumps share (linememo.LineMemo)
            continue
        m, r = _changed(old, n)
        meta_changed += m
        rewired += r
    # A node kept by name but given another target or other inputs counts as removed and added.
    return RunDelta(added + rewired, len(removed) + rewired, meta_changed, True, tuple(removed))


def meta_changes(al: SectionAlignment) -> list[MetaChange]:
    """Aligned nodes whose metadata differs: ``lost``, ``gained`` or ``changed`` (dtype or concrete shape).
    Only the pairs whose metadata texts differ are looked at."""
    out: list[MetaChange] = []
    B, C = al.b, al.c
    nb, nc = B.section.nodes, C.section.nodes
    i = (al.mb >= 0).nonzero()[0]
    i = i[i >= C.shared]  # the shared leading nodes pair with themselves: same metadata
    j = al.mb[i]
    differ = B.mtext[i] != C.mtext[j]
    for x, y in zip(i[differ].tolist(), j[differ].tolist(), strict=True):
        m = meta_change(nb[x], nc[y], B.meta_key(x), C.meta_key(y))
        if m is not None:
            out.append(m)
    return out


def meta_change(b: GraphNode, c: GraphNode, kb: MetaKey, kc: MetaKey) -> MetaChange | None:
    """How the metadata of the aligned nodes ``b`` and ``c`` differs (``kb``/``kc``: their :func:`meta_key`);
    ``None`` when it does not."""
    mb, mc = b.meta, c.meta
    if mb is None or mc is None or mb is mc or mb == mc:
        return None
    if mb.known and not mc.known:
        kind = MetaChangeKind.LOST
    elif mc.known and not mb.known:
        kind = MetaChangeKind.GAINED
    elif not mb.known or meta_agrees(kb, kc):
        return None
    else:
        kind = MetaChangeKind.CHANGED
    return MetaChange(b.name, c.name, _meta_text(mb), _meta_text(mc), kind)


@dataclass(frozen=True)
class DumpAlignment:
    """What aligning every section of two dumps measures (before telling new differences from inherited)."""

    aligns: Sequence[AlignedSection]
    """What the next transform's hints read of each section's alignment."""
    unmatched: tuple[Unmatched, ...]
    regions: tuple[Region, ...]
    rewired: tuple[tuple[str, str], ...]
    changes: tuple[MetaChange, ...]
    counts: tuple[tuple[MatchKind, int], ...]
    notes: tuple[str, ...]


def align_dumps(db: GraphDump, dc: GraphDump) -> DumpAlignment:
    """Align every section of two dumps (a section present on one side only is unmatched as a whole); split
    sections are compared inlined (:mod:`ad_diff.kinds.graph.splits`)."""
    db, split_b = inline_pieces(db)
    dc, split_c = inline_pieces(dc)
    secs_c = {s.name: s for s in dc.sections}
    secs_b = {s.name: s for s in db.sections}
    kept: list[AlignedSection] = []
    unmatched: list[Unmatched] = []
    regions: list[Region] = []
    rewired: list[tuple[str, str]] = []
    changes: list[MetaChange] = []
    counts: dict[MatchKind, int] = {}
    notes: list[str] = split_notes(split_b, split_c)
    for sb in db.sections:
        sc = secs_c.get(sb.name)
        if sc is None:
            notes.append(f"GraphModule {sb.name} exists in the baseline only")
            unmatched.extend(Unmatched(BASELINE, n.name, n.target, UnmatchedReason.SECTION_MISSING, sb.name)
                             for n in sb.nodes)
            continue
        al = align_sections(sb, sc, db.fmt, dc.fmt)
        kept.append(al.kept())
        for k, v in al.counts().items():
            counts[k] = counts.get(k, 0) + v
        offset = len(regions)
        regions.extend(replace(r, id=r.id + offset) if offset else r for r in al.regions)
        unmatched.extend(replace(u, region=u.region + offset) if u.region is not None and offset else u
                         for u in al.unmatched)
        rewired.extend(al.rewired)
        changes.extend(meta_changes(al))
    for sc in dc.sections:
        if sc.name not in secs_b:
            notes.append(f"GraphModule {sc.name} exists in the candidate only")
            unmatched.extend(Unmatched(CANDIDATE, n.name, n.target, UnmatchedReason.SECTION_MISSING, sc.name)
                             for n in sc.nodes)
    return DumpAlignment(tuple(kept), tuple(unmatched), tuple(regions), tuple(sorted(rewired)),
                         tuple(changes), tuple(sorted((k, v) for k, v in counts.items() if v)), tuple(notes))
