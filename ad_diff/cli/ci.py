"""CLI commands for CI: ``snapshot`` (golden counts), ``record`` (record a run), ``batch`` (many models).

Registered on :data:`ad_diff.cli.app.app`; like ``compare``, each only turns options into library calls,
writes what was asked for and exits.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from ad_diff.cli.app import app, guarded
from ad_diff.cli.options import build_settings, json_on_stdout, resolve_options, shared_options
from ad_diff.cli.output import safe_text, write_output, write_reports
from ad_diff.core import outfile
from ad_diff.errors import UsageError
from ad_diff.formats import Format

if TYPE_CHECKING:
    from ad_diff.settings import Settings


def snapshot_source(run: Path, output: Path | None) -> str:
    """How a snapshot names its run: relative to the snapshot file's folder (the current folder on stdout).

    Snapshots are committed as golden files, so they must not carry an absolute path of the machine that
    wrote them. Falls back to the path as given when no relative path exists (another drive on Windows).
    """
    # relpath, not resolve(): a run reached through a symlink keeps the path the user gave.
    try:
        return Path(os.path.relpath(run, output.parent if output is not None else os.curdir)).as_posix()
    except ValueError:
        return run.as_posix()


@app.command()
def snapshot(
    run: Annotated[Path, typer.Argument(metavar="RUN", help="Run folder to snapshot (holds the AD log).")],
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE", help="Write the snapshot here (default: on stdout).")] = None,
    rank: Annotated[int, typer.Option(metavar="N", help="Rank whose log lines are recorded.")] = 0,
    log: Annotated[Path | None, typer.Option(
        metavar="FILE", help="Log file (default: the *.log in the folder).")] = None,
) -> None:
    """Write RUN's per-transform states and match counts (golden counts) as YAML.

    Check a candidate against it later with `ad-diff counts.yaml CANDIDATE/`, without re-running the baseline.
    """

    def go() -> int:
        # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
        from ad_diff.discover import snapshot as snap
        from ad_diff.pipeline import take_snapshot

        data = {**take_snapshot(run, rank=rank, log=log), "source": snapshot_source(run, output)}
        text = snap.dump(data)
        if output is None:
            sys.stdout.write(safe_text(text))
        else:
            write_output(output, text)
            typer.echo(safe_text(f"ad-diff: wrote {output}"), err=True)
        return 0

    raise typer.Exit(guarded(go))


class RecordCommand(TyperCommand):
    """``record``'s parser: its options may come after RUN when ``--`` separates the AD command.

    With ``--`` after RUN and record's options (``record RUN --force -- CMD --its-flag``), options are read
    up to ``--`` and the rest is the command, verbatim. Otherwise everything after RUN is the command, its own
    options and any ``--`` of its own included (``record RUN python x.py -- --flag``).
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        head = args[: args.index("--")] if "--" in args else None
        ctx.allow_interspersed_args = head is not None and sum(not a.startswith("-") for a in head) <= 1
        return super().parse_args(ctx, args)


@app.command(cls=RecordCommand)
def record(
    run: Annotated[Path, typer.Argument(
        metavar="RUN", help="Run folder to create (ad.log, graphs/, run.json go here).")],
    command: Annotated[list[str], typer.Argument(
        metavar="COMMAND", show_default=False, help="The AD command and its arguments, after `--`.")],
    force: Annotated[bool, typer.Option(
        help="Replace ad.log, run.json and graphs/ of an earlier recording.")] = False,
) -> None:
    """Run an AD command with graph dumps into RUN/graphs, tee its output into RUN/ad.log, write RUN/run.json.

    Usage: ad-diff record runs/base [--force] -- python examples/auto_deploy/build_and_run_ad.py --model <id>.
    The command's exit status becomes ad-diff's exit code.
    """

    def go() -> int:
        # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
        from ad_diff.workflows.record import record as do_record

        outfile.protect(())  # RUN is what record writes, not an input; nothing else is read
        if command[0].startswith("-"):
            raise UsageError(f"record: {command[0]!r} is not a command; put record's options before `--` and "
                             "the AD command after it: ad-diff record RUN [--force] -- COMMAND ...")
        info = do_record(run, command, sys.stdout.buffer, sys.stderr.buffer, force=force)
        typer.echo(safe_text(f"ad-diff: recorded {run} ({info['status']}, {info['dump_files']} dump file(s), "
                   f"{info['duration_s']:.1f}s)"), err=True)
        return int(info["exit_code"])

    raise typer.Exit(guarded(go))


@app.command()
@shared_options
def batch(
    ctx: typer.Context,
    baseline_root: Annotated[Path, typer.Argument(
        metavar="BASELINE_ROOT",
        help="Folder of baseline run folders (or <model>.yaml snapshots), one per model.")],
    candidate_root: Annotated[Path, typer.Argument(
        metavar="CANDIDATE_ROOT", help="Folder of candidate run folders, one per model.")],
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", metavar="N", help="Parallel processes (default: CPU count).")] = None,
) -> None:
    """Compare run folders paired by name (one per model) in parallel; write one combined report.

    Exit code: the worst of all models (3 internal error, 2 input error, 1 regression, 0 pass). A model with
    a baseline but no candidate run gates; a model only in the candidate root is listed as new.
    """

    wants_json = json_on_stdout(ctx)

    def go() -> int:
        # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
        from ad_diff.progress import progress_bar
        from ad_diff.workflows.batch import run_batch

        opts = resolve_options(ctx)
        wants_json.append(Format(opts["format"]).machine)  # an error as a JSON object

        def make(name: str, b: Path, c: Path) -> Settings:
            return build_settings(opts, b, c, model=name or None)

        show = make("", baseline_root, candidate_root).progress
        with progress_bar(show) as bar:
            result = run_batch(baseline_root, candidate_root, make, jobs=opts.get("jobs"), progress=bar)
        write_reports(opts, result, None)
        return result.exit_code

    raise typer.Exit(guarded(go, lambda: wants_json[-1]))


@app.command()
def schema() -> None:
    """Print the JSON Schema of the report that `compare --format json` writes (and of its error object).

    Validate a report with any JSON Schema validator (draft 2020-12), e.g.
    `ad-diff schema > report.schema.json && check-jsonschema --schemafile report.schema.json report.json`.
    docs/report-schema.md is generated from it.
    """
    import json

    # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
    from ad_diff.report.schema import report_schema

    typer.echo(json.dumps(report_schema(), indent=2, sort_keys=True))
