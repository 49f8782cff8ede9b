"""Pure renderers of a :class:`CandidateReport`: the reviewer's candidate template, markdown, text and JSON
(the terminal view is :mod:`ad_diff.candidates.terminal`)."""

from __future__ import annotations

from ad_diff.candidates.model import Candidate, CandidateReport, Evidence, LookupStatus
from ad_diff.core.escape import fence_block, md_code, md_escape
from ad_diff.core.graphops import op_name
from ad_diff.core.jsonable import dumps
from ad_diff.core.sinks import values

MAX_INSTANCES = 8
"""Instances listed per candidate in markdown (all of them are in the JSON)."""
MAX_PATTERN = 12
"""Ops of a pattern written in the template (a MoE block holds dozens; all are in the JSON)."""
MAX_NODES = 8
"""Node names listed per instance in markdown."""


def evidence_item(e: Evidence) -> str:
    """One piece of evidence: ``op auto_deploy::x at path:line [custom_op, backend map key 'a' of t ...]``."""
    what = "transform" if e.kind == "transform" else "op"
    tags = [e.kind if e.kind != "transform" else e.matched_by]
    if e.kind != "transform":
        tags.append(e.matched_by if not e.via else "; ".join(t.text for t in e.via))
    elif e.note:
        tags.append(e.note)
    if e.note and e.kind != "transform":
        tags.append(e.note)
    return f"{what} {e.symbol} at {e.path}:{e.line} [{', '.join(tags)}]"


def evidence_lines(c: Candidate) -> list[str]:
    """The ``Evidence:`` field of the template: one line, or one line per piece of evidence."""
    lk = c.lookup
    if lk.status is LookupStatus.NOT_SEARCHED:
        return ["Evidence: none (lookup not done: no --trtllm-src)"]
    if lk.status is LookupStatus.NOT_FOUND:
        return ["Evidence: none (searched: " + (", ".join(lk.searched) or "no distinctive op names") + ")"]
    return ["Evidence:"] + [f"  - {evidence_item(e)}" for e in lk.evidence]


def pattern_text(c: Candidate) -> str:
    """``aten.pow.Tensor_Scalar -> ...``, cut after :data:`MAX_PATTERN` ops."""
    shown = " -> ".join(c.pattern[:MAX_PATTERN])
    more = len(c.pattern) - MAX_PATTERN
    return shown + (f" -> … ({more} more op(s); all in the JSON)" if more > 0 else "")


def template(c: Candidate) -> str:
    """The candidate template a reviewer expects, as plain text."""
    lines = [
        f"Candidate: {c.name}",
        f"Affected graph pattern: {pattern_text(c)}",
        f"Existing kernel lookup: {c.lookup.status.value}",
        *evidence_lines(c),
        f"Recommendation: {c.recommendation.value}",
        "Strengths / weaknesses / risks:",
    ]
    lines += [f"- strength: {s}" for s in c.strengths]
    lines += [f"- weakness: {s}" for s in c.weaknesses]
    lines += [f"- risk: {s}" for s in c.risks]
    if not (c.strengths or c.weaknesses or c.risks):
        lines.append("- none recorded")
    return "\n".join(lines)


def layers_text(ls: tuple[int, ...]) -> str:
    """``3-7`` for a run of consecutive layer numbers, else ``1, 5, 9``; ``-`` for none. Consecutive is
    judged pairwise: a layer number comes from a node name, and ``range(first, last)`` of a 9-digit one
    once built 400 million integers."""
    if not ls:
        return "-"
    if len(ls) > 2 and all(b - a == 1 for a, b in zip(ls, ls[1:], strict=False)):
        return f"{ls[0]}-{ls[-1]}"
    return ", ".join(map(str, ls))


def _layers(c: Candidate) -> str:
    ls = c.layers
    return layers_text(ls) + (f" (+{c.outside_layers} outside)" if c.outside_layers and ls else "")


def short_pattern(c: Candidate) -> str:
    """``pow → mean → add → rsqrt → mul → mul``; MoE blocks by their shape (``moe: 4 experts ...``)."""
    if c.family == "moe":
        return c.signature.replace("moe[", "moe [", 1)
    ops = [op_name(t) for t in c.pattern]
    return " → ".join(ops[:MAX_PATTERN]) + (
        f" → … (+{len(ops) - MAX_PATTERN})" if len(ops) > MAX_PATTERN else ""
    )


def render_markdown(r: CandidateReport) -> str:
    """Markdown for a PR or an issue: summary table, then one template block per candidate with evidence."""
    r = values(r)  # every value on one line, bounded (core/sinks.py)
    out = [f"## Fusion candidates: {md_escape(r.run)}", ""]
    out.append(
        f"Scanned {md_code(r.dump)} (graph after {md_code(r.transform)}, stage {md_code(r.stage)}): "
        f"{r.nodes_scanned} nodes, {len(r.candidates)} repeated unfused pattern(s)."
    )
    if r.source_tree is None:
        out.append(
            "Existing kernel lookup: **not done** (no `--trtllm-src`); every recommendation is `defer`."
        )
    else:
        out.append(f"Existing kernel lookup: searched {md_code(r.source_tree)}.")
    out.append("")
    if not r.candidates:
        out += ["No repeated unfused pattern found.", ""]
    else:
        out += [
            "| # | Candidate | Pattern | Instances | Layers | Nodes removed | Lookup | Recommendation |",
            "|---|---|---|---:|---|---:|---|---|",
        ]
        for i, c in enumerate(r.candidates, 1):
            out.append(
                f"| {i} | {md_code(c.name)} | {md_escape(short_pattern(c))} | {c.count} | {_layers(c)} "
                f"| {c.nodes_removed} "
                f"| {c.lookup.status.value} | {c.recommendation.value} |"
            )
        out.append("")
    for i, c in enumerate(r.candidates, 1):
        out += [
            f"### {i}. {md_escape(c.name)}",
            "",
            md_escape(c.description),
            "",
            fence_block(template(c), "text"),
            "",
        ]
        if c.lookup.pattern_checks:
            out += ["Upstream search patterns beside this graph:", ""]
            out += [f"- {md_escape(pc.message)}" for pc in c.lookup.pattern_checks]
            out.append("")
        out += ["<details><summary>Graph evidence</summary>", ""]
        out += [f"Signature: {md_code(c.signature)}", ""]
        out += ["| Layer | Section | Line | Nodes |", "|---|---|---:|---|"]
        for inst in c.instances[:MAX_INSTANCES]:
            layer = "-" if inst.layer is None else str(inst.layer)
            nodes = ", ".join(inst.nodes[:MAX_NODES])
            if len(inst.nodes) > MAX_NODES:
                nodes += f", … ({len(inst.nodes) - MAX_NODES} more)"
            out.append(f"| {layer} | {md_escape(inst.section)} | {inst.line} | {md_escape(nodes)} |")
        if c.count > MAX_INSTANCES:
            out.append(f"| … | | | {c.count - MAX_INSTANCES} more (see the JSON) |")
        out += ["", "</details>", ""]
    notes = [*r.notes, *(f"source read: {n}" for n in r.source_notes)]
    if notes:
        out += ["**Notes**", ""] + [f"- {md_escape(n)}" for n in notes] + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def render_text(r: CandidateReport) -> str:
    """The candidate templates alone, separated by blank lines (for pasting into a review thread)."""
    r = values(r)  # every value on one line, bounded (core/sinks.py)
    return (
        "\n\n".join(template(c) for c in r.candidates) + "\n"
        if r.candidates
        else "No repeated unfused pattern.\n"
    )


def render_json(r: CandidateReport) -> str:
    """JSON form (docs/candidates.md)."""
    r = values(r, lines=False)  # every value bounded (core/sinks.py)
    return dumps(r.to_json(), ensure_ascii=True) + "\n"
