"""What the reports show of the graph analysis (:class:`~ad_diff.core.view.SectionView`): the document of
the PR comment, the terminal's glance, the HTML page (:mod:`.page`). Pure: each reporter escapes and draws."""

from __future__ import annotations

from collections.abc import Collection

from ad_diff.core.model import BASELINE, CANDIDATE, RUNS
from ad_diff.core.view import (
    BREAK,
    Block,
    Code,
    Column,
    Details,
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
    inline,
    line,
    names,
    text,
)
from ad_diff.kinds.graph.diff import Absence, Coverage, GraphAnalysis, MetaChangeKind, TransformGraphDiff
from ad_diff.kinds.graph.model import Region

MAX_SNIPPET_LINES = 12
"""Lines per side in a before/after snippet."""
MAX_REGIONS_SHOWN = 3
"""Regions shown per transform (the JSON report has them all)."""
MAX_KEYS_SHOWN = 8
"""Transform keys listed per sentence ("restored in the candidate: ..."), then a count."""

ABSENCE_TEXT = {
    Absence.RESTORED: "Restored in the {run} (not compared: the run restored a cached graph past them)",
    Absence.CUT: "Dumps missing at the end of the {run}'s folder (its log shows they ran: the folder is cut "
                 "short)",
    Absence.LOST: "Dumps lost from the {run}'s folder (its log shows they ran)",
    Absence.NOT_REACHED: "Not reached by the {run} (it stopped earlier)",
    Absence.UNREADABLE: "Unreadable in the {run}",
}
"""How the section names dumps one run lacks for a reason other than "it ran in the other run only"."""


def _cov(c: Coverage | None) -> str:
    return "-" if c is None else f"{100 * c.nodes:.1f}%"


def _pairs(d: TransformGraphDiff) -> str:
    return ", ".join(f"{k.value} {v}" for k, v in d.pairs_by_kind) or "-"


def _status(d: TransformGraphDiff) -> str:
    if not d.two_sided:
        missing = BASELINE if d.baseline_file is None else CANDIDATE
        if d.missing in (None, Absence.NOT_RUN):
            return f"{CANDIDATE if missing == BASELINE else BASELINE} only"
        return f"{d.missing.value.replace('_', ' ')} in {missing}"
    if d.identical:
        return "identical"
    return "same structure" if d.structure_equal else "differs"


def interesting(d: TransformGraphDiff) -> bool:
    """Worth a row: not byte-identical, or one-sided, or carrying hints."""
    return not d.identical or not d.two_sided or bool(d.hints)


def names_only(rows: list[TransformGraphDiff]) -> bool:
    """True if every one of these dump pairs has the same structure, metadata and no hint: they differ in
    node names alone (a rename), so there is no difference to carry."""
    return all(d.two_sided and d.structure_equal and not d.meta_changes and not d.hints for d in rows)


def later_text(rows: list[TransformGraphDiff]) -> str:
    """``26 later transform(s)`` (``26 transform(s)`` when no earlier row shows a difference they carry)."""
    return f"{len(rows)} {'transform(s)' if names_only(rows) else 'later transform(s)'}"


def regression_transforms(a: GraphAnalysis) -> list[TransformGraphDiff]:
    """Transforms where something new appears: regions, metadata losses or root-cause hints."""
    return [d for d in a.transforms if d.new_regions or d.new_meta_changes or d.hints]


def snippet(region: Region) -> str:
    """Unified-diff-like text of a region: baseline lines as ``-``, candidate lines as ``+``."""
    lines = [f"- {ln}" for ln in region.baseline_lines[:MAX_SNIPPET_LINES]]
    if len(region.baseline) > MAX_SNIPPET_LINES:
        lines.append(f"- ... {len(region.baseline) - MAX_SNIPPET_LINES} more baseline node(s)")
    lines += [f"+ {ln}" for ln in region.candidate_lines[:MAX_SNIPPET_LINES]]
    if len(region.candidate) > MAX_SNIPPET_LINES:
        lines.append(f"+ ... {len(region.candidate) - MAX_SNIPPET_LINES} more candidate node(s)")
    return "\n".join(lines)


def is_new(d: TransformGraphDiff) -> bool:
    """Something appears at this transform: new regions or metadata losses, hints, a dump of a transform that
    ran in one run only (dumps missing for another reason are listed in one sentence each)."""
    one_sided = not d.two_sided and d.missing in (None, Absence.NOT_RUN)
    return bool(d.new_regions or d.new_meta_changes or d.hints) or one_sided


def not_compared(a: GraphAnalysis) -> list[tuple[str, Absence, list[str]]]:
    """``(run, reason, keys)`` of the dumps one run lacks for a reason other than a one-sided transform."""
    out: list[tuple[str, Absence, list[str]]] = []
    for run in RUNS:
        for why in ABSENCE_TEXT:
            keys = [d.key for d in a.transforms if d.missing is why
                    and (d.baseline_file if run == BASELINE else d.candidate_file) is None]
            if keys:
                out.append((run, why, keys))
    return out


def moved_line(d: TransformGraphDiff) -> Line:
    """The sentence for a transform the runs ran in another order, its names marked."""
    assert d.moved is not None
    return line(code(d.key), " ran at another place in the pipeline: after ", code(d.moved[0]),
                " in the baseline, after ", code(d.moved[1]), " in the candidate")


def moved_text(d: TransformGraphDiff) -> str:
    """:func:`moved_line` as plain text."""
    return "".join(s.text for s in moved_line(d))


def _row(d: TransformGraphDiff, ignored: Collection[str]) -> tuple[Line, ...]:
    # Four narrow columns, so a 45-character transform name still fits a 780 px comment; the stage and the
    # pairs by match kind are in the JSON report.
    nb = sum(1 for u in d.unmatched if u.run == BASELINE)
    name = d.transform + (f"#{d.occurrence}" if d.occurrence else "")
    status = "ignored" if d.transform in ignored else _status(d)
    return (line(code(name)), line(status),
            line(f"{nb} / {len(d.unmatched) - nb} · {len(d.regions)} ({len(d.new_regions)})"),
            line(_cov_change(d)))


def _cov_change(d: TransformGraphDiff) -> str:
    """``100.0% → 97.9%``, or the one value when both runs have the same coverage (a narrower cell)."""
    b, c = _cov(d.coverage.baseline), _cov(d.coverage.candidate)
    return b if b == c else f"{b} \u2192 {c}"


_COLUMNS = (Column(line("Transform")), Column(line("Dumps")),
            Column(line("Unmatched B / C", BREAK, "· regions (new)"), right=True),
            Column(line("Metadata", BREAK, "B → C"), right=True))
"""The document's table of the transforms whose dumps differ."""


def _lost(d: TransformGraphDiff) -> list[Line]:
    lost = [m for m in d.new_meta_changes if m.kind is MetaChangeKind.LOST]
    if not lost:
        return []
    coverage = f"{_cov(d.coverage.candidate_before)} -> {_cov(d.coverage.candidate)}"
    return [line(f"metadata lost on {len(lost)} node(s): ", *names([m.candidate for m in lost], 5),
                 f" (candidate coverage {coverage})")]


def _transform(d: TransformGraphDiff) -> list[Block]:
    """Where something new appears at ``d``: its hints and lost metadata, its new regions folded."""
    hints = [line("root-cause hint (", h.kind.value, "): ", inline(h.message)) for h in d.hints]
    out: list[Block] = [Heading(line(code(d.key))), Items((*hints, *_lost(d)))]
    new = [r for r in d.regions if r.new]
    for r in new[:MAX_REGIONS_SHOWN]:
        summary = (f"Region {r.id} ({r.kind.value}): {len(r.baseline)} baseline node(s) vs "
                   f"{len(r.candidate)} candidate node(s)")
        out.append(Details(line(summary), (Code(snippet(r), "diff"),), summary_apart=True))
    if len(new) > MAX_REGIONS_SHOWN:
        out.append(Para(line(f"{len(new) - MAX_REGIONS_SHOWN} more new region(s) in the JSON report.")))
    return out


def document(a: GraphAnalysis, ignored: Collection[str] = ()) -> tuple[Block, ...]:
    """The ``Graph dumps`` section of the PR comment; transforms in ``ignored`` (``--ignore-transform``) are
    marked so in the table and get no details."""
    fmts = ", ".join(a.formats) or "none"
    if a.first_divergence is not None:
        head = line(f"Dump formats: {fmts}. First structural divergence after ", code(a.first_divergence),
                    f": {a.first_divergence_detail or ''}")
    else:
        head = line(f"Dump formats: {fmts}. The graphs have the same structure after every paired transform.")
    out: list[Block] = [Para(head)]
    out += [Para((*moved_line(d), text("."))) for d in a.transforms if d.moved is not None]
    for label, keys in ((BASELINE, a.only_baseline), (CANDIDATE, a.only_candidate)):
        if keys:
            out.append(Para(line(f"Dumps only in the {label} (it alone ran them): ",
                                 *names(list(keys), MAX_KEYS_SHOWN))))
    for run, why, missing in not_compared(a):
        out.append(Para(line(f"{ABSENCE_TEXT[why].format(run=run)}: ", *names(missing, MAX_KEYS_SHOWN))))
    rows = [d for d in a.transforms if interesting(d)]
    if rows:
        # Differences carry over to every later dump, so the table would repeat them ~90 times in a real
        # run: show the transforms where something new appears, fold the full table.
        new_rows = [d for d in rows if is_new(d)]
        later = [d for d in rows if not is_new(d)]
        if new_rows:
            out.append(Table(_COLUMNS, tuple(_row(d, ignored) for d in new_rows)))
        if later:  # the rows above are not repeated in the fold
            summary = later_text(later) + " whose dumps " + (
                "differ in node names only" if names_only(later) else "carry the same differences")
            out.append(Details(line(summary), (Table(_COLUMNS, tuple(_row(d, ignored) for d in later)),)))
    for d in regression_transforms(a):
        if d.transform not in ignored:
            out += _transform(d)
    return tuple(out)


def _table(rows: list[TransformGraphDiff], narrow: bool) -> Table:
    """The terminal table of the transforms where differences appear (fewer columns when ``narrow``)."""
    cols = (("Transform: dumps", "Unmatched B/C · regions (new) · metadata B → C") if narrow else
            ("Transform", "Dumps", "Pairs", "Unmatched B/C", "Regions (new)", "Meta B", "Meta C"))
    out: list[tuple[Line, ...]] = []
    for d in rows:
        nb = sum(1 for u in d.unmatched if u.run == BASELINE)
        unmatched, regions = f"{nb}/{len(d.unmatched) - nb}", f"{len(d.regions)} ({len(d.new_regions)})"
        if narrow:  # two columns, each figure on a line of its own: the name keeps the room to stay whole
            out.append((line(d.key, "\n", text(_status(d), Tone.MUTED)),
                        line(f"{unmatched} · {regions}\n{_cov_change(d)}")))
        else:
            out.append(tuple(line(c) for c in (d.key, _status(d), _pairs(d), unmatched, regions,
                                                _cov(d.coverage.baseline), _cov(d.coverage.candidate))))
    return Table(tuple(Column(line(c)) for c in cols), tuple(out), "Graph dumps: where differences appear")


def glance(a: GraphAnalysis) -> tuple[Block, ...]:
    """The same at a glance, for the terminal."""
    parts: list[Block] = []
    if a.first_divergence is not None:
        parts.append(Para(line(text("First structural divergence: ", Tone.STRONG), a.first_divergence, " - ",
                               a.first_divergence_detail or "")))
    else:
        parts.append(Para(line(text("Graphs: same structure after every paired transform.", Tone.GOOD))))
    for d in a.transforms:
        if d.moved is not None:
            parts.append(Para(line(text(moved_text(d), Tone.WARN))))
    for label, keys in ((BASELINE, a.only_baseline), (CANDIDATE, a.only_candidate)):
        if keys:
            parts.append(Para(line(text(f"Dumps only in the {label} (it alone ran them): "
                                        + _plain_keys(list(keys)), Tone.WARN))))
    for run, why, missing in not_compared(a):
        tone = Tone.BAD if why in (Absence.CUT, Absence.LOST) else Tone.WARN
        parts.append(Para(line(text(f"{ABSENCE_TEXT[why].format(run=run)}: {_plain_keys(missing)}", tone))))
    all_rows = [d for d in a.transforms if interesting(d)]
    rows = [d for d in all_rows if is_new(d)]
    if len(all_rows) > len(rows):
        later = [d for d in all_rows if not is_new(d)]
        what = "differ in node names only" if names_only(later) else "carry the same differences"
        parts.append(Para(line(text(f"{later_text(later)} {what} (full table: --markdown, --json or --html)",
                                    Tone.MUTED))))
    if rows:
        parts.append(Fit((_table(rows, narrow=False),), (_table(rows, narrow=True),)))
    for d in regression_transforms(a):
        for h in d.hints:
            parts.append(Para(line(text("hint ", Tone.LABEL), f"{d.key}: ", inline(h.message))))
        for r in [r for r in d.regions if r.new][:1]:
            parts.append(Para(line(text(f"{d.key}", Tone.STRONG),
                                   text(f" region {r.id} ({r.kind.value}):", Tone.STRONG))))
            parts.append(Code(snippet(r), "diff"))
    return tuple(parts)


def _plain_keys(keys: list[str]) -> str:
    shown = ", ".join(keys[:MAX_KEYS_SHOWN])
    return shown + (f" and {len(keys) - MAX_KEYS_SHOWN} more" if len(keys) > MAX_KEYS_SHOWN else "")


def view(a: GraphAnalysis, ctx: ViewContext, page: Page | None = None) -> SectionView:
    """What the reports show of the graph analysis: the document, the glance, and the HTML ``page``
    (:func:`.page.page`)."""
    return SectionView("graph", "Graph dumps", document(a, ctx.ignored_transforms), glance(a), nav="Graphs",
                       page=page)
