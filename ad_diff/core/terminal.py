"""Building blocks of the terminal (rich) reports: literal text, inline code, layouts that follow the width.

Names and messages come from files nobody reviewed, so they never go through rich's markup parser: every
piece is appended to a :class:`rich.text.Text` as it is. Text ad-diff writes itself marks op names with
backticks (group evidence, hints); :func:`inline` shows those spans styled, without the backticks, as the
markdown shows them as code spans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.text import Text

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


__all__ = ["CODE_STYLE", "NARROW", "Responsive", "inline", "parts"]
