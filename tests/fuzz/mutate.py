"""One byte-level mutator for every parser fuzz test: flips, inserts (random bytes or format tokens),
deletions, duplicated lines and cuts applied to real fixture files; as a hypothesis strategy
(:func:`mutated`, the CI properties) and as a plain function of a ``random.Random`` (:func:`mutate_bytes`,
the long run)."""

from __future__ import annotations

import os
import random
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


def mutate_bytes(rng: random.Random, data: bytes, tokens: Sequence[bytes], max_ops: int = 8,
                 max_insert: int = 40) -> bytes:
    """The same operations as :func:`mutated`, driven by ``rng`` instead of hypothesis (the long run,
    scripts/fuzz_long.py, needs millions of inputs per hour)."""
    buf = bytearray(data)
    for _ in range(rng.randint(0, max_ops)):
        op = rng.choice(_OPS)
        pos = rng.randint(0, max(0, len(buf) - 1))
        if op == "flip" and buf:
            buf[pos] = rng.randrange(256)
        elif op == "insert":
            if tokens and rng.random() < 0.6:
                buf[pos:pos] = rng.choice(tokens)
            else:
                buf[pos:pos] = rng.randbytes(rng.randint(1, max_insert))
        elif op == "delete":
            del buf[pos : pos + rng.randint(1, 30)]
        elif op == "dup_line":
            lines = bytes(buf).split(b"\n")
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            buf = bytearray(b"\n".join(lines))
        elif op == "cut":
            del buf[pos:]
        elif op == "splice" and len(buf) > 1:  # repeat a slice: duplicated keys, nested brackets
            a = rng.randrange(len(buf))
            b = min(len(buf), a + rng.randint(1, 64))
            buf[pos:pos] = buf[a:b] * rng.randint(1, 8)
    return bytes(buf)


_OPS = ("flip", "insert", "delete", "dup_line", "cut", "splice")
