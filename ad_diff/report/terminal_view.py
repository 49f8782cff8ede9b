"""The terminal's drawing of a kind's :class:`~ad_diff.core.view.SectionView`: its glance, as rich
renderables.

Every piece is literal text (never rich markup), styled by its tone; ad-diff's own sentences show their
```…``` names styled (:func:`ad_diff.core.terminal.inline`). A :class:`~ad_diff.core.view.Fit` picks its
layout from the width rich gives it (:class:`ad_diff.core.terminal.Responsive`).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from ad_diff.core.terminal import CODE_STYLE, NARROW, Responsive, inline
from ad_diff.core.view import (
    Aside,
    Block,
    Code,
    Details,
    Fit,
    Heading,
    Items,
    Line,
    Look,
    Para,
    Quote,
    SectionView,
    Span,
    Stack,
    Table,
    Tone,
    text,
)

TONE: dict[Tone, str] = {
    Tone.STRONG: "bold", Tone.GOOD: "green", Tone.BAD: "red", Tone.WARN: "yellow", Tone.ALERT: "bold yellow",
    Tone.MUTED: "dim", Tone.LABEL: "bold cyan",
}
"""The rich style of each tone."""
_LOOK = {Look.CODE: CODE_STYLE, Look.STRONG: "bold", Look.EM: "italic"}


def _style(s: Span) -> str:
    return TONE[s.tone] if s.tone is not None else _LOOK.get(s.look, "")


def _part(s: Span) -> str | tuple[str, str] | Text:
    if s.look is Look.INLINE:
        return inline(s.text, _style(s))
    if s.look is Look.BREAK:
        return "\n"
    style = _style(s)
    return (s.text, style) if style else s.text


def styled(line: Line, base: str = "") -> Text:
    """A line as literal rich text: one span is one styled text, more are assembled piece by piece."""
    if len(line) == 1 and line[0].look not in (Look.INLINE, Look.BREAK):
        return Text(line[0].text, style=_style(line[0]) or base)
    return Text.assemble(*(_part(s) for s in line), style=base)


def _head(line: Line) -> str | Text:
    # a plain heading is given as a string, as rich expects a column's or a table's title
    if all(s.look in (Look.TEXT, Look.BREAK) and s.tone is None for s in line):
        return "".join("\n" if s.look is Look.BREAK else s.text for s in line)
    return styled(line)


def _table(b: Table) -> RichTable:
    t = RichTable(title=b.title)
    for c in b.columns:
        t.add_column(_head(c.head), overflow="fold", justify="right" if c.right else "left")
    for row in b.rows:
        t.add_row(*(styled(cell) for cell in row))
    return t


def _diff(body: str) -> Text:
    out = Text()
    for ln in body.split("\n"):
        out.append(ln + "\n", style="red" if ln.startswith("-") else "green")
    return out


def _one(bs: tuple[Block, ...]) -> RenderableType:
    return draw(bs[0]) if len(bs) == 1 else Group(*(draw(b) for b in bs))


def draw(b: Block) -> RenderableType:
    """One block as a rich renderable."""
    if isinstance(b, Heading):
        return styled(b.line, "bold")
    if isinstance(b, Para):
        return styled(b.line)
    if isinstance(b, Aside):
        return styled(b.line, "dim")
    if isinstance(b, Items):
        return Group(*(Text.assemble("- ", styled(i)) for i in b.items))
    if isinstance(b, Quote):
        return Group(*(styled(ln, "dim") for ln in b.lines))
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Details):  # a terminal folds nothing: the summary, then what it folds
        return Group(styled(b.summary, "bold"), *(draw(x) for x in b.body))
    if isinstance(b, Code):
        return _diff(b.text) if b.lang == "diff" else Text(b.text)
    if isinstance(b, Stack):
        return Group(*(draw(x) for x in b.blocks))
    if isinstance(b, Fit):
        wide, narrow = b.wide, b.narrow
        return Responsive(lambda: _one(wide), lambda: _one(narrow), at=b.at or NARROW)
    raise TypeError(f"not a block: {b!r}")


def section(view: SectionView) -> RenderableType:
    """The section of the terminal report: the glance, or the title and the document."""
    blocks = view.glance if view.glance is not None else (Heading((text(view.title),)), *view.document)
    return Group(*(draw(b) for b in blocks))


__all__ = ["TONE", "draw", "section", "styled"]
