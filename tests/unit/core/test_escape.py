"""Markdown escaping (ad_diff.core.escape): mentions, cross-references and autolinks become inline code
(readable, inert), markup is escaped, long text is cut, lone surrogates are written as escapes."""

from __future__ import annotations

import pytest

from ad_diff.core.escape import excerpt, md_escape
from ad_diff.core.sinks import visible


@pytest.mark.parametrize(("text", "expected"), [
    ("ping @alice now", "ping `@alice` now"),
    ("cc @org/team-x.", "cc `@org/team-x`."),
    ("see https://evil.example/a_b?x=1.", "see `https://evil.example/a_b?x=1`."),
    ("or www.example.com, ok", "or `www.example.com`, ok"),
    ("mail root@example.com", "mail `root@example.com`"),
    ("fixes #12 and o/r#3", "fixes `#12` and `o/r#3`"),
    ("match_rope_pattern#1 stays", "match_rope_pattern#1 stays"),
    ("x|y <b>", "x\\|y &lt;b>"),
])
def test_md_escape(text: str, expected: str) -> None:
    assert md_escape(text) == expected


def test_no_mention_or_link_survives_outside_code() -> None:
    out = md_escape("@a http://b.c @d/e f@g.hi #9 " * 3)
    outside = "".join(part for i, part in enumerate(out.split("`")) if i % 2 == 0)
    assert "@" not in outside
    assert "http" not in outside
    assert "#9" not in outside


def test_excerpt_keeps_both_ends_and_says_how_much_is_gone() -> None:
    text = "START" + "x" * 100_000 + "END"
    cut = excerpt(text, 300)
    assert len(cut) <= 300
    assert cut.startswith("START")
    assert cut.endswith("END")
    assert "characters omitted" in cut
    assert excerpt("short", 300) == "short"


def test_lone_surrogates_become_escapes() -> None:
    assert visible("a\ud800b") == "a\\ud800b"
    assert visible("plain é") == "plain é"
    visible("\udcff").encode("utf-8")  # encodable now
