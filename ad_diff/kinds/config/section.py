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

CHECK_TEXT: dict[str, str] = {
    "enabled_but_disabled": "enabled in config, logged disabled",
    "enabled_but_absent": "enabled in config, absent from a complete log",
    "disabled_but_ran": "disabled in config, but ran",
    "stage_mismatch": "stage differs from the log",
    "not_in_config": "logged, but no config mentions it",
}


def change_value(c: ConfigChange, side: str) -> str:
    """The value of ``c`` on ``side`` (``before``/``after``) as shown, ``(absent)`` where it has none."""
    if (side == "before" and c.kind == "added") or (side == "after" and c.kind == "removed"):
        return "(absent)"
    return show_value(c.before if side == "before" else c.after)


def change_label(c: ConfigChange) -> str:
    """What changed, in a few words: ``key added``, ``enabled``, or the key path below the transform."""
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
                    f"| {html_code(t.transform)} | {md_escape(change_label(c))} | "
                    f"{html_code(change_value(c, 'before'))} | {html_code(change_value(c, 'after'))} | "
                    f"{html_code(origin) if origin else ''} |"
                )
        out.append("")
    if diff is not None and diff.settings:
        out += ["#### Setting changes", "", "| Setting | Baseline | Candidate | Set in |", "|---|---|---|---|"]
        for s in diff.settings:
            origin = s.origin()
            before, after = html_code(change_value(s, "before")), html_code(change_value(s, "after"))
            out.append(f"| {html_code(s.key)} | {before} | {after} | {html_code(origin) if origin else ''} |")
        out.append("")
    if analysis.checks:
        out += ["#### Config applied? (each run's config against its own log)", ""]
        for ch in analysis.checks:  # a list, not a seven-column table: it must fit a 780 px comment
            origin = f" ({md_code(ch.origin)})" if ch.origin else ""
            line = f", line {ch.log_line}" if ch.log_line is not None else ""
            out.append(
                f"- {ch.run}: {md_code(ch.transform)} {md_escape(CHECK_TEXT.get(ch.kind, ch.kind))}: config "
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


def _terminal_tables(analysis: ConfigAnalysis, narrow: bool) -> list[Any]:
    """The config tables of the terminal report; ``narrow`` leaves out the columns a narrow terminal cannot
    hold (each transform's stage; the config source of a check goes below its problem)."""
    from rich.table import Table
    from rich.text import Text

    def table(cols: tuple[str, ...], title: str | None, rows: Sequence[tuple[str, ...]]) -> Table:
        t = Table(title=title)
        for col in cols:
            t.add_column(col, overflow="fold")
        for row in rows:
            t.add_row(*(Text(x) for x in row))
        return t

    out: list[Any] = []
    src = [(run, "none", "", "") if cfg is None else
           (run, cfg.source.kind, " -> ".join(cfg.source.files), cfg.source.order_rule)
           for run, cfg in (("baseline", analysis.baseline), ("candidate", analysis.candidate))]
    out.append(table(("Run", "Config", "Files (merge order)", "Order"), None, src))
    diff = analysis.diff
    if diff is not None and diff.transforms:
        rows = [(tc.transform, *(() if narrow else (tc.stage or "",)), change_label(c), change_value(c, "before"),
                 change_value(c, "after"), c.origin() or "") for tc in diff.transforms for c in tc.changes]
        cols = ("Transform", *(() if narrow else ("Stage",)), "Change", "Baseline", "Candidate", "Set in")
        out.append(table(cols, "Transform config changes (pipeline order)", rows))
    if diff is not None and diff.settings:
        rows = [(s.key, change_value(s, "before"), change_value(s, "after"), s.origin() or "") for s in diff.settings]
        out.append(table(("Setting", "Baseline", "Candidate", "Set in"), "Setting changes", rows))
    if analysis.checks:
        text = [(ch, CHECK_TEXT.get(ch.kind, ch.kind)) for ch in analysis.checks]
        if narrow:
            rows = [(ch.run, ch.transform, p + (f" ({ch.origin})" if ch.origin else ""),
                     f"{ch.config_value} / {ch.log_value}") for ch, p in text]
            out.append(table(("Run", "Transform", "Problem (config source)", "Config / log"),
                             "Config applied?", rows))
        else:
            rows = [(ch.run, ch.transform, p, ch.config_value, ch.log_value, ch.origin or "")
                    for ch, p in text]
            out.append(table(("Run", "Transform", "Problem", "Config", "Log", "Config source"),
                             "Config applied?", rows))
    return out


def render_terminal(analysis: ConfigAnalysis, findings: Sequence[Finding] = ()) -> Any:
    """A rich renderable (``Group`` of tables) for the terminal report; rich is imported lazily. Every
    name and value is literal text."""
    from rich.console import Group
    from rich.text import Text

    from ad_diff.core.terminal import Responsive

    parts: list[Any] = [Text("Configuration", style="bold")]
    parts.append(Responsive(lambda: Group(*_terminal_tables(analysis, False)),
                            lambda: Group(*_terminal_tables(analysis, True))))
    explained, unexplained = explanation_lists(findings or analysis.explained)
    for f in unexplained:
        parts.append(Text(f"unexplained: {f.message}", style="bold yellow"))
    for f in explained:
        parts.append(Text(f"explained by config: {f.message} — {f.explained_by}", style="dim"))
    for n in analysis.notes:
        parts.append(Text(f"note: {n}", style="dim"))
    return Group(*parts)
