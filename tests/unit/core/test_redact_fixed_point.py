"""Every output is a fixed point of the redactor: what ``redact_text`` leaves, written by an output (which
shows control characters as ``\\xNN``), holds nothing it would redact on a second pass. The long fuzz run
found netrc entries that broke this (tests/fuzz/reproducers/escapers/netrc_*); here the netrc grammar's
tokens, credential-shaped pieces and every separator an input may hold (controls, a lone surrogate, a
zero-width space: what outputs write as escapes) are drawn at random."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.core import sinks
from ad_diff.core.redact import REDACTED, redact_text, redacted_and_shown

TOKENS = ["machine", "h", "login", "u", "password", "pass", "pig", "$oauthtoken", "[redacted]", "=", "x",
          "eyJhbGciOiJIUzI1NiJ9", "bGciOiJbGciOiJbGciOiJ", "AKIAABCDEFGHIJKLMNOP", "token",
          "0123456789abcdef", "yJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjM0In0", "sig", "password=hun2er2",
          "ghp_", "hf_AbAbAbAbAbAbAbAbAbAbA", "a1" * 33, "]]>"]
GAPS = [" ", "\t", "\r", "\n", "\x0c", "\x0b", "\x1f", "\x08", "\udcc5", "\udcde", "\u200b", "\\n", "\\t",
        "\r\n", "", ".", ":", "\x1b[0m"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(GAPS)), max_size=14))
def test_an_output_of_redacted_text_is_redacted_already(parts: list[tuple[str, str]]) -> None:
    text = "".join(t + g for t, g in parts)
    shown = sinks.output(redact_text(text))
    assert redact_text(shown) == shown
    assert redacted_and_shown(text) == (redact_text(text), shown)  # the output pass made once


def test_a_netrc_entry_across_lines_and_carriage_returns_is_redacted() -> None:
    for sep in (" ", "\r ", "\n", "\r\n", "\\n", "\t"):  # a lone CR is part of a token (shown)
        out = redact_text(f"machine h{sep}login u{sep}password pig7secret")
        assert "pig7secret" not in out, repr(sep)
        assert REDACTED in out
