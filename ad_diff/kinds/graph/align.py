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
Steps 1-3 are array work over both sections' packed indexes (:mod:`ad_diff.kinds.graph.index`): a unique
key is found by sorting the keys of both sides together (``lexsort``), not by a dict per node. Two parts
stay a visit per node, each over the few nodes it concerns: the ``exact`` step's confirmation through
inputs that are exact pairs themselves (a chain in dump order, over the same-name pairs whose signatures
differ), and the propagation rounds (over the nodes still unmatched). Only ``sequence`` is quadratic, and
only inside one segment between anchors, which is capped.
"""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING

from ad_diff.core import lazy
from ad_diff.core.gcpause import paused_gc
from ad_diff.kinds.graph.aligned import SectionAlignment
from ad_diff.kinds.graph.index import (
    CALL,
    OUTPUT,
    GraphIndex,
    has_counter,
    meta_agrees,
)
from ad_diff.kinds.graph.model import GraphSection, MatchKind, NodePair
from ad_diff.kinds.graph.names import STRIPPED
from ad_diff.kinds.graph.packed import gather, unique_pairs
from ad_diff.kinds.graph.regions import group_regions
from ad_diff.kinds.graph.rounds import MAX_SEGMENT as MAX_SEGMENT  # re-exported: the chain's settings
from ad_diff.kinds.graph.rounds import propagate, rows_of, sequence
from ad_diff.kinds.graph.rounds import scope_of as scope_of  # re-exported: callers name AD module scopes

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = lazy.module("numpy")

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
    B, C = al.b, al.c
    # No step after ``exact`` looks a node up by name: the two name -> position dicts (about 5 MB each on a
    # 75,000-node section, its int objects included) go before the propagation rounds, the alignment's peak.
    B.drop_positions()
    C.drop_positions()
    base_b, base_c = _bases(B, al.mb), _bases(C, al.mc)
    _unique(al, MatchKind.RENAMED, (base_b, B.tid, B.fwd), (base_c, C.tid, C.fwd))
    _unique(al, MatchKind.RENAMED, (base_b, B.tid, B.bwd), (base_c, C.tid, C.bwd))
    _unique(al, MatchKind.STRUCTURAL, (B.tid, B.fwd), (C.tid, C.fwd))
    _unique(al, MatchKind.STRUCTURAL, (B.tid, B.bwd), (C.tid, C.bwd))
    propagate(al)
    sequence(al)
    propagate(al)


def identical_alignment(sec: GraphSection) -> list[NodePair]:
    """Pairs for byte-identical dumps (no alignment work)."""
    return [NodePair(n.name, n.name, MatchKind.IDENTICAL, sec.name) for n in sec.nodes]


def _agree(B: GraphIndex, i: NDArray[np.intp], C: GraphIndex, j: NDArray[np.intp]) -> NDArray[np.bool_]:
    """:func:`meta_agrees` of the pairs ``(i, j)``, element-wise."""
    sb, sc = B.mshape[i], C.mshape[j]
    same = (B.mdtype[i] == C.mdtype[j]) & ((sb < 0) | (sc < 0) | (sb == sc))
    out: NDArray[np.bool_] = ~B.mknown[i] | ~C.mknown[j] | same
    return out


def _exact(al: SectionAlignment) -> None:
    """Same-name pairs that the structure confirms (see the module docstring). A pair is confirmed by equal
    forward signatures, or by inputs that are exact pairs themselves at the same argument positions: that
    second test is a chain in dump order (an input's own decision comes first), so it is made by a visit per
    pair, for the pairs whose signatures differ and whose inputs could be such pairs.

    The leading nodes both sections share (:attr:`GraphIndex.shared`) pair with themselves without a look:
    each has its own name at its own position on both sides (no name repeats there), the same target,
    metadata, inputs and forward signature, which is everything this step compares."""
    B, C = al.b, al.c
    shared = C.shared
    if shared:
        al.pair(np.arange(shared), np.arange(shared), MatchKind.EXACT)
    if not (B.unique and C.unique):
        _exact_by_name(al)
        return
    nc = len(C)
    jj = np.arange(shared, nc)
    ii = np.fromiter(map(B.pos.get, C.names[shared:], repeat(-1)), np.intp, nc - shared)
    keep = ii >= 0
    jj, ii = jj[keep], ii[keep]
    keep = (B.tid[ii] == C.tid[jj]) & (al.mb[ii] < 0)
    jj, ii = jj[keep], ii[keep]
    agree = _agree(B, ii, C, jj)
    op = C.op[jj]
    call = op == CALL
    ok = ~call & agree
    for q in np.flatnonzero(~call & ~agree).tolist():  # a placeholder's own name is its identity ...
        ok[q] = op[q] == OUTPUT or not has_counter(C.names[jj[q]])  # ... unless it is a counter name
    nin_b, nin_c = B.in_ptr[ii + 1] - B.in_ptr[ii], C.in_ptr[jj + 1] - C.in_ptr[jj]
    base = call & agree & (nin_b == nin_c) & (B.lits[ii] == C.lits[jj]) & (B.ext[ii] == C.ext[jj])
    same_sig = B.fwd[ii] == C.fwd[jj]
    ok |= base & same_sig
    pend = np.flatnonzero(base & ~same_sig)
    if len(pend):
        # Each input must be the partner, by name, of the baseline's input at its position ...
        partner = np.full(nc, -2, dtype=np.intp)
        partner[:shared] = np.arange(shared)
        partner[jj] = ii
        ys, row = gather(C.in_ptr, C.in_src, jj[pend])
        xs, _ = gather(B.in_ptr, B.in_src, ii[pend])
        wrong = np.bincount(row[partner[ys] != xs], minlength=len(pend)) > 0
        pend = pend[~wrong]
        # ... and paired by this step: decided in dump order, every input before its readers.
        done = np.zeros(nc, dtype=bool)
        done[:shared] = True
        done[jj[ok]] = True
        okl = done.tolist()
        get = okl.__getitem__
        rows = jj[pend]
        ins = rows_of(C.in_ptr, C.in_src, rows)  # (only these nodes' inputs, as lists)
        for j in rows.tolist():
            okl[j] = all(map(get, ins[j]))
        ok[pend] = np.array(okl, dtype=bool)[rows]
    al.pair(ii[ok], jj[ok], MatchKind.EXACT)


def _exact_by_name(al: SectionAlignment) -> None:
    """:func:`_exact` where a name repeats in either section: candidate nodes one at a time, in dump order
    (a baseline node takes the first candidate of its name that the structure confirms)."""
    B, C = al.b, al.c
    mb = al.mb.tolist()
    pairs: list[tuple[int, int]] = []
    in_b, in_c = (B.in_ptr.tolist(), B.in_src.tolist()), (C.in_ptr.tolist(), C.in_src.tolist())
    tb, tc, lb, lc, eb, ec = (B.tid.tolist(), C.tid.tolist(), B.lits.tolist(), C.lits.tolist(),
                              B.ext.tolist(), C.ext.tolist())
    fb, fc, ops = B.fwd.tolist(), C.fwd.tolist(), C.op.tolist()
    for j in range(C.shared, len(C)):
        name = C.names[j]
        i = B.pos.get(name)
        if i is None or tb[i] != tc[j] or mb[i] != -1:
            continue
        agree = meta_agrees(B.meta_key(i), C.meta_key(j))
        if ops[j] != CALL:
            if agree or ops[j] == OUTPUT or not has_counter(name):
                mb[i] = j
                pairs.append((i, j))
            continue
        ib, ic = in_b[1][in_b[0][i]:in_b[0][i + 1]], in_c[1][in_c[0][j]:in_c[0][j + 1]]
        if not agree or len(ib) != len(ic) or lb[i] != lc[j] or eb[i] != ec[j]:
            continue
        if fb[i] == fc[j] or [mb[x] for x in ib] == ic:
            mb[i] = j
            pairs.append((i, j))
    if pairs:
        got = np.array(pairs, dtype=np.intp)
        al.pair(got[:, 0], got[:, 1], MatchKind.EXACT)


def _bases(x: GraphIndex, m: NDArray[np.intp]) -> NDArray[np.int64]:
    """Id of each node's name without its counter, for the nodes still unmatched (-1 for the others)."""
    out = np.full(len(m), -1, dtype=np.int64)
    free = np.flatnonzero(m < 0)
    out[free] = np.fromiter(map(x.ids.__getitem__, map(STRIPPED.__getitem__, map(x.names.__getitem__,
                                                                                  free.tolist()))),
                            np.int64, len(free))
    return out


def _unique(al: SectionAlignment, kind: MatchKind, cols_b: tuple[NDArray[np.int64], ...],
            cols_c: tuple[NDArray[np.int64], ...]) -> int:
    """Pair unmatched nodes whose key (their values in the columns ``cols_*``, one array per key part) is
    unique among the unmatched nodes of each side."""
    free_b, free_c = np.flatnonzero(al.mb < 0), np.flatnonzero(al.mc < 0)
    b, c = unique_pairs([col[free_b] for col in cols_b], [col[free_c] for col in cols_c])
    al.pair(free_b[b], free_c[c], kind)
    return len(b)


def _rewired(al: SectionAlignment) -> None:
    """Aligned pairs that read other inputs or literals (``al.rewired``, in baseline order). Reading a
    *twin* of the counterpart's input is no rewiring: two nodes of one run with equal forward signatures
    compute the same value (``unsqueeze`` of ``cos`` in every layer), and which of them a name pairs with is
    chance (a rename deals the name to the other)."""
    B, C, mb = al.b, al.c, al.mb
    i = np.flatnonzero(mb >= 0)
    i = i[i >= C.shared]  # the shared leading nodes read the same paired inputs: see _exact
    j = mb[i]
    same_len = (B.in_ptr[i + 1] - B.in_ptr[i]) == (C.in_ptr[j + 1] - C.in_ptr[j])
    flagged = ~same_len | (B.lits[i] != C.lits[j]) | (B.ext[i] != C.ext[j])
    rows = np.flatnonzero(~flagged)
    xs, row = gather(B.in_ptr, B.in_src, i[rows])
    ys, _ = gather(C.in_ptr, C.in_src, j[rows])
    got = mb[xs]  # the candidate nodes the baseline inputs are paired with
    other = (got >= 0) & (got != ys) & (C.fwd[np.maximum(got, 0)] != C.fwd[ys])
    flagged[rows[np.unique(row[other])]] = True
    names_b, names_c = B.names, C.names
    al.rewired.extend((names_b[x], names_c[y]) for x, y in zip(i[flagged].tolist(), j[flagged].tolist(),
                                                                strict=True))
