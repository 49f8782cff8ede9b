"""What the reports show of the configuration section (:class:`~ad_diff.core.view.SectionView`): each run's
config source, what changed, what the logs contradict; the HTML page is :mod:`.page`.

Pure functions of a :class:`~ad_diff.kinds.config.model.ConfigAnalysis` after the explain stage (which
attached the findings config explains and the unexplained ones). Every name and value from the inputs is
escaped by the reporter that draws it: it comes from files the reviewer did not write.
"""

from __future__ import annotations

from collections.abc import Sequence

from ad_diff.core.model import RUNS
from ad_diff.core.view import (
    Block,
    Column,
    Fit,
    Heading,
    Items,
    Line,
    Page,
    Para,
    SectionView,
    Table,
    Tone,
    ViewContext,
    code,
    em,
    line,
    strong,
    text,
)
from ad_diff.kinds.config.model import ChangeKind, CheckKind, ConfigAnalysis, ConfigChange, EffectiveConfig

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


def _source_item(run: str, cfg: EffectiveConfig | None) -> Line:
    if cfg is None:
        return line(f"{run}: no config")
    files = [s for i, f in enumerate(cfg.source.files) for s in ((text(" → "),) if i else ()) + (code(f),)]
    return line(f"{run}: {cfg.source.kind}, ", *files, f" (merge order, later wins; {cfg.source.order_rule})")


def _origin(origin: str | None) -> Line:
    """The file (and line) that set a value, as a table cell; an empty cell when unknown."""
    return line(code(origin)) if origin else ()


def _notes(analysis: ConfigAnalysis) -> list[str]:
    notes = [*analysis.notes]
    for run, cfg in zip(RUNS, (analysis.baseline, analysis.candidate), strict=True):
        if cfg is not None:
            notes += [f"{run}: {n}" for n in cfg.source.notes]
    return notes


def document(analysis: ConfigAnalysis) -> tuple[Block, ...]:
    """The configuration section of the PR-comment report."""
    # a list, not a table: file chains are long and must wrap in a 780 px comment
    sides = (analysis.baseline, analysis.candidate)
    out: list[Block] = [Items(tuple(_source_item(run, cfg) for run, cfg in zip(RUNS, sides, strict=True)))]
    diff = analysis.diff
    if diff is not None and diff.identical:
        out.append(Para(line("The two effective configs are identical.")))
    if diff is not None and diff.transforms:
        # five narrow columns for a 780 px comment; each transform's stage is in the JSON report
        cols = tuple(Column(line(c)) for c in ("Transform", "Change", "Baseline", "Candidate", "Set in"))
        rows: tuple[tuple[Line, ...], ...] = tuple(
            (line(code(t.transform)), line(change_label(c)), line(code(c.before_text)),
             line(code(c.after_text)), _origin(c.origin())) for t in diff.transforms for c in t.changes)
        out += [Heading(line("Transform config changes (pipeline order)")), Table(cols, rows)]
    if diff is not None and diff.settings:
        cols = tuple(Column(line(c)) for c in ("Setting", "Baseline", "Candidate", "Set in"))
        rows = tuple((line(code(s.key)), line(code(s.before_text)), line(code(s.after_text)),
                      _origin(s.origin())) for s in diff.settings)
        out += [Heading(line("Setting changes")), Table(cols, rows)]
    if analysis.checks:
        items = []
        for ch in analysis.checks:  # a list, not a seven-column table: it must fit a 780 px comment
            origin = (text(" ("), code(ch.origin), text(")")) if ch.origin else ()
            where = f", line {ch.log_line}" if ch.log_line is not None else ""
            items.append(line(f"{ch.run}: ", code(ch.transform), f" {CHECK_TEXT[ch.kind]}: config ",
                              code(ch.config_value), *origin, ", log ", code(ch.log_value), where))
        out += [Heading(line("Config applied? (each run's config against its own log)")), Items(tuple(items))]
    if analysis.unexplained:
        out += [Heading(line("Unexplained state changes")),
                Items(tuple(line(strong("unexplained"), f": {f.message}") for f in analysis.unexplained))]
    if analysis.explained:
        items = [line(em("explained by config"), f" ({f.code}, {'gates' if f.gating else 'does not gate'}): "
                      f"{f.message} — {f.explained_by}") for f in analysis.explained]
        out += [Heading(line("Changes explained by config")), Items(tuple(items))]
    notes = _notes(analysis)
    if notes:
        out += [Para(line("Notes:")), Items(tuple(line(n) for n in notes))]
    return tuple(out)


def _terminal_tables(analysis: ConfigAnalysis, narrow: bool) -> tuple[Block, ...]:
    """The config tables of the terminal report; ``narrow`` leaves out the columns a narrow terminal cannot
    hold (each transform's stage; the config source of a check goes below its problem)."""

    def table(cols: tuple[str, ...], title: str | None, rows: Sequence[tuple[str, ...]]) -> Table:
        return Table(tuple(Column(line(c)) for c in cols), tuple(tuple(line(x) for x in row) for row in rows),
                     title)

    out: list[Block] = []
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
        said = [(ch, CHECK_TEXT[ch.kind]) for ch in analysis.checks]
        if narrow:
            rows = [(ch.run, ch.transform, p + (f" ({ch.origin})" if ch.origin else ""),
                     f"{ch.config_value} / {ch.log_value}") for ch, p in said]
            out.append(table(("Run", "Transform", "Problem (config source)", "Config / log"),
                             "Config applied?", rows))
        else:
            rows = [(ch.run, ch.transform, p, ch.config_value, ch.log_value, ch.origin or "")
                    for ch, p in said]
            out.append(table(("Run", "Transform", "Problem", "Config", "Log", "Config source"),
                             "Config applied?", rows))
    return tuple(out)


def glance(analysis: ConfigAnalysis) -> tuple[Block, ...]:
    """The terminal's tables of the config section, and what config explains or does not."""
    parts: list[Block] = [Heading(line("Configuration")),
                          Fit(_terminal_tables(analysis, False), _terminal_tables(analysis, True))]
    parts += [Para(line(text(f"unexplained: {f.message}", Tone.ALERT))) for f in analysis.unexplained]
    parts += [Para(line(text(f"explained by config: {f.message} — {f.explained_by}", Tone.MUTED)))
              for f in analysis.explained]
    parts += [Para(line(text(f"note: {n}", Tone.MUTED))) for n in analysis.notes]
    return tuple(parts)


def view(analysis: ConfigAnalysis, ctx: ViewContext, page: Page | None = None) -> SectionView:
    """What the reports show of the config comparison (after the explain stage), with its HTML ``page``
    (:func:`.page.page`)."""
    return SectionView("config", "Configuration", document(analysis), glance(analysis), nav="Config",
                       page=page)
