"""Measurements on parsed dumps, no verdicts: metadata coverage, per-run deltas, the alignment of two dumps
and the metadata comparison of their aligned nodes."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.kinds.graph.align import AlignedSection, SectionAlignment, align_sections
from ad_diff.kinds.graph.diff import Coverage, MetaChange, MetaChangeKind, RunDelta
from ad_diff.kinds.graph.index import meta_agrees, norm_target
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


def coverage(dump: GraphDump) -> Coverage:
    """Share of nodes (placeholders, calls) and of ``%name`` arguments with known metadata."""
    nk = nt = ak = at = 0
    by_target: dict[str, list[int]] = {}
    unknown = UNKNOWN_DTYPES  # NodeMeta.known, inlined: this loop visits every node and argument
    for sec in dump.sections:
        for n in sec.nodes:
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
                counts[0 if known else 1] += 1
            for a in n.args:
                if a.node:
                    at += 1
                    # D1 arguments carry no metadata at all: they count as unknown only if D2/D3.
                    if a.meta is None or a.meta.dtype not in unknown:
                        ak += 1
    merged: dict[str, list[int]] = {}  # addresses in Python targets differ per process: merge them
    for t, (k, u) in by_target.items():
        counts = merged.setdefault(norm_target(t), [0, 0])
        counts[0] += k
        counts[1] += u
    return Coverage(nk, nt, ak, at, tuple((t, k, u) for t, (k, u) in sorted(merged.items())))


def _meta_text(m: NodeMeta | None) -> str:
    if m is None:
        return "-"
    return m.dtype if m.shape is None else f"{m.shape} : {m.dtype}"


NodeTable = dict[str, GraphNode]
"""A dump's nodes by ``section/name`` (root nodes by name alone): how one run's consecutive dumps meet."""


def node_table(dump: GraphDump) -> NodeTable:
    """``section/name -> node`` for within-run comparison."""
    out: NodeTable = {}
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


def run_delta(
    prev: GraphDump | None,
    cur: GraphDump,
    same_bytes: bool,
    tables: dict[bytes, NodeTable] | None = None,
    keys: tuple[bytes, bytes] = (b"", b""),
) -> RunDelta:
    """What the transform did to one run: nodes added/removed by name, metadata changed on kept nodes.

    ``tables`` (owned by the caller) with ``keys`` = the body digests of ``prev`` and ``cur`` lets
    consecutive calls reuse the node table of the previous dump instead of building it twice.
    """
    if same_bytes:
        return RunDelta(0, 0, 0, False)
    if prev is None:
        return RunDelta(0, 0, 0, True, first=True)
    if tables is None:
        a, b = node_table(prev), node_table(cur)
    else:
        got = tables.get(keys[0])
        a = got if got is not None else node_table(prev)
        b = node_table(cur)
        tables.clear()  # only the latest dump's table is ever asked for again
        tables[keys[1]] = b
    removed = [k for k in a if k not in b]
    added = sum(1 for k in b if k not in a)
    meta_changed = 0
    rewired = 0
    for k, n in b.items():
        old = a.get(k)
        if old is None or old is n:  # the same object: a line both dumps share (parse.LineMemo)
            continue
        if old.meta is not n.meta and old.meta != n.meta:
            meta_changed += 1
        if old.target != n.target or not _same_wiring(old.args, n.args):
            rewired += 1
    # A node kept by name but given another target or other inputs counts as removed and added.
    return RunDelta(added + rewired, len(removed) + rewired, meta_changed, True, tuple(removed))


def meta_changes(al: SectionAlignment) -> list[MetaChange]:
    """Aligned nodes whose metadata differs: ``lost``, ``gained`` or ``changed`` (dtype or concrete shape)."""
    out: list[MetaChange] = []
    nb, nc = al.b.section.nodes, al.c.section.nodes
    kb, kc = al.b.metas, al.c.metas
    for i in range(al.c.shared, len(al.mb)):  # the shared leading nodes pair with themselves: same metadata
        j = al.mb[i]
        if j < 0:
            continue
        mb, mc = nb[i].meta, nc[j].meta
        if mb is None or mc is None or mb is mc or mb == mc:
            continue
        if mb.known and not mc.known:
            kind = MetaChangeKind.LOST
        elif mc.known and not mb.known:
            kind = MetaChangeKind.GAINED
        elif not mb.known or meta_agrees(kb[i], kc[j]):
            continue
        else:
            kind = MetaChangeKind.CHANGED
        out.append(MetaChange(nb[i].name, nc[j].name, _meta_text(mb), _meta_text(mc), kind))
    return out


@dataclass(frozen=True)
class DumpAlignment:
    """What aligning every section of two dumps measures (before telling new differences from inherited)."""

    aligns: list[AlignedSection]
    """What the next transform's hints read of each section's alignment."""
    unmatched: tuple[Unmatched, ...]
    regions: tuple[Region, ...]
    rewired: tuple[tuple[str, str], ...]
    changes: tuple[MetaChange, ...]
    counts: tuple[tuple[MatchKind, int], ...]
    notes: tuple[str, ...]


def align_dumps(db: GraphDump, dc: GraphDump) -> DumpAlignment:
    """Align every section of two dumps (a section present on one side only is unmatched as a whole)."""
    secs_c = {s.name: s for s in dc.sections}
    secs_b = {s.name: s for s in db.sections}
    aligns: list[AlignedSection] = []
    unmatched: list[Unmatched] = []
    regions: list[Region] = []
    rewired: list[tuple[str, str]] = []
    changes: list[MetaChange] = []
    counts: dict[MatchKind, int] = {}
    notes: list[str] = []
    for sb in db.sections:
        sc = secs_c.get(sb.name)
        if sc is None:
            notes.append(f"GraphModule {sb.name} exists in the baseline only")
            unmatched.extend(Unmatched(BASELINE, n.name, n.target, UnmatchedReason.SECTION_MISSING, sb.name)
                             for n in sb.nodes)
            continue
        al = align_sections(sb, sc, db.fmt, dc.fmt)
        aligns.append(al.kept())
        for k, v in al.counts().items():
            counts[k] = counts.get(k, 0) + v
        offset = len(regions)
        regions.extend(replace(r, id=r.id + offset) for r in al.regions)
        unmatched.extend(replace(u, region=u.region + offset) if u.region is not None else u
                         for u in al.unmatched)
        rewired.extend(al.rewired)
        changes.extend(meta_changes(al))
    for sc in dc.sections:
        if sc.name not in secs_b:
            notes.append(f"GraphModule {sc.name} exists in the candidate only")
            unmatched.extend(Unmatched(CANDIDATE, n.name, n.target, UnmatchedReason.SECTION_MISSING, sc.name)
                             for n in sc.nodes)
    return DumpAlignment(aligns, tuple(unmatched), tuple(regions), tuple(sorted(rewired)), tuple(changes),
                         tuple(sorted(counts.items())), tuple(notes))
