"""The terminal sink never cuts a name mid-word (ad_diff/core/terminal.py): a word longer than its column
breaks after ``/``, ``.``, ``:`` or ``_``; column widths are chosen so that no piece is cut when such
widths exist; otherwise the table is drawn stacked. Property-tested on random tables at random widths; the
reporters' own tables are tested the same way in tests/unit/report/test_table_names.py."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from ad_diff.core.terminal import break_long_words, console

ALPHABET = "qzjvkw"
"""Letters of the random words: runs of only these letters hardly occur in other text of a report."""
WORDS = st.text(ALPHABET, min_size=3, max_size=12)
SEPARATORS = st.sampled_from("_./:")


@st.composite
def identifiers(draw: st.DrawFn) -> str:
    """A name like ``qzz_vkw/jjq.zz``: 1 to 5 random words joined by separators."""
    words = draw(st.lists(WORDS, min_size=1, max_size=5))
    out = words[0]
    for w in words[1:]:
        out += draw(SEPARATORS) + w
    return out


def cut_words(text: str, names: list[str]) -> list[str]:
    """Pieces of the names' words that ``text`` shows apart from the rest of their word (a word cut)."""
    words = {w for n in names for w in re.split(r"[_./:]+", n) if w}
    bad = []
    for run in re.findall(r"[a-z]+", text):
        if run in words or not set(run) <= set(ALPHABET):
            continue
        if any(w.startswith(run) or w.endswith(run) for w in words):
            bad.append(run)
    return bad


def test_the_check_sees_a_cut() -> None:
    assert cut_words("│ match_r │\n│ ope │ 1x2 │", ["qzz"]) == []
    assert cut_words("│ qzz_vk │\n│ w      │", ["qzz_vkw"]) == ["vk", "w"]


def test_a_long_word_breaks_at_the_coarsest_separator_that_fits() -> None:
    text, folds = break_long_words(Text("at pattern_matcher/match_rope_pattern now"), 20)
    assert text.plain == "at pattern_matcher/\nmatch_rope_pattern now"
    assert folds == 0
    text, folds = break_long_words(Text("match_rope_pattern"), 8)
    assert text.plain == "match_\nrope_\npattern"
    assert folds == 0
    assert break_long_words(Text("abcdefghij"), 4)[1] == 1  # no separator: rich folds it, and it is counted


def test_styles_survive_the_breaks() -> None:
    t = Text("x ")
    t.append("aaaa_bbbb/cccc", style="bold")
    out, _ = break_long_words(t, 9)
    assert out.plain == "x aaaa_\nbbbb/cccc"
    bold = {i for s in out.spans if s.style == "bold" for i in range(s.start, s.end)}
    assert bold == {i for i, ch in enumerate(out.plain) if i >= 2 and ch != "\n"}


@settings(max_examples=60, deadline=None)
@given(width=st.integers(60, 200), n_cols=st.integers(2, 9), data=st.data())
def test_random_tables_never_cut_a_word(width: int, n_cols: int, data: st.DataObject) -> None:
    rows = data.draw(st.lists(st.lists(identifiers(), min_size=n_cols, max_size=n_cols), min_size=1,
                              max_size=4))
    heads = data.draw(st.lists(st.sampled_from(["#", "transform", "stage", "Regions (new)", "Meta B",
                                                "finding", "last before"]), min_size=n_cols, max_size=n_cols))
    t = Table(title="random")
    for h in heads:
        t.add_column(h, overflow=data.draw(st.sampled_from(["fold", "ellipsis"])))
    for r in rows:
        t.add_row(*(Text(c) for c in r))
    con = console(width, False)
    con.print(t)
    out = con.text()
    assert max(cell_len(ln) for ln in out.splitlines()) <= width
    assert cut_words(out, [c for r in rows for c in r]) == []
    for name in (c for r in rows for c in r):  # every name is all there, pieces in order
        pieces = [p for p in re.split(r"[_./:]+", name) if p]
        assert all(p in out for p in pieces)


def test_every_terminal_report_renders_through_the_sink() -> None:
    """The guarantee holds for every table because every console is the sink's (``console()``,
    ``SafeConsole``): no module but core/terminal.py builds a rich Console of its own."""
    import ast

    from tests.conftest import ROOT

    own = []
    for path in sorted((ROOT / "ad_diff").rglob("*.py")):
        if path.name == "terminal.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name == "Console":
                    own.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not own, own
