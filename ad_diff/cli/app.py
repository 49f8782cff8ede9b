"""Command-line interface: options -> Settings -> pipeline.run -> render -> gate. No logic of its own.

``ad-diff BASELINE CANDIDATE`` is shorthand for ``ad-diff compare BASELINE CANDIDATE``.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer

from ad_diff import __version__
from ad_diff.errors import AdDiffError
from ad_diff.gate import EXIT_INPUT_ERROR, EXIT_INTERNAL_ERROR
from ad_diff.report import ReportFormat
from ad_diff.report.markdown import COMMENT_LIMIT
from ad_diff.settings import FAIL_ON_CHOICES, Settings

app = typer.Typer(
    name="ad-diff",
    help="Compare two TensorRT-LLM AutoDeploy runs: match loss, metadata loss and numeric drift per transform.\n\n"
    "`ad-diff BASELINE_RUN/ CANDIDATE_RUN/` is shorthand for `ad-diff compare ...`.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

T = TypeVar("T")


def _err(msg: str) -> None:
    typer.echo(f"ad-diff: error: {msg}", err=True)


def guarded(fn: Callable[[], T]) -> T:
    """Run ``fn``; turn user errors into exit 2 and bugs into exit 3, never a traceback for bad input."""
    try:
        return fn()
    except AdDiffError as e:
        _err(str(e))
        raise typer.Exit(EXIT_INPUT_ERROR) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - the last line of defence: report a bug, not a traceback
        if os.environ.get("AD_DIFF_DEBUG"):
            traceback.print_exc()
        typer.echo(
            f"ad-diff: internal error: {type(e).__name__}: {e}\n"
            "This is a bug in ad-diff; rerun with AD_DIFF_DEBUG=1 for the traceback and report it.",
            err=True,
        )
        raise typer.Exit(EXIT_INTERNAL_ERROR) from None


def write_output(path: Path, text: str) -> None:
    """Write one report file the user asked for (and only there)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise AdDiffError(f"{path}: cannot write output ({e.strerror or e})") from e


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ad-diff {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Compare two AutoDeploy runs."""


#: compare/batch option (Python parameter name) -> config-file key (ad_diff.config.SCHEMA).
OPTION_KEYS: dict[str, str] = {
    "rank": "rank", "fail_on": "fail_on", "collapse_fraction": "collapse_fraction", "fmt": "format",
    "markdown": "markdown", "json_out": "json", "ignore_transform": "ignore_transforms",
    "ignore_code": "ignore_codes", "graphs": "graphs", "tensors": "tensors", "color": "color",
    "expected": "expected", "junit": "junit", "step_summary": "step_summary", "comment_limit": "comment_limit",
    "progress": "progress", "jobs": "jobs", "config_explained_gates": "config_explained_gates",
}


def resolve_options(ctx: typer.Context, config: Path | None) -> dict[str, Any]:
    """Options by config key: typer defaults < config file < options the user actually passed."""
    from ad_diff.settings_file import find_config, load_config, merge

    defaults: dict[str, Any] = {}
    passed: dict[str, Any] = {}
    for name, key in OPTION_KEYS.items():
        if name not in ctx.params:
            continue
        value = ctx.params[name]
        if isinstance(value, list):
            value = tuple(value)
        elif isinstance(value, ReportFormat):
            value = value.value
        source = ctx.get_parameter_source(name)
        # By name: typer vendors its own click, so the enum class differs between typer versions.
        user_given = getattr(source, "name", None) in ("COMMANDLINE", "ENVIRONMENT")
        target = passed if user_given else defaults
        target[key] = () if value is None and key.startswith("ignore_") else value
    path = find_config(config)
    file_values = load_config(path) if path is not None else {}
    opts = merge(defaults, file_values, passed)
    opts["_config_path"] = path
    if opts["fail_on"] not in FAIL_ON_CHOICES:
        raise AdDiffError(f"--fail-on must be one of {', '.join(FAIL_ON_CHOICES)}, not {opts['fail_on']!r}")
    if not 0 < opts["collapse_fraction"] <= 1:
        raise AdDiffError(f"--collapse-fraction must be in (0, 1], not {opts['collapse_fraction']}")
    return opts


def build_settings(opts: dict[str, Any], baseline: Path, candidate: Path, **extra: Any) -> Settings:
    """Settings of one comparison from resolved options (``extra``: per-run paths, model name)."""
    from ad_diff.progress import progress_enabled

    return Settings(
        baseline=baseline, candidate=candidate, rank=opts["rank"], fail_on=opts["fail_on"],
        collapse_fraction=opts["collapse_fraction"], ignore_transforms=tuple(opts["ignore_transforms"]),
        ignore_codes=tuple(opts["ignore_codes"]), graphs=opts["graphs"], tensors=opts["tensors"],
        tolerances=opts.get("tolerances", {}), tensor_device=opts.get("tensor_device", "cpu"),
        expected_changes=opts.get("expected"), progress=progress_enabled(opts.get("progress")),
        graph_options=opts.get("graph", {}), config_diff_options=opts.get("config_diff", {}),
        config_explained_gates=bool(opts.get("config_explained_gates", False)), **extra,
    )


def _tensor_options(settings: Settings, tol: list[str] | None, device: str | None, plots: Path | None) -> Settings:
    """Merge ``--tol`` specs over the config file's tolerances; set device and plots."""
    import dataclasses

    from ad_diff.kinds.tensors.tolerance import parse_cli

    tolerances = {k: dict(v) for k, v in settings.tolerances.items()}
    for spec in tol or ():
        try:
            pattern, entry = parse_cli(spec)
        except ValueError as e:
            raise AdDiffError(f"--tol {spec!r}: {e}") from e
        tolerances.setdefault(pattern, {}).update(entry)
    changes: dict[str, Any] = {"tolerances": tolerances, "tensor_plots": plots is not None, "plots_dir": plots}
    if device is not None:
        if device not in ("cpu", "cuda", "auto"):
            raise AdDiffError(f"--tensor-device must be cpu, cuda or auto, not {device!r}")
        changes["tensor_device"] = device
    return dataclasses.replace(settings, **changes)


def _write_plots(result: Any, plots: Path | None, markdown: Path | None) -> Any:
    """Write PNGs of drifting tensors where ``--plots`` points and link them from the markdown report."""
    import dataclasses

    ta = result.sections.get("tensors")
    if plots is None or ta is None:
        return result
    from ad_diff.kinds.tensors.plots import write_plots

    try:
        written = write_plots(ta, plots)
    except OSError as e:
        raise AdDiffError(f"{plots}: cannot write plots ({e.strerror or e})") from e
    base = markdown.parent if markdown is not None else Path.cwd()
    rel = os.path.relpath(plots.resolve(), base.resolve())
    notes = (*result.notes, f"{len(written)} plot(s) written to {plots}")
    return dataclasses.replace(result, notes=notes, render_options={**result.render_options, "tensors": {"plots_dir_rel": rel}})


def write_reports(opts: dict[str, Any], result: Any, verdict: Any) -> None:
    """Print the stdout report and write every report file asked for (single comparison or batch)."""
    from ad_diff.report import outputs as ci_outputs

    use_color = sys.stdout.isatty() if opts["color"] is None else opts["color"]
    wanted = [k for k in ("markdown", "json", "junit", "step_summary") if opts.get(k) is not None]
    texts = ci_outputs.render_all(result, verdict, ["stdout", *wanted], fmt=ReportFormat(opts["format"]),
                                  color=use_color, comment_limit=opts["comment_limit"])
    sys.stdout.write(texts["stdout"])
    for kind in wanted:
        (append_output if kind == "step_summary" else write_output)(opts[kind], texts[kind])


def append_output(path: Path, text: str) -> None:
    """Append to a file (GitHub's step summary is shared by every command of a step)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise AdDiffError(f"{path}: cannot write output ({e.strerror or e})") from e


RankOpt = Annotated[int, typer.Option(help="Rank whose log lines are compared.")]
FailOnOpt = Annotated[str, typer.Option(help=f"Gate level: {', '.join(FAIL_ON_CHOICES)}.")]
CollapseOpt = Annotated[float, typer.Option(help="Loss share (0-1] that counts as a collapse.")]
FormatOpt = Annotated[ReportFormat, typer.Option("--format", "-f", help="Report printed on stdout.")]
IgnoreTransformOpt = Annotated[Optional[list[str]], typer.Option(help="Transform key (glob) to leave out; repeatable.")]
IgnoreCodeOpt = Annotated[Optional[list[str]], typer.Option(help="Finding code (glob) to drop; repeatable.")]
GraphsOpt = Annotated[bool, typer.Option(help="Analyse graph dumps when both runs have them.")]
TensorsOpt = Annotated[bool, typer.Option(help="Compare recorded tensors when both runs have them.")]
"""Options shared by `compare` and `batch` (one declaration, so their help cannot drift apart)."""


ConfigOpt = Annotated[Optional[Path], typer.Option(
    "--config", help="Config file (.ad-diff.yaml or pyproject.toml [tool.ad-diff]); default: ./.ad-diff.yaml, "
    "else ./pyproject.toml when it has [tool.ad-diff]. Options given here override the file.")]
ExpectedOpt = Annotated[Optional[Path], typer.Option(
    help="Expected-changes file: matching findings are acknowledged (shown, not gating); unmatched entries are stale.")]
JunitOpt = Annotated[Optional[Path], typer.Option("--junit", help="Also write a JUnit XML report here.")]
StepSummaryOpt = Annotated[Optional[Path], typer.Option(
    help="Append the markdown report (capped at 1 MiB) to this file, e.g. \"$GITHUB_STEP_SUMMARY\".")]
CommentLimitOpt = Annotated[int, typer.Option(help="Maximum characters of the --markdown report (PR comment).")]
ProgressOpt = Annotated[Optional[bool], typer.Option(
    help="Progress bars on stderr (default: on a terminal, off in CI or when piped).")]


@app.command()
def compare(
    ctx: typer.Context,
    baseline: Annotated[Path, typer.Argument(help="Baseline run folder (AD log, graphs/, tensors/), or a snapshot "
                                              "file written by `ad-diff snapshot` (*.yaml).")],
    candidate: Annotated[Path, typer.Argument(help="Candidate run folder.")],
    baseline_log: Annotated[Optional[Path], typer.Option(help="Baseline log file (default: the *.log in the folder).")] = None,
    candidate_log: Annotated[Optional[Path], typer.Option(help="Candidate log file (default: the *.log in the folder).")] = None,
    rank: RankOpt = 0,
    fail_on: FailOnOpt = "error",
    collapse_fraction: CollapseOpt = 0.5,
    fmt: FormatOpt = ReportFormat.terminal,
    markdown: Annotated[Optional[Path], typer.Option("--markdown", help="Also write the markdown report here.")] = None,
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Also write the JSON report here.")] = None,
    ignore_transform: IgnoreTransformOpt = None,
    ignore_code: IgnoreCodeOpt = None,
    graphs: GraphsOpt = True,
    tensors: TensorsOpt = True,
    color: Annotated[Optional[bool], typer.Option(help="Colour the terminal report (default: when stdout is a TTY).")] = None,
    config: ConfigOpt = None,
    expected: ExpectedOpt = None,
    junit: JunitOpt = None,
    step_summary: StepSummaryOpt = None,
    comment_limit: CommentLimitOpt = COMMENT_LIMIT,
    progress: ProgressOpt = None,
    baseline_config: Annotated[Optional[Path], typer.Option(help="Baseline AD config (file or folder; default: config/ or *.yaml in the run).")] = None,
    candidate_config: Annotated[Optional[Path], typer.Option(help="Candidate AD config (file or folder).")] = None,
    config_explained_gates: Annotated[bool, typer.Option(help="Let findings explained by a config change still gate.")] = False,
    tol: Annotated[Optional[list[str]], typer.Option(help="Tensor tolerance `[GLOB:]key=value,...` (atol, rtol, statistic); repeatable.")] = None,
    tensor_device: Annotated[Optional[str], typer.Option(help="Device for tensor statistics: cpu, cuda or auto.")] = None,
    plots: Annotated[Optional[Path], typer.Option(help="Write error histogram/scatter PNGs of drifting tensors into this folder.")] = None,
) -> None:
    """Compare BASELINE and CANDIDATE run folders; exit 0 (pass), 1 (gated regression) or 2 (input error)."""

    def go() -> int:
        from ad_diff import gate, pipeline
        from ad_diff.progress import progress_bar

        opts = resolve_options(ctx, config)
        settings = build_settings(opts, baseline, candidate, baseline_log=baseline_log, candidate_log=candidate_log,
                                  baseline_config=baseline_config, candidate_config=candidate_config)
        settings = _tensor_options(settings, tol, tensor_device, plots)
        with progress_bar(settings.progress) as bar:
            result = pipeline.run(settings, progress=bar)
        result = _write_plots(result, plots, opts.get("markdown"))
        verdict = gate.decide(result.findings, settings.fail_on)
        write_reports(opts, result, verdict)
        return verdict.exit_code

    code = guarded(go)
    raise typer.Exit(code)


# --- fusion workflow: `candidates` and `note` (ad_diff.candidates, ad_diff.note) ----------------------------


class WorkflowFormat(str, Enum):
    """Output formats of ``candidates`` and ``note``."""

    markdown = "markdown"
    json = "json"
    text = "text"


def _emit(text: str, output: Optional[Path]) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(output, text)


@app.command()
def candidates(
    run: Annotated[Path, typer.Argument(help="Run folder whose graphs/ holds the AD graph dumps.")],
    trtllm_src: Annotated[
        Optional[Path], typer.Option(help="TensorRT-LLM source tree to search for existing ops/transforms.")
    ] = None,
    transform: Annotated[
        Optional[str],
        typer.Option(help="Scan the dump written after this transform (default: the final dump)."),
    ] = None,
    min_count: Annotated[int, typer.Option(help="Report patterns seen at least this many times.")] = 2,
    fmt: Annotated[
        WorkflowFormat,
        typer.Option("--format", "-f", help="markdown, json, or text (the candidate templates only)."),
    ] = WorkflowFormat.markdown,
    output: Annotated[
        Optional[Path], typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Find repeated unfused patterns in RUN's graph dump, rank them, and look up existing kernels."""

    def go() -> int:
        from ad_diff.workflows.candidates import find_candidates
        from ad_diff.workflows.candidates import render as cr

        if min_count < 1:
            raise AdDiffError(f"--min-count must be at least 1, not {min_count}")
        report = find_candidates(run, transform=transform, trtllm_src=trtllm_src, min_count=min_count)
        render = {
            WorkflowFormat.markdown: cr.render_markdown,
            WorkflowFormat.json: cr.render_json,
            WorkflowFormat.text: cr.render_text,
        }[fmt]
        _emit(render(report), output)
        return 0

    raise typer.Exit(guarded(go))


@app.command()
def note(
    baseline: Annotated[Path, typer.Argument(help="Baseline run folder (before the change).")],
    candidate_run: Annotated[
        Path, typer.Argument(metavar="CANDIDATE", help="Candidate run folder (with the change).")
    ],
    candidate: Annotated[
        str,
        typer.Option("--candidate", help="Candidate name (as listed by `ad-diff candidates`, e.g. rmsnorm)."),
    ],
    tests: Annotated[Optional[str], typer.Option(help="Tests run for this change (free text).")] = None,
    tests_file: Annotated[
        Optional[Path], typer.Option(help="File listing the tests run (e.g. a pytest summary).")
    ] = None,
    path: Annotated[
        Optional[str],
        typer.Option(
            help="Implementation path: existing_kernel or triton_fallback (default: inferred from the graph)."
        ),
    ] = None,
    trtllm_src: Annotated[
        Optional[Path], typer.Option(help="TensorRT-LLM source tree for the kernel lookup.")
    ] = None,
    fmt: Annotated[
        WorkflowFormat, typer.Option("--format", "-f", help="markdown or json (text = markdown).")
    ] = WorkflowFormat.markdown,
    output: Annotated[
        Optional[Path], typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Write the iteration note for a fusion change: validation, [SUMMARY] before/after, tests, risks."""

    def go() -> int:
        from ad_diff.workflows import note as note_mod

        if tests is not None and tests_file is not None:
            raise AdDiffError("give either --tests or --tests-file, not both")
        tests_text = tests
        if tests_file is not None:
            try:
                tests_text = tests_file.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as e:
                raise AdDiffError(f"{tests_file}: cannot read the tests file ({e})") from e
        result = note_mod.build_note(
            baseline, candidate_run, candidate, tests=tests_text, path=path, trtllm_src=trtllm_src
        )
        text = (
            note_mod.render_json(result) if fmt is WorkflowFormat.json else note_mod.render_markdown(result)
        )
        _emit(text, output)
        return 0

    raise typer.Exit(guarded(go))


def _commands() -> set[str]:
    return {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}


def main(argv: list[str] | None = None) -> None:
    """Console entry point; ``ad-diff A B`` runs ``compare`` when the first word is not a command."""
    args = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args if not a.startswith("-")), None)
    if first is not None and first not in _commands() and not any(a in ("--help", "--version") for a in args[:1]):
        args.insert(0, "compare")
    app(args=args, prog_name="ad-diff")
