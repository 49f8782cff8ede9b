"""Each escaper of the sink layer over random strings: its output holds no character that acts on the
reader or hides (the only exception being rich's colour sequences in a coloured terminal report), and
plain printable ASCII without metacharacters comes out as it went in."""

from __future__ import annotations

import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from xml.sax.saxutils import escape as xml_entities

from hypothesis import example, given
from hypothesis import strategies as st
from rich.table import Table
from rich.text import Text

from ad_diff.core import sinks
from ad_diff.core.escape import fence_block, html_code, html_text, md_code, md_escape, md_inline
from ad_diff.core.jsonable import dumps
from ad_diff.core.strwalk import strings
from ad_diff.core.terminal import console

SGR = re.compile(r"\x1b\[[0-9;]*m")
ANY = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60)
"""Any code point, lone surrogates included."""
CONTROLISH = st.text(alphabet=st.sampled_from(
    "\x00\x07\x08\x0b\x0c\r\x1b\x7f\x85\x9b\u00ad\u061c\u200b\u200e\u202a\u202e\u2028\u2029\u2066\u2069"
    "\ufeff\ufffe\ud800\U000e0001\u3164[]()<>&|`*_=+-@\"' ab\t\n"), max_size=40)
STRINGS = st.one_of(ANY, CONTROLISH)
PLAIN = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60)
WORDS = st.from_regex(r"[A-Za-z0-9 ]{0,40}", fullmatch=True)
"""Printable ASCII without any markup metacharacter."""


def _raw(text: str) -> set[str]:
    return {ch for ch in SGR.sub("", text) if ch not in "\t\n" and (
        unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"} or ch in "\u115f\u1160\u3164\uffa0")}


@given(STRINGS)
def test_visible_leaves_nothing_raw(s: str) -> None:
    out = sinks.visible(s)
    assert not _raw(out)
    out.encode("utf-8")  # lone surrogates are escapes now


@given(PLAIN)
def test_visible_keeps_printable_ascii(s: str) -> None:
    assert sinks.visible(s) == s
    assert sinks.terminal(s) == s
    assert sinks.xml(s) == s


def test_escapes_read_like_python() -> None:
    assert sinks.visible("a\x1b[2Jb\u202ec\U000e0001\ud800") == "a\\x1b[2Jb\\u202ec\\U000e0001\\ud800"


@given(STRINGS, st.lists(st.sampled_from(["\x1b[0m", "\x1b[1;31m", "\x1b[32m"]), max_size=3))
def test_output_lets_only_colour_through(s: str, colours: list[str]) -> None:
    out = sinks.output("".join(colours) + s)
    assert not _raw(out)
    assert "".join(colours) in out


@given(STRINGS)
def test_terminal_console_renders_nothing_raw(s: str) -> None:
    con = console(80, color=True)
    t = Table(title=s)
    t.add_column(s)
    t.add_row(Text(s, style="bold"), s)
    con.print(Text.assemble((s, "red"), " ", s))
    con.print(t)
    con.print(s)
    assert not _raw(con.text())


@given(WORDS)
def test_terminal_console_shows_plain_text_as_it_is(s: str) -> None:
    con = console(200, color=False)
    con.print(Text(s))
    assert con.text() == s + "\n"


@given(STRINGS)
def test_xml_text_parses_and_holds_nothing_raw(s: str) -> None:
    v = sinks.xml(s)
    assert not _raw(v.replace("\n", "").replace("\t", ""))
    el = ET.fromstring(f'<a b="{xml_entities(v, {chr(34): "&quot;"})}">{xml_entities(v)}</a>')
    assert el.text in (v, None if v == "" else v)


@given(STRINGS)
def test_csv_cell_never_starts_a_formula(s: str) -> None:
    out = sinks.csv_cell(s)
    assert not out.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert not _raw(out.replace("\n", "").replace("\t", ""))


@given(st.from_regex(r"[A-Za-z0-9_. ][ -~]{0,30}", fullmatch=True))
def test_csv_cell_keeps_ordinary_text_and_numbers(s: str) -> None:
    assert sinks.csv_cell(s) == s
    assert sinks.csv_cell(-3) == -3
    assert sinks.csv_cell(-1.5) == -1.5


@given(STRINGS)
def test_markdown_and_html_escapers_leave_nothing_raw(s: str) -> None:
    for f in (md_escape, md_code, md_inline, html_text, html_code):
        assert not _raw(f(s)), f.__name__
    assert not _raw(fence_block(s))


@given(WORDS)
def test_markdown_and_html_escapers_keep_plain_words(s: str) -> None:
    assert md_escape(s) == s
    assert html_text(s) == s


def _no_constant(name: str) -> None:
    raise ValueError(name)


@given(st.recursive(
    st.one_of(STRINGS, st.floats(), st.integers(), st.booleans(), st.none()),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(PLAIN, kids, max_size=4)),
    max_leaves=20,
))
@example("\x7f")  # DEL: ASCII, a control, and left raw by json.dumps (found by this test)
@example({"k\x7f": ["\x7f", "\u202e"]})
def test_json_is_strict_and_round_trips_strings(data: object) -> None:
    text = dumps(data, sort_keys=True)
    assert not _raw(text)
    back = json.loads(text, parse_constant=_no_constant)

    def same(a: object, b: object) -> bool:
        if isinstance(a, float) and not (a == a and abs(a) != float("inf")):
            return b == str(a)
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
        return a == b

    assert same(data, back)


# -- every value owns no line and is bounded (issue 45) ---------------------------------------------------


@dataclass(frozen=True)
class _Row:
    name: str
    items: tuple[str, ...]
    extra: dict[str, str]


@given(st.text(), st.text(), st.text())
def test_values_puts_every_string_on_one_line_and_bounds_it(a: str, b: str, c: str) -> None:
    row = _Row(a, (b, a), {c: b})
    got = sinks.values((row, [row]))
    for s in strings(got).values():
        assert "\n" not in s
        assert "\r" not in s
        assert len(s) <= sinks.VALUE_CHARS
    first, (again,) = got
    assert first is again  # one object seen twice stays one object
    kept = sinks.values(row, lines=False)  # JSON: bounded only; its strings escape line breaks themselves
    assert kept.name == sinks.cut(a)


def test_values_returns_the_model_itself_when_nothing_needs_changing() -> None:
    row = _Row("plain", ("x",), {"k": "v"})
    assert sinks.values(row) is row
    assert sinks.values((row, row)) == (row, row)


def test_a_long_value_keeps_its_start_and_end() -> None:
    text = "a" * 5000 + "END"
    out = sinks.cut(text)
    assert out.startswith("aaa")
    assert out.endswith("END")
    assert "[4,043 characters omitted]" in out
    assert len(out) <= sinks.VALUE_CHARS
    assert sinks.one_line("x\n::notice::forged\r\n") == "x\\n::notice::forged\\r\\n"
