"""Reporters of a history: pure ``render(history) -> str`` for the terminal (rich) and markdown.

Markdown: the verdict, the steps table, pending changes, flaky transforms, runs not used, then per model
the current counts with changed cells marked. Every name from the input (runs, models, transforms, error
text) is escaped (``md_escape`` / ``md_code``). JSON: :mod:`serialize`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ad_diff.core import lazy
from ad_diff.core.escape import md_code, md_escape
from ad_diff.core.sinks import values
from ad_diff.gate import word
from ad_diff.history.model import ERROR, Change, Flaky, History, RunValue

if TYPE_CHECKING:
    import rich.table as rich_table
    import rich.text as rich_text
else:
    rich_table = lazy.module("rich.table")
    rich_text = lazy.module("rich.text")

MAX_DEVIATIONS = 12
"""Deviations listed per flaky transform in text reports (JSON lists them all)."""
_MARKS = {"down": "▼", "up": "▲", "changed": "●", "pending": "?", "flaky": "~", "": ""}
_CATEGORY = {
    "collapse": "collapse",
    "partial_loss": "partial loss",
    "new_matches": "new matches",
    "state_change": "state change",
}


def _short(commit: str | None) -> str:
    return commit[:10] if commit else ""


def headline(h: History) -> str:
    """``FAIL: 2 gating steps (...)`` / ``PASS: ...`` / ``ERROR: ...``."""
    gating = [s for s in h.steps if s.gates]
    errors = [p for p in h.problems if p.in_window and p.status == ERROR]
    incomplete = [p for p in h.problems if p.in_window and p.status != ERROR]
    parts = []
    if gating:
        kinds: dict[str, int] = {}
        for s in gating:
            kinds[_CATEGORY[s.category]] = kinds.get(_CATEGORY[s.category], 0) + 1
        parts.append(
            f"{len(gating)} gating step(s) (" + ", ".join(f"{n} {k}" for k, n in kinds.items()) + ")"
        )
    if incomplete and h.verdict.exit_code:
        parts.append(f"{len(incomplete)} incomplete run(s)")
    if errors:
        parts.append(f"{len(errors)} unreadable run(s)")
    if not parts:
        parts.append(f"no gating step ({len(h.steps)} step(s) reported)" if h.steps else "no steps")
    losses = [c for c in h.pending if c.gating and c.in_window]
    if losses:  # a green must not hide last night's collapse: it is named, though it does not gate yet
        parts.append(f"{len(losses)} pending loss(es) not yet held {h.min_run} runs")
    where = f" from {h.since} on" if h.since else ""
    return f"{word(h.exit_code).headline_word}: " + "; ".join(parts) + where


def summary(h: History) -> str:
    """One sentence: how many runs, models and cells, in which order, and the options that matter."""
    first, last = (h.runs[0].name, h.runs[-1].name) if h.runs else ("-", "-")
    n_models = len(h.models) or len({p.model for p in h.problems})
    return (
        f"{len(h.runs)} runs ({first} ... {last}; {h.order_note}), {n_models} model(s), "
        f"{h.stats.get('cells', 0)} cells; a step holds {h.min_run}+ runs; gate --fail-on {h.fail_on}"
        + (f" --since {h.since}" if h.since else "")
    )


def _run(name: str, commit: str | None) -> str:
    c = _short(commit)
    return f"{md_escape(name)} ({md_code(c)})" if c else md_escape(name)


def _via(values: tuple[RunValue, ...]) -> str:
    shown = ", ".join(f"{v.run}: {v.value.text()}" for v in values[:MAX_DEVIATIONS])
    more = f", +{len(values) - MAX_DEVIATIONS} more" if len(values) > MAX_DEVIATIONS else ""
    return shown + more


def _where(c: Change | Flaky) -> str:
    return f"{c.transform}#{c.occurrence}" if c.occurrence else c.transform


PlotLinks = dict[tuple[str, str, int], str]
"""(model, transform, occurrence) -> URL of its plot, relative to the markdown file."""


def _md_changes(title: str, changes: tuple[Change, ...], steps: bool, plots: PlotLinks) -> list[str]:
    out = [f"### {title} ({len(changes)})", ""]
    out.append(
        "| | model | transform | change | category | last before | first after | "
        + ("confirmed |" if steps else "held |")
    )
    out.append("|---|---|---|---|---|---|---|---|")
    for c in changes:
        flag = "❌" if c.gates else "⚠️" if c.gating else "ℹ️"
        change = md_escape(c.change) + (f" (via {md_escape(_via(c.via))})" if c.via else "")
        cat = md_escape(_CATEGORY[c.category]) + (f" ({', '.join(c.codes)})" if c.codes else "")
        last = md_escape(c.confirmed or "") if steps else f"{c.held} run(s)"
        link = plots.get((c.model, c.transform, c.occurrence))
        where = md_code(_where(c)) + (f" [plot]({link})" if link else "")
        out.append(
            f"| {flag} | {md_escape(c.model) or '-'} | {where} | {change} | {cat} | "
            f"{_run(c.last_before, c.commit_before)} | {_run(c.first_after, c.commit_after)} | {last} |"
        )
    return [*out, ""]


def _md_matrix(h: History) -> list[str]:
    rows: dict[tuple[str, str, int], None] = {}
    for cells in h.current.values():
        rows.update(dict.fromkeys(cells))
    models = [m for m in h.current if h.current[m]]
    if not rows or not models:
        return []

    def cell(m: str, k: tuple[str, str, int]) -> str:
        c = h.current[m].get(k)
        if c is None:
            return ""
        text = md_escape(c.value.text())
        return f"**{text}** {_MARKS[c.mark]}" if c.mark else text

    marked = [
        k for k in rows if any(h.current[m].get(k) is not None and h.current[m][k].mark for m in models)
    ]
    plain = [k for k in rows if k not in set(marked)]
    head = "| transform | " + " | ".join(md_escape(m) or "-" for m in models) + " |"
    sep = "|---|" + "---|" * len(models)

    def table(keys: list[tuple[str, str, int]]) -> list[str]:
        return [
            head,
            sep,
            *(
                f"| {md_code(f'{k[1]}#{k[2]}' if k[2] else k[1])} | "
                + " | ".join(cell(m, k) for m in models)
                + " |"
                for k in keys
            ),
        ]

    out = [
        "### Current counts",
        "",
        "Each model's last used run; marks: ▼ matches lost, ▲ gained, ● other step, ? pending, ~ flaky.",
        "",
    ]
    if marked:
        out += [*table(marked), ""]
    if plain:
        out += [
            "<details><summary>" + f"{len(plain)} transform(s) without a change" + "</summary>",
            "",
            *table(plain),
            "",
            "</details>",
            "",
        ]
    return out


def render_markdown(h: History, plots: PlotLinks | None = None) -> str:
    """The markdown report: verdict, steps, pending, flaky, runs not used, models, current counts.

    ``plots`` links each plotted step's transform to its PNG (URLs the caller built from safe names).
    """
    h = values(h)  # every value on one line, bounded (core/sinks.py)
    links = plots or {}
    out = [f"## ad-diff history: {md_escape(headline(h))}", "", md_escape(summary(h)), ""]
    out += _md_changes("Steps", h.steps, True, links) if h.steps else ["No steps.", ""]
    if h.pending:
        out += _md_changes(
            f"Pending (held fewer than {h.min_run} runs so far; not gating)", h.pending, False, links
        )
    if h.flaky:
        out += [
            f"### Flaky ({len(h.flaky)}; not gating)",
            "",
            "| model | transform | settled | deviations |",
            "|---|---|---|---|",
        ]
        out += [
            f"| {md_escape(f.model) or '-'} | {md_code(_where(f))} | {md_escape(f.value.text())} | "
            f"{md_escape(_via(f.deviations))} |"
            for f in h.flaky
        ]
        out.append("")
    if h.problems:
        out += [
            f"### Runs not used ({len(h.problems)})",
            "",
            "| run | model | status | detail | gates |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {md_escape(p.run)} | {md_escape(p.model) or '-'} | {p.status} | {md_escape(p.detail)} | "
            f"{'yes' if p.in_window else 'no (before --since)'} |"
            for p in h.problems
        ]
        out.append("")
    odd = [m for m in h.models if m.stale or (h.runs and m.first_run != h.runs[0].name)]
    if odd:
        out += [
            "### Models that do not span the history",
            "",
            "| model | first run | last run | runs used |",
            "|---|---|---|---|",
        ]
        out += [
            f"| {md_escape(m.name)} | {md_escape(m.first_run)} | {md_escape(m.last_run)}"
            f"{' (stale)' if m.stale else ''} | {m.runs} |"
            for m in odd
        ]
        out.append("")
    out += _md_matrix(h)
    out += [f"- {md_escape(n)}" for n in h.notes]
    return "\n".join(out).rstrip("\n") + "\n"


def render_terminal(h: History, color: bool = False, width: int = 120) -> str:
    """The terminal report (rich tables rendered to a string; colour only when asked for)."""
    h = values(h)  # every value on one line, bounded (core/sinks.py)
    Table = rich_table.Table
    Text = rich_text.Text

    # lazy: rich loads only for the terminal report
    from ad_diff.core.terminal import console

    con = console(width, color)
    con.print(Text(f"ad-diff history: {headline(h)}", style="bold red" if h.exit_code else "bold green"))
    con.print(Text(summary(h)))

    def changes(title: str, rows: tuple[Change, ...], steps: bool) -> None:
        t = Table(title=f"{title} ({len(rows)})", title_justify="left")
        for col in (
            "",
            "model",
            "transform",
            "change",
            "category",
            "last before",
            "first after",
            "confirmed" if steps else "held",
        ):
            t.add_column(col, overflow="fold")
        for c in rows:
            flag = Text("GATES", style="bold red") if c.gates else Text("")
            change = c.change + (f" (via {_via(c.via)})" if c.via else "")
            cat = _CATEGORY[c.category] + (f" ({', '.join(c.codes)})" if c.codes else "")
            before = c.last_before + (f" {_short(c.commit_before)}" if c.commit_before else "")
            after = c.first_after + (f" {_short(c.commit_after)}" if c.commit_after else "")
            t.add_row(
                flag,
                Text(c.model or "-"),
                Text(_where(c)),
                Text(change),
                Text(cat),
                Text(before),
                Text(after),
                Text(c.confirmed or "" if steps else f"{c.held} run(s)"),
            )
        con.print(t)

    if h.steps:
        changes("Steps", h.steps, True)
    else:
        con.print(Text("No steps."))
    if h.pending:
        changes(f"Pending: held fewer than {h.min_run} runs so far, not gating", h.pending, False)
    if h.flaky:
        t = Table(title=f"Flaky ({len(h.flaky)}, not gating)", title_justify="left")
        for col in ("model", "transform", "settled", "deviations"):
            t.add_column(col, overflow="fold")
        for f in h.flaky:
            t.add_row(Text(f.model or "-"), Text(_where(f)), Text(f.value.text()), Text(_via(f.deviations)))
        con.print(t)
    if h.problems:
        t = Table(title=f"Runs not used ({len(h.problems)})", title_justify="left")
        for col in ("run", "model", "status", "detail", "gates"):
            t.add_column(col, overflow="fold")
        for p in h.problems:
            t.add_row(
                Text(p.run),
                Text(p.model or "-"),
                Text(p.status),
                Text(p.detail),
                Text("yes" if p.in_window else "no"),
            )
        con.print(t)
    for m in h.models:
        if h.runs and m.first_run != h.runs[0].name:
            con.print(Text(f"model {m.name}: first used run is {m.first_run} (added after the first run)"))
        if m.stale:
            con.print(
                Text(f"model {m.name}: last used run is {m.last_run}, not the history's last run (stale)")
            )
    for n in h.notes:
        con.print(Text(f"note: {n}"))
    return con.text()
