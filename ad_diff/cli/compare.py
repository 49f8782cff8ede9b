"""``ad-diff compare BASELINE CANDIDATE`` (also ``ad-diff BASELINE CANDIDATE``): one pair of runs."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

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
from ad_diff.formats import Format


class TensorDevice(str, Enum):
    """Where tensor statistics are computed (``--tensor-device``)."""

    cpu = "cpu"
    cuda = "cuda"
    auto = "auto"


@app.command()
@shared_options
def compare(
    ctx: typer.Context,
    baseline: Annotated[Path, typer.Argument(
        metavar="BASELINE",
        help="Baseline run folder (AD log, graphs/, tensors/), or a snapshot file written by "
        "`ad-diff snapshot` (*.yaml).")],
    candidate: Annotated[Path, typer.Argument(metavar="CANDIDATE", help="Candidate run folder.")],
    baseline_log: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", help="Baseline log file (default: found in the folder, docs/run-folder.md); repeat "
        "it for one file per rank.")] = None,
    candidate_log: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", help="Candidate log file (default: found in the folder); repeat it for one file per "
        "rank.")] = None,
    baseline_config: Annotated[Path | None, typer.Option(
        metavar="PATH",
        help="Baseline AD config (file or folder; default: config/ or *.yaml in the run).")] = None,
    candidate_config: Annotated[Path | None, typer.Option(
        metavar="PATH", help="Candidate AD config (file or folder).")] = None,
    config_explained_gates: Annotated[bool, typer.Option(
        help="Let findings explained by a config change still gate.")] = False,
    tol: Annotated[list[str] | None, typer.Option(
        metavar="[GLOB:]KEY=VALUE,...",
        help="Tensor tolerance (keys atol, rtol, statistic) of the tensors GLOB picks; repeatable.")] = None,
    tolerance_preset: Annotated[str | None, typer.Option(
        metavar="[ad-onboarding]",
        help="Named tensor tolerances under the config file's and --tol's: ad-onboarding applies AD's "
        "model-onboarding check rmse(a-b)/rmse(b) (attention 0.10, MoE 0.02, layers and logits 0.05).")
    ] = None,
    tensor_device: Annotated[TensorDevice | None, typer.Option(
        help="Device for tensor statistics (default: cpu, or the config file's).")] = None,
    plots: Annotated[Path | None, typer.Option(
        metavar="DIR",
        help="Write error histogram/scatter PNGs of drifting tensors into this folder.")] = None,
    reference: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Reference tensors to judge the outputs against (files keyed by output name, as "
        "tensors/reference/); the runs' own references are then not used.")] = None,
    tensor_jobs: Annotated[int, typer.Option(
        "--jobs", "-j", min=1, help="Tensors compared at once (threads). Results do not depend on it.")] = 1,
) -> None:
    """Compare BASELINE and CANDIDATE run folders; exit 0 (pass), 1 (gated regression) or 2 (input error)."""

    wants_json = json_on_stdout(ctx)

    def go() -> int:
        import dataclasses

        # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
        from ad_diff import gate, pipeline
        from ad_diff.progress import progress_bar

        opts = resolve_options(ctx)
        wants_json.append(Format(opts["format"]).machine)  # an error as a JSON object
        settings = build_settings(opts, baseline, candidate, baseline_log=tuple(baseline_log or ()),
                                  candidate_log=tuple(candidate_log or ()), baseline_config=baseline_config,
                                  log_options=("--baseline-log", "--candidate-log"),
                                  candidate_config=candidate_config)
        device = tensor_device.value if tensor_device is not None else None
        settings = tensor_options(settings, tol, device, plots, tolerance_preset)
        settings = dataclasses.replace(settings, tensor_jobs=tensor_jobs, reference_dir=reference)
        with progress_bar(settings.progress) as bar:
            result = pipeline.run(settings, progress=bar)
        result = write_plots(result, plots, opts.get("markdown"))
        verdict = gate.judge(result.findings, result.groups, settings.fail_on)
        write_reports(opts, result, verdict)
        return verdict.exit_code

    raise typer.Exit(guarded(go, lambda: wants_json[-1]))
