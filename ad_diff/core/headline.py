"""Headline text: what a report's first lines say (the verdict, each root cause's title), composed here.

A headline is read at a glance, so it is short and exact: at most :data:`HEADLINE_MAX` characters of plain
text, cut at a word boundary with an ellipsis when longer (the whole text stays in the body: the findings,
the root cause's evidence). Headlines are capped as plain text, before any format escapes them, so a cut
never falls inside an escape; a name (a part shown as code) is kept whole or left out, never cut, unless it
alone is too long. A change that concerns some ranks of a multi-rank run says so in its headline
(:func:`rank_scope`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

HEADLINE_MAX = 160
"""Most characters of a headline (plain text, before a format's escapes and decorations)."""
ELLIPSIS = "\u2026"

Part = tuple[str, bool]
"""A piece of a headline: its text, and whether it is a name (shown as code)."""


def cap_parts(parts: Sequence[Part], limit: int = HEADLINE_MAX) -> tuple[tuple[Part, ...], bool]:
    """``parts`` cut to at most ``limit`` characters, and whether anything was cut."""
    total = sum(len(t) for t, _ in parts)
    if total <= limit:
        return tuple(parts), False
    out: list[Part] = []
    room = limit - len(ELLIPSIS)
    for text, code in parts:
        if len(text) <= room:
            out.append((text, code))
            room -= len(text)
            continue
        if not code or not out:  # a name is cut only when it is all there is
            cut = text[:room]
            space = cut.rfind(" ")
            if not code and space > room // 2:
                cut = cut[:space]
            out.append((cut.rstrip().rstrip(ELLIPSIS).rstrip(), code))  # a title cut before: one ellipsis
        break
    out.append((ELLIPSIS, False))
    return tuple(p for p in out if p[0]), True


def cap_text(text: str, limit: int = HEADLINE_MAX) -> str:
    """``text`` as a headline of at most ``limit`` characters."""
    parts, _ = cap_parts(((text, False),), limit)
    return "".join(t for t, _ in parts)


def rank_scope(ranks: Sequence[object], total: int) -> str:
    """`` on rank 2 of 4`` / `` on ranks 1, 3 of 4`` when a change concerns some of ``total`` ranks; ``""``
    when it concerns all of them or the run has one rank."""
    if total <= 1 or not ranks or len(ranks) >= total:
        return ""
    many = "s" if len(ranks) > 1 else ""
    names = ", ".join("untagged" if r is None else str(r) for r in ranks)
    return f" on rank{many} {names} of {total}"


def evidence_rank_scope(evidence: Mapping[str, object]) -> str:
    """:func:`rank_scope` of a finding folded over ranks (its ``ranks`` and ``rank_values`` evidence)."""
    ranks, values = evidence.get("ranks"), evidence.get("rank_values")
    if not isinstance(ranks, list | tuple) or not isinstance(values, Mapping):
        return ""
    return rank_scope(list(ranks), len(values))
