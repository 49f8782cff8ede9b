"""The root-cause part of the PR comment: the first-screen list of root causes and each group's findings.

Laid out for a 780 px column: no findings table, a short list instead. A root cause is one list item of
three lines (title, evidence, consequences); its findings are folded below, one line each with their hints.
Every name is escaped: ``md_code``/``md_escape`` in markdown, ``html_code``/``html_text`` inside HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ad_diff.core.escape import html_code, html_text, md_code, md_escape, md_inline, md_text
from ad_diff.core.model import Finding, Severity, TransformComparison
from ad_diff.core.rules import Role
from ad_diff.explain.links import hints
from ad_diff.explain.model import CauseGroup, CauseKind
from ad_diff.explain.roles import has
from ad_diff.gate import FindingVerdict, GroupVerdict
from ad_diff.kinds.tensors.causes import first_causes
from ad_diff.report.common import consequence_text, look, plural, render_parts, side_text

ICON = {Severity.ERROR: "\u274c", Severity.WARNING: "\u26a0\ufe0f", Severity.INFO: "\u2139\ufe0f"}
SETTLED = "\u2705"
LOOK = {**{s.value: i for s, i in ICON.items()}, "acknowledged": SETTLED}
"""A finding's icon by :func:`ad_diff.report.common.look`: an acknowledged one is ✅, never ❌."""
IMPROVED = "\U0001f4c8"
Fmt = Callable[[str], str]
MAX_NAMED = 3
"""Consequences named on a root cause's one line (the fold below has them all)."""


def title_md(g: CauseGroup) -> str:
    """The group's title as markdown (names as code spans)."""
    return render_parts(g.title_parts, md_code, md_text)


def title_html(g: CauseGroup) -> str:
    """The group's title for a ``<summary>`` (names as ``<code>``)."""
    return render_parts(g.title_parts, html_code, html_text)


def icon(gv: GroupVerdict) -> str:
    """❌ gating, ✅ acknowledged or explained, 📈 improvement, else the group's worst severity."""
    g = gv.group
    if gv.gated:
        return ICON[Severity.ERROR]
    if g.settled:
        return SETTLED
    if g.cause is CauseKind.IMPROVEMENT and g.severity is Severity.INFO:
        return IMPROVED
    return ICON[g.severity]


def _change(f: Finding, rows: dict[str, TransformComparison], code: Fmt, text: Fmt) -> str:
    """How one consequence reads on the root cause's line: ```match_rope_layout` 4 → 2``."""
    if f.tensor and not f.transform:
        return code(f.tensor)
    name = f.transform or f.tensor or f.code
    r = rows.get(name)
    if r is None or not r.changed_anywhere:
        return code(name)
    if not r.changed:  # it changed on other ranks only: say where
        e = r.elsewhere[0]
        return (f"{code(name)} {text(side_text(e.baseline))} \u2192 {text(side_text(e.candidate))} "
                f"{text(f'on rank {e.rank}')}")
    return f"{code(name)} {text(side_text(r.baseline))} \u2192 {text(side_text(r.candidate))}"


def consequence_line(
    g: CauseGroup, rows: dict[str, TransformComparison], code: Fmt = md_code, text: Fmt = md_escape
) -> str:
    """``→ 3 match losses: `a` 2 → 0, `b` 2 → 0, +1 more`` (empty when nothing follows; ``→ acknowledged:
    ...`` when every error downstream is an expected change); ``code`` and ``text`` render names and the rest
    (markdown by default)."""
    errors = [f for f in g.consequences if f.severity is Severity.ERROR and not f.acknowledged]
    acked = [f for f in g.consequences if f.severity is Severity.ERROR and f.acknowledged]
    if not errors and not acked:
        rest = len(g.consequences)
        return f"\u2192 {plural(rest, 'related note')} (folded below), no error downstream" if rest else ""
    lead = consequence_text((g,)) if errors else "acknowledged"
    named: list[str] = []
    seen: set[str] = set()
    for f in errors or acked:
        key = f.transform or f.tensor or f.code
        if key not in seen:
            seen.add(key)
            named.append(_change(f, rows, code, text))
    more = f", +{len(named) - MAX_NAMED} more" if len(named) > MAX_NAMED else ""
    return f"\u2192 {lead}: " + ", ".join(named[:MAX_NAMED]) + more


def head_item(n: int, gv: GroupVerdict, rows: dict[str, TransformComparison]) -> str:
    """One root cause on the first screen: a numbered item of up to three lines."""
    g = gv.group
    stage = f" <sub>{html_text(g.stage)}</sub>" if g.stage else ""
    lines = [f"{n}. {icon(gv)} **{title_md(g)}**{stage}"]
    if g.evidence:
        lines.append(md_inline(g.evidence))
    conseq = consequence_line(g, rows)
    if conseq:
        lines.append(conseq)
    if g.settled:
        reason = next(
            (f.acknowledged or f.explained_by for f in g.findings if f.acknowledged or f.explained_by), ""
        )
        lines.append(
            f"{SETTLED} {'acknowledged' if any(f.acknowledged for f in g.findings) else 'explained'}: "
            f"{md_escape(reason)}"
        )
    return "<br>\n   ".join(lines)


def _where(f: Finding) -> str:
    parts = []
    if f.transform:
        parts.append(md_code(f.transform))
    if f.node:
        parts.append("node " + md_code(f.node))
    if f.tensor:
        parts.append("tensor " + md_code(f.tensor))
    return " · ".join(parts) or "run"


def _message(f: Finding) -> str:
    msg = f.message
    if f.transform and msg.startswith(f.transform + ": "):
        msg = msg[len(f.transform) + 2 :]
    return md_escape(msg)


def finding_item(fv: FindingVerdict) -> str:
    """One finding as a list item: icon, code, category, where, message; its notes as sub-items."""
    f = fv.finding
    gate = " · **gates**" if fv.gated else ""
    lines = [f"- {LOOK[look(f)]} **{f.code}** {f.category} · {_where(f)}{gate}: {_message(f)}"]
    if f.acknowledged:
        lines.append(f"  - {SETTLED} acknowledged: {md_escape(f.acknowledged)}")
    if f.explained_by:
        lines.append(f"  - \U0001f527 {md_escape(f.explanation)}")
    for h in hints(f):
        lines.append(f"  - \U0001f50e likely cause: {md_inline(h.message)}")
    cause_of = dict(f.evidence).get("drift_cause")
    if isinstance(cause_of, list) and cause_of:
        lines.append(f"  - \U0001f50e cause of the drift of {', '.join(md_code(str(t)) for t in cause_of)}")
    for i, c in enumerate(first_causes([f]), 1):
        lines.append(f"  - \U0001f50e likely cause {i}: {md_inline(c.text)}")
    return "\n".join(lines)


def drift_table(findings: Sequence[Finding]) -> str:
    """The statistics of a group's drifting tensors as a table (titles name the drift in a few words)."""
    rows = []
    for f in findings:
        ev = dict(f.evidence)
        if not has(f, Role.DRIFT) or "statistic" not in ev:
            continue
        cells = [md_code(f.tensor or ""), md_escape(str(ev["statistic"]))]
        cells += [_num(ev.get(k)) for k in ("value", "limit", "reference_ratio", "nrmse", "cosine")]
        cells.append(_num(ev.get("outside_share")))
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return ""
    head = "| tensor | judged by | value | limit | vs ref | NRMSE | cosine | beyond tol |"  # fits 780 px
    return "\n".join([head, "|---|---|---:|---:|---:|---:|---:|---:|", *rows])


def _num(v: object) -> str:
    return f"{v:.4g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else ""


def findings_list(findings: Sequence[FindingVerdict]) -> str:
    """Findings as a list, one item each."""
    return "\n".join(finding_item(fv) for fv in findings)


def group_details(n: int, gv: GroupVerdict) -> str:
    """The folded findings of one group: the root cause's evidence, then its consequences."""
    g = gv.group
    root, consequences = gv.findings[: len(g.root)], gv.findings[len(g.root):]
    count = plural(len(g.findings), "finding")
    body = [f"<details><summary>{n} \u00b7 {title_html(g)}: {count}</summary>", ""]
    table = drift_table(g.findings)
    if table:
        body += [table, ""]
    if g.root:
        body += ["Root cause:", "", findings_list(root), ""]
    if g.consequences:
        body += [f"Consequences ({len(g.consequences)}):", "", findings_list(consequences), ""]
    return "\n".join([*body, "</details>"])


__all__ = [
    "ICON",
    "LOOK",
    "consequence_line",
    "drift_table",
    "finding_item",
    "findings_list",
    "group_details",
    "head_item",
    "icon",
    "title_html",
    "title_md",
]
