"""``limits.digits``: a number in input text is ASCII digits, bounded (the fuzz runs' ``int()`` crashes)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ad_diff.core import limits


@given(st.text(max_size=40), st.integers(1, 30))
def test_digits_is_int_of_ascii_digits_within_the_bound_and_never_raises(text: str, most: int) -> None:
    got = limits.digits(text, most)
    reference = int(text) if text and set(text) <= set("0123456789") and len(text) <= most else None
    assert got == reference


def test_unicode_digits_and_long_runs_are_no_number() -> None:
    assert limits.digits("\u00b2") is None  # superscript two: isdigit() but no int()
    assert limits.digits("\u0663") is None  # Arabic-Indic three: int() takes it, AD never writes it
    assert limits.digits("9" * 4400) is None
    assert limits.digits("0042") == 42
