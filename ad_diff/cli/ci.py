"""CLI commands for CI: ``snapshot`` (golden counts), ``record`` (record a run folder), ``batch`` (many models).

Registered on :data:`ad_diff.cli.app.app`; like ``compare``, each only turns options into library calls,
writes what was asked for and exits.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ad_diff.cli.app import app, guarded
from ad_diff.cli.options import build_settings, json_on_stdout, resolve_options, shared_options
from ad_diff.cli.output import write_output, write_reports
from ad_diff.errors import UsageError


@app.command()
def snapshot(
    run: Annotated[Path, typer.Argument(help="Run folder to snapshot (holds the AD log).")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the snapshot here "
                                                   "(default: print it on stdout).")] = None,
    rank: Annotated[int, typer.Option(help="Rank whose log lines are recorded.")] = 0,
    log: Annotated[Optional[Path], typer.Option(help="Log file (default: the *.log in the folder).")] = None,
) -> None:
    """Write RUN's per-transform states and match counts (golden counts) as YAML.

    Check a candidate against it later with `ad-diff counts.yaml CANDIDATE/`, without re-running the baseline.
    """

    def go() -> int:
        from ad_diff.kinds.log import snapshot as snap

        text = snap.dump(snap.take(run, rank=rank, log=log))
        if output is None:
            sys.stdout.write(text)
        else:
            write_output(output, text)
            typer.echo(f"ad-diff: wrote {output}", err=True)
        return 0

    raise typer.Exit(guarded(go))


@app.command(context_settings={"allow_interspersed_args": False})
def record(
    run: Annotated[Path, typer.Argument(help="Run folder to create (ad.log, graphs/, run.json go here).")],
    command: Annotated[list[str], typer.Argument(help="The AD command, after `--`.", show_default=False)],
    force: Annotated[bool, typer.Option(help="Replace ad.log, run.json and graphs/ of an earlier recording.")] = False,
) -> None:
    """Run an AD command with graph dumps into RUN/graphs, tee its output into RUN/ad.log, write RUN/run.json.

    Usage: ad-diff record runs/base -- python examples/auto_deploy/build_and_run_ad.py --model <id>.
    The command's exit status becomes ad-diff's exit code.
    """

    def go() -> int:
        from ad_diff.workflows.record import record as do_record

        # click keeps the `--` separator when interspersed args are off; it is not part of the command.
        cmd = command[1:] if command[:1] == ["--"] else command
        info = do_record(run, cmd, sys.stdout.buffer, sys.stderr.buffer, force=force)
        typer.echo(f"ad-diff: recorded {run} ({info['status']}, {info['dump_files']} dump file(s), "
                   f"{info['duration_s']:.1f}s)", err=True)
        return int(info["exit_code"])

    raise typer.Exit(guarded(go))


@app.command()
@shared_options
def batch(
    ctx: typer.Context,
    baseline_root: Annotated[Path, typer.Argument(help="Folder of baseline run folders (or <model>.yaml snapshots), "
                                                       "one per model.")],
    candidate_root: Annotated[Path, typer.Argument(help="Folder of candidate run folders, one per model.")],
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Parallel processes (default: CPU count).")] = None,
) -> None:
    """Compare run folders paired by name (one per model) in parallel; write one combined report.

    Exit code: the worst of all models (2 input error, 1 regression, 0 pass). A model with a baseline but
    no candidate run gates; a model only in the candidate root is listed as new.
    """

    wants_json = json_on_stdout(ctx)

    def go() -> int:
        from ad_diff.progress import progress_bar
        from ad_diff.workflows.batch import run_batch

        opts = resolve_options(ctx)
        wants_json.append(opts["format"] == "json")
        if opts.get("jobs") is not None and opts["jobs"] < 1:
            raise UsageError(f"--jobs must be at least 1, not {opts['jobs']}")

        def make(name: str, b: Path, c: Path):  # noqa: ANN202
            return build_settings(opts, b, c, model=name or None)

        show = make("", baseline_root, candidate_root).progress
        with progress_bar(show) as bar:
            result = run_batch(baseline_root, candidate_root, make, jobs=opts.get("jobs"), progress=bar)
        write_reports(opts, result, None)
        return result.exit_code

    raise typer.Exit(guarded(go, lambda: wants_json[-1]))
