"""Building blocks of the terminal (rich) reports: literal text, inline code, layouts that follow the width.

Names and messages come from files nobody reviewed, so they never go through rich's markup parser: every
piece is appended to a :class:`rich.text.Text` as it is. Text ad-diff writes itself marks op names with
backticks (group evidence, hints); :func:`inline` shows those spans styled, without the backticks, as the
markdown shows them as code spans.

Every terminal report renders through :func:`console` (a :class:`SafeConsole`): the terminal sink. Each text
it lays out passes :func:`ad_diff.core.sinks.terminal` first (so widths count the escapes it shows), rich
markup is never parsed, and :meth:`SafeConsole.text` gives the output through the last pass
(:func:`ad_diff.core.sinks.output`), which lets only rich's own colour sequences through.

Names are never cut mid-word, in any table at any width. Rich wraps text at spaces and folds a word longer
than its column at any character (``match_r`` / ``ope_pattern``); the sink breaks such a word after a ``_``,
``.``, ``/`` or ``:`` instead (:func:`break_long_words`), and a table in which some piece between those still
does not fit its column is drawn stacked instead (:func:`stacked`: one ``header  value`` line per cell,
row after row, each value as wide as the terminal). Both happen here, once, for every table of every
terminal report.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import re
from collections.abc import Callable, Iterable
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from ad_diff.core import sinks
from ad_diff.core.escape import code_spans

NARROW = 100
"""Below this width the reports switch to their narrow layouts (fewer columns, details below a row)."""
CODE_STYLE = "bold cyan"
"""How names marked as code (backticks in ad-diff's own sentences, title parts) look."""


def inline(text: str, style: str = "", code_style: str = CODE_STYLE) -> Text:
    """``text`` as literal rich text, its ```…``` spans shown in ``code_style`` without the backticks."""
    return parts(code_spans(text), style, code_style)


def parts(items: Iterable[tuple[str, bool]], style: str = "", code_style: str = CODE_STYLE) -> Text:
    """Title parts (text, is a name) as literal rich text, names in ``code_style``."""
    out = Text(style=style)
    for s, is_code in items:
        out.append(s, style=code_style if is_code else "")
    return out


class Responsive:
    """A renderable that picks its layout from the width it is given: ``wide()`` from ``at`` columns on, or
    when it fits without folding anything; ``narrow()`` otherwise. The width is known only when rich renders
    (inside a table, a group, the console)."""

    def __init__(self, wide: Callable[[], RenderableType], narrow: Callable[[], RenderableType],
                 at: int = NARROW) -> None:
        self.wide, self.narrow, self.at = wide, narrow, at

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wide = self.wide()
        natural = Measurement.get(console, options.update_width(10_000), wide).maximum
        if options.max_width >= self.at or natural <= options.max_width:
            yield wide
        else:
            yield self.narrow()


def escaped(text: Text) -> Text:
    """``text`` with :func:`ad_diff.core.sinks.terminal` applied to its characters, its styles kept."""
    plain = text.plain
    if sinks.terminal(plain) is plain:
        return text
    cuts = sorted({0, len(plain), *(s.start for s in text.spans), *(s.end for s in text.spans)})
    out = text.blank_copy()
    for a, b in zip(cuts, cuts[1:], strict=False):
        piece = sinks.terminal(plain[a:b])
        start = len(out)
        out.append(piece)
        for span in text.spans:
            if span.start <= a and span.end >= b:
                out.stylize(span.style, start, start + len(piece))
    return out


_WORD = re.compile(r"\S+")
_PIECES = tuple(re.compile(rf"[^{sep}]*(?:[{sep}]+|$)") for sep in ("/", "/.:", "/.:_"))
"""How a word may be cut, coarsest first: after a run of ``/``; also of ``.`` or ``:``; also of ``_``."""


def _cuts(word: str, width: int) -> tuple[list[int], int]:
    """Offsets in ``word`` to break it at so that its lines fit ``width`` cells, at the coarsest separators
    that make every piece fit (``pattern_matcher/`` | ``match_rope_pattern`` rather than at the ``_`` that
    fills the line); and how many pieces fit nowhere (longer than ``width`` between any separators)."""
    for k, piece in enumerate(_PIECES):
        pieces = [(p.start(), cell_len(p.group())) for p in piece.finditer(word) if p.group()]
        too_long = sum(size > width for _, size in pieces)
        if too_long and k < len(_PIECES) - 1:
            continue
        cuts: list[int] = []
        used = 0
        for start, size in pieces:
            if used and used + size > width:
                cuts.append(start)
                used = 0
            used += size
        return cuts, too_long
    raise AssertionError("unreachable: the last level always returns")


def break_long_words(text: Text, width: int) -> tuple[Text, int]:
    """``text`` with a line break inside every word longer than ``width`` cells, after a ``/``, ``.``, ``:``
    or ``_`` (:func:`_cuts`), so rich, which wraps at spaces, never folds a name mid-word; and how many pieces
    are still longer than ``width`` (rich folds those). Styles are kept."""
    plain = text.plain
    if width < 1 or all(cell_len(m.group()) <= width for m in _WORD.finditer(plain)):
        return text, 0
    cuts: list[int] = []
    folds = 0
    for m in _WORD.finditer(plain):
        if cell_len(m.group()) > width:
            at, n = _cuts(m.group(), width)
            cuts += [m.start() + c for c in at]
            folds += n
    out = text.blank_copy()
    for i, piece in enumerate(text.divide(cuts)):
        if i:
            out.append("\n")
        out.append_text(piece)
    return out, folds


class SafeConsole(Console):
    """A rich console that is the terminal sink: every string and :class:`~rich.text.Text` it renders, at
    any depth (table cells, titles), is escaped first; markup and emoji codes are never interpreted; a word
    longer than its column breaks at ``_``, ``.``, ``/`` or ``:``, and a table that would still cut a word
    is drawn :func:`stacked` (see the module docstring)."""

    folds: int = 0
    """Pieces of words rendered so far that were longer than their column (rich cut them)."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """Render like rich, with the text escaped and long words broken at separators (rich calls this for
        every nested renderable too); a table that cuts a word renders stacked."""
        opts = options or self.options
        if isinstance(renderable, str):
            renderable = Text(sinks.terminal(renderable))
        if isinstance(renderable, Text):
            renderable = escaped(renderable)
            if not (renderable.no_wrap or opts.no_wrap):
                renderable, folds = break_long_words(renderable, opts.max_width)
                self.folds += folds
        if isinstance(renderable, Table) and not isinstance(renderable, _Stacked):
            before = self.folds
            segments = list(super().render(fit_columns(renderable, self, opts), options))
            if self.folds == before:
                return segments
            self.folds = before
            return super().render(stacked(renderable), options)
        return super().render(renderable, options)

    def text(self) -> str:
        """Everything printed so far (to the console's string buffer), through the sink's last pass."""
        assert isinstance(self.file, io.StringIO)
        return sinks.output(self.file.getvalue())


def _span(cell: RenderableType, console: Console, options: ConsoleOptions) -> tuple[int, int]:
    """The narrowest width at which ``cell`` cuts no word (its longest piece between spaces and the
    separators :func:`break_long_words` breaks at), and its natural width."""
    if isinstance(cell, str):
        cell = Text(cell)
    if not isinstance(cell, Text):
        m = Measurement.get(console, options, cell)
        return m.minimum, m.maximum
    plain = sinks.terminal(cell.plain)
    longest = max(cell_len(line) for line in plain.split("\n"))
    if cell.no_wrap:
        return longest, longest
    pieces = (p.group() for w in _WORD.finditer(plain) for p in _PIECES[-1].finditer(w.group()))
    return max((cell_len(p) for p in pieces), default=0), longest


def _share(base: list[int], want: list[int], extra: int) -> list[int]:
    """``base`` widths plus ``extra`` cells shared out: a column that wants no more than an even share gets
    all it wants (the fewest columns wrap: a number stays whole), the rest is shared among the others in
    proportion to what they want."""
    order = sorted(range(len(base)), key=lambda i: want[i])
    widths = list(base)
    left = list(order)
    while left and want[left[0]] * len(left) <= extra:
        i = left.pop(0)
        widths[i] += want[i]
        extra -= want[i]
    total = sum(want[i] for i in left)
    for i in left:
        widths[i] += extra * want[i] // total
    for i in sorted(left, key=lambda i: -want[i])[: extra - sum(extra * want[i] // total for i in left)]:
        widths[i] += 1  # the rounding's remainder, to the columns that want the most
    return widths


def fit_columns(table: Table, console: Console, options: ConsoleOptions) -> Table:
    """``table`` with column widths that cut no word, when its natural width does not fit and such widths
    exist: each column gets its narrowest uncut width (:func:`_span`) and the room left is shared
    (:func:`_share`). (Rich narrows the widest columns first, below the longest word of a name if need
    be.) Otherwise ``table`` as it is."""
    cols = table.columns
    if not cols or table.row_count == 0:
        return table
    spans = []
    for c in cols:
        lo, hi = map(max, zip(*(_span(x, console, options) for x in (c.header, *c.cells)), strict=True))
        spans.append((hi, hi) if c.no_wrap else (c.width, c.width) if c.width is not None else (lo, hi))
    ones = copy.copy(table)
    ones.columns = [dataclasses.replace(c, width=1) for c in cols]
    overhead = Measurement.get(console, options.update_width(1 << 20), ones).maximum - len(cols)
    room = options.max_width - overhead
    least, most = sum(lo for lo, _ in spans), sum(hi for _, hi in spans)
    if most <= room or least > room:
        return table
    widths = _share([lo for lo, _ in spans], [hi - lo for lo, hi in spans], room - least)
    fitted = copy.copy(table)
    fitted.columns = [dataclasses.replace(c, width=w) for c, w in zip(cols, widths, strict=True)]
    return fitted


class _Stacked(Table):
    """A table already drawn stacked: not stacked again."""


def stacked(table: Table) -> Table:
    """``table`` drawn one cell per line: its title, then for every row each column's header (dim) and the
    row's value, a blank line between rows. The values get the whole width but the headers', so a name
    that did not fit its column fits here."""
    out = _Stacked.grid(padding=(0, 1))
    out.title, out.title_justify, out.title_style = table.title, "left", table.title_style
    out.add_column(style="dim", no_wrap=True)
    out.add_column(overflow="fold")
    columns = [(c.header, list(c.cells)) for c in table.columns]
    for r in range(table.row_count):
        if r:
            out.add_row("", "")
        for header, cells in columns:
            out.add_row(header, cells[r] if r < len(cells) else "")
    return out


def console(width: int, color: bool, **kwargs: Any) -> SafeConsole:
    """The console every terminal report prints to: a string buffer ``width`` columns wide, ANSI colour only
    when ``color``; read it back with :meth:`SafeConsole.text`."""
    return SafeConsole(file=io.StringIO(), force_terminal=color, no_color=not color, width=width,
                       highlight=False, markup=False, emoji=False, **kwargs)


__all__ = ["CODE_STYLE", "NARROW", "Responsive", "SafeConsole", "break_long_words", "console", "escaped",
           "fit_columns", "inline", "parts", "stacked"]
