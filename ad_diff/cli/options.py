"""Options shared by the comparison commands, and how they become :class:`~ad_diff.settings.Settings`.

``compare`` and ``batch`` take the same gate, filter and output options. They are declared once, in
:data:`SHARED`, and :func:`shared_options` appends them to a command's signature, so the two commands' help
and behaviour cannot drift apart. Commands read every option through ``ctx.params`` in
:func:`resolve_options` (defaults < config file < what the user typed).

A config file can change the gate (``fail_on: never``) and where reports go, and one found in the current
folder may come from a pull request's checkout: :func:`resolve_options` says on stderr which file was used
and which settings it set, and the same sentence goes into every report (``--no-config`` ignores it).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from ad_diff.core import outfile
from ad_diff.core.escape import excerpt
from ad_diff.core.redact import redact_text
from ad_diff.core.sinks import terminal
from ad_diff.errors import AdDiffError, UsageError
from ad_diff.formats import Format, Printed
from ad_diff.report import COMMENT_LIMIT
from ad_diff.settings import FAIL_ON_CHOICES, MIN_COMMENT_LIMIT, FailOn, Settings, broken_rule

F = TypeVar("F", bound=Callable[..., Any])

OPTION_KEYS: dict[str, str] = {
    "rank": "rank", "fail_on": "fail_on", "collapse_fraction": "collapse_fraction", "fmt": "format",
    "markdown": "markdown", "json_out": "json", "ignore_transform": "ignore_transforms",
    "ignore_code": "ignore_codes", "graphs": "graphs", "tensors": "tensors", "color": "color",
    "expected": "expected", "junit": "junit", "step_summary": "step_summary",
    "comment_limit": "comment_limit",
    "progress": "progress", "jobs": "jobs", "config_explained_gates": "config_explained_gates",
    "html": "html",
}
OUTPUT_KEYS = ("markdown", "json", "junit", "step_summary", "html")
"""Config keys that name files ad-diff writes (:func:`ad_diff.core.outfile.plan` checks them up front)."""
CHECKED = {"fail_on": "--fail-on", "collapse_fraction": "--collapse-fraction",
           "comment_limit": "--comment-limit", "jobs": "--jobs"}
"""Options whose range or choice :func:`resolve_options` checks (:func:`ad_diff.settings.broken_rule`), and
how their errors name them (written out: tests/unit/test_errors.py checks every option a message names)."""


def _base_type(annotation: Any) -> Any:
    """The class an option's annotation converts to: ``Annotated[Path | None, ...]`` -> ``Path``,
    ``list[str] | None`` -> ``str``."""
    while True:
        args = typing.get_args(annotation)
        if typing.get_origin(annotation) is Annotated:
            annotation = args[0]
        elif args:
            rest = [a for a in args if a is not type(None)]
            if len(rest) != 1:
                return annotation
            annotation = rest[0]
        else:
            return annotation


@functools.cache
def _converters() -> dict[str, type]:
    """Shared option -> the class its value converts to, for the options whose class is a Path or an Enum."""
    return {name: t for name, (annotation, _) in SHARED.items()
            if isinstance(t := _base_type(annotation), type) and issubclass(t, (Path, Enum))}


def param(ctx: typer.Context, name: str) -> Any:
    """``ctx.params[name]`` as the type its annotation declares (a shared option's ``Path``/``Enum``).

    Typer up to 0.28 converts an option to its annotated type when it calls the command, so ``ctx.params``
    holds click's raw value (a ``str``); 0.29 converts it in ``ctx.params`` already. Commands read the shared
    options from ``ctx.params``, so they convert here and work with either."""
    value = ctx.params.get(name)
    to = _converters().get(name)
    if to is None or value is None or isinstance(value, to):
        return value
    if isinstance(value, (list, tuple)):
        return [v if isinstance(v, to) else to(v) for v in value]
    return to(value)


@dataclass(frozen=True)
class ResolvedOptions:
    """A command's options once the config file is read: each value by its config key (typer defaults <
    config file < options the user typed), checked by the config file's rules, and the config file in use.
    The CLI hands the library :class:`~ad_diff.settings.Settings` built from it (:func:`build_settings`)."""

    values: Mapping[str, Any]
    config_note: str | None = None
    """The sentence naming the config file read and what it set (on stderr and in every report); ``None``
    when none was read (none found, or ``--no-config``)."""

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` where the command has no such option."""
        return self.values.get(key, default)


def resolve_options(ctx: typer.Context) -> ResolvedOptions:
    """Options by config key: typer defaults < config file < options the user actually passed."""
    # lazy: loaded only for the options that need it (start-up, docs/benchmark.md)
    from ad_diff.settings import AUTO_FILES, find_config, load_config, merge

    defaults: dict[str, Any] = {}
    passed: dict[str, Any] = {}
    for name, key in OPTION_KEYS.items():
        if name not in ctx.params:
            continue
        value = param(ctx, name)
        if isinstance(value, list):
            value = tuple(value)
        source = ctx.get_parameter_source(name)
        # By name: typer vendors its own click, so the enum class differs between typer versions.
        user_given = getattr(source, "name", None) in ("COMMANDLINE", "ENVIRONMENT")
        target = passed if user_given else defaults
        target[key] = () if value is None and key.startswith("ignore_") else value
    explicit = param(ctx, "config")
    if ctx.params.get("no_config") and explicit is not None:
        raise UsageError("--config and --no-config exclude each other")
    path: Path | None = None
    file_values: dict[str, Any] = {}
    if not ctx.params.get("no_config"):
        # the files looked for as the config are inputs, used or not: no report may overwrite one
        outfile.protect_more(Path.cwd() / name for name in AUTO_FILES)
        try:
            path = find_config(explicit)
            file_values = load_config(path, auto=explicit is None) if path is not None else {}
        except AdDiffError as e:
            if explicit is not None:
                raise
            raise AdDiffError(f"{e} (a config file found in the current folder: fix it, name another with "
                              "--config, or pass --no-config to ignore it)") from None
    opts = merge(defaults, file_values, passed)
    note = None
    if path is not None:
        note = config_note(path, explicit is None, file_values, passed)
        typer.echo(f"ad-diff: {terminal(redact_text(note))}", err=True)
    for key, option in CHECKED.items():  # the same rules as the config file's (settings.broken_rule)
        value = opts.get(key)  # history has no --comment-limit, batch alone has --jobs
        broken = None if value is None else broken_rule(key, value)
        if broken is not None:
            raise UsageError(f"{option} {broken}, not {value!r}")
    # Nested tables are checked here, when the file is read, not when (or if) the analysis gets to them.
    tolerances = opts.get("tolerances") or {}
    if tolerances:  # the tolerance module brings the tensor model: only for a config that sets some
        # lazy: loaded only for the options that need it (start-up, docs/benchmark.md)
        from ad_diff.kinds.tensors.tolerance import validate_entry

    for pattern, entry in tolerances.items():
        try:
            validate_entry(str(pattern), entry)
        except AdDiffError as e:
            raise AdDiffError(f"{path}: {e}") from e
    # the outputs the config file may add, checked before anything is compared (and against the file itself)
    outfile.plan(opts.get(key) for key in OUTPUT_KEYS)
    return ResolvedOptions(opts, note)


def config_note(path: Path, auto: bool, file_values: dict[str, Any], passed: dict[str, Any]) -> str:
    """The sentence naming the config file in use and what it set (shown on stderr and in every report)."""
    how = "found in the current folder" if auto else "given with --config"
    used = [f"{k}={_show(v)}" for k, v in sorted(file_values.items()) if k not in passed]
    over = sorted(k for k in file_values if k in passed)
    text = f"settings from {path} ({how}): " + (", ".join(used) if used else "nothing")
    if over:
        text += "; overridden on the command line: " + ", ".join(over)
    return text


def _show(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)):
        return "{...}" if isinstance(value, dict) else f"[{len(value)} item(s)]"
    return excerpt(str(value), 80)


def json_on_stdout(ctx: typer.Context) -> list[bool]:
    """``[True]`` when ``--format json`` was typed; a command appends the resolved answer (the config file may
    say ``format: json``) once it has read the options. For :func:`ad_diff.cli.app.guarded`'s
    ``json_errors``."""
    fmt = param(ctx, "fmt")
    return [fmt is not None and Format(fmt).machine]


def build_settings(opts: ResolvedOptions, baseline: Path, candidate: Path, **extra: Any) -> Settings:
    """Settings of one comparison from resolved options (``extra``: per-run paths, model name)."""
    # lazy: loaded only for the options that need it (start-up, docs/benchmark.md)
    from ad_diff.progress import progress_enabled

    return Settings(
        baseline=baseline, candidate=candidate, rank=opts["rank"], fail_on=FailOn(opts["fail_on"]),
        collapse_fraction=opts["collapse_fraction"], ignore_transforms=tuple(opts["ignore_transforms"]),
        ignore_codes=tuple(opts["ignore_codes"]), graphs=opts["graphs"], tensors=opts["tensors"],
        tolerances=opts.get("tolerances", {}), tensor_device=opts.get("tensor_device", "cpu"),
        tolerance_preset=opts.get("tolerance_preset"),
        expected_changes=opts.get("expected"), progress=progress_enabled(opts.get("progress")),
        config_explained_gates=bool(opts.get("config_explained_gates", False)),
        tensor_plots=opts.get("html") is not None, **extra,  # the HTML report draws the drift plots
    )


def tensor_options(settings: Settings, tol: list[str] | None, device: str | None,
                   plots: Path | None, tolerance_preset: str | None = None) -> Settings:
    """Merge the tolerance preset, then the config file's tolerances, then ``--tol`` specs, each over the
    one before (key by key); set device and plots."""
    import dataclasses

    name = tolerance_preset or settings.tolerance_preset
    tolerances: dict[str, dict[str, Any]] = {}
    if name is not None:
        # lazy: loaded only for the options that need it (start-up, docs/benchmark.md)
        from ad_diff.kinds.tensors.tolerance import preset

        tolerances = preset(name)
    for pattern, entry in settings.tolerances.items():
        tolerances.setdefault(pattern, {}).update(entry)
    if tol:  # the tolerance module brings the tensor model: only when --tol is given
        # lazy: loaded only for the options that need it (start-up, docs/benchmark.md)
        from ad_diff.kinds.tensors.tolerance import parse_cli

    for spec in tol or ():
        try:
            pattern, entry = parse_cli(spec)
        except ValueError as e:
            raise AdDiffError(f"--tol {spec!r}: {e}") from e
        tolerances.setdefault(pattern, {}).update(entry)
    plot_data = settings.tensor_plots or plots is not None
    changes: dict[str, Any] = {"tolerances": tolerances, "tensor_plots": plot_data, "plots_dir": plots}
    if device is not None:
        if device not in ("cpu", "cuda", "auto"):
            raise AdDiffError(f"--tensor-device must be cpu, cuda or auto, not {device!r}")
        changes["tensor_device"] = device
    return dataclasses.replace(settings, **changes)


NoConfigOpt = Annotated[bool, typer.Option(
    "--no-config",
    help="Ignore ./.ad-diff.yaml and ./pyproject.toml: defaults and command-line options only.")]
ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="Config file (.ad-diff.yaml or pyproject.toml [tool.ad-diff]); default: "
    "./.ad-diff.yaml, else ./pyproject.toml when it has [tool.ad-diff]. Options given here override the "
    "file.")]

FailOnOpt = Annotated[str, typer.Option(
    metavar="[" + "|".join(FAIL_ON_CHOICES) + "]",
    help="Gate level: error (every match loss, incomplete run or error finding), match_loss, collapse (a "
    "count falling to zero or by --collapse-fraction), never.")]
"""``--fail-on``, with its values in the usage line and the help (every command that gates)."""

#: Options of every comparison command: parameter name -> (annotation, default).
SHARED: dict[str, tuple[Any, Any]] = {
    "rank": (Annotated[int | None, typer.Option(
        help="Compare only this rank (default: every rank both runs have; rank 0 leads the report).")], None),
    "fail_on": (FailOnOpt, "error"),
    "collapse_fraction": (Annotated[float, typer.Option(
        help="Loss share (0-1] that counts as a collapse.")], 0.5),
    "fmt": (Annotated[Printed, typer.Option("--format", "-f", help="Report printed on stdout.")],
            Format.terminal.value),
    "markdown": (Annotated[Path | None, typer.Option(
        "--markdown", help="Also write the markdown report here.")], None),
    "json_out": (Annotated[Path | None, typer.Option(
        "--json", help="Also write the JSON report here.")], None),
    "ignore_transform": (Annotated[list[str] | None, typer.Option(
        help="Transform key (glob) to leave out; repeatable.")], None),
    "ignore_code": (Annotated[list[str] | None, typer.Option(
        help="Finding code (glob) to drop; repeatable.")], None),
    "graphs": (Annotated[bool, typer.Option(help="Analyse graph dumps when both runs have them.")], True),
    "tensors": (Annotated[bool, typer.Option(
        help="Compare recorded tensors when both runs have them.")], True),
    "color": (Annotated[bool | None, typer.Option(
        help="Colour the terminal report (default: when stdout is a TTY).")], None),
    "config": (ConfigOpt, None),
    "no_config": (NoConfigOpt, False),
    "expected": (Annotated[Path | None, typer.Option(
        help="Expected-changes file: matching findings are acknowledged (shown, not gating); unmatched "
        "entries are stale.")], None),
    "junit": (Annotated[Path | None, typer.Option(
        "--junit", help="Also write a JUnit XML report here.")], None),
    "html": (Annotated[Path | None, typer.Option(
        "--html", metavar="PATH", help="Also write the self-contained HTML report (timeline, rewritten "
        "regions, drift plots) to this file; for batch, a folder with index.html and one report per model.")],
        None),
    "step_summary": (Annotated[Path | None, typer.Option(
        help="Append the markdown report (capped at 1 MiB) to this file, e.g. \"$GITHUB_STEP_SUMMARY\".")],
        None),
    "comment_limit": (Annotated[int, typer.Option(
        help=f"Maximum characters of the --markdown report (PR comment); at least {MIN_COMMENT_LIMIT}.")],
        COMMENT_LIMIT),
    "progress": (Annotated[bool | None, typer.Option(
        help="Progress bars on stderr (default: on a terminal, off in CI or when piped).")], None),
}


def shared_options(fn: F) -> F:
    """Append the :data:`SHARED` options to command ``fn``'s signature (``fn`` reads them from
    ``ctx.params``)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    own = [p.replace(annotation=hints[p.name]) for p in inspect.signature(fn).parameters.values()]
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
             for name, (annotation, default) in SHARED.items()]

    @functools.wraps(fn)
    def command(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **{k: v for k, v in kwargs.items() if k not in SHARED})

    command.__signature__ = inspect.Signature(own + extra)  # type: ignore[attr-defined]
    command.__annotations__ = {**hints, **{name: a for name, (a, _) in SHARED.items()}}
    return typing.cast(F, command)
