"""The match chain's later steps (:mod:`ad_diff.kinds.graph.align`), over the few nodes the steps before
leave unmatched: propagation rounds (nodes keyed by their target, literals and the pairs of their matched
inputs, then users) and the sequence step (what remains between two matched anchors, aligned by target
sequence). Each visits the unmatched nodes one at a time; they read the packed index only for those."""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from ad_diff.core import lazy
from ad_diff.kinds.graph.index import GraphIndex, meta_agrees
from ad_diff.kinds.graph.model import MatchKind
from ad_diff.kinds.graph.packed import gather, machine

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ad_diff.kinds.graph.aligned import SectionAlignment
else:
    np = lazy.module("numpy")

NodeKey = Callable[[int], object]
"""A node's matching key within its graph (nodes of both runs with one unique key are paired)."""

MAX_SEGMENT = 2000
"""Longest run of unmatched nodes (per side) given to sequence alignment; longer ones stay unmatched."""
_SCOPE = re.compile(r"^(.*?layers?_\d+)_")


def scope_of(name: str) -> str | None:
    """The module scope encoded in an AD node name (``model_layers_3_..`` -> ``model_layers_3``)."""
    m = _SCOPE.match(name)
    return m.group(1) if m else None


def propagate(al: SectionAlignment, rounds: int = 12) -> None:
    """Match nodes by target, literals and the pair ids of matched inputs (then users), until no progress."""
    B, C = al.b, al.c
    # The pairing as machine integers: a list of every node's partner was an int object a node, and with
    # the columns below as whole lists these were this alignment's peak memory (14 MB on a MoE pair).
    mb, mc = machine(al.mb), machine(al.mc)
    # The unmatched nodes, found once and narrowed as pairs are made: a round looks at them alone, not at
    # every node again (up to 24 passes over a 75,000-node section cost a MoE pair a second).
    fb, fc = np.flatnonzero(al.mb < 0), np.flatnonzero(al.mc < 0)
    free = (fb.tolist(), fc.tolist())
    # Their inputs and users as lists (only theirs: every node's would be most of a MoE pair's memory).
    in_b, in_c = rows_of(B.in_ptr, B.in_src, fb), rows_of(C.in_ptr, C.in_src, fc)
    us_b, us_c = _users(B, fb), _users(C, fc)
    # Target, literal and external-name ids are read of the unmatched nodes alone: theirs only, by node.
    tb, lb, eb = (_column(col, fb) for col in (B.tid, B.lits, B.ext))
    tc, lc, ec = (_column(col, fc) for col in (C.tid, C.lits, C.ext))

    def fwd_b(i: int) -> object:
        ins = tuple(k if mb[k] >= 0 else -1 for k in in_b[i])
        return (tb[i], lb[i], ins, eb[i]) if any(k >= 0 for k in ins) else ("-", i)

    def fwd_c(j: int) -> object:
        ins = tuple(mc[k] for k in in_c[j])
        return (tc[j], lc[j], ins, ec[j]) if any(k >= 0 for k in ins) else ("+", j)

    def bwd_b(i: int) -> object:
        us = tuple(sorted((u, k) for u, k in us_b[i] if mb[u] >= 0))
        return (tb[i], lb[i], us) if us else ("-", i)

    def bwd_c(j: int) -> object:
        us = tuple(sorted((mc[u], k) for u, k in us_c[j] if mc[u] >= 0))
        return (tc[j], lc[j], us) if us else ("+", j)

    made: list[tuple[int, int]] = []
    for _ in range(rounds):
        n = _unique2(mb, mc, fwd_b, fwd_c, free, made)
        n += _unique2(mb, mc, bwd_b, bwd_c, free, made)
        if not n:
            break
    if made:
        got = np.array(made, dtype=np.intp)
        al.pair(got[:, 0], got[:, 1], MatchKind.STRUCTURAL)


def _column(col: NDArray[np.int64], rows: NDArray[np.intp]) -> dict[int, int]:
    """``col``'s values at ``rows``, by row."""
    return dict(zip(rows.tolist(), col[rows].tolist(), strict=True))


def _users(x: GraphIndex, rows: NDArray[np.intp]) -> dict[int, list[tuple[int, int]]]:
    """Who reads each node of ``rows`` and at which argument, by node."""
    nodes, args = rows_of(x.us_ptr, x.us_node, rows), rows_of(x.us_ptr, x.us_arg, rows)
    return {i: list(zip(u, args[i], strict=True)) for i, u in nodes.items()}


def rows_of(ptr: NDArray[np.intp], values: NDArray[np.intp], rows: NDArray[np.intp]) -> dict[int, list[int]]:
    """The packed rows ``rows`` as lists, by row."""
    flat = gather(ptr, values, rows)[0].tolist()
    out: dict[int, list[int]] = {}
    at = 0
    for r, n in zip(rows.tolist(), (ptr[rows + 1] - ptr[rows]).tolist(), strict=True):
        out[r] = flat[at:at + n]
        at += n
    return out


def _unique2(mb: array[int], mc: array[int], key_b: NodeKey, key_c: NodeKey,
             free: tuple[list[int], list[int]], made: list[tuple[int, int]]) -> int:
    """Pair the nodes of ``free`` (each side's unmatched nodes, in dump order; narrowed here to those still
    unmatched) whose key is unique among them on each side (the pairs go into ``mb``/``mc`` and ``made``)."""
    free[0][:] = [i for i in free[0] if mb[i] < 0]
    free[1][:] = [j for j in free[1] if mc[j] < 0]
    kb: dict[object, int] = {}
    for i in free[0]:
        k = key_b(i)
        kb[k] = -1 if k in kb else i
    n = 0
    kc: dict[object, int] = {}
    for j in free[1]:
        k = key_c(j)
        kc[k] = -1 if k in kc else j
    for k, j in kc.items():
        if j >= 0:
            i = kb.get(k, -1)
            if i >= 0 and mb[i] < 0:
                mb[i], mc[j] = j, i
                made.append((i, j))
                n += 1
    return n


def _segments(m: NDArray[np.intp], to_b: bool) -> dict[int, list[int]]:
    """Unmatched positions grouped by the (baseline index of the) last matched node before them."""
    free = np.flatnonzero(m < 0)
    if not len(free):
        return {}
    at = np.where(m >= 0, np.arange(len(m)), -1)
    last = np.maximum.accumulate(at)[free]  # the last matched position before each unmatched one
    anchor = np.where(last >= 0, m[np.maximum(last, 0)] if to_b else last, -1)
    out: dict[int, list[int]] = {}
    for a, p in zip(anchor.tolist(), free.tolist(), strict=True):
        out.setdefault(a, []).append(p)
    return out


def sequence(al: SectionAlignment) -> None:
    """Step 4: what remains between the same two matched anchors, aligned by target sequence (``difflib``),
    never across module scopes and never two nodes of different known shapes."""
    B, C = al.b, al.c
    seg_b = _segments(al.mb, to_b=False)
    seg_c = _segments(al.mc, to_b=True)
    made: list[tuple[int, int]] = []
    for anchor, bs in seg_b.items():
        cs = seg_c.get(anchor)
        if not cs or len(bs) > MAX_SEGMENT or len(cs) > MAX_SEGMENT:
            continue
        sm = SequenceMatcher(None, [B.target(i) for i in bs], [C.target(j) for j in cs], autojunk=False)
        for blk in sm.get_matching_blocks():
            for t in range(blk.size):
                i, j = bs[blk.a + t], cs[blk.b + t]
                sb, sc = scope_of(B.names[i]), scope_of(C.names[j])
                if sb is not None and sc is not None and sb != sc:
                    continue
                if B.op[i] == C.op[j] and meta_agrees(B.meta_key(i), C.meta_key(j)):
                    made.append((i, j))
    if made:
        got = np.array(made, dtype=np.intp)
        al.pair(got[:, 0], got[:, 1], MatchKind.SEQUENCE)
