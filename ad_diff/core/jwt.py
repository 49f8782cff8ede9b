"""A JWT found in linear time, for :mod:`ad_diff.core.redact` (its ``SECRET_VALUE`` family ``eyJ``)."""

from __future__ import annotations

from ad_diff.core import lazy


class Jwt:
    """The JWT pattern of :data:`SECRET_VALUE` (``eyJ<8+>.eyJ<8+>.<signature>``, glued to anything before
    it), found in linear time. The regular expression tries every ``eyJ`` of a long run again and scans the
    rest of the run from each (``eyJeyJeyJ…`` was quadratic); here the search starts at the literal
    ``.eyJ`` (the payload, which holds no dot, so each run is looked at by at most two attempts), and the
    header is the first ``eyJ`` of the run of token characters that ends at that dot (any later ``eyJ`` in
    the run would match less, never more)."""

    _TAIL = lazy.pattern(r"\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+")
    _RUNS = lazy.pattern(r"[A-Za-z0-9_-]++")
    pattern = r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def sub(self, repl: object, text: str) -> str:
        """``text`` with every JWT replaced by the marker (``repl``: the families' common signature, unused:
        a JWT is a credential wherever it sits)."""
        out: list[str] = []
        last = pos = 0
        starts: dict[int, int] | None = None  # run end -> run start, built once, only if a tail is found
        while (m := self._TAIL.search(text, pos)) is not None:
            dot = m.start()
            if starts is None:
                starts = {r.end(): r.start() for r in self._RUNS.finditer(text)}
            begin = max(starts.get(dot, dot), last)
            k = text.find("eyJ", begin, dot)
            if k < 0 or dot - k - 3 < 8:
                pos = dot + 1
                continue
            out += (text[last:k], self.marker)
            last = pos = m.end()
        return "".join([*out, text[last:]]) if out else text


__all__ = ["Jwt"]
