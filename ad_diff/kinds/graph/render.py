"""Graph dumps written back as text, in the layout AD writes (D1, D2, D3): the inverse of
:mod:`ad_diff.kinds.graph.parse` (``parse(render(d)) == d``), and one SSA line for a report's region excerpt.
"""

from __future__ import annotations

from ad_diff.kinds.graph.model import Arg, GraphDump, GraphNode
from ad_diff.kinds.graph.parse import SEP


def render_node(node: GraphNode, fmt: str) -> str:
    """One SSA line in format ``fmt``."""
    d1 = fmt == "D1"
    if node.op == "output":
        if not node.args:
            return "output"
        return "output " + ", ".join(("%" + a.text) if a.node else a.text for a in node.args)
    meta = node.meta
    assert meta is not None
    tail = meta.dtype if d1 else f"{meta.shape} : {meta.dtype}"
    if node.op == "placeholder":
        return f"%{node.name} : {tail}"
    args = ", ".join(_render_arg(a, d1) for a in node.args)
    return f"%{node.name} = {node.target}({args}) : {tail}"


def _render_arg(a: Arg, d1: bool) -> str:
    if not a.node:
        return a.text
    if d1 or a.meta is None:
        return "%" + a.text
    return f"%{a.text} : {a.meta.shape} : {a.meta.dtype}"


def render(dump: GraphDump) -> str:
    """Write ``dump`` back as text in its own format (the layout AD writes)."""
    out = [f"# Transform: {dump.transform}", f"# Stage: {dump.stage}"]
    if dump.fmt == "D3":
        out += [f"# GraphModules found: {len(dump.sections)}", ""]
        for sec in dump.sections:
            out += ["", SEP, f"# GraphModule: {sec.name}", SEP, ""]
            out += [render_node(n, "D3") for n in sec.nodes]
    else:
        out.append("")
        out += [render_node(n, dump.fmt) for n in dump.sections[0].nodes]
    return "\n".join(out) + "\n"
