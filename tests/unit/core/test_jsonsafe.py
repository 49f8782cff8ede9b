"""The one bounded JSON reader (ad_diff.core.jsonsafe): every bound refuses with the file, the line and what
was expected; plain JSON reads as json.loads reads it; the nesting is measured without recursion or
backtracking, for any bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.core import jsonsafe
from ad_diff.core.jsonsafe import JsonProblem, json_depth, load_json, parse
from ad_diff.errors import InputError

P = Path("run.json")


@pytest.mark.parametrize(("raw", "problem", "line"), [
    (b"[" * 65 + b"]" * 65, "JSON nested 65 levels deep (the cap is 64)", None),
    (b"[" * 1001 + b"]" * 1001, "JSON nested 1,001 levels deep", None),
    (b'{"a": [' * 500 + b"1" + b"]}" * 500, "JSON nested 1,000 levels deep", None),
    (b'{\n"exit_code": 1,\n"exit_code": 0}', "duplicate key 'exit_code'", None),
    (b'{"a": {"b": 1, "b": 2}}', "duplicate key 'b'", None),
    (b"[" + b"1" * 21 + b"]", "integer of 21 digits is too long (limit 20)", None),
    (b"[NaN]", "number NaN is not JSON", None),
    (b"[-Infinity]", "number -Infinity is not JSON", None),
    (b'{"a":\n "\xff"}', "is not UTF-8 (byte 0xff at offset 8)", 2),
    (b'{"a": 1,\n "b": }', "invalid JSON: Expecting value", 2),
])
def test_each_bound_is_refused_with_the_file_and_the_line(raw: bytes, problem: str, line: int | None) -> None:
    with pytest.raises(InputError) as e:
        load_json(raw, P, "the run.json ad-diff record writes")
    assert problem in e.value.detail
    assert e.value.detail.endswith("; expected the run.json ad-diff record writes")
    assert e.value.line == line
    assert str(e.value).startswith("run.json")


def test_no_float_where_the_caller_wants_integers() -> None:
    with pytest.raises(JsonProblem, match=r"number 1e400 is not an integer"):
        parse(b"[1e400]", floats=False)
    with pytest.raises(JsonProblem, match=r"number NaN is not an integer"):
        parse(b"[NaN]", floats=False)
    assert parse(b"[1.5]") == [1.5]


def test_digits_and_depth_are_the_callers() -> None:
    assert parse(b"[" + b"9" * 30 + b"]", digits=40) == [int("9" * 30)]
    with pytest.raises(JsonProblem, match="nested 3 levels deep"):
        parse(b"[[[1]]]", depth=2)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**18), 10**18) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@given(_json)
@settings(max_examples=300, deadline=None)
def test_plain_json_reads_as_json_loads_reads_it(value: object) -> None:
    text = json.dumps(value)
    assert parse(text) == json.loads(text)
    assert parse(text.encode("utf-8")) == json.loads(text)


def _reference_depth(raw: bytes) -> int:
    """The nesting a character-by-character reader sees: a quote after an even run of backslashes opens or
    closes a string; brackets outside strings count."""
    depth = deepest = run = 0
    inside = False
    for c in raw:
        if c == 0x22 and run % 2 == 0:
            inside = not inside
        elif not inside and c in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not inside and c in b"]}":
            depth -= 1
        run = run + 1 if c == 0x5C else 0
    return deepest


@given(st.binary(max_size=60).map(lambda b: bytes(b"[]{}\"\\a,"[x % 8] for x in b)), st.integers(1, 9))
@settings(max_examples=600, deadline=None)
def test_the_depth_scan_is_the_character_readers_in_any_chunking(raw: bytes, chunk: int) -> None:
    saved, jsonsafe._CHUNK = jsonsafe._CHUNK, chunk  # chunks as short as one byte: the state carried over
    try:
        assert json_depth(raw) == _reference_depth(raw)
    finally:
        jsonsafe._CHUNK = saved


def test_the_depth_scan_needs_no_backtracking() -> None:
    """A string of escaped quotes that never ends (each quote would restart a pattern that scans to the end)
    is read in one pass: a construction check, not a timing (the scan is numpy passes over the bytes, and no
    regular expression exists in the module)."""
    assert "re.compile" not in Path(jsonsafe.__file__).read_text()
    raw = b'"' + b'\\"' * 200_000
    assert json_depth(raw) == 0
    with pytest.raises(JsonProblem, match="invalid JSON"):
        parse(raw)
