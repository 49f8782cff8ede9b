"""``ad-diff compare BASELINE CANDIDATE`` (also ``ad-diff BASELINE CANDIDATE``): one pair of runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ad_diff.cli.app import app, guarded
from ad_diff.cli.options import (
    build_settings,
    json_on_stdout,
    resolve_options,
    shared_options,
    tensor_options,
)
from ad_diff.cli.output import write_plots, write_reports


@app.command()
@shared_options
def compare(
    ctx: typer.Context,
    baseline: Annotated[Path, typer.Argument(help="Baseline run folder (AD log, graphs/, tensors/), or a snapshot "
                                              "file written by `ad-diff snapshot` (*.yaml).")],
    candidate: Annotated[Path, typer.Argument(help="Candidate run folder.")],
    baseline_log: Annotated[list[Path] | None, typer.Option(
        help="Baseline log file (default: found in the folder, docs/run-folder.md); repeat it for one file "
        "per rank.")] = None,
    candidate_log: Annotated[list[Path] | None, typer.Option(
        help="Candidate log file (default: found in the folder); repeat it for one file per rank.")] = None,
    baseline_config: Annotated[Optional[Path], typer.Option(
        help="Baseline AD config (file or folder; default: config/ or *.yaml in the run).")] = None,
    candidate_config: Annotated[Optional[Path], typer.Option(help="Candidate AD config (file or folder).")] = None,
    config_explained_gates: Annotated[bool, typer.Option(
        help="Let findings explained by a config change still gate.")] = False,
    tol: Annotated[Optional[list[str]], typer.Option(
        help="Tensor tolerance `[GLOB:]key=value,...` (atol, rtol, statistic); repeatable.")] = None,
    tensor_device: Annotated[Optional[str], typer.Option(
        help="Device for tensor statistics: cpu, cuda or auto.")] = None,
    plots: Annotated[Optional[Path], typer.Option(
        help="Write error histogram/scatter PNGs of drifting tensors into this folder.")] = None,
) -> None:
    """Compare BASELINE and CANDIDATE run folders; exit 0 (pass), 1 (gated regression) or 2 (input error)."""

    wants_json = json_on_stdout(ctx)

    def go() -> int:
        from ad_diff import gate, pipeline
        from ad_diff.progress import progress_bar

        opts = resolve_options(ctx)
        wants_json.append(opts["format"] == "json")
        settings = build_settings(opts, baseline, candidate, baseline_log=tuple(baseline_log or ()),
                                  candidate_log=tuple(candidate_log or ()),
                                  baseline_config=baseline_config, candidate_config=candidate_config)
        settings = tensor_options(settings, tol, tensor_device, plots)
        with progress_bar(settings.progress) as bar:
            result = pipeline.run(settings, progress=bar)
        result = write_plots(result, plots, opts.get("markdown"))
        verdict = gate.decide(result.findings, settings.fail_on)
        write_reports(opts, result, verdict)
        return verdict.exit_code

    raise typer.Exit(guarded(go, lambda: wants_json[-1]))
