"""Measurements on parsed dumps, no verdicts: metadata coverage, per-run deltas, metadata comparison."""

from __future__ import annotations

import re

from ad_diff.kinds.graph.align import SectionAlignment
from ad_diff.kinds.graph.model import Coverage, GraphDump, MetaChange, MetaChangeKind, NodeMeta, RunDelta

_SYM = re.compile(r"\bs\d+\b")


def coverage(dump: GraphDump) -> Coverage:
    """Share of nodes (placeholders, calls) and of ``%name`` arguments with known metadata."""
    nk = nt = ak = at = 0
    for sec in dump.sections:
        for n in sec.nodes:
            if n.meta is None:
                continue
            nt += 1
            if n.meta.known:
                nk += 1
            for a in n.args:
                if a.node:
                    at += 1
                    # D1 arguments carry no metadata at all: they count as unknown only if D2/D3.
                    if a.meta is None or a.meta.known:
                        ak += 1
    return Coverage(nk, nt, ak, at)


def _meta_text(m: NodeMeta | None) -> str:
    if m is None:
        return "-"
    return m.dtype if m.shape is None else f"{m.shape} : {m.dtype}"


def node_table(dump: GraphDump) -> dict[str, tuple[str, str, NodeMeta | None, tuple[object, ...]]]:
    """``section/name -> (target, line-free args text, meta, args)`` for within-run comparison."""
    out: dict[str, tuple[str, str, NodeMeta | None, tuple[object, ...]]] = {}
    for sec in dump.sections:
        prefix = "" if sec.name == "(root)" else sec.name + "/"
        for n in sec.nodes:
            out[prefix + n.name] = (n.target, "", n.meta, tuple((a.text, a.node, a.refs) for a in n.args))
    return out


NodeTable = dict[str, tuple[str, str, NodeMeta | None, tuple[object, ...]]]


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
    for k, (t, _, m, args) in b.items():
        old = a.get(k)
        if old is None:
            continue
        if old[2] != m:
            meta_changed += 1
        if old[0] != t or old[3] != args:
            rewired += 1
    # A node kept by name but given another target or other inputs counts as removed and added.
    return RunDelta(added + rewired, len(removed) + rewired, meta_changed, True, tuple(removed))


def _norm_shape(shape: str | None) -> str | None:
    return None if shape is None else _SYM.sub("s?", shape)


def meta_changes(al: SectionAlignment) -> list[MetaChange]:
    """Aligned nodes whose metadata differs: ``lost``, ``gained`` or ``changed`` (dtype or concrete shape)."""
    out: list[MetaChange] = []
    nb, nc = al.b.section.nodes, al.c.section.nodes
    for i, j in enumerate(al.mb):
        if j < 0:
            continue
        mb, mc = nb[i].meta, nc[j].meta
        if mb is None or mc is None or mb == mc:
            continue
        if mb.known and not mc.known:
            kind = MetaChangeKind.LOST
        elif mc.known and not mb.known:
            kind = MetaChangeKind.GAINED
        elif not mb.known:
            continue
        elif mb.dtype != mc.dtype or (
            mb.shape is not None and mc.shape is not None and _norm_shape(mb.shape) != _norm_shape(mc.shape)
        ):
            kind = MetaChangeKind.CHANGED
        else:
            continue
        out.append(MetaChange(nb[i].name, nc[j].name, _meta_text(mb), _meta_text(mc), kind))
    return out
