"""Markdown reporter for a pull-request comment (and the GitHub step summary), laid out for a 780 px column.

First screen, never folded: the verdict, the counts by category (``not analysed`` where a kind was not
compared), and each gating root cause with its evidence and its consequences on one line each. Then, folded
or compact: each root cause's findings, the other findings, the changed transforms (a narrow table), each
kind's section, and the inputs. Tables keep to at most five narrow columns, names inside cells are
``<code>`` elements, run paths are shown relative to their common parent (full paths are in the JSON).

Output stays under GitHub's 65,536-character comment limit: when the full report is longer, blocks are
folded from the bottom (inputs, unchanged transforms, sections, notes, changed transforms, other findings,
root-cause details) and the report says what was folded; the first screen is kept whole. Every name is
escaped.
"""

from __future__ import annotations

from dataclasses import dataclass

from ad_diff import __version__
from ad_diff.core.escape import html_code, md_code, md_escape, md_text
from ad_diff.core.model import Severity, TransformComparison
from ad_diff.core.sinks import values
from ad_diff.gate import GroupVerdict, Verdict, VerdictWord
from ad_diff.report import COMMENT_LIMIT
from ad_diff.report import md_groups as G
from ad_diff.report.common import (
    conflicts,
    counts,
    delta_text,
    headline_parts,
    ignored_text,
    in_conflict,
    log_summary_parts,
    partition,
    plural,
    render_parts,
    run_labels,
    side_text,
    stale_text,
    status_pair,
)
from ad_diff.report.json import SCHEMA_VERSION
from ad_diff.report.md_view import section
from ad_diff.report.views import views
from ad_diff.result import DiffResult, Written

HEAD_ITEMS = 10
"""Root causes listed on the first screen (the rest are counted there and listed below)."""


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


def _rows(result: DiffResult) -> dict[str, TransformComparison]:
    return {r.transform: r for r in reversed(result.transforms)}


def _runs_line(result: DiffResult) -> str:
    b, c, parent = run_labels(result.baseline.root, result.candidate.root)
    where = f" in {md_code(parent)}" if parent else ""
    line = f"<sub>Runs: {md_code(b)} \u2192 {md_code(c)}{where}"
    lb, lc = (
        render_parts(log_summary_parts(log), lambda s: f"**{md_escape(s)}**", md_escape)
        for log in (result.baseline_log, result.candidate_log)
    )
    line += f" · logs: {lb}" if lb == lc else f" · baseline log: {lb} · candidate log: {lc}"
    ignored = ignored_text(result)
    if ignored:
        line += f" · {md_escape(ignored)}"
        if result.ignored_findings:
            line += f" ({plural(result.ignored_findings, 'finding')} dropped)"
    return line + "</sub>"


def html_line(written: Written, batch: bool = False) -> str:
    """The sentence naming the HTML report (``--html``) as the place for detail, or empty; for a batch, the
    summary page listing each model's report. Named, not linked: a relative link to a file of the job is
    dead in a PR comment."""
    html = written.html
    if not html:
        return ""
    what = "one HTML report per model, listed in" if batch else "the HTML report"
    return (f"\U0001f4c4 **Details**: pipeline timeline, rewritten regions side by side and drift plots are "
            f"in {what} {md_code(html)}, next to this report (in CI: the job's artifact).")


def _head(
    result: DiffResult, verdict: Verdict, cap: int
) -> tuple[str, list[GroupVerdict], list[GroupVerdict]]:
    """The first screen, and the groups it lists (primary) and mentions (secondary)."""
    p = partition(verdict)
    mark = "\u274c" if verdict.failed else "\u2705"
    title = render_parts(headline_parts(result, verdict), md_code, md_text)
    cnt = " · ".join(
        f"**{md_escape(c.text())}**" if c.count or c.not_analysed else md_escape(c.text())
        for c in counts(result)
    )
    lines = [
        f"## {mark} ad-diff: {title}",
        "",
        f"{cnt} · gate `--fail-on {verdict.fail_on}` \u2192 exit {verdict.exit_code}",
    ]
    others = [*p.below_gate, *p.review, *p.settled, *p.improvements]
    primary, secondary = (list(p.gated), others) if verdict.failed else (others, [])
    rows = _rows(result)
    if primary:
        lines += ["", *(G.head_item(i, g, rows) for i, g in enumerate(primary[:cap], 1))]
        if len(primary) > cap:
            lines += ["", f"_and {len(primary) - cap} more root causes, listed below._"]
    if secondary:
        kinds = [
            plural(len(p.below_gate), "root cause") + " below the gate level" if p.below_gate else "",
            plural(len(p.review), "warning") + " to review" if p.review else "",
            f"{len(p.settled)} acknowledged or explained" if p.settled else "",
            plural(len(p.improvements), "improvement") if p.improvements else "",
        ]
        lines += ["", "Also: " + ", ".join(k for k in kinds if k) + " (below)."]
    if p.stale:
        lines += ["", f"{G.ICON[Severity.WARNING]} {stale_text(p)}: an entry of the expected-changes file "
                      "that matched nothing, to remove or update (below)."]
    lines += ["", _runs_line(result)]
    detail = html_line(result.written)
    if detail:
        lines += ["", detail]
    return "\n".join(lines), primary, secondary


def _group_blocks(
    result: DiffResult, verdict: Verdict, primary: list[GroupVerdict], secondary: list[GroupVerdict]
) -> list[_Block]:
    blocks = []
    if primary:
        heading = "### Root causes" if verdict.failed else "### Findings"
        body = "\n\n".join(G.group_details(i, g) for i, g in enumerate(primary, 1))
        blocks.append(
            _Block(
                "root-cause details",
                f"{heading}\n\n{body}",
                f"{heading}\n\n_Details folded to fit the comment limit; see the JSON report._",
                40,
            )
        )
    if secondary:
        start = len(primary) + 1
        items = "\n".join(
            f"{start + i}. {G.icon(g)} {G.title_md(g.group)}" for i, g in enumerate(secondary)
        )
        found = [f for g in secondary for f in g.findings]
        details = (
            f"<details><summary>Their findings ({len(found)})</summary>\n\n"
            f"{G.findings_list(found)}\n\n</details>"
        )
        blocks.append(
            _Block(
                "other findings",
                f"### Other findings\n\n{items}\n\n{details}",
                f"### Other findings\n\n{items}",
                35,
            )
        )
    stale = partition(verdict).stale
    if stale:  # about the expected-changes file, not the runs: apart from the root causes, unnumbered
        found = [f for g in stale for f in g.findings]
        body = f"### Expected-changes file\n\n{G.findings_list(found)}"
        blocks.append(_Block("stale expected changes", body, body, 30))
    notes = partition(verdict).notes
    if notes:
        found = [f for g in notes for f in g.findings]
        body = G.findings_list(found)
        blocks.append(
            _Block(
                "notes",
                f"<details><summary>Notes ({len(found)})</summary>\n\n{body}\n\n</details>",
                f"_{plural(len(found), 'note')} folded; see the JSON report._",
                20,
            )
        )
    return blocks


def _transform_blocks(result: DiffResult) -> list[_Block]:
    conflict = conflicts(result.findings)  # a row whose log and dumps disagree is listed like a change
    changed = [(i, r) for i, r in enumerate(result.transforms, 1)
               if r.changed_anywhere or in_conflict(r, conflict)]
    same = [(i, r) for i, r in enumerate(result.transforms, 1)
            if not (r.changed_anywhere or in_conflict(r, conflict))]
    total = len(result.transforms)
    blocks = []
    if changed:  # four narrow columns: each row's stage is in the JSON report
        head = "| # | Transform | Baseline \u2192 Candidate | \u0394 |\n|---:|---|---:|---:|"
        arrow = " \u2192 "
        rows = "\n".join(
            f"| {i} | {html_code(r.transform)} | "
            f"{arrow.join(md_escape(w) for w in status_pair(r, conflict))} | "
            f"{delta_text(r.delta)} |"
            for i, r in changed
        )
        n_conflict = sum(not r.changed_anywhere for _, r in changed)
        extra = f"; {n_conflict} more whose log and dumps disagree" if n_conflict else ""
        full = f"### Changed transforms ({len(changed) - n_conflict} of {total}{extra})\n\n{head}\n{rows}"
        blocks.append(
            _Block(
                "changed transforms",
                full,
                f"_{len(changed)} changed transforms folded; see the JSON report._",
                30,
            )
        )
    else:
        blocks.append(
            _Block(
                "changed transforms",
                f"### Transforms\n\nAll {total} transforms have the same state and match count in both runs.",
                "",
                100,
            )
        )
    if same:  # one wrapping line per stage, not a table: long names must not widen the comment
        by_stage: dict[str, list[str]] = {}
        for i, r in same:
            by_stage.setdefault(r.stage, []).append(
                f"{i} {md_code(r.transform)} {md_escape(side_text(r.baseline))}"
            )
        items = "\n".join(f"- **{md_escape(stage)}**: " + " · ".join(xs) for stage, xs in by_stage.items())
        full = (
            f"<details><summary>Unchanged transforms ({len(same)}): number, name, state or matches</summary>"
            f"\n\n{items}\n\n</details>"
        )
        blocks.append(
            _Block(
                "unchanged transforms",
                full,
                f"_{len(same)} unchanged transforms folded; see the JSON report._",
                10,
            )
        )
    return blocks


def _section_blocks(result: DiffResult) -> list[_Block]:
    blocks = []
    for view in views(result):
        text = section(view).strip()
        if text:
            blocks.append(_Block(view.key, text, f"_{view.title} details folded; see the JSON report._", 15))
    return blocks


def _inputs(result: DiffResult) -> str:
    items = [
        f"- baseline: {md_code(result.baseline.root)}: {md_escape('; '.join(result.baseline.notes))}",
        f"- candidate: {md_code(result.candidate.root)}: {md_escape('; '.join(result.candidate.notes))}",
    ]
    items += [f"- {md_escape(n)}" for n in result.notes]
    return "<details><summary>Inputs</summary>\n\n" + "\n".join(items) + "\n\n</details>"


def render(result: DiffResult, verdict: Verdict, limit: int = COMMENT_LIMIT) -> str:
    """Render the PR-comment markdown, folding blocks until it fits in ``limit`` characters."""
    result, verdict = values((result, verdict))  # every value on one line, bounded (core/sinks.py)
    foot = f"<sub>ad-diff {__version__} · JSON schema {SCHEMA_VERSION}</sub>\n"
    for cap in (HEAD_ITEMS, 3, 1):
        head, primary, secondary = _head(result, verdict, cap)
        if len(head) + len(foot) + 400 <= limit:
            break
    order = (
        _group_blocks(result, verdict, primary, secondary)
        + _transform_blocks(result)
        + _section_blocks(result)
        + [_Block("inputs", _inputs(result), "", 5)]
    )

    def assemble() -> str:
        folded = [b.name for b in order if b.is_folded]
        note = f"_Folded to fit the comment limit: {', '.join(folded)}._\n\n" if folded else ""
        body = "\n\n".join(b.text for b in order if b.text)
        return f"{head}\n\n{body}\n\n{note}{foot}"

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


def render_error(message: str, code: int) -> str:
    """The markdown of a comparison that reached no verdict (exit 2: unusable input or usage; 3: a bug in
    ad-diff), for the PR comment and the step summary: the error as stderr says it, and what to do."""
    if code == 2:
        what = ("The runs could not be compared, so this is no verdict, and never a pass. Fix the input or "
                "option named above and re-run (`ad-diff compare --help` lists the options).")
    else:
        what = ("This is a bug in ad-diff, not a verdict on the runs: re-run with `AD_DIFF_DEBUG=1` in the "
                "environment for the traceback and report it.")
    head = f"## \u26d4 ad-diff: {VerdictWord.ERROR.headline_word} (exit {code})"
    return f"{head}\n\n{md_escape(message)}\n\n{what}\n"

