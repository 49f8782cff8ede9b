"""Render the configuration section (``DiffResult.sections["config"]``) as markdown or a rich renderable.

Pure functions of a :class:`~ad_diff.kinds.config.model.ConfigAnalysis` after the explain stage (which
attached the findings config explains and the unexplained ones). Every name and value from the inputs is
escaped: it comes from files the reviewer did not write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ad_diff.core import lazy
from ad_diff.core.escape import html_code, md_code, md_escape
from ad_diff.core.model import RUNS
from ad_diff.kinds.config.model import ChangeKind, CheckKind, ConfigAnalysis, ConfigChange, EffectiveConfig

if TYPE_CHECKING:
    import rich.console as rich_console
    import rich.table as rich_table
    import rich.text as rich_text
else:
    rich_table = lazy.module("rich.table")
    rich_text = lazy.module("rich.text")
    rich_console = lazy.module("rich.console")

CHECK_TEXT: dict[CheckKind, str] = {
    CheckKind.ENABLED_BUT_DISABLED: "enabled in config, logged disabled",
    CheckKind.ENABLED_BUT_ABSENT: "enabled in config, absent from a complete log",
    CheckKind.DISABLED_BUT_RAN: "disabled in config, but ran",
    CheckKind.STAGE_MISMATCH: "stage differs from the log",
    CheckKind.NOT_IN_CONFIG: "logged, but no config mentions it",
    CheckKind.RANKS_MISSING: "a rank of the world size logged no result",
}
"""How each check reads in a report (markdown, terminal, HTML)."""


def change_label(c: ConfigChange) -> str:
    """What changed, in a few words: ``key added``, ``enabled``, or the key path below the transform."""
    if c.kind in (ChangeKind.ADDED, ChangeKind.REMOVED):
        return f"key {c.kind}"
    if c.kind in (ChangeKind.ENABLED, ChangeKind.STAGE):
        word: str = c.kind.value
        return word
    return ".".join(c.path[2:]) if c.path[0] == "transforms" else c.key


def _source_item(run: str, cfg: EffectiveConfig | None) -> str:
    if cfg is None:
        return f"- {run}: no config"
    files = " → ".join(md_code(f) for f in cfg.source.files)
    rule = md_escape(cfg.source.order_rule)
    return f"- {run}: {md_escape(cfg.source.kind)}, {files} (merge order, later wins; {rule})"


def render_markdown(analysis: ConfigAnalysis) -> str:
    """The configuration section of the PR-comment report (starts with a level-3 heading)."""
    out = ["### Configuration", ""]
    # a list, not a table: file chains are long and must wrap in a 780 px comment
    sides = (analysis.baseline, analysis.candidate)
    out += [_source_item(run, cfg) for run, cfg in zip(RUNS, sides, strict=True)] + [""]
    diff = analysis.diff
    if diff is not None and diff.identical:
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
                    f"{html_code(c.before_text)} | {html_code(c.after_text)} | "
                    f"{html_code(origin) if origin else ''} |"
                )
        out.append("")
    if diff is not None and diff.settings:
        out += ["#### Setting changes", "", "| Setting | Baseline | Candidate | Set in |",
                "|---|---|---|---|"]
        for s in diff.settings:
            origin = s.origin()
            before, after = html_code(s.before_text), html_code(s.after_text)
            out.append(f"| {html_code(s.key)} | {before} | {after} | {html_code(origin) if origin else ''} |")
        out.append("")
    if analysis.checks:
        out += ["#### Config applied? (each run's config against its own log)", ""]
        for ch in analysis.checks:  # a list, not a seven-column table: it must fit a 780 px comment
            origin = f" ({md_code(ch.origin)})" if ch.origin else ""
            line = f", line {ch.log_line}" if ch.log_line is not None else ""
            out.append(
                f"- {ch.run}: {md_code(ch.transform)} {md_escape(CHECK_TEXT[ch.kind])}: config "
                f"{md_code(ch.config_value)}{origin}, log {md_code(ch.log_value)}{line}"
            )
        out.append("")
    if analysis.unexplained:
        out += ["#### Unexplained state changes", ""]
        out += [f"- **unexplained**: {md_escape(f.message)}" for f in analysis.unexplained]
        out.append("")
    if analysis.explained:
        out += ["#### Changes explained by config", ""]
        for f in analysis.explained:
            gate = "gates" if f.gating else "does not gate"
            out.append(f"- *explained by config* ({md_escape(f.code)}, {gate}): {md_escape(f.message)} — "
                       f"{md_escape(f.explained_by)}")
        out.append("")
    notes = [*analysis.notes]
    for run, cfg in zip(RUNS, (analysis.baseline, analysis.candidate), strict=True):
        if cfg is not None:
            notes += [f"{run}: {n}" for n in cfg.source.notes]
    if notes:
        out += ["Notes:", ""] + [f"- {md_escape(n)}" for n in notes] + [""]
    return "\n".join(out).rstrip() + "\n"


def _terminal_tables(analysis: ConfigAnalysis, narrow: bool) -> list[Any]:
    """The config tables of the terminal report; ``narrow`` leaves out the columns a narrow terminal cannot
    hold (each transform's stage; the config source of a check goes below its problem)."""
    Table = rich_table.Table
    Text = rich_text.Text

    def table(cols: tuple[str, ...], title: str | None, rows: Sequence[tuple[str, ...]]) -> rich_table.Table:
        t = Table(title=title)
        for col in cols:
            t.add_column(col, overflow="fold")
        for row in rows:
            t.add_row(*(Text(x) for x in row))
        return t

    out: list[Any] = []
    src = [(run, "none", "", "") if cfg is None else
           (run, cfg.source.kind.value, " -> ".join(cfg.source.files), cfg.source.order_rule)
           for run, cfg in zip(RUNS, (analysis.baseline, analysis.candidate), strict=True)]
    out.append(table(("Run", "Config", "Files (merge order)", "Order"), None, src))
    diff = analysis.diff
    if diff is not None and diff.transforms:
        rows = [(tc.transform, *(() if narrow else (tc.stage or "",)), change_label(c), c.before_text,
                 c.after_text, c.origin() or "") for tc in diff.transforms for c in tc.changes]
        cols = ("Transform", *(() if narrow else ("Stage",)), "Change", "Baseline", "Candidate", "Set in")
        out.append(table(cols, "Transform config changes (pipeline order)", rows))
    if diff is not None and diff.settings:
        rows = [(s.key, s.before_text, s.after_text, s.origin() or "") for s in diff.settings]
        out.append(table(("Setting", "Baseline", "Candidate", "Set in"), "Setting changes", rows))
    if analysis.checks:
        text = [(ch, CHECK_TEXT[ch.kind]) for ch in analysis.checks]
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


def render_terminal(analysis: ConfigAnalysis) -> Any:
    """A rich renderable (``Group`` of tables) for the terminal report; rich is imported lazily. Every
    name and value is literal text."""
    Group = rich_console.Group
    Text = rich_text.Text

    from ad_diff.core.terminal import Responsive  # lazy: rich loads only for the terminal report

    parts: list[Any] = [Text("Configuration", style="bold")]
    parts.append(Responsive(lambda: Group(*_terminal_tables(analysis, False)),
                            lambda: Group(*_terminal_tables(analysis, True))))
    for f in analysis.unexplained:
        parts.append(Text(f"unexplained: {f.message}", style="bold yellow"))
    for f in analysis.explained:
        parts.append(Text(f"explained by config: {f.message} — {f.explained_by}", style="dim"))
    for n in analysis.notes:
        parts.append(Text(f"note: {n}", style="dim"))
    return Group(*parts)
