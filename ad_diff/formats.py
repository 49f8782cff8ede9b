"""The one registry of output formats: every report of every command, chosen by one enum.

Each thing ad-diff reports on (a comparison, a batch, a history, fusion candidates, an iteration note, an
error that stopped a command) has one :class:`Reporters` table: :class:`Format` -> a :class:`Reporter`, a pure
``(subject, options) -> str`` (pip-audit's ``VulnerabilityFormat``, deptry's reporters). A command asks its
table for a format and writes the text; nothing else chooses by format, and a test keeps it so
(tests/unit/test_layout.py). Adding a format is one reporter and one line in the tables that offer it
(docs/extending.md). Every reporter module is imported lazily, so ``--help`` and a terminal report never
load the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, get_args

from ad_diff.core.words import WordEnum
from ad_diff.errors import UsageError
from ad_diff.report import STEP_SUMMARY_LIMIT, fit_bytes

if TYPE_CHECKING:
    from ad_diff.candidates.model import CandidateReport
    from ad_diff.gate import Verdict
    from ad_diff.history.model import History
    from ad_diff.result import BatchResult, DiffResult
    from ad_diff.workflows.note import IterationNote

class Format(WordEnum):
    """Every format ad-diff writes a report in."""

    terminal = "terminal"
    markdown = "markdown"
    json = "json"
    junit = "junit"
    step_summary = "step_summary"
    """The markdown report, appended to GitHub's step summary (capped at 1 MiB)."""
    html = "html"
    """The standalone HTML report (one self-contained file; a batch's summary page)."""
    text = "text"
    """Plain text (the fusion candidates' templates alone; a note's markdown)."""

    @property
    def appends(self) -> bool:
        """Whether the report is appended to its file (GitHub's step summary is shared by every step's
        commands) instead of replacing it."""
        return self is Format.step_summary

    @property
    def machine(self) -> bool:
        """Whether the report is for a program: an error is written in it as an error object."""
        return self is Format.json

    def render(self, result: DiffResult | BatchResult, verdict: Verdict | None, *, color: bool = False,
               comment_limit: int | None = None, width: int | None = None) -> str:
        """This format's report of one comparison (a ``DiffResult`` with its ``verdict``) or of a batch."""
        # lazy: --help loads this module and never the result model
        from ad_diff.result import BatchResult

        opts = Options(color=color, width=width, comment_limit=comment_limit)
        if isinstance(result, BatchResult):
            return BATCH.render(self, result, opts)
        assert verdict is not None
        return COMPARISON.render(self, Comparison(result, verdict), opts)


@dataclass(frozen=True)
class Options:
    """How a report is laid out: what the command knows of where it goes."""

    color: bool = False
    """ANSI colours (a terminal report on a TTY)."""
    width: int | None = None
    """Columns of a terminal report (default: the reporter's)."""
    comment_limit: int | None = None
    """Characters a markdown report may take (a PR comment; default: GitHub's limit)."""
    links: Mapping[Any, str] = field(default_factory=dict)
    """Files the report names, by what they show, relative to where it is written (a history's plots)."""


S = TypeVar("S")
S_in = TypeVar("S_in", contravariant=True)


class Reporter(Protocol[S_in]):
    """One format's report of one kind of subject: a pure function, the command writes the text."""

    def __call__(self, subject: S_in, opts: Options, /) -> str:
        """The report's text."""
        ...


@dataclass(frozen=True)
class Reporters(Generic[S]):
    """The formats one kind of subject is reported in, each with its reporter (the one place a format is
    chosen)."""

    what: str
    """What is reported on (in an error naming a format it has no report in)."""
    by_format: Mapping[Format, Reporter[S]]
    files: tuple[Format, ...] = ()
    """Formats a command also writes to the file its option of the same name gives (``--junit FILE``)."""

    @property
    def formats(self) -> tuple[Format, ...]:
        """Every format this subject is reported in."""
        return tuple(self.by_format)

    def render(self, fmt: Format | str, subject: S, opts: Options | None = None) -> str:
        """The report of ``subject`` in ``fmt`` (a :class:`UsageError` for a format it has none in)."""
        reporter = self.by_format.get(Format(fmt))
        if reporter is None:
            raise UsageError(f"{self.what} has no {fmt} report (formats: "
                             f"{', '.join(f.value for f in self.formats)})")
        return reporter(subject, opts or Options())


@dataclass(frozen=True)
class Comparison:
    """One comparison and the gate's verdict on it: what the comparison's reporters draw."""

    result: DiffResult
    verdict: Verdict


def _limit(opts: Options) -> dict[str, int]:
    return {} if opts.comment_limit is None else {"limit": opts.comment_limit}


# -- one comparison ------------------------------------------------------------------------------------------
# lazy (every reporter below): only the format written is loaded


def _terminal(c: Comparison, opts: Options) -> str:
    from ad_diff.report import terminal  # lazy: only the format written is loaded

    return terminal.render(c.result, c.verdict, color=opts.color, width=opts.width or terminal.DEFAULT_WIDTH)


def _markdown(c: Comparison, opts: Options) -> str:
    from ad_diff.report import markdown  # lazy: only the format written is loaded

    return markdown.render(c.result, c.verdict, **_limit(opts))


def _step_summary(c: Comparison, opts: Options) -> str:
    from ad_diff.report import markdown  # lazy: only the format written is loaded

    return fit_bytes(lambda n: markdown.render(c.result, c.verdict, limit=n), STEP_SUMMARY_LIMIT)


def _json(c: Comparison, opts: Options) -> str:
    from ad_diff.report import json  # lazy: only the format written is loaded

    return json.render(c.result, c.verdict)


def _junit(c: Comparison, opts: Options) -> str:
    from ad_diff.report import junit  # lazy: only the format written is loaded

    return junit.render(c.result, c.verdict)


def _html(c: Comparison, opts: Options) -> str:
    from ad_diff.report import html  # lazy: only the format written is loaded

    return html.render(c.result, c.verdict)


_FILES = (Format.markdown, Format.json, Format.junit, Format.step_summary)
"""The report files of a comparison or a batch besides ``--html`` (a batch's is a folder)."""

COMPARISON: Reporters[Comparison] = Reporters("a comparison", {
    Format.terminal: _terminal, Format.markdown: _markdown, Format.json: _json, Format.junit: _junit,
    Format.step_summary: _step_summary, Format.html: _html,
}, _FILES)


# -- a batch -------------------------------------------------------------------------------------------------


def _batch_terminal(b: BatchResult, opts: Options) -> str:
    from ad_diff.report import batch  # lazy: only the format written is loaded

    return batch.render_terminal(b, color=opts.color, width=opts.width or batch.DEFAULT_WIDTH)


def _batch_markdown(b: BatchResult, opts: Options) -> str:
    from ad_diff.report import batch  # lazy: only the format written is loaded

    return batch.render_markdown(b, **_limit(opts))


def _batch_step_summary(b: BatchResult, opts: Options) -> str:
    from ad_diff.report import batch  # lazy: only the format written is loaded

    return fit_bytes(lambda n: batch.render_markdown(b, n), STEP_SUMMARY_LIMIT)


def _batch_json(b: BatchResult, opts: Options) -> str:
    from ad_diff.report import batch  # lazy: only the format written is loaded

    return batch.render_json(b)


def _batch_junit(b: BatchResult, opts: Options) -> str:
    from ad_diff.report import junit  # lazy: only the format written is loaded

    return junit.render_batch(b)


def _batch_html(b: BatchResult, opts: Options) -> str:
    from ad_diff.report import html  # lazy: only the format written is loaded

    return html.render_batch(b)


BATCH: Reporters[BatchResult] = Reporters("a batch", {
    Format.terminal: _batch_terminal, Format.markdown: _batch_markdown, Format.json: _batch_json,
    Format.junit: _batch_junit, Format.step_summary: _batch_step_summary, Format.html: _batch_html,
}, _FILES)


# -- a history -----------------------------------------------------------------------------------------------


def _history_terminal(h: History, opts: Options) -> str:
    from ad_diff.history import render  # lazy: a command's modules load only when it runs

    return render.render_terminal(h, color=opts.color, width=opts.width or 120)


def _history_markdown(h: History, opts: Options) -> str:
    from ad_diff.history import render  # lazy: a command's modules load only when it runs

    return render.render_markdown(h, dict(opts.links))


def _history_json(h: History, opts: Options) -> str:
    from ad_diff.history import serialize  # lazy: a command's modules load only when it runs

    return serialize.render_json(h)


HISTORY: Reporters[History] = Reporters("a history", {
    Format.terminal: _history_terminal, Format.markdown: _history_markdown, Format.json: _history_json,
}, (Format.markdown, Format.json))


# -- fusion candidates and an iteration note -----------------------------------------------------------------


def _candidates_terminal(r: CandidateReport, opts: Options) -> str:
    from ad_diff.candidates import terminal  # lazy: a command's modules load only when it runs

    return terminal.render_terminal(r, opts.width or 100, color=opts.color)


def _candidates_markdown(r: CandidateReport, opts: Options) -> str:
    from ad_diff.candidates import render  # lazy: a command's modules load only when it runs

    return render.render_markdown(r)


def _candidates_json(r: CandidateReport, opts: Options) -> str:
    from ad_diff.candidates import render  # lazy: a command's modules load only when it runs

    return render.render_json(r)


def _candidates_text(r: CandidateReport, opts: Options) -> str:
    from ad_diff.candidates import render  # lazy: a command's modules load only when it runs

    return render.render_text(r)


CANDIDATES: Reporters[CandidateReport] = Reporters("fusion candidates", {
    Format.terminal: _candidates_terminal, Format.markdown: _candidates_markdown,
    Format.json: _candidates_json, Format.text: _candidates_text,
})


def _note_markdown(n: IterationNote, opts: Options) -> str:
    from ad_diff.workflows import note  # lazy: a command's modules load only when it runs

    return note.render_markdown(n)


def _note_json(n: IterationNote, opts: Options) -> str:
    from ad_diff.workflows import note  # lazy: a command's modules load only when it runs

    return note.render_json(n)


NOTE: Reporters[IterationNote] = Reporters("an iteration note", {
    Format.markdown: _note_markdown, Format.json: _note_json, Format.text: _note_markdown,
})


# -- an error that stopped a command -------------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """An input error (exit 2) or a bug (exit 3): what the report files of the command say instead of a
    verdict."""

    message: str
    code: int
    json_text: str | None = None
    """The error object of the JSON report, when the command wrote one."""


def _failure_markdown(e: Failure, opts: Options) -> str:
    from ad_diff.report.markdown import render_error  # lazy: loaded only when an error is reported

    return render_error(e.message, e.code)


def _failure_json(e: Failure, opts: Options) -> str:
    return e.json_text + "\n" if e.json_text else ""


FAILURE: Reporters[Failure] = Reporters("an error", {
    Format.markdown: _failure_markdown, Format.step_summary: _failure_markdown, Format.json: _failure_json,
})


# -- what each command prints on stdout (typer reads these as the choices of --format) -----------------------

Printed = Literal["terminal", "markdown", "json"]
"""``--format`` of ``compare``, ``batch`` and ``history``."""
CandidatesPrinted = Literal["terminal", "markdown", "json", "text"]
"""``--format`` of ``candidates``."""
NotePrinted = Literal["markdown", "json", "text"]
"""``--format`` of ``note`` (text is the markdown)."""

PRINTED: Mapping[Any, Reporters[Any]] = {
    Printed: COMPARISON, CandidatesPrinted: CANDIDATES, NotePrinted: NOTE,
}
"""Each ``--format`` choice and the table it chooses from (a test holds every choice to a reporter)."""


def choices(printed: Any) -> tuple[Format, ...]:
    """The formats of a ``--format`` choice type."""
    return tuple(Format(v) for v in get_args(printed))


__all__ = [
    "BATCH", "CANDIDATES", "COMPARISON", "FAILURE", "HISTORY", "NOTE", "PRINTED", "CandidatesPrinted",
    "Comparison", "Failure", "Format", "NotePrinted", "Options", "Printed", "Reporter", "Reporters",
    "choices",
]
