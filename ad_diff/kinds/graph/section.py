"""Graph section of the reports: markdown (PR comment) and a rich renderable for the terminal (pure)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from ad_diff.core import lazy
from ad_diff.core.escape import fence_block, html_code, html_text, md_code, md_escape, md_inline
from ad_diff.core.model import BASELINE, CANDIDATE, RUNS
from ad_diff.kinds.graph.diff import Absence, Coverage, GraphAnalysis, MetaChangeKind, TransformGraphDiff
from ad_diff.kinds.graph.model import Region

if TYPE_CHECKING:
    import rich.console as rich_console
    import rich.table as rich_table
    import rich.text as rich_text
else:
    rich_table = lazy.module("rich.table")
    rich_text = lazy.module("rich.text")
    rich_console = lazy.module("rich.console")

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


def _keys(keys: list[str], code: bool = True) -> str:
    shown = ", ".join(md_code(k) if code else k for k in keys[:MAX_KEYS_SHOWN])
    return shown + (f" and {len(keys) - MAX_KEYS_SHOWN} more" if len(keys) > MAX_KEYS_SHOWN else "")


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


def moved_text(d: TransformGraphDiff, code: bool = True) -> str:
    """The sentence for a transform the runs ran in another order."""
    assert d.moved is not None
    q = md_code if code else str
    return (f"{q(d.key)} ran at another place in the pipeline: after {q(d.moved[0])} in the baseline, after "
            f"{q(d.moved[1])} in the candidate")


def _md_row(d: TransformGraphDiff, ignored: Collection[str] = ()) -> str:
    # Four narrow columns, so a 45-character transform name still fits a 780 px comment; the stage and the
    # pairs by match kind are in the JSON report.
    nb = sum(1 for u in d.unmatched if u.run == BASELINE)
    name = d.transform + (f"#{d.occurrence}" if d.occurrence else "")
    status = "ignored" if d.transform in ignored else _status(d)
    return (f"| {html_code(name)} | {status} | {nb} / {len(d.unmatched) - nb} · {len(d.regions)} "
            f"({len(d.new_regions)}) | {_cov_change(d)} |")


def _cov_change(d: TransformGraphDiff) -> str:
    """``100.0% → 97.9%``, or the one value when both runs have the same coverage (a narrower cell)."""
    b, c = _cov(d.coverage.baseline), _cov(d.coverage.candidate)
    return b if b == c else f"{b} \u2192 {c}"


def render_markdown(a: GraphAnalysis, ignored: Collection[str] = ()) -> str:
    """The ``Graph dumps`` section of the PR comment; transforms in ``ignored`` (``--ignore-transform``) are
    marked so in the table and get no details."""
    out = ["### Graph dumps", ""]
    fmts = ", ".join(a.formats) or "none"
    if a.first_divergence is not None:
        out.append(
            f"Dump formats: {md_escape(fmts)}. First structural divergence after "
            f"{md_code(a.first_divergence)}: {md_escape(a.first_divergence_detail or '')}"
        )
    else:
        out.append(f"Dump formats: {md_escape(fmts)}. The graphs have the same structure after every paired "
                   "transform.")
    for d in a.transforms:
        if d.moved is not None:
            out.append(f"\n{moved_text(d)}.")
    for label, keys in ((BASELINE, a.only_baseline), (CANDIDATE, a.only_candidate)):
        if keys:
            out.append(f"\nDumps only in the {label} (it alone ran them): " + _keys(list(keys)))
    for run, why, missing in not_compared(a):
        out.append(f"\n{md_escape(ABSENCE_TEXT[why].format(run=run))}: " + _keys(missing))
    rows = [d for d in a.transforms if interesting(d)]
    if rows:
        # Differences carry over to every later dump, so the table would repeat them ~90 times in a real
        # run: show the transforms where something new appears, fold the full table.
        head = ["| Transform | Dumps | Unmatched B / C<br>· regions (new) | Metadata<br>B → C |",
                "|---|---|---:|---:|"]
        new_rows = [d for d in rows if is_new(d)]
        later = [d for d in rows if not is_new(d)]
        if new_rows:
            out += ["", *head, *(_md_row(d, ignored) for d in new_rows)]
        if later:  # the rows above are not repeated in the fold
            summary = later_text(later) + " whose dumps " + (
                "differ in node names only" if names_only(later) else "carry the same differences")
            out += ["", f"<details><summary>{summary}</summary>", "", *head,
                    *(_md_row(d, ignored) for d in later), "", "</details>"]
    for d in regression_transforms(a):
        if d.transform in ignored:
            continue
        out += ["", f"#### {md_code(d.key)}", ""]
        for h in d.hints:
            out.append(f"- root-cause hint ({md_escape(h.kind.value)}): {md_inline(h.message)}")
        lost = [m for m in d.new_meta_changes if m.kind is MetaChangeKind.LOST]
        if lost:
            names = ", ".join(md_code(m.candidate) for m in lost[:5])
            more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
            out.append(
                f"- metadata lost on {len(lost)} node(s): {names}{more} "
                f"(candidate coverage {_cov(d.coverage.candidate_before)} -> {_cov(d.coverage.candidate)})"
            )
        new = [r for r in d.regions if r.new]
        for r in new[:MAX_REGIONS_SHOWN]:
            summary = (f"Region {r.id} ({r.kind.value}): {len(r.baseline)} baseline node(s) vs "
                       f"{len(r.candidate)} candidate node(s)")
            out += ["", "<details>", f"<summary>{html_text(summary)}</summary>", "",
                    fence_block(snippet(r), "diff"), "", "</details>"]
        if len(new) > MAX_REGIONS_SHOWN:
            out.append(f"\n{len(new) - MAX_REGIONS_SHOWN} more new region(s) in the JSON report.")
    return "\n".join(out) + "\n"


def _table(rows: list[TransformGraphDiff], narrow: bool) -> rich_console.RenderableType:
    """The terminal table of the transforms where differences appear (fewer columns when ``narrow``)."""
    Table = rich_table.Table
    Text = rich_text.Text

    t = Table(title="Graph dumps: where differences appear", show_lines=False)
    cols = (("Transform: dumps", "Unmatched B/C · regions (new) · metadata B → C") if narrow else
            ("Transform", "Dumps", "Pairs", "Unmatched B/C", "Regions (new)", "Meta B", "Meta C"))
    for col in cols:
        t.add_column(col, overflow="fold")
    for d in rows:
        nb = sum(1 for u in d.unmatched if u.run == BASELINE)
        unmatched, regions = f"{nb}/{len(d.unmatched) - nb}", f"{len(d.regions)} ({len(d.new_regions)})"
        if narrow:  # two columns, each figure on a line of its own: the name keeps the room to stay whole
            t.add_row(Text.assemble(d.key, "\n", (_status(d), "dim")),
                      Text(f"{unmatched} · {regions}\n{_cov_change(d)}"))
        else:
            t.add_row(*(Text(c) for c in (d.key, _status(d), _pairs(d), unmatched, regions,
                                          _cov(d.coverage.baseline), _cov(d.coverage.candidate))))
    return t


def render_terminal(a: GraphAnalysis) -> rich_console.RenderableType:
    """The same at a glance, as a rich renderable (rich imported lazily); every name is literal text."""
    Group = rich_console.Group
    Text = rich_text.Text

    from ad_diff.core.terminal import Responsive, inline  # lazy: rich loads only for the terminal report

    parts: list[rich_console.RenderableType] = []
    if a.first_divergence is not None:
        parts.append(Text.assemble(("First structural divergence: ", "bold"), a.first_divergence, " - ",
                                   a.first_divergence_detail or ""))
    else:
        parts.append(Text("Graphs: same structure after every paired transform.", style="green"))
    for d in a.transforms:
        if d.moved is not None:
            parts.append(Text(moved_text(d, code=False), style="yellow"))
    for label, keys in ((BASELINE, a.only_baseline), (CANDIDATE, a.only_candidate)):
        if keys:
            parts.append(Text(f"Dumps only in the {label} (it alone ran them): " + _keys(list(keys), False),
                              style="yellow"))
    for run, why, missing in not_compared(a):
        parts.append(Text(f"{ABSENCE_TEXT[why].format(run=run)}: {_keys(missing, False)}",
                          style="red" if why in (Absence.CUT, Absence.LOST) else "yellow"))
    all_rows = [d for d in a.transforms if interesting(d)]
    rows = [d for d in all_rows if is_new(d)]
    if len(all_rows) > len(rows):
        later = [d for d in all_rows if not is_new(d)]
        what = "differ in node names only" if names_only(later) else "carry the same differences"
        parts.append(Text(f"{later_text(later)} {what} (full table: --markdown, --json or --html)",
                          style="dim"))
    if rows:
        parts.append(Responsive(lambda: _table(rows, narrow=False), lambda: _table(rows, narrow=True)))
    for d in regression_transforms(a):
        for h in d.hints:
            parts.append(Text.assemble(("hint ", "bold cyan"), f"{d.key}: ", inline(h.message)))
        for r in [r for r in d.regions if r.new][:1]:
            body = Text()
            for ln in snippet(r).split("\n"):
                body.append(ln + "\n", style="red" if ln.startswith("-") else "green")
            parts.append(Text.assemble((f"{d.key}", "bold"), (f" region {r.id} ({r.kind.value}):", "bold")))
            parts.append(body)
    return Group(*parts)
