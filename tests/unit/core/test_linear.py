"""Every escaper is linear in its input (issue 45), shown by construction and by counting, never by timing.

* markdown and HTML (``core/escape.py``): the pattern of links, mentions and references is only ever run
  on one word of at most ``WORD_CAP`` characters (counted here through a recording stand-in for the
  pattern: the windows never exceed the cap and never overlap, so its work is at most ``WORD_CAP`` steps a
  character), and word by word it finds exactly what it found on the whole text;
* redaction (``core/redact.py``): the patterns that scanned the rest of a run from every start (a key's
  tail, a JWT) are built so no repetition can backtrack (possessive or bounded, read from the compiled
  pattern) and the JWT is found from its payload's dot, equal to the regular expression it replaces;
* the JSON depth scan (``core/jsonsafe.py``): no regular expression at all (tests/unit/core/test_jsonsafe.py).
"""

from __future__ import annotations

import re
import re._constants as C  # noqa: N812 - the regex compiler's opcode names
import re._parser as P  # noqa: N812
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.core import escape, netrc, redact
from ad_diff.core.escape import WORD_CAP, active_spans, html_text, md_escape
from ad_diff.core.jwt import Jwt

UNITS = ["a", "a.", "a-", "a+", "a/", "a#1", "a@", "@a", "b@c.d", "http://", "www.", "`", "#1", "GH-1", "_",
         "o/r#2", ".", "-", "@", "é", " ", "<", "\n"]
"""Pieces whose repetition made the old pattern try every start again (and some that separate words)."""
_texts = st.lists(st.tuples(st.sampled_from(UNITS), st.integers(1, 400)), max_size=8).map(
    lambda parts: "".join(u * n for u, n in parts))


class _Recorder:
    """Stands in for ``escape._ACTIVE``: records the window of every search, then searches."""

    def __init__(self, real: re.Pattern[str]) -> None:
        self.real = real
        self.windows: list[tuple[int, int]] = []

    def finditer(self, s: str, pos: int = 0, endpos: int | None = None) -> Iterator[re.Match[str]]:
        end = len(s) if endpos is None else endpos
        self.windows.append((pos, end))
        return self.real.finditer(s, pos, end)


@given(_texts)
@settings(max_examples=300, deadline=None)
def test_the_active_pattern_only_ever_reads_short_disjoint_windows(text: str) -> None:
    for escaper in (md_escape, html_text):
        rec = _Recorder(escape._ACTIVE)
        saved, escape._ACTIVE = escape._ACTIVE, rec  # type: ignore[assignment]
        try:
            escaper(text)
        finally:
            escape._ACTIVE = saved
        ordered = sorted(rec.windows)
        assert all(b - a <= WORD_CAP for a, b in ordered)
        assert all(b1 <= a2 for (_, b1), (a2, _) in zip(ordered, ordered[1:], strict=False))  # disjoint
        steps = sum((b - a) ** 2 for a, b in ordered)  # the pattern's worst case on each window
        assert steps <= WORD_CAP * max(len(text) * 4, 1)  # visible() writes a character as at most 4


@given(st.lists(st.tuples(st.sampled_from(UNITS), st.integers(1, 12)), max_size=12).map(
    lambda parts: "".join(u * n for u, n in parts)))
@settings(max_examples=500, deadline=None)
def test_word_by_word_finds_what_the_whole_text_search_found(text: str) -> None:
    if any(len(w) > WORD_CAP for w in re.findall(r"[^\s<>]+", text)):
        return
    assert list(active_spans(text)) == [m.span() for m in escape._ACTIVE.finditer(text)]


def test_a_word_past_the_cap_is_code_when_it_may_be_active_and_text_when_not() -> None:
    long_mention = "x" * 300 + "@octocat"
    assert md_escape(long_mention) == f"`{long_mention}`"
    assert "<code>" in html_text(long_mention)
    plain = "y" * 300
    assert md_escape(plain) == plain
    assert md_escape("see @octocat") == "see `@octocat`"


# -- redaction -----------------------------------------------------------------------------------------


def _backtracking(tree: Any, out: list[str], atomic: bool = False) -> list[str]:
    """Unbounded repetitions that can give back what they took (greedy or lazy, outside an atomic group)."""
    for op, av in tree:
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, sub = av
            if hi is C.MAXREPEAT and not atomic:
                out.append(f"{op} {lo},∞")
            _backtracking(sub, out, atomic)
        elif op is C.POSSESSIVE_REPEAT:
            _backtracking(av[2], out, True)
        elif op is C.ATOMIC_GROUP:
            _backtracking(av, out, True)
        elif op is C.SUBPATTERN:
            _backtracking(av[-1], out, atomic)
        elif op is C.BRANCH:
            for branch in av[1]:
                _backtracking(branch, out, atomic)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            _backtracking(av[1], out, atomic)
    return out


def test_the_rewritten_redaction_patterns_cannot_backtrack() -> None:
    for pattern in (redact.SECRET_ASSIGNMENT, Jwt._TAIL, Jwt._RUNS, escape._WORD, netrc.ENTRY):
        assert _backtracking(P.parse(pattern.pattern, pattern.flags), []) == [], pattern.pattern
    # the check itself finds the shapes it is about
    assert _backtracking(P.parse(r"a[bc]*d"), []) == ["MAX_REPEAT 0,∞"]
    assert _backtracking(P.parse(r"a[bc]*+d(?>e+)f{2,9}"), []) == []


@given(st.lists(st.sampled_from(["eyJ", "a", "aaaa", ".", "_", " ", "x", "-"]), max_size=30).map("".join))
@settings(max_examples=600, deadline=None)
def test_the_jwt_search_equals_the_pattern_it_replaces(text: str) -> None:
    assert Jwt(redact.REDACTED).sub(None, text) == re.sub(Jwt.pattern, redact.REDACTED, text)


def test_a_key_tail_is_read_up_to_its_bound() -> None:
    near = "pass_" + "x" * (redact.KEY_TAIL - 1) + "=hunter2hunter2"
    assert "hunter2" not in redact.redact_text(near)
    assert redact.redact_text("pass." * 20_000) == "pass." * 20_000  # a run of words: no key, read once
