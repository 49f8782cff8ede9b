"""A ``.netrc`` entry in free text (``machine h login u password p``), for :mod:`ad_diff.core.redact`: its
pattern, and the lines a long text's scan reads around a ``login``.

Its tokens are separated by white space, as netrc's are; here only by what every output writes as it is (a
space, a tab, a line break, or JSON's ``\\n``), so that a redacted text reads the same once an output has
shown its control characters as escapes (``\\x0d``): every output stays a fixed point of the redactor.
"""

from __future__ import annotations

from ad_diff.core import lazy

GAP = r"(?:[ \t\n]|\\[nrt])++"
"""What separates netrc tokens: a space, tab or line break (also as a JSON string writes one, ``\\n``): the
separators an output writes as they are."""
TOKEN = r"(?:(?!\\[nrt])[^ \t\n])++"
"""A netrc token: everything up to a separator. A carriage return, form feed or other control is part of the
token: an output writes it visibly (``\\x0d``), so counting it as a separator would make the output read
differently from the text (a CRLF line end still separates: its ``\\n`` does)."""
ENTRY = lazy.pattern(rf"(?i)(?:(?<![A-Za-z])|(?<=\\[nrt]))(login{GAP}{TOKEN}{GAP}"
                     rf"pass(?:word)?+{GAP})({TOKEN})")
"""A ``.netrc`` entry (``machine h login u password p``): the password follows a separator, not ``=``."""

LINES = 3
"""Lines after one holding ``login`` that a netrc entry may still take (its four tokens one a line)."""


def line_spans(text: str, spots: list[int]) -> list[tuple[int, int]]:
    """The spans of the lines of ``text`` holding ``spots`` (offsets, sorted), merged, in order; a line
    holding ``login`` takes the :data:`LINES` after it along (an entry across lines)."""
    spans: list[tuple[int, int]] = []
    for at in spots:
        if spans and at < spans[-1][1]:
            continue
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if "login" in text[start:end].lower():
            for _ in range(LINES):
                nxt = text.find("\n", end + 1)
                end = len(text) if nxt < 0 or end >= len(text) else nxt
        spans.append((start, end))
    return spans
