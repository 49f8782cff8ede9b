"""Building blocks of the terminal (rich) reports: literal text, inline code, layouts that follow the width.

Names and messages come from files nobody reviewed, so they never go through rich's markup parser: every
piece is appended to a :class:`rich.text.Text` as it is. Text ad-diff writes itself marks op names with
backticks (group evidence, hints); :func:`inline` shows those spans styled, without the backticks, as the
markdown shows them as code spans.

Every terminal report renders through :func:`console` (a :class:`SafeConsole`): the terminal sink. Each text
it lays out passes :func:`ad_diff.core.sinks.terminal` first (so widths count the escapes it shows), rich
markup is never parsed, and :meth:`SafeConsole.text` gives the output through the last pass
(:func:`ad_diff.core.sinks.output`), which lets only rich's own colour sequences through.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
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


class SafeConsole(Console):
    """A rich console that is the terminal sink: every string and :class:`~rich.text.Text` it renders, at
    any depth (table cells, titles), is escaped first; markup and emoji codes are never interpreted."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """Render like rich, with the text escaped (rich calls this for every nested renderable too)."""
        if isinstance(renderable, str):
            renderable = Text(sinks.terminal(renderable))
        elif isinstance(renderable, Text):
            renderable = escaped(renderable)
        return super().render(renderable, options)

    def text(self) -> str:
        """Everything printed so far (to the console's string buffer), through the sink's last pass."""
        assert isinstance(self.file, io.StringIO)
        return sinks.output(self.file.getvalue())


def console(width: int, color: bool, **kwargs: Any) -> SafeConsole:
    """The console every terminal report prints to: a string buffer ``width`` columns wide, ANSI colour only
    when ``color``; read it back with :meth:`SafeConsole.text`."""
    return SafeConsole(file=io.StringIO(), force_terminal=color, no_color=not color, width=width,
                       highlight=False, markup=False, emoji=False, **kwargs)


__all__ = ["CODE_STYLE", "NARROW", "Responsive", "SafeConsole", "console", "escaped", "inline", "parts"]
