"""Rewritten regions: the unmatched nodes of a section alignment grouped (the last part of the chain in
:mod:`ad_diff.kinds.graph.align`).

A region is the connected unmatched nodes of both runs that share the matched frontier around them: a fusion
is many-to-one, so it is one region, not a list of adds and removes. Graph inputs and matched nodes with many
users border every region, so they tie none together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.kinds.graph.index import USER_SHIFT
from ad_diff.kinds.graph.model import Region, Unmatched
from ad_diff.kinds.graph.render import render_node

if TYPE_CHECKING:
    from ad_diff.kinds.graph.align import SectionAlignment

MAX_FRONTIER_FANOUT = 16
"""Matched nodes with more users than this (placeholders, sym sizes) do not tie regions together."""
MAX_REGION_LINES = 60
"""Dump lines of each side kept per region for the report."""


def group_regions(al: SectionAlignment, fmt_b: str, fmt_c: str) -> None:
    """Group the unmatched nodes of ``al`` into regions: connected unmatched nodes of both runs that share the
    matched frontier around them (fills ``al.regions`` and ``al.unmatched``; see the module docstring)."""
    B, C, mb, mc = al.b, al.c, al.mb, al.mc
    nb = len(B)
    parent = list(range(nb + len(C)))

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

    def touch(node: int, pair_b: int) -> None:
        frontier.setdefault(node, set()).add(pair_b)
        # Graph inputs and widely shared nodes border every region; tying through them would merge all.
        if B.section.nodes[pair_b].op == "placeholder" or len(B.users[pair_b]) > MAX_FRONTIER_FANOUT:
            return
        first = via.setdefault(pair_b, node)
        if first != node:
            union(first, node)

    for i in range(nb):
        if mb[i] >= 0:
            continue
        for x in B.inputs[i]:
            union(i, x) if mb[x] < 0 else touch(i, x)
        for x in B.users[i]:
            u = x >> USER_SHIFT
            union(i, u) if mb[u] < 0 else touch(i, u)
    for j in range(len(C)):
        if mc[j] >= 0:
            continue
        for y in C.inputs[j]:
            union(nb + j, nb + y) if mc[y] < 0 else touch(nb + j, mc[y])
        for y in C.users[j]:
            u = y >> USER_SHIFT
            union(nb + j, nb + u) if mc[u] < 0 else touch(nb + j, mc[u])
    groups: dict[int, list[int]] = {}
    for x in [i for i in range(nb) if mb[i] < 0] + [nb + j for j in range(len(C)) if mc[j] < 0]:
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
        al.unmatched.extend(Unmatched(BASELINE, B.names[i], B.targets[i], reason, sec, rid) for i in bs)
        al.unmatched.extend(Unmatched(CANDIDATE, C.names[j], C.targets[j], reason, sec, rid) for j in cs)
