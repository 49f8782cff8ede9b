"""Piecewise splits undone before alignment: the compile stage's split GraphModule is compared as one graph.

With piecewise CUDA graphs, ``compile_model`` splits the graph into submodules (``torch.fx``
``split_module``): the D3 dump then holds the split graph (``monolithic.model``: placeholders, ``submod_N``
calls, ``getitem`` of their results) and one section per piece (``monolithic.model.submod_N``), whose
placeholders are the values that cross a boundary, named after the nodes that made them. Where a run splits
is a compile choice, not a change of what the graph computes: two runs split differently hold the same ops in
other pieces, and pairing pieces by name pairs unrelated boundary inputs (a false shape change). So a split
section is compared inlined: each ``submod_N`` call is replaced by its piece's nodes, the piece's inputs read
what the call read and the ``getitem`` of its results read the piece's outputs. Only the split itself is left
to tell: a note says where the runs' splits differ.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from ad_diff.kinds.graph.model import GraphDump, GraphNode, GraphSection

if TYPE_CHECKING:
    from ad_diff.kinds.graph.diff import TransformGraphDiff

_GETITEM = "<built-in function getitem>"
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


def pieces(dump: GraphDump) -> dict[str, list[str]]:
    """``{split section: its pieces' section names, in call order}`` of one dump (empty when nothing is
    split): a section calls a piece when a call node's target is the piece's name below it."""
    names = {s.name for s in dump.sections}
    out: dict[str, list[str]] = {}
    for sec in dump.sections:
        kids = [f"{sec.name}.{n.target}" for n in sec.nodes
                if n.op == "call" and f"{sec.name}.{n.target}" in names]
        if kids:
            out[sec.name] = kids
    return out


def inline_pieces(dump: GraphDump) -> tuple[GraphDump, dict[str, tuple[int, ...]]]:
    """``dump`` with every split section inlined and its pieces dropped, and for each split section the number
    of call nodes of each piece (the split's shape, compared across runs by :func:`split_notes`)."""
    split = pieces(dump)
    if not split:
        return dump, {}
    by_name = {s.name: s for s in dump.sections}
    dropped = {k for kids in split.values() for k in kids}
    shapes: dict[str, tuple[int, ...]] = {}
    sections: list[GraphSection] = []
    for sec in dump.sections:
        if sec.name in dropped and sec.name not in split:
            continue
        if sec.name in split:
            kids = {k[len(sec.name) + 1:]: by_name[k] for k in split[sec.name]}
            sec = _inline(sec, kids)
            shapes[sec.name] = tuple(sum(1 for n in by_name[k].nodes if n.op == "call")
                                     for k in split[sec.name])
        sections.append(sec)
    return replace(dump, sections=tuple(sections)), shapes


SPLIT_NOTE = "is split into other pieces: "
"""What every note of :func:`split_notes` says (the accounting pass recognises a split-only change by it)."""


def only_split(d: TransformGraphDiff) -> bool:
    """Whether the graphs of a dump pair differ in how they are split into pieces alone: compared inlined,
    no node is unmatched, rewired or changed, and every note is a split note."""
    return (not d.unmatched and not d.regions and not d.rewired and not d.meta_changes and bool(d.notes)
            and all(SPLIT_NOTE in n for n in d.notes))


def split_notes(b: dict[str, tuple[int, ...]], c: dict[str, tuple[int, ...]]) -> list[str]:
    """What differs between the runs' splits (compared inlined, so this is all a changed split shows)."""
    out = []
    for name in sorted(b.keys() & c.keys()):
        if b[name] != c[name]:
            out.append(f"GraphModule {name} {SPLIT_NOTE}{len(b[name])} in the baseline, "
                       f"{len(c[name])} in the candidate (compared as one graph)")
    return out


def _inline(sec: GraphSection, kids: dict[str, GraphSection]) -> GraphSection:
    alias: dict[str, str] = {}  # a name in the split graph or a piece -> the node it stands for
    results: dict[str, list[str]] = {}  # a piece call -> the names of its outputs
    used = {n.name for n in sec.nodes}
    nodes: list[GraphNode] = []
    for n in sec.nodes:
        kid = kids.get(n.target) if n.op == "call" else None
        if kid is not None:
            outs = _splice(kid, n, alias, used, nodes)
            results[n.name] = outs
            if len(outs) == 1:
                alias[n.name] = outs[0]
            continue
        first = n.args[0] if n.args else None
        if (n.target == _GETITEM and first is not None and first.node and first.text in results
                and len(n.args) == 2 and n.args[1].text.isdigit()):
            outs = results[first.text]
            k = int(n.args[1].text)
            if k < len(outs):
                alias[n.name] = outs[k]
                continue
        nodes.append(_rewired(n, alias))
    return GraphSection(sec.name, tuple(nodes))


def _splice(kid: GraphSection, call: GraphNode, alias: dict[str, str], used: set[str],
            nodes: list[GraphNode]) -> list[str]:
    """Append the call nodes of piece ``kid`` (called by ``call``) to ``nodes``; returns its outputs."""
    local: dict[str, str] = {}
    inputs = [n for n in kid.nodes if n.op == "placeholder"]
    for p, a in zip(inputs, call.args, strict=False):
        local[p.name] = alias.get(a.text, a.text) if a.node else a.text
    outs: list[str] = []
    for n in kid.nodes:
        if n.op == "call":
            name = n.name
            k = 1
            while name in used:  # every piece has its own namespace: keep names unique in the inlined graph
                name, k = f"{n.name}__{k}", k + 1
            used.add(name)
            nodes.append(replace(_rewired(n, local), name=name))
            local[n.name] = name
        elif n.op == "output":
            outs = [local.get(a.text, a.text) for a in n.args if a.node]
    return outs


def _rewired(n: GraphNode, alias: dict[str, str]) -> GraphNode:
    """``n`` reading through ``alias`` (references and names inside list literals)."""
    if not alias:
        return n
    args = []
    changed = False
    for a in n.args:
        if a.node and a.text in alias:
            a = replace(a, text=alias[a.text])
            changed = True
        elif a.refs and any(r in alias for r in a.refs):
            a = replace(a, text=_WORD.sub(lambda m: alias.get(m.group(0), m.group(0)), a.text),
                        refs=tuple(alias.get(r, r) for r in a.refs))
            changed = True
        args.append(a)
    return replace(n, args=tuple(args)) if changed else n


__all__ = ["SPLIT_NOTE", "inline_pieces", "only_split", "pieces", "split_notes"]
