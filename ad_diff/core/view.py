"""What a kind shows of its section, in pieces every medium can draw: the seam between kinds and reporters.

A kind describes its own typed section as a :class:`SectionView` (``Kind.view``): headings, paragraphs,
lists, tables, folded details and code, made of :class:`Span` s that say what a piece *is* (words, a name, an
ad-diff sentence whose ```…``` spans are names) and never how a medium marks it up. One renderer per medium
draws every kind's view and escapes every piece with its own escaper: ``ad_diff.report.md_view`` (the PR
comment), ``ad_diff.report.terminal_view`` (rich), ``ad_diff.report.html_view`` (the HTML report; a kind may
keep a template of its own in its folder, :class:`Page`). The JSON report writes the section itself (its
typed data is what a program reads) and the JUnit report lists the :attr:`SectionView.tensors`.

A view has two readings of the same section: the :attr:`~SectionView.document` (the whole account: the PR
comment, and the HTML report of a kind without a page) and the :attr:`~SectionView.glance` (what a terminal
shows at once; by default the document). The two differ where the media differ: a PR comment folds a long
table a terminal cannot, a terminal picks its columns by its width (:class:`Fit`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ad_diff.core.words import WordEnum


class Look(WordEnum):
    """What a piece of text is (each medium marks it its own way, and escapes it)."""

    TEXT = "text"
    """Words, from ad-diff or from the inputs: shown as written."""
    CODE = "code"
    """A name (transform, node, tensor, file, key): a code span, a ``<code>`` element."""
    INLINE = "inline"
    """A sentence of ad-diff's own whose ```…``` spans are names (a root-cause hint, a likely cause)."""
    STRONG = "strong"
    EM = "em"
    BREAK = "break"
    """A line break inside a table heading (its text is ignored)."""


class Tone(WordEnum):
    """How a piece reads on a terminal (colour and weight); the other media ignore it."""

    STRONG = "strong"
    GOOD = "good"
    BAD = "bad"
    WARN = "warn"
    ALERT = "alert"
    """A warning that must stand out (an unexplained change)."""
    MUTED = "muted"
    LABEL = "label"
    """A label before a name (``hint``)."""


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of text, what it is and how it reads on a terminal."""

    text: str
    look: Look = Look.TEXT
    tone: Tone | None = None


Line = tuple[Span, ...]
"""A run of spans: a paragraph, a list item, a table cell."""


def text(s: str, tone: Tone | None = None) -> Span:
    """Words."""
    return Span(s, Look.TEXT, tone)


def code(s: str) -> Span:
    """A name."""
    return Span(s, Look.CODE)


def inline(s: str) -> Span:
    """An ad-diff sentence whose backtick spans are names."""
    return Span(s, Look.INLINE)


def strong(s: str) -> Span:
    """Words to stress."""
    return Span(s, Look.STRONG)


def em(s: str) -> Span:
    """Words in italics."""
    return Span(s, Look.EM)


BREAK = Span("", Look.BREAK)
"""A line break in a table heading."""


def line(*parts: str | Span) -> Line:
    """A line of spans; a plain string is words."""
    return tuple(p if isinstance(p, Span) else text(p) for p in parts)


def names(keys: list[str] | tuple[str, ...], most: int, sep: str = ", ") -> Line:
    """``a, b and 3 more``: at most ``most`` names, then how many more."""
    out: list[Span] = []
    for i, k in enumerate(keys[:most]):
        out += [text(sep), code(k)] if i else [code(k)]
    if len(keys) > most:
        out.append(text(f" and {len(keys) - most} more"))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading below the section's title (``level`` 4 in the PR comment)."""

    line: Line
    level: int = 4


@dataclass(frozen=True, slots=True)
class Para:
    """A paragraph."""

    line: Line


@dataclass(frozen=True, slots=True)
class Aside:
    """A paragraph said in passing (italics in the PR comment)."""

    line: Line


@dataclass(frozen=True, slots=True)
class Items:
    """A bulleted list (an empty one still takes its place between the blocks around it)."""

    items: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Quote:
    """Lines quoted (notes about the inputs)."""

    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: its heading, and whether its figures align right."""

    head: Line
    right: bool = False


@dataclass(frozen=True, slots=True)
class Table:
    """A table. A row with fewer cells than columns leaves the rest empty."""

    columns: tuple[Column, ...]
    rows: tuple[tuple[Line, ...], ...]
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Details:
    """Blocks folded under a summary line (the PR comment's ``<details>``); ``summary_apart``: the summary on
    a line of its own (as a fenced block's fold has it)."""

    summary: Line
    body: tuple[Block, ...]
    summary_apart: bool = False


@dataclass(frozen=True, slots=True)
class Code:
    """Verbatim text in a fenced block; ``diff``: lines of a before/after excerpt (``-`` baseline, ``+``
    candidate)."""

    text: str
    lang: str = ""


@dataclass(frozen=True, slots=True)
class Stack:
    """Blocks one right under the other, with no blank line between them."""

    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class Fit:
    """Two layouts of the same blocks for a terminal: ``wide`` from ``at`` columns on (default: the
    terminal's narrow width) or when it fits, else ``narrow``. Other media draw ``wide``."""

    wide: tuple[Block, ...]
    narrow: tuple[Block, ...]
    at: int | None = None


Block = Heading | Para | Aside | Items | Quote | Table | Details | Code | Stack | Fit


@dataclass(frozen=True, slots=True)
class Histogram:
    """A figure to draw (the HTML report draws it as SVG): how many elements of a tensor differ by how much
    (``counts`` over log-spaced bins from ``lo`` to ``hi``), with the tolerance ``atol`` marked."""

    lo: float
    hi: float
    counts: tuple[int, ...]
    atol: float


@dataclass(frozen=True, slots=True)
class Scatter:
    """A figure to draw: sampled elements, baseline (``xs``) against candidate (``ys``)."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Page:
    """A kind's own HTML for its section: a Jinja template in the kind's package (``package``, file
    ``template``) and the data it draws, built only when the HTML report is rendered. The template reads
    the data as ``page`` and may use the HTML renderer's macros and figure drawers."""

    package: str
    template: str
    data: Callable[[], Any]


@dataclass(frozen=True, slots=True)
class ViewContext:
    """What a kind's view may read besides its own section: the options and outputs of this report."""

    ignored_transforms: tuple[str, ...] = ()
    """Transforms left out with ``--ignore-transform``."""
    html: str | None = None
    """Where the HTML report was written (relative to the markdown report), when it was."""
    plots: str | None = None
    """Where ``--plots`` wrote PNGs (relative to the markdown report), when it wrote some."""


@dataclass(frozen=True, slots=True)
class SectionView:
    """What one kind shows of its section (see the module docstring)."""

    key: str
    """The section's name (``graph``): the HTML anchor, the JSON report's ``sections`` key."""
    title: str
    """The section's heading (``Graph dumps``)."""
    document: tuple[Block, ...] = ()
    """The whole account, below the title (the PR comment; the HTML report when there is no page)."""
    glance: tuple[Block, ...] | None = None
    """What a terminal shows, title included; ``None``: the title and the document."""
    nav: str | None = None
    """The section's word in the HTML report's navigation (default: the title)."""
    page: Page | None = None
    """The kind's own HTML for the section, when it has one."""
    tensors: tuple[str, ...] = ()
    """Tensors this kind compared one by one: a test case each in the JUnit report."""


__all__ = [
    "BREAK", "Aside", "Block", "Code", "Column", "Details", "Fit", "Heading", "Histogram", "Items", "Line",
    "Look", "Page", "Para", "Quote", "Scatter", "SectionView", "Span", "Stack", "Table", "Tone",
    "ViewContext", "code", "em", "inline", "line", "names", "strong", "text",
]
