"""The typer app, the guard that turns errors into exit codes, and the console entry point.

``ad-diff BASELINE CANDIDATE`` is shorthand for ``ad-diff compare BASELINE CANDIDATE``. Commands live in
their own modules (``compare``, ``ci``, ``fusion``) and register themselves on :data:`app`.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import Annotated, TypeVar

import typer

from ad_diff import __version__
from ad_diff.errors import AdDiffError
from ad_diff.gate import EXIT_INPUT_ERROR, EXIT_INTERNAL_ERROR

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


def error_json(e: AdDiffError) -> str:
    """The JSON object an input error prints on stdout under ``--format json`` (docs/report-schema.md)."""
    import json

    from ad_diff.errors import InputError

    where: dict[str, object] = {"path": None, "line": None}
    if isinstance(e, InputError):
        where = {"path": str(e.path), "line": e.line}
    body = {"schema_version": 1, "verdict": "error", "exit_code": EXIT_INPUT_ERROR,
            "error": {"message": str(e), **where}}
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False)


def guarded(fn: Callable[[], T], json_errors: Callable[[], bool] | None = None) -> T:
    """Run ``fn``; turn user errors into exit 2 and bugs into exit 3, never a traceback for bad input.

    ``json_errors()`` says whether the user asked for JSON on stdout: a user error then also prints
    :func:`error_json` there, so a CI step parsing stdout reads the error instead of failing on nothing.
    """
    try:
        return fn()
    except AdDiffError as e:
        _err(str(e))
        if json_errors is not None and json_errors():
            typer.echo(error_json(e))
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


def _commands() -> set[str]:
    return {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}


def main(argv: list[str] | None = None) -> None:
    """Console entry point; ``ad-diff A B`` runs ``compare`` when the first word is not a command."""
    args = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args if not a.startswith("-")), None)
    if first is not None and first not in _commands() and not any(a in ("--help", "--version") for a in args[:1]):
        args.insert(0, "compare")
    app(args=args, prog_name="ad-diff")

