"""Rewritten regions: the unmatched nodes of a section alignment grouped (the last part of the chain in
:mod:`ad_diff.kinds.graph.align`).

A region is the connected unmatched nodes of both runs that share the matched frontier around them: a fusion
is many-to-one, so it is one region, not a list of adds and removes. Graph inputs and matched nodes with many
users border every region, so they tie none together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.kinds.graph.index import PLACEHOLDER
from ad_diff.kinds.graph.model import Region, Unmatched
from ad_diff.kinds.graph.render import render_node

if TYPE_CHECKING:
    from ad_diff.kinds.graph.aligned import SectionAlignment

MAX_FRONTIER_FANOUT = 16
"""Matched nodes with more users than this (placeholders, sym sizes) do not tie regions together."""
MAX_REGION_LINES = 60
"""Dump lines of each side kept per region for the report."""


def group_regions(al: SectionAlignment, fmt_b: str, fmt_c: str) -> None:
    """Group the unmatched nodes of ``al`` into regions: connected unmatched nodes of both runs that share the
    matched frontier around them (fills ``al.regions`` and ``al.unmatched``; see the module docstring).
    Only the unmatched nodes and their neighbours are visited."""
    B, C = al.b, al.c
    free_b = (al.mb < 0).nonzero()[0].tolist()
    free_c = (al.mc < 0).nonzero()[0].tolist()
    if not free_b and not free_c:
        return
    mb, mc = al.mb.tolist(), al.mc.tolist()
    nb = len(B)
    parent = {x: x for x in (*free_b, *(nb + j for j in free_c))}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(x: int, y: int) -> None:
        rx, ry = find(x), find(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)

    via: dict[int, int] = {}  # frontier pair (baseline index) -> first unmatched node touching it
    frontier: dict[int, set[int]] = {}
    up_b, placeholder = B.us_ptr.tolist(), B.op.tolist()

    def touch(node: int, pair_b: int) -> None:
        frontier.setdefault(node, set()).add(pair_b)
        # Graph inputs and widely shared nodes border every region; tying through them would merge all.
        if placeholder[pair_b] == PLACEHOLDER or up_b[pair_b + 1] - up_b[pair_b] > MAX_FRONTIER_FANOUT:
            return
        first = via.setdefault(pair_b, node)
        if first != node:
            union(first, node)

    for i in free_b:
        for x in B.inputs_of(i):
            union(i, x) if mb[x] < 0 else touch(i, x)
        for u, _ in B.users_of(i):
            union(i, u) if mb[u] < 0 else touch(i, u)
    for j in free_c:
        for y in C.inputs_of(j):
            union(nb + j, nb + y) if mc[y] < 0 else touch(nb + j, mc[y])
        for u, _ in C.users_of(j):
            union(nb + j, nb + u) if mc[u] < 0 else touch(nb + j, mc[u])
    groups: dict[int, list[int]] = {}
    for x in [*free_b, *(nb + j for j in free_c)]:
        groups.setdefault(find(x), []).append(x)
    for rid, root in enumerate(sorted(groups)):
        members = groups[root]
        bs = [x for x in members if x < nb]
        cs = [x - nb for x in members if x >= nb]
        fr = sorted({(B.names[p], C.names[mb[p]]) for x in members for p in frontier.get(x, ())})
        region = Region(
            id=rid,
            section=al.section,
            baseline=tuple(B.names[i] for i in bs),
            candidate=tuple(C.names[j] for j in cs),
            frontier=tuple(fr),
            baseline_lines=tuple(render_node(B.section.nodes[i], fmt_b) for i in bs[:MAX_REGION_LINES]),
            candidate_lines=tuple(render_node(C.section.nodes[j], fmt_c) for j in cs[:MAX_REGION_LINES]),
        )
        al.regions.append(region)
        reason = region.kind
        sec = al.section
        al.unmatched.extend(Unmatched(BASELINE, B.names[i], B.target(i), reason, sec, rid) for i in bs)
        al.unmatched.extend(Unmatched(CANDIDATE, C.names[j], C.target(j), reason, sec, rid) for j in cs)
