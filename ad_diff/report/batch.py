"""Reports of ``ad-diff batch``: a summary table of models with their verdicts, details per model folded.

Pure ``render_*(batch) -> str`` functions. The markdown stays under the comment limit by dropping the
details of passing models first, then of failing ones (last first); it says which were dropped.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ad_diff import __version__
from ad_diff.core.escape import html_code, html_text, md_code, md_escape
from ad_diff.core.jsonable import dumps
from ad_diff.core.sinks import values
from ad_diff.core.terminal import console
from ad_diff.gate import VerdictWord
from ad_diff.report import COMMENT_LIMIT
from ad_diff.report import json as json_report
from ad_diff.report import markdown as md
from ad_diff.report.common import headline
from ad_diff.result import BatchResult, ModelOutcome

_ICON = {VerdictWord.PASS: "\u2705", VerdictWord.FAIL: "\u274c", VerdictWord.ERROR: "\u26d4"}
_STYLE = {VerdictWord.PASS: "green", VerdictWord.FAIL: "red", VerdictWord.ERROR: "bold red"}


def _summary(m: ModelOutcome) -> str:
    if m.result is not None and m.verdict is not None:
        return headline(m.result, m.verdict)
    return m.error or m.status.value


def _counts(m: ModelOutcome) -> tuple[int, int, int]:
    if m.result is None or m.verdict is None:
        return 0, 0, 0
    fs = m.result.findings
    return (
        len(m.verdict.gated),
        sum(f.severity.value == "error" for f in fs),
        sum(f.severity.value == "warning" for f in fs),
    )


def _title(batch: BatchResult) -> str:
    n = len(batch.models)
    bad = sum(m.status is VerdictWord.FAIL for m in batch.models)
    err = sum(m.status is VerdictWord.ERROR for m in batch.models)
    parts = [f"{bad} of {n} model{'s' if n != 1 else ''} regressed"]
    if err:
        parts.append(f"{err} could not be compared")
    if batch.baseline_only:
        parts.append(f"{len(batch.baseline_only)} missing in the candidate")
    return f"{batch.verdict.headline_word}: " + ", ".join(parts)


def summary_rows(batch: BatchResult) -> list[dict[str, Any]]:
    """One row per model (name, status, gated, errors, warnings, summary): the table every batch report
    shows."""
    rows = []
    for m in batch.models:
        g, e, w = _counts(m)
        rows.append(
            {
                "name": m.name,
                "status": m.status.value,
                "icon": _ICON[m.status],
                "gated": g,
                "errors": e,
                "warnings": w,
                "summary": _summary(m),
                "compared": m.result is not None,
            }
        )
    return rows


def title(batch: BatchResult) -> str:
    """``FAIL: 1 of 3 models regressed, ...``: the batch's verdict in one sentence."""
    return _title(batch)


def _unpaired_lines(batch: BatchResult) -> list[str]:
    lines = []
    if batch.baseline_only:
        gate = "" if not batch.judged.unpaired_gate else " (gates: the candidate run is missing)"
        lines.append(f"- baseline only{gate}: " + ", ".join(md_code(n) for n in batch.baseline_only))
    if batch.candidate_only:
        lines.append(
            "- candidate only (new, not compared): " + ", ".join(md_code(n) for n in batch.candidate_only)
        )
    return lines


def render_markdown(batch: BatchResult, limit: int = COMMENT_LIMIT) -> str:
    """Markdown for a PR comment or step summary, at most ``limit`` characters."""
    batch = values(batch)  # every value on one line, bounded (core/sinks.py)
    icon = _ICON.get(batch.verdict, "")
    head = [
        f"## {icon} ad-diff batch: {md_escape(_title(batch))}",
        "",
        f"Gate `--fail-on {batch.fail_on}` \u2192 exit {batch.exit_code}",
        "",
        "| Model | Verdict | Gated | Errors / warnings | Summary |",
        "|---|---|---:|---:|---|",
    ]
    for m in batch.models:  # five columns: a 780 px comment
        g, e, w = _counts(m)
        head.append(
            f"| {html_code(m.name)} | {_ICON[m.status]} {m.status} | {g} | {e} / {w} | "
            f"{md_escape(_summary(m))} |"
        )
    detail = md.html_line(batch.written, batch=True)
    if detail:
        head += ["", detail]
    unpaired = _unpaired_lines(batch)
    if unpaired:
        head += ["", "**Unpaired run folders**", "", *unpaired]
    # details: failing/error models first (most useful), then passing ones
    order = sorted(batch.models, key=lambda m: (m.status is VerdictWord.PASS, m.name))
    details: dict[str, str] = {}
    for m in order:
        if m.result is not None and m.verdict is not None:
            body = md.render(m.result, m.verdict, limit=limit)
        else:
            body = md_escape(m.error or "")
        details[m.name] = (
            f"<details><summary>{_ICON[m.status]} {html_text(m.name)}: "
            f"{html_text(_summary(m))}</summary>\n\n{body}\n\n</details>"
        )
    folded: list[str] = []
    foot = f"<sub>ad-diff {__version__}</sub>\n"

    def assemble() -> str:
        shown = [details[m.name] for m in order if m.name not in folded]
        note = (
            f"_Details folded to fit the comment limit: {', '.join(folded)} (see the JSON report)._\n\n"
            if folded
            else ""
        )
        return "\n".join(head) + "\n\n" + "\n\n".join(shown) + ("\n\n" if shown else "") + note + foot

    text = assemble()
    for m in [m for m in reversed(order) if m.status is VerdictWord.PASS] + [
        m for m in reversed(order) if m.status is not VerdictWord.PASS
    ]:
        if len(text) <= limit:
            break
        folded.append(m.name)
        text = assemble()
    if len(text) > limit:
        text = text[: limit - 120].rsplit("\n", 1)[0] + "\n\n_Summary truncated to fit the comment limit._\n"
    return text


DEFAULT_WIDTH = 120
"""Width of the terminal report when none is given (the CLI passes the terminal's)."""


def render_terminal(batch: BatchResult, color: bool = False, width: int = DEFAULT_WIDTH) -> str:
    """Summary table plus the gated findings of each failing model."""
    batch = values(batch)  # every value on one line, bounded (core/sinks.py)
    con = console(width, color)
    con.print(Text(f"ad-diff batch: {_title(batch)}", style="bold red" if batch.exit_code else "bold green"))
    t = Table(title_justify="left")
    for col in ("model", "verdict", "gated", "errors", "warnings", "summary"):
        t.add_column(col, overflow="fold")
    for m in batch.models:
        g, e, w = _counts(m)
        t.add_row(Text(m.name), Text(m.status.value, style=_STYLE[m.status]), str(g), str(e), str(w),
                  Text(_summary(m)))
    con.print(t)
    for m in batch.models:
        if m.verdict is not None and m.verdict.gated:
            con.print(Text(f"{m.name}:", style="bold"))
            for f in m.verdict.gated:
                con.print(Text(f"  {f.code} {f.message}"))
    if batch.baseline_only:
        con.print(
            Text("baseline only (candidate run missing): " + ", ".join(batch.baseline_only), style="red")
        )
    if batch.candidate_only:
        con.print(Text("candidate only (new, not compared): " + ", ".join(batch.candidate_only), style="dim"))
    return con.text()


def to_dict(batch: BatchResult) -> dict[str, Any]:
    """The batch as JSON-able data; each model's ``report`` is the single-comparison JSON report."""
    return {
        "schema_version": json_report.SCHEMA_VERSION,
        "kind": "batch",
        "tool": {"name": "ad-diff", "version": __version__},
        "verdict": batch.verdict.value,
        "exit_code": batch.exit_code,
        "fail_on": batch.fail_on,
        "baseline_root": str(batch.baseline_root),
        "candidate_root": str(batch.candidate_root),
        "models": [
            {
                "name": m.name,
                "status": m.status.value,
                "exit_code": m.exit_code,
                "error": m.error,
                "report": json_report.to_dict(m.result, m.verdict) if m.result and m.verdict else None,
            }
            for m in batch.models
        ],
        "unpaired": {
            "baseline_only": list(batch.baseline_only),
            "candidate_only": list(batch.candidate_only),
        },
    }


def render_json(batch: BatchResult) -> str:
    """Byte-stable JSON of the batch."""
    batch = values(batch, lines=False)  # every value bounded (core/sinks.py)
    return dumps(to_dict(batch), sort_keys=True) + "\n"
