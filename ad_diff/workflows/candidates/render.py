"""Pure renderers of a :class:`CandidateReport`: the reviewer's candidate template, markdown and JSON."""

from __future__ import annotations

import json

from ad_diff.core.escape import fence_block, md_code, md_escape
from ad_diff.workflows.candidates.model import Candidate, CandidateReport, LookupStatus
from ad_diff.workflows.candidates.ops import op_name

MAX_INSTANCES = 8
"""Instances listed per candidate in markdown (all of them are in the JSON)."""


def evidence_text(c: Candidate) -> str:
    """The ``Evidence:`` field of the template."""
    lk = c.lookup
    if lk.status is LookupStatus.NOT_SEARCHED:
        return "none (lookup not done: no --trtllm-src)"
    if lk.status is LookupStatus.NOT_FOUND:
        return "none (searched: " + (", ".join(lk.searched) or "no distinctive op names") + ")"
    return "; ".join(f"{e.where} [{e.kind}, {e.matched_by}]" for e in lk.evidence)


def template(c: Candidate) -> str:
    """The candidate template a reviewer expects, as plain text."""
    lines = [
        f"Candidate: {c.name}",
        f"Affected graph pattern: {' -> '.join(c.pattern)}",
        f"Existing kernel lookup: {c.lookup.status.value}",
        f"Evidence: {evidence_text(c)}",
        f"Recommendation: {c.recommendation.value}",
        "Strengths / weaknesses / risks:",
    ]
    lines += [f"- strength: {s}" for s in c.strengths]
    lines += [f"- weakness: {s}" for s in c.weaknesses]
    lines += [f"- risk: {s}" for s in c.risks]
    if not (c.strengths or c.weaknesses or c.risks):
        lines.append("- none recorded")
    return "\n".join(lines)


def _layers(c: Candidate) -> str:
    ls = c.layers
    if not ls:
        text = "-"
    elif list(ls) == list(range(ls[0], ls[-1] + 1)) and len(ls) > 2:
        text = f"{ls[0]}-{ls[-1]}"
    else:
        text = ", ".join(map(str, ls))
    return text + (f" (+{c.outside_layers} outside)" if c.outside_layers and ls else "")


def _short(c: Candidate) -> str:
    return " → ".join(op_name(t) for t in c.pattern)


def render_markdown(r: CandidateReport) -> str:
    """Markdown for a PR or an issue: summary table, then one template block per candidate with evidence."""
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
                f"| {i} | {md_code(c.name)} | {md_escape(_short(c))} | {c.count} | {_layers(c)} "
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
        out += ["<details><summary>Graph evidence</summary>", ""]
        out += [f"Signature: {md_code(c.signature)}", ""]
        out += ["| Layer | Section | Line | Nodes |", "|---|---|---:|---|"]
        for inst in c.instances[:MAX_INSTANCES]:
            layer = "-" if inst.layer is None else str(inst.layer)
            out.append(
                f"| {layer} | {md_escape(inst.section)} | {inst.line} | {md_escape(', '.join(inst.nodes))} |"
            )
        if c.count > MAX_INSTANCES:
            out.append(f"| … | | | {c.count - MAX_INSTANCES} more (see the JSON) |")
        out += ["", "</details>", ""]
    if r.notes:
        out += ["**Notes**", ""] + [f"- {md_escape(n)}" for n in r.notes] + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def render_text(r: CandidateReport) -> str:
    """The candidate templates alone, separated by blank lines (for pasting into a review thread)."""
    return (
        "\n\n".join(template(c) for c in r.candidates) + "\n"
        if r.candidates
        else "No repeated unfused pattern.\n"
    )


def render_json(r: CandidateReport) -> str:
    """JSON form (docs/candidates.md)."""
    return json.dumps(r.to_json(), indent=2, sort_keys=False) + "\n"
