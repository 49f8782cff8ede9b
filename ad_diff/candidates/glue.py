"""Layout glue next to attention/RoPE (step 4 of the scan)."""

from __future__ import annotations

from ad_diff.candidates.graphview import Section
from ad_diff.core.graphops import UnionFind, op_name

ATTN_KINDS = frozenset({"attention", "rope"})



def layout_chains(s: Section, used: set[str]) -> list[list[str]]:
    """Single-consumer chains of layout nodes next to an attention/RoPE op (step 4)."""
    order = [n for n, k in s.kinds.items() if k == "layout" and n not in used]
    layout = set(order)
    uf: UnionFind[str] = UnionFind()
    for u in order:
        us = s.users[u]
        if len(us) == 1 and us[0] in layout and u not in s.outputs:
            uf.union(u, us[0])
    groups: dict[str, list[str]] = {}
    for u in order:
        groups.setdefault(uf.find(u), []).append(u)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        inside = set(members)
        near = {s.kinds.get(x) for n in members for x in s.neighbours(n) if x not in inside}
        if near & ATTN_KINDS:
            out.append(sorted(members, key=s.order.__getitem__))
    return out


def layout_description(s: Section, chain: list[str]) -> str:
    """What the chain is (two transposes that cancel, or glue a kernel could absorb)."""
    targets = [s.nodes[n] for n in chain]
    for a, b in zip(targets, targets[1:], strict=False):
        if op_name(a.target) == op_name(b.target) == "transpose" and [x.text for x in a.args[1:]] == [
            x.text for x in b.args[1:]
        ]:
            return "layout glue next to attention/RoPE, including two transposes that cancel"
    return "layout glue next to attention/RoPE (a kernel taking the other layout would absorb it)"
