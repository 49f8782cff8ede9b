"""``ad-diff history ROOT/``: steps in transform match counts over many runs (registered on the app).

Like the other commands it only turns options into a library call (``ad_diff.history``),
writes what was asked for and exits. pandas is imported inside the command only.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ad_diff.cli.app import app, guarded
from ad_diff.cli.options import ConfigOpt, FailOnOpt, NoConfigOpt, ResolvedOptions, resolve_options
from ad_diff.cli.output import safe_text, terminal_width, write_output
from ad_diff.formats import HISTORY, Format, Options, Printed

if TYPE_CHECKING:
    from ad_diff.history.model import History


RootArg = Annotated[Path, typer.Argument(
    help="Folder of runs in time order: one run folder or snapshot *.yaml per run, optionally under a "
    "<model>/ level (ROOT/<model>/<run>/).")]
LayoutOpt = Annotated[str, typer.Option(
    help="auto, flat (ROOT/<run>), model-run (ROOT/<model>/<run>) or run-model (ROOT/<run>/<model>, one "
    "batch root per run).")]
OrderOpt = Annotated[str, typer.Option(
    help="Run order: auto (run.json `started` when every run has it, else name), name, started or mtime.")]
MinRunOpt = Annotated[int, typer.Option(
    help="Runs a new value must hold to count as a step (shorter: flaky or pending).")]
SinceOpt = Annotated[str | None, typer.Option(
    help="Gate only on steps that became known in run RUN or later, and on problems of those runs.",
    metavar="RUN")]
CacheOpt = Annotated[Path | None, typer.Option(
    help="JSON cache of the rows read, keyed by path, size and mtime; a re-run reads only new or changed "
    "runs.")]
TableOpt = Annotated[Path | None, typer.Option(
    help="Write the long table (run, model, transform, stage, occurrence, state, count) as .csv or "
    ".parquet.")]
PlotsOpt = Annotated[Path | None, typer.Option(
    help="Write a PNG of counts over runs per transform that stepped into this folder (needs the plots "
    "extra).")]
RankOpt = Annotated[int, typer.Option(help="Rank whose log lines are read (run folders).")]
CollapseOpt = Annotated[float, typer.Option(help="Loss share (0-1] that counts as a collapse.")]
FormatOpt = Annotated[Printed, typer.Option("--format", "-f", help="Report printed on stdout.")]
MarkdownOpt = Annotated[Path | None, typer.Option("--markdown", help="Also write the markdown report here.")]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="Also write the JSON report here.")]
IgnoreOpt = Annotated[list[str] | None, typer.Option(help="Transform key (glob) to leave out; repeatable.")]
ColorOpt = Annotated[bool | None, typer.Option(
    help="Colour the terminal report (default: when stdout is a TTY).")]
ProgressOpt = Annotated[bool | None, typer.Option(
    help="Progress bar on stderr (default: on a terminal, off in CI or when piped).")]


@app.command()
def history(
    ctx: typer.Context,
    root: RootArg,
    layout: LayoutOpt = "auto",
    order: OrderOpt = "auto",
    min_run: MinRunOpt = 2,
    since: SinceOpt = None,
    cache: CacheOpt = None,
    table: TableOpt = None,
    plots: PlotsOpt = None,
    rank: RankOpt = 0,
    fail_on: FailOnOpt = "error",
    collapse_fraction: CollapseOpt = 0.5,
    fmt: FormatOpt = Format.terminal.value,
    markdown: MarkdownOpt = None,
    json_out: JsonOpt = None,
    ignore_transform: IgnoreOpt = None,
    color: ColorOpt = None,
    progress: ProgressOpt = None,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """Find the runs where a transform's state or match count stepped, and the last run before each step.

    Exit code: 1 when a step loses matches in a gating category (--fail-on, --since) or a recent run is
    incomplete, 2 for unusable input or an unreadable recent run, else 0. See docs/history.md.
    """

    def go() -> int:
        # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
        from ad_diff.history import HistoryOptions, export, run_history
        from ad_diff.progress import progress_bar, progress_enabled
        from ad_diff.settings import FailOn

        opts = resolve_options(ctx)
        if table is not None:
            export.table_format(table)  # before reading a year of runs: a wrong extension fails now
        if plots is not None:
            export.check_plots(plots)
        hopts = HistoryOptions(layout=layout, order=order, min_run=min_run, rank=opts["rank"],
                               collapse_fraction=opts["collapse_fraction"], fail_on=FailOn(opts["fail_on"]),
                               since=since, ignore_transforms=tuple(opts["ignore_transforms"]), cache=cache)
        with progress_bar(progress_enabled(opts.get("progress"))) as bar:
            result = run_history(root, hopts, bar)
        if opts.config_note is not None:  # the config file in use is named in every report
            result = dataclasses.replace(result, notes=(*result.notes, opts.config_note))
        result, written = _write_files(result, table, plots)
        _write_reports(result, opts, written)
        return result.exit_code

    raise typer.Exit(guarded(go))


Plots = dict[tuple[str, str, int], Path]
"""The plots written: ``(model, transform, occurrence) -> file``."""


def _write_files(result: History, table: Path | None, plots: Path | None) -> tuple[History, Plots]:
    """Write the long table and the plots asked for: ``result`` with notes saying so, and the plots."""
    # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
    from ad_diff.history import export

    if table is not None:
        export.write_table(result, table)
        result = dataclasses.replace(result, notes=(*result.notes, f"long table written to {table}"))
    written = export.write_plots(result, plots) if plots is not None else {}
    if plots is not None:
        more = len({(s.model, s.transform, s.occurrence) for s in result.steps}) - len(written)
        note = f"{len(written)} plot(s) written to {plots}" + (
            f" ({more} more stepped, not plotted)" if more else ""
        )
        result = dataclasses.replace(result, notes=(*result.notes, note))
    return result, written


def _write_reports(result: History, opts: ResolvedOptions, written: Plots) -> None:
    """Print the stdout report and write the markdown and JSON files asked for; the markdown links the plots
    relative to its own folder."""
    use_color = sys.stdout.isatty() if opts["color"] is None else opts["color"]
    md_path = opts.get("markdown")
    base = (md_path.parent if md_path is not None else Path.cwd()).resolve()
    links = {k: urllib.parse.quote(os.path.relpath(p.resolve(), base)) for k, p in written.items()}
    layout = Options(color=use_color, width=terminal_width(), links=links)
    sys.stdout.write(safe_text(HISTORY.render(opts["format"], result, layout)))
    for fmt in HISTORY.files:  # the files asked for (--markdown, --json), by the format's name
        path = opts.get(fmt.value)
        if path is not None:
            write_output(path, HISTORY.render(fmt, result, layout))
