"""Where the CLI writes: the stdout report, the report files the user asked for, and plots.

Every writer goes through :func:`safe_text`: text from the inputs may hold lone surrogates (an undecodable
file name, a JSON ``"\\ud800"``) that no UTF-8 stream accepts; they are written as ``\\ud800`` escapes
instead of crashing the report. And whatever path a credential took into a report (a config value, a log
line quoted in a failure, a name), the last pass replaces every credential-shaped string with
``[redacted]`` (:func:`ad_diff.core.redact.redact_text`). The sentence naming the config file in use
(``resolve_options``) is added to the notes of every report here.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from ad_diff.core.escape import surrogate_safe
from ad_diff.core.redact import redact_text
from ad_diff.errors import AdDiffError
from ad_diff.report import Format, ReportFormat
from ad_diff.result import BatchResult, DiffResult


def safe_text(text: str) -> str:
    """``text`` as every report and message is written: credentials redacted, lone surrogates escaped."""
    return surrogate_safe(redact_text(text))




def write_output(path: Path, text: str) -> None:
    """Write one report file the user asked for (and only there)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(safe_text(text), encoding="utf-8")
    except OSError as e:
        raise AdDiffError(f"{path}: cannot write output ({e.strerror or e})") from e


def append_output(path: Path, text: str) -> None:
    """Append to a file (GitHub's step summary is shared by every command of a step)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(safe_text(text))
    except OSError as e:
        raise AdDiffError(f"{path}: cannot write output ({e.strerror or e})") from e


def emit(text: str, output: Path | None) -> None:
    """Print ``text``, or write it to ``output`` when given."""
    if output is None:
        sys.stdout.write(safe_text(text))
    else:
        write_output(output, text)


def write_plots(result: Any, plots: Path | None, markdown: Path | None) -> Any:
    """Write PNGs of drifting tensors where ``--plots`` points and link them from the markdown report."""
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
    return dataclasses.replace(result, notes=notes,
                               render_options={**result.render_options, "tensors": {"plots_dir_rel": rel}})


def with_note(result: Any, note: str | None) -> Any:
    """``result`` (one comparison, or every model of a batch) with ``note`` added to its notes."""
    if note is None:
        return result
    if isinstance(result, BatchResult):
        models = tuple(dataclasses.replace(m, result=with_note(m.result, note)) if m.result is not None else m
                       for m in result.models)
        return dataclasses.replace(result, models=models)
    if isinstance(result, DiffResult):
        return dataclasses.replace(result, notes=(*result.notes, note))
    return result


def write_reports(opts: dict[str, Any], result: Any, verdict: Any) -> None:
    """Print the stdout report and write every report file asked for (single comparison or batch)."""
    result = with_note(result, opts.get("_config_note"))
    use_color = sys.stdout.isatty() if opts["color"] is None else opts["color"]
    limit = opts["comment_limit"]
    sys.stdout.write(safe_text(ReportFormat(opts["format"]).renderer.render(result, verdict, color=use_color,
                                                                         comment_limit=limit)))
    for fmt in (Format.markdown, Format.json, Format.junit, Format.step_summary):
        path = opts.get(fmt.value)
        if path is not None:
            text = fmt.render(result, verdict, comment_limit=limit)
            (append_output if fmt is Format.step_summary else write_output)(path, text)
