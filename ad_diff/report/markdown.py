"""Markdown reporter for a pull-request comment: verdict first, then findings, then changed transforms.

Output stays under GitHub's 65,536-character comment limit: when the full report is longer, the least
important blocks are folded first (unchanged transforms, then section details, then info findings, then
the rest of the findings), and the report says what was folded. Every name is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass

from ad_diff import __version__
from ad_diff.core.escape import md_code, md_escape
from ad_diff.core.model import Finding, Severity
from ad_diff.gate import Verdict, gates
from ad_diff.kinds import SECTION_KINDS
from ad_diff.report.common import category_counts, delta_text, headline, log_summary, side_text
from ad_diff.report.json import SCHEMA_VERSION
from ad_diff.result import DiffResult

COMMENT_LIMIT = 65_536
"""GitHub's maximum comment body length (characters)."""

_ICON = {Severity.ERROR: "\u274c", Severity.WARNING: "\u26a0\ufe0f", Severity.INFO: "\u2139\ufe0f"}



@dataclass
class _Block:
    """A block of the report with a folded stand-in; lower ``priority`` folds first."""

    name: str
    full: str
    folded: str
    priority: int
    is_folded: bool = False

    @property
    def text(self) -> str:
        return self.folded if self.is_folded else self.full


def _where(f: Finding) -> str:
    parts = []
    if f.transform:
        parts.append(md_code(f.transform))
    if f.node:
        parts.append("node " + md_code(f.node))
    if f.tensor:
        parts.append("tensor " + md_code(f.tensor))
    return " · ".join(parts) or "run"


def _root_causes(f: Finding) -> list[str]:
    """Root-cause hints the graph analysis attached to a match loss (evidence ``root_cause``)."""
    causes = dict(f.evidence).get("root_cause") or []
    return [c["message"] for c in causes if isinstance(c, dict) and c.get("message")]


def _finding_row(f: Finding, fail_on: str) -> str:
    sev = f"{_ICON[f.severity]} {f.severity.value}"
    if gates(f, fail_on):
        sev += " **(gates)**"
    msg = md_escape(f.message)
    if f.acknowledged:
        msg += f"<br>\u2705 acknowledged: {md_escape(f.acknowledged)}"
    if f.explained_by:
        msg += f"<br>\U0001f527 explained by config: {md_escape(f.explained_by)}"
    for cause in _root_causes(f):
        msg += f"<br>\U0001f50e likely cause: {md_escape(cause)}"
    return f"| {sev} | {f.code} | {f.category} | {_where(f)} | {msg} |"


def _findings_table(findings: list[Finding], fail_on: str) -> str:
    head = "| Severity | Code | Category | Where | Finding |\n|---|---|---|---|---|"
    return head + "\n" + "\n".join(_finding_row(f, fail_on) for f in findings)


def _findings_blocks(result: DiffResult, fail_on: str) -> list[_Block]:
    if not result.findings:
        return [_Block("findings", "### Findings\n\nNone.", "", 100)]
    main = [f for f in result.findings if f.severity is not Severity.INFO]
    info = [f for f in result.findings if f.severity is Severity.INFO]
    blocks = []
    if main:
        blocks.append(_Block(
            "findings", f"### Findings ({len(main)})\n\n{_findings_table(main, fail_on)}",
            f"### Findings ({len(main)})\n\n{_findings_table(main[:20], fail_on)}\n\n"
            f"_{len(main) - min(20, len(main))} more folded; see the JSON report._", 40))
    if info:
        blocks.append(_Block(
            "info findings",
            f"<details><summary>Informational findings ({len(info)})</summary>\n\n"
            f"{_findings_table(info, fail_on)}\n\n</details>",
            f"_{len(info)} informational findings folded; see the JSON report._", 20))
    return blocks


def _transform_blocks(result: DiffResult) -> list[_Block]:
    changed = [(i, r) for i, r in enumerate(result.transforms, 1) if r.changed]
    same = [(i, r) for i, r in enumerate(result.transforms, 1) if not r.changed]
    head = "| # | Stage | Transform | Baseline | Candidate | \u0394 |\n|---:|---|---|---:|---:|---:|"
    rows = "\n".join(
        f"| {i} | {md_escape(r.stage)} | {md_code(r.transform)} | {side_text(r.baseline)} | "
        f"{side_text(r.candidate)} | {delta_text(r.delta)} |"
        for i, r in changed
    )
    blocks = []
    if changed:
        full = f"### Changed transforms ({len(changed)} of {len(result.transforms)})\n\n{head}\n{rows}"
        blocks.append(_Block("changed transforms", full,
                             f"_{len(changed)} changed transforms folded; see the JSON report._", 30))
    else:
        blocks.append(_Block("changed transforms",
                             f"### Transforms\n\nAll {len(result.transforms)} transforms have the same state and "
                             "match count in both runs.", "", 100))
    if same:
        urows = "\n".join(
            f"| {i} | {md_escape(r.stage)} | {md_code(r.transform)} | {side_text(r.baseline)} |" for i, r in same
        )
        full = (f"<details><summary>Unchanged transforms ({len(same)})</summary>\n\n"
                f"| # | Stage | Transform | State / matches |\n|---:|---|---|---:|\n{urows}\n\n</details>")
        blocks.append(_Block("unchanged transforms", full,
                             f"_{len(same)} unchanged transforms folded; see the JSON report._", 10))
    return blocks


def _section_blocks(result: DiffResult) -> list[_Block]:
    blocks = []
    for kind in SECTION_KINDS:
        section = result.sections.get(kind.key.name)
        if section is None:
            continue
        text = kind.render_markdown(section, result).strip()
        if text:
            blocks.append(_Block(kind.key.name, text, f"_{kind.key.title} details folded; see the JSON report._", 15))
    return blocks


def _header(result: DiffResult, verdict: Verdict) -> str:
    icon = "\u274c" if verdict.verdict == "fail" else "\u2705"
    cats = category_counts(result.findings)
    counts = " · ".join(
        f"{cats.get(c, 0)} {c.replace('_', ' ')}" for c in ("match_loss", "metadata_loss", "numeric_drift")
    )
    collapses = sum(1 for f in result.findings if f.collapse)
    lines = [
        f"## {icon} ad-diff: {md_escape(headline(result, verdict)).replace(chr(92) + '`', '`')}",
        "",
        f"**{counts}**" + (f" ({collapses} collapse{'s' if collapses != 1 else ''})" if collapses else "")
        + f" · gate `--fail-on {verdict.fail_on}` \u2192 exit {verdict.exit_code}",
        "",
        "| | Baseline | Candidate |",
        "|---|---|---|",
        f"| Run | {md_code(result.baseline.root)} | {md_code(result.candidate.root)} |",
        f"| Log | {md_escape(log_summary(result.baseline_log))} | {md_escape(log_summary(result.candidate_log))} |",
    ]
    return "\n".join(lines)


def _inputs(result: DiffResult) -> str:
    items = [f"- baseline: {md_escape('; '.join(result.baseline.notes))}",
             f"- candidate: {md_escape('; '.join(result.candidate.notes))}"]
    items += [f"- {md_escape(n)}" for n in result.notes]
    return "<details><summary>Inputs</summary>\n\n" + "\n".join(items) + "\n\n</details>"


def render(result: DiffResult, verdict: Verdict, limit: int = COMMENT_LIMIT) -> str:
    """Render the PR-comment markdown, folding blocks until it fits in ``limit`` characters."""
    blocks = _findings_blocks(result, verdict.fail_on) + _transform_blocks(result) + _section_blocks(result)
    head = _header(result, verdict)
    foot_tail = f"<sub>ad-diff {__version__} · JSON schema {SCHEMA_VERSION}</sub>\n"
    inputs = _Block("inputs", _inputs(result), "", 5)
    order = blocks + [inputs]

    def assemble() -> str:
        folded = [b.name for b in order if b.is_folded]
        note = f"_Folded to fit the comment limit: {', '.join(folded)}._\n\n" if folded else ""
        body = "\n\n".join(b.text for b in order if b.text)
        return f"{head}\n\n{body}\n\n{note}{foot_tail}"

    text = assemble()
    for b in sorted(order, key=lambda b: b.priority):
        if len(text) <= limit:
            break
        b.is_folded = True
        text = assemble()
    if len(text) > limit:  # still too long: keep the verdict and say so rather than exceed the limit
        cut = text[: limit - 200].rsplit("\n", 1)[0]
        text = cut + "\n\n_Report truncated to fit the comment limit; see the JSON report._\n"
    return text
