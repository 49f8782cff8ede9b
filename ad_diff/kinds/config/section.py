"""Render the configuration section (``DiffResult.sections["config"]``) as markdown or a rich renderable.

Pure functions of a :class:`~ad_diff.config_model.ConfigAnalysis` (plus, optionally, the explained findings
so the section can list what config explains and what it does not). Every name and value from the inputs
is escaped: it comes from files the reviewer did not write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ad_diff.core.escape import html_code, md_code, md_escape
from ad_diff.core.model import Finding
from ad_diff.kinds.config.model import ConfigAnalysis, ConfigChange, EffectiveConfig, show_value

_CHECK_TEXT = {
    "enabled_but_disabled": "enabled in config, logged disabled",
    "enabled_but_absent": "enabled in config, absent from a complete log",
    "disabled_but_ran": "disabled in config, but ran",
    "stage_mismatch": "stage differs from the log",
    "not_in_config": "logged, but no config mentions it",
}


def _value(c: ConfigChange, side: str) -> str:
    if (side == "before" and c.kind == "added") or (side == "after" and c.kind == "removed"):
        return "(absent)"
    return show_value(c.before if side == "before" else c.after)


def _change_label(c: ConfigChange) -> str:
    if c.kind in ("added", "removed"):
        return f"key {c.kind}"
    if c.kind in ("enabled", "stage"):
        return c.kind
    return ".".join(c.path[2:]) if c.path[0] == "transforms" else c.key


def explanation_lists(findings: Sequence[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(findings explained by config, unexplained state changes), each sorted deterministically."""
    explained = sorted((f for f in findings if f.explained_by), key=Finding.sort_key)
    unexplained = sorted((f for f in findings if f.code == "ADC008"), key=Finding.sort_key)
    return explained, unexplained


def _source_item(run: str, cfg: EffectiveConfig | None) -> str:
    if cfg is None:
        return f"- {run}: no config"
    files = " → ".join(md_code(f) for f in cfg.source.files)
    rule = md_escape(cfg.source.order_rule)
    return f"- {run}: {md_escape(cfg.source.kind)}, {files} (merge order, later wins; {rule})"


def render_markdown(analysis: ConfigAnalysis, findings: Sequence[Finding] = ()) -> str:
    """The configuration section of the PR-comment report (starts with a level-3 heading). The explained /
    unexplained lists come from ``findings`` when given, else from ``analysis.explained``."""
    out = ["### Configuration", ""]
    # a list, not a table: file chains are long and must wrap in a 780 px comment
    out += [_source_item("baseline", analysis.baseline), _source_item("candidate", analysis.candidate), ""]
    diff = analysis.diff
    if diff is not None and not diff:
        out += ["The two effective configs are identical.", ""]
    if diff is not None and diff.transforms:
        out += ["#### Transform config changes (pipeline order)", ""]
        # five narrow columns for a 780 px comment; each transform's stage is in the JSON report
        out += ["| Transform | Change | Baseline | Candidate | Set in |", "|---|---|---|---|---|"]
        for t in diff.transforms:
            for c in t.changes:
                origin = c.origin()
                out.append(
                    f"| {html_code(t.transform)} | {md_escape(_change_label(c))} | "
                    f"{html_code(_value(c, 'before'))} | {html_code(_value(c, 'after'))} | "
                    f"{html_code(origin) if origin else ''} |"
                )
        out.append("")
    if diff is not None and diff.settings:
        out += ["#### Setting changes", "", "| Setting | Baseline | Candidate | Set in |", "|---|---|---|---|"]
        for s in diff.settings:
            origin = s.origin()
            before, after = html_code(_value(s, "before")), html_code(_value(s, "after"))
            out.append(f"| {html_code(s.key)} | {before} | {after} | {html_code(origin) if origin else ''} |")
        out.append("")
    if analysis.checks:
        out += ["#### Config applied? (each run's config against its own log)", ""]
        for ch in analysis.checks:  # a list, not a seven-column table: it must fit a 780 px comment
            origin = f" ({md_code(ch.origin)})" if ch.origin else ""
            line = f", line {ch.log_line}" if ch.log_line is not None else ""
            out.append(
                f"- {ch.run}: {md_code(ch.transform)} {md_escape(_CHECK_TEXT.get(ch.kind, ch.kind))}: config "
                f"{md_code(ch.config_value)}{origin}, log {md_code(ch.log_value)}{line}"
            )
        out.append("")
    explained, unexplained = explanation_lists(findings or analysis.explained)
    if unexplained:
        out += ["#### Unexplained state changes", ""]
        out += [f"- **unexplained**: {md_escape(f.message)}" for f in unexplained]
        out.append("")
    if explained:
        out += ["#### Changes explained by config", ""]
        for f in explained:
            gate = "gates" if f.gating else "does not gate"
            out.append(f"- *explained by config* ({md_escape(f.code)}, {gate}): {md_escape(f.message)} — "
                       f"{md_escape(f.explained_by)}")
        out.append("")
    notes = [*analysis.notes]
    for run, cfg in (("baseline", analysis.baseline), ("candidate", analysis.candidate)):
        if cfg is not None:
            notes += [f"{run}: {n}" for n in cfg.source.notes]
    if notes:
        out += ["Notes:", ""] + [f"- {md_escape(n)}" for n in notes] + [""]
    return "\n".join(out).rstrip() + "\n"


def render_terminal(analysis: ConfigAnalysis, findings: Sequence[Finding] = ()) -> Any:
    """A rich renderable (``Group`` of tables) for the terminal report; rich is imported lazily."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = [Text("Configuration", style="bold")]
    src = Table("Run", "Config", "Files (merge order)", "Order", title=None)
    for run, cfg in (("baseline", analysis.baseline), ("candidate", analysis.candidate)):
        if cfg is None:
            src.add_row(run, "none", "", "")
        else:
            src.add_row(run, cfg.source.kind, Text(" -> ".join(cfg.source.files)), Text(cfg.source.order_rule))
    parts.append(src)
    diff = analysis.diff
    if diff is not None and diff.transforms:
        t = Table("Transform", "Stage", "Change", "Baseline", "Candidate", "Set in",
                  title="Transform config changes (pipeline order)")
        for tc in diff.transforms:
            for c in tc.changes:
                t.add_row(*(Text(x) for x in (tc.transform, tc.stage or "", _change_label(c), _value(c, "before"),
                                                _value(c, "after"), c.origin() or "")))
        parts.append(t)
    if diff is not None and diff.settings:
        t = Table("Setting", "Baseline", "Candidate", "Set in", title="Setting changes")
        for s in diff.settings:
            t.add_row(*(Text(x) for x in (s.key, _value(s, "before"), _value(s, "after"), s.origin() or "")))
        parts.append(t)
    if analysis.checks:
        t = Table("Run", "Transform", "Problem", "Config", "Log", "Config source", title="Config applied?")
        for ch in analysis.checks:
            t.add_row(*(Text(x) for x in (ch.run, ch.transform, _CHECK_TEXT.get(ch.kind, ch.kind),
                                            ch.config_value, ch.log_value, ch.origin or "")))
        parts.append(t)
    explained, unexplained = explanation_lists(findings or analysis.explained)
    for f in unexplained:
        parts.append(Text(f"unexplained: {f.message}", style="bold yellow"))
    for f in explained:
        parts.append(Text(f"explained by config: {f.message} — {f.explained_by}", style="dim"))
    for n in analysis.notes:
        parts.append(Text(f"note: {n}", style="dim"))
    return Group(*parts)
