"""Where the CLI writes: the stdout report, the report files the user asked for, and plots.

Every writer goes through :func:`safe_text`, the last pass of the sink layer
(:func:`ad_diff.core.sinks.output`): whatever a renderer let through, no control, bidi or zero-width character
and no lone surrogate (an undecodable file name, a JSON ``"\\ud800"``, which no UTF-8 stream accepts) is
written raw: each becomes a visible escape (``\\x1b``, ``\\u202e``, ``\\ud800``); only the colour sequences of
a coloured terminal report pass. And whatever path a credential took into a report (a config value, a log line
quoted in a failure, a name), the last pass replaces every credential-shaped string with ``[redacted]``
(:func:`ad_diff.core.redact.redact_text`). The sentence naming the config file in use (``resolve_options``) is
added to the notes of every report here.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core.outfile import planned, refusal, write_file
from ad_diff.core.redact import redacted_and_shown
from ad_diff.core.redactwalk import redact_deep
from ad_diff.errors import AdDiffError
from ad_diff.formats import BATCH, COMPARISON, FAILURE, Comparison, Failure, Format, Options, Reporters

if TYPE_CHECKING:
    from ad_diff.cli.options import ResolvedOptions


def safe_text(text: str) -> str:
    """``text`` as every report and message is written: credentials redacted, then the sink layer's last
    pass (invisible and acting characters, lone surrogates among them, as visible escapes)."""
    return redacted_and_shown(text)[1]  # output(redact_text(text)), the output pass made once


def write_output(path: Path, text: str) -> None:
    """Write one report file the user asked for (and only there; never through a link, over an input or
    into a run folder: :func:`ad_diff.core.outfile.write_file`)."""
    write_file(path, safe_text(text).encode("utf-8"))


def append_output(path: Path, text: str) -> None:
    """Append to a file (GitHub's step summary is shared by every command of a step)."""
    write_file(path, safe_text(text).encode("utf-8"), append=True)


def emit(text: str, output: Path | None) -> None:
    """Print ``text``, or write it to ``output`` when given."""
    if output is None:
        sys.stdout.write(safe_text(text))
    else:
        write_output(output, text)


def _relative(path: Path, markdown: Path | None) -> str:
    """``path`` as the markdown report names it: relative to the report's folder (else the current one)."""
    base = markdown.parent if markdown is not None else Path.cwd()
    try:
        return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive (Windows)
        return path.as_posix()


def _written(result: Any, **where: str) -> Any:
    """``result`` (a comparison or a batch) noting outputs written (:class:`ad_diff.result.Written`)."""
    import dataclasses

    return dataclasses.replace(result, written=dataclasses.replace(result.written, **where))


def write_plots(result: Any, plots: Path | None, markdown: Path | None) -> Any:
    """Write PNGs of drifting tensors where ``--plots`` points; the markdown report names the folder (a link
    to a file of the job would be dead in a PR comment)."""
    import dataclasses

    from ad_diff.kinds.tensors import TENSORS  # lazy: --help loads this module and never a kind

    ta = result.section(TENSORS.key)
    if plots is None or ta is None:
        return result
    # lazy: loaded only when this output was asked for
    from ad_diff.kinds.tensors.plots import write_plots

    try:
        written = write_plots(ta, plots)
    except OSError as e:
        raise AdDiffError(f"{plots}: cannot write plots ({e.strerror or e})") from e
    result = dataclasses.replace(result, notes=(*result.notes, f"{len(written)} plot(s) written to {plots}"))
    return _written(result, plots=_relative(plots, markdown)) if written else result


def link_html(result: Any, html: Path, markdown: Path | None) -> Any:
    """Let the markdown report of ``result`` name its HTML report ``html`` as the place for detail."""
    return _written(result, html=_relative(html, markdown))


def _link_batch(batch: Any, folder: Path, markdown: Path | None) -> Any:
    import dataclasses

    # lazy: loaded only when this output was asked for
    from ad_diff.report.html import INDEX, page_name

    models = tuple(
        dataclasses.replace(m, result=link_html(m.result, folder / page_name(m.name), markdown))
        if m.result is not None else m
        for m in batch.models
    )
    return _written(dataclasses.replace(batch, models=models), html=_relative(folder / INDEX, markdown))


def write_html(path: Path, result: Any, verdict: Any) -> None:
    """Write the HTML report: one file for a comparison; for a batch, the folder ``path`` with
    ``index.html`` and one file per compared model (their names never leave the folder)."""
    # lazy: loaded only when this output was asked for
    from ad_diff.report import html
    from ad_diff.result import BatchResult

    if not isinstance(result, BatchResult):
        write_output(path, html.render(result, verdict))
        return
    if path.exists() and not path.is_dir():
        raise AdDiffError(
            f"{path}: batch --html needs a folder (it writes index.html and one report per model)"
        )
    for name, text in html.render_batch_pages(result).items():
        write_output(path / name, text)


def with_note(result: Any, note: str | None) -> Any:
    """``result`` (one comparison, or every model of a batch) with ``note`` added to its notes."""
    if note is None:
        return result
    from ad_diff.result import BatchResult, DiffResult  # here: --help must not load the result model

    if isinstance(result, BatchResult):
        models = tuple(dataclasses.replace(m, result=with_note(m.result, note)) if m.result is not None else m
                       for m in result.models)
        return dataclasses.replace(result, models=models)
    if isinstance(result, DiffResult):
        return dataclasses.replace(result, notes=(*result.notes, note))
    return result


MIN_WIDTH, MAX_WIDTH = 40, 400
"""Terminal widths outside this range are clamped (a stray ``COLUMNS=5`` must not print one word a line)."""


def terminal_width(fallback: int = 120) -> int:
    """``COLUMNS`` when set, else the width of the terminal on stdout, else ``fallback`` (output piped)."""
    import shutil

    width = shutil.get_terminal_size(fallback=(fallback, 24)).columns
    return min(max(width, MIN_WIDTH), MAX_WIDTH)


def write_reports(opts: ResolvedOptions, result: Any, verdict: Any) -> None:
    """Print the stdout report and write every report file asked for (single comparison or batch); with
    ``--html`` the markdown names the HTML report as the place for detail."""
    # lazy: loaded only when this output was asked for
    from ad_diff.result import BatchResult

    # credentials out before any layout: a wrapped table cell can split ``key = value`` over two lines
    # the verdict holds the same findings and groups: redacted in one walk, so they stay one object each
    result, verdict = redact_deep((with_note(result, opts.config_note), verdict))
    use_color = sys.stdout.isatty() if opts["color"] is None else opts["color"]
    limit = opts["comment_limit"]
    html = opts.get("html")
    if html is not None:
        write_html(html, result, verdict)
        markdown = opts.get("markdown")
        if isinstance(result, BatchResult):
            result = _link_batch(result, html, markdown)
        else:
            result = link_html(result, html, markdown)
    reporters: Reporters[Any] = BATCH if isinstance(result, BatchResult) else COMPARISON
    subject = result if isinstance(result, BatchResult) else Comparison(result, verdict)
    layout = Options(color=use_color, width=terminal_width(), comment_limit=limit)
    sys.stdout.write(safe_text(reporters.render(opts["format"], subject, layout)))
    for fmt in reporters.files:  # the report files asked for, each by its format's name (--junit FILE)
        path = opts.get(fmt.value)
        if path is not None:
            text = reporters.render(fmt, subject, Options(comment_limit=limit))
            (append_output if fmt.appends else write_output)(path, text)


ERROR_OUTPUTS = {"markdown": Format.markdown, "step_summary": Format.step_summary, "json_out": Format.json}
"""The report files an error reaches (command parameter -> the format written there)."""


def write_error_reports(message: str, code: int, json_text: str | None) -> None:
    """An input error (exit 2) or a bug (exit 3) reaches the report files the command was asked to write,
    not stderr alone: the markdown report and the step summary get the error's markdown (what went wrong
    and what to do), the JSON report the error object (``json_text``). So a CI job posts the error in
    the PR comment and shows it in its summary, as it would a verdict. Best effort: a file that cannot be
    written (the error may be about that very path) is left alone, the error on stderr stands."""
    try:  # typer >= 0.20 carries its own copy of click; earlier ones use click itself
        from typer._click.globals import get_current_context  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        from click import get_current_context  # type: ignore[import-not-found, no-redef, unused-ignore]
    ctx = get_current_context(silent=True)
    params = ctx.params if ctx is not None else {}
    failure = Failure(message, code, json_text)
    wanted = [(Path(path), fmt) for name, fmt in ERROR_OUTPUTS.items()
              if isinstance(path := params.get(name), (str, Path)) and str(path)
              and not (fmt.machine and json_text is None)]
    # The outputs are all or nothing: where one of them is refused (a hard link of an input, say; the
    # error may be about that very path), the command writes none, its error included.
    every = dict.fromkeys((*planned(), *(p for p, _ in wanted)))  # each path checked once (a deep check)
    if any(refusal(path, deep=True) is not None for path in every):
        return
    for path, fmt in wanted:
        try:
            (append_output if fmt.appends else write_output)(path, FAILURE.render(fmt, failure))
        except (AdDiffError, OSError):
            continue

