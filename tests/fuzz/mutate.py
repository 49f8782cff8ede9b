"""One byte-level mutator for every parser fuzz test: flips, inserts (random bytes or format tokens),
deletions, duplicated lines and cuts applied to real fixture files."""

from __future__ import annotations

import os
from collections.abc import Sequence

from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("AD_DIFF_FUZZ_EXAMPLES") or 0)
"""``AD_DIFF_FUZZ_EXAMPLES=N`` runs a long session outside CI; 0 means each test's own default."""


def examples(default: int) -> int:
    """Examples per property: the long-session override, else ``default``."""
    return EXAMPLES or default


def mutated(seeds: Sequence[bytes], tokens: Sequence[bytes], max_ops: int = 8, max_insert: int = 40):  # noqa: ANN201
    """Strategy of ``seeds`` mutated up to ``max_ops`` times; ``tokens`` are format-aware insertions."""

    @st.composite
    def _mutated(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(st.sampled_from(list(seeds))))
        for _ in range(draw(st.integers(0, max_ops))):
            op = draw(st.sampled_from(["flip", "insert", "delete", "dup_line", "cut"]))
            pos = draw(st.integers(0, max(0, len(data) - 1)))
            if op == "flip" and data:
                data[pos] = draw(st.integers(0, 255))
            elif op == "insert":
                data[pos:pos] = draw(st.binary(max_size=max_insert)) or draw(st.sampled_from(list(tokens)))
            elif op == "delete":
                del data[pos : pos + draw(st.integers(1, 30))]
            elif op == "dup_line":
                lines = bytes(data).split(b"\n")
                i = draw(st.integers(0, len(lines) - 1))
                lines.insert(i, lines[i])
                data = bytearray(b"\n".join(lines))
            elif op == "cut":
                del data[pos:]
        return bytes(data)

    return _mutated()
