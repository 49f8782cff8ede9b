"""The fusion workflow: ``candidates`` (what to fuse next) and ``note`` (the iteration note of a change)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from ad_diff.cli.app import app, guarded
from ad_diff.cli.output import emit, terminal_width
from ad_diff.errors import AdDiffError
from ad_diff.formats import CANDIDATES, NOTE, CandidatesPrinted, Format, NotePrinted, Options


def _use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


@app.command()
def candidates(
    run: Annotated[Path, typer.Argument(help="Run folder whose graphs/ holds the AD graph dumps.")],
    trtllm_src: Annotated[
        Path | None, typer.Option(help="TensorRT-LLM source tree to search for existing ops/transforms.")
    ] = None,
    transform: Annotated[
        str | None,
        typer.Option(help="Scan the dump written after this transform (default: the final dump)."),
    ] = None,
    min_count: Annotated[int, typer.Option(help="Report patterns seen at least this many times.")] = 2,
    fmt: Annotated[
        CandidatesPrinted | None,
        typer.Option(
            "--format",
            "-f",
            help="terminal (default on stdout: fits the terminal or COLUMNS), markdown (default with "
            "--output), json, or text (the candidate templates only).",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Find repeated unfused patterns in RUN's graph dump, rank them, and look up existing kernels."""

    def go() -> int:
        # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
        from ad_diff.candidates import find_candidates

        if min_count < 1:
            raise AdDiffError(f"--min-count must be at least 1, not {min_count}")
        report = find_candidates(run, transform=transform, trtllm_src=trtllm_src, min_count=min_count)
        # the terminal view on stdout, markdown in a file, unless --format says otherwise
        chosen = fmt or (Format.terminal if output is None else Format.markdown)
        layout = Options(color=output is None and _use_color(), width=terminal_width(100))
        emit(CANDIDATES.render(chosen, report, layout), output)
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
    tests: Annotated[str | None, typer.Option(help="Tests run for this change (free text).")] = None,
    tests_file: Annotated[
        Path | None, typer.Option(help="File listing the tests run (e.g. a pytest summary).")
    ] = None,
    path: Annotated[
        str | None,
        typer.Option(
            help="Implementation path: existing_kernel or triton_fallback (default: inferred from the graph)."
        ),
    ] = None,
    trtllm_src: Annotated[
        Path | None, typer.Option(help="TensorRT-LLM source tree for the kernel lookup.")
    ] = None,
    fmt: Annotated[
        NotePrinted, typer.Option("--format", "-f", help="markdown or json (text = markdown).")
    ] = Format.markdown.value,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Write the iteration note for a fusion change: validation, [SUMMARY] before/after, tests, risks."""

    def go() -> int:
        # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
        from ad_diff.workflows import note as note_mod

        if tests is not None and tests_file is not None:
            raise AdDiffError("give either --tests or --tests-file, not both")
        tests_text = tests
        if tests_file is not None:
            # lazy: a command's modules load only when it runs (start-up, docs/benchmark.md)
            from ad_diff.core import safepath

            # a file the user named, wherever it is; still a regular file (a FIFO would block), bounded
            what = "a text file of test results (--tests-file)"
            raw = safepath.read_bytes(tests_file, safepath.given_root(tests_file), what, 1 << 20)
            tests_text = safepath.decode_utf8(raw, tests_file, what).strip()
        result = note_mod.build_note(
            baseline, candidate_run, candidate, tests=tests_text, path=path, trtllm_src=trtllm_src
        )
        emit(NOTE.render(fmt, result), output)
        return 0

    raise typer.Exit(guarded(go))
