"""Which known names a possibly misspelled name is close to (a bounded edit distance).

One definition of "one typo away", used where a name the user wrote is compared with the names a run
shows (a transform key in an AD config that no log line shows, for one).
"""

from __future__ import annotations

from collections.abc import Iterable


def max_typos(name: str) -> int:
    """How many edits still read as a misspelling of a name as long as ``name``: one, two from 12
    characters on (AD transform keys are long; two edits in a short key make another word)."""
    return 2 if len(name) >= 12 else 1


def distance(a: str, b: str, limit: int) -> int:
    """The optimal-string-alignment distance of ``a`` and ``b`` (insert, delete, substitute, or swap two
    adjacent characters, each counting one), or ``limit + 1`` as soon as it must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)


def near(name: str, known: Iterable[str]) -> tuple[str, ...]:
    """The known names closest to ``name`` within :func:`max_typos` edits (ties all returned, sorted);
    empty when ``name`` is itself known or nothing is that close."""
    names = set(known)
    if name in names:
        return ()
    limit = max_typos(name)
    scored = [(distance(name, k, limit), k) for k in names]
    best = min((d for d, _ in scored), default=limit + 1)
    if best > limit:
        return ()
    return tuple(sorted(k for d, k in scored if d == best))


__all__ = ["distance", "max_typos", "near"]
