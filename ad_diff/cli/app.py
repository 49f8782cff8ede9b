"""The typer app, the guard that turns errors into exit codes, and the console entry point.

``ad-diff BASELINE CANDIDATE`` is shorthand for ``ad-diff compare BASELINE CANDIDATE``. Commands live in
their own modules (``compare``, ``ci``, ``fusion``, ``history``) and register themselves on :data:`app` when
imported: :func:`load_commands` imports the ones a call needs (:data:`COMMANDS`).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from ad_diff import __version__
from ad_diff.core import lazy
from ad_diff.core.redact import redact_text
from ad_diff.core.sinks import guard_streams, terminal
from ad_diff.errors import AdDiffError

# ad_diff.gate (and through it core.model) is imported where an exit code is needed, not here: `--help`
# would otherwise build every finding class before printing a line.

app = typer.Typer(
    name="ad-diff",
    help="Compare two TensorRT-LLM AutoDeploy runs: match loss, metadata loss and numeric drift per "
    "transform.\n\n`ad-diff BASELINE_RUN/ CANDIDATE_RUN/` is shorthand for `ad-diff compare ...`.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

T = TypeVar("T")


def _err(msg: str) -> None:
    # an error may quote a few characters of a file: never a credential, never an unencodable surrogate
    typer.echo(f"ad-diff: error: {terminal(redact_text(msg))}", err=True)


def error_json(e: AdDiffError) -> str:
    """The JSON object an input error prints on stdout under ``--format json`` (docs/report-schema.md)."""
    # lazy: kept off the start-up path of --help (docs/benchmark.md)
    from ad_diff.core.jsonable import dumps
    from ad_diff.errors import InputError
    from ad_diff.gate import EXIT_INPUT_ERROR, word
    from ad_diff.report.json import SCHEMA_VERSION

    where: dict[str, object] = {"path": None, "line": None}
    if isinstance(e, InputError):
        where = {"path": str(e.path), "line": e.line}
    body = {"schema_version": SCHEMA_VERSION, "verdict": word(EXIT_INPUT_ERROR).value,
            "exit_code": EXIT_INPUT_ERROR, "error": {"message": str(e), **where}}
    return dumps(body, sort_keys=True)


OUTPUT_PARAMS = frozenset({"markdown", "json_out", "junit", "html", "step_summary", "output", "table",
                           "plots", "cache"})
"""Command parameters that name files ad-diff writes; every other path parameter is an input."""


def _protect_inputs() -> None:
    """Register every path the current command reads (its parameters that are paths and not outputs), so
    that no report is written over one or into one, and check every output path it was given now, before
    anything is read or compared (:func:`ad_diff.core.outfile.plan`: one bad output path, nothing written)."""
    try:  # typer >= 0.20 carries its own copy of click; earlier ones use click itself
        from typer._click.globals import get_current_context  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        from click import get_current_context  # type: ignore[import-not-found, no-redef, unused-ignore]

    # lazy: kept off the start-up path of --help (docs/benchmark.md)
    from ad_diff.core import outfile

    ctx = get_current_context(silent=True)
    found: list[Path] = []
    outputs: list[Path] = []
    if ctx is not None:
        # the parameters typed as paths (their values may still be strings here: typer converts later)
        paths = {p.name for p in ctx.command.params if getattr(p.type, "name", None) == "path"}
        for name, value in ctx.params.items():
            if name not in paths:
                continue
            for v in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(v, (str, Path)) and str(v):
                    (outputs if name in OUTPUT_PARAMS else found).append(Path(v))
    outfile.protect(found)
    outfile.plan(outputs)


def guarded(fn: Callable[[], T], json_errors: Callable[[], bool] | None = None) -> T:
    """Run ``fn``; turn user errors into exit 2 and bugs into exit 3, never a traceback for bad input.

    ``json_errors()`` says whether the user asked for JSON on stdout: a user error then also prints
    :func:`error_json` there, so a CI step parsing stdout reads the error instead of failing on nothing.
    """
    try:
        _protect_inputs()
        return fn()
    except AdDiffError as e:
        # lazy: kept off the start-up path of --help (docs/benchmark.md)
        from ad_diff.cli.output import write_error_reports
        from ad_diff.gate import EXIT_INPUT_ERROR

        _err(str(e))
        if json_errors is not None and json_errors():
            typer.echo(error_json(e))
        write_error_reports(redact_text(str(e)), EXIT_INPUT_ERROR, error_json(e))
        raise typer.Exit(EXIT_INPUT_ERROR) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - the last line of defence: report a bug, not a traceback
        # lazy: kept off the start-up path of --help (docs/benchmark.md)
        from ad_diff.cli.output import write_error_reports
        from ad_diff.gate import EXIT_INTERNAL_ERROR

        if os.environ.get("AD_DIFF_DEBUG"):
            traceback.print_exc()
        typer.echo(
            f"ad-diff: internal error: {type(e).__name__}: {terminal(redact_text(str(e)))}\n"
            "This is a bug in ad-diff; rerun with AD_DIFF_DEBUG=1 for the traceback and report it.",
            err=True,
        )
        write_error_reports(f"internal error: {type(e).__name__}: {redact_text(str(e))}", EXIT_INTERNAL_ERROR,
                            None)
        raise typer.Exit(EXIT_INTERNAL_ERROR) from None
    finally:  # the command's inputs, planned outputs and files read are its own, not the next one's
        # lazy: kept off the start-up path of --help (docs/benchmark.md)
        from ad_diff.core import outfile

        outfile.protect(())


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


COMMANDS: dict[str, str] = {
    "snapshot": "ci", "record": "ci", "batch": "ci", "schema": "ci", "compare": "compare",
    "candidates": "fusion", "note": "fusion", "history": "history",
}
"""Every command -> the module of ``ad_diff.cli`` that registers it (in the order ``--help`` lists them).

A call imports the module of its own command only (click's "lazily loading subcommands" pattern): typer
builds a click command from every registered function's signature on each call, and the comparison path
should pay neither for that nor for the imports of ``record``, ``batch`` or ``history``. ``--help`` and
anything that is not a known command load them all. ``tests/unit/cli/test_app.py`` keeps this table equal
to what the modules register."""


def load_commands(names: Iterable[str] | None = None) -> None:
    """Register the commands ``names`` (default: every command) on :data:`app` by importing their modules."""
    import importlib

    wanted = COMMANDS if names is None else [n for n in names if n in COMMANDS]
    for module in dict.fromkeys(COMMANDS[n] for n in wanted):  # in the table's order, each module once
        importlib.import_module(f"ad_diff.cli.{module}")


def _commands() -> set[str]:
    return set(COMMANDS)


#: Words that are ad-diff's own root options, not the start of a ``compare`` shorthand.
_ROOT_OPTIONS = ("--help", "-h", "--version")
#: A first word spelled like a command (no path separator, no suffix) can be a mistyped command.
_COMMAND_LIKE = lazy.pattern(r"[A-Za-z][A-Za-z_-]*")


def suggest_command(word: str, commands: Iterable[str]) -> str | None:
    """The command ``word`` most likely mistypes (``comapre`` -> ``compare``), or ``None``."""
    import difflib

    if not _COMMAND_LIKE.fullmatch(word):
        return None
    close = difflib.get_close_matches(word.lower(), sorted(commands), n=1, cutoff=0.6)
    return close[0] if close else None


def main(argv: list[str] | None = None) -> None:
    """Console entry point; ``ad-diff A B`` runs ``compare`` when the first word is not a command.

    A first word that is neither a command nor an existing path but is close to a command name is a typo
    (exit 2 with the suggestion), not a run folder: ``ad-diff snaphot RUN`` must not compare a folder
    ``snaphot``. A command name always wins over a folder of the same name (``./snapshot`` or
    ``ad-diff compare snapshot ...`` compares that folder); the error of such a call says so.
    """
    guard_streams()  # no line of stdout or stderr acts on a CI runner, none ends in an encoding error
    try:
        _main(argv)
    finally:  # a last line without its end is written now
        sys.stdout.flush()
        sys.stderr.flush()


def _main(argv: list[str] | None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["help"] and not Path("help").exists():  # `ad-diff help [COMMAND]`, as git and pip take it
        args = [*args[1:2], "--help"]
    commands = _commands()
    hint = None
    if args and args[0] in commands:
        if Path(args[0]).exists():
            hint = (f"'{args[0]}' was read as the command; to compare the folder of that name, write "
                    f"./{args[0]} or `ad-diff compare {args[0]} ...`")
    elif args and args[0] not in _ROOT_OPTIONS:
        guess = None if Path(args[0]).exists() else suggest_command(args[0], commands)
        if guess is not None:
            # lazy: kept off the start-up path of --help (docs/benchmark.md)
            from ad_diff.gate import EXIT_INPUT_ERROR

            _err(f"'{args[0]}' is neither a command nor an existing run folder; did you mean '{guess}'? "
                 f"(commands: {', '.join(sorted(commands))})")
            raise SystemExit(EXIT_INPUT_ERROR)
        args.insert(0, "compare")
    load_commands([args[0]] if args and args[0] in COMMANDS else None)
    code = _run_app(args)
    if hint is not None:
        # lazy: kept off the start-up path of --help (docs/benchmark.md)
        from ad_diff.gate import EXIT_INPUT_ERROR

        if code == EXIT_INPUT_ERROR:
            typer.echo(f"ad-diff: note: {terminal(hint)}", err=True)
    raise SystemExit(code)


#: ``--format json`` / ``-f json`` / ``--format=json`` anywhere on the command line.
_JSON_FORMAT = lazy.pattern(r"(?:--format|-f)(?:=|\x00)json")


def _wants_json(args: list[str]) -> bool:
    return _JSON_FORMAT.search("\x00".join(args)) is not None


def _show(e: Exception) -> None:
    """click's own rendering of a usage error (usage line, hint, message), through the terminal sink: the
    message quotes the command line, which can hold any character."""
    import io

    buf = io.StringIO()
    e.show(file=buf)  # type: ignore[attr-defined]
    sys.stderr.write(terminal(buf.getvalue()))


def _run_app(args: list[str]) -> int:
    """Run the app without click's standalone mode, so that a command-line usage error (a mistyped option,
    a missing argument) is also a JSON error object on stdout under ``--format json``, as every other input
    error is: a CI step that parses stdout then reads the error instead of failing on nothing."""
    # typer vendors click (pinned in pyproject.toml); its exception classes are not re-exported
    from typer._click.exceptions import ClickException, UsageError

    try:
        rc = app(args=args, prog_name="ad-diff", standalone_mode=False)
    except UsageError as e:
        _show(e)
        if _wants_json(args):
            typer.echo(error_json(AdDiffError(e.format_message())))
        return e.exit_code
    except ClickException as e:
        _show(e)
        return e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("Aborted!", err=True)
        return 1
    except BrokenPipeError:  # the reader of stdout went away (`| head`): as click's standalone mode does
        return 1
    return rc if isinstance(rc, int) else 0
