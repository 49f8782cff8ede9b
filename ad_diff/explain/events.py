"""Run-level events that decide what the comparison can hold against a transform: a world-size change.

When the runs ran on different world sizes (their logs hold different rank sets, or their configs declare
different ``world_size``), the sharding stage does different work by design: its transforms' counts and
states change, and the shapes it slices change by the ratio of the world sizes. Those findings are
*explained by* the event (not gating, grouped under it); everything else is still compared, rank by rank.
A shape counts as sliced when every dimension that differs is the baseline's scaled by ``baseline world size
/ candidate world size``, with the same dtype; any other shape change stays a finding of its own. An
explained warning becomes a note: the event's own finding is the one thing to review.
(Cache restores are the other run-level event: the log kind marks the transforms they skipped ``restored``,
so no finding is ever made of them.)
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ad_diff.core import limits
from ad_diff.core.model import Category, Finding, Severity
from ad_diff.kinds.config.rules import SETTING_CHANGED
from ad_diff.kinds.log.rules import WORLD_SIZE

if TYPE_CHECKING:
    from fractions import Fraction

    from ad_diff.kinds.base import Context

SHARDING_STAGE = "sharding"
"""AD's stage that shards the graph for the world size (FORMATS.md 1.2: ``Stages`` enum)."""
EVENT = "world_size"
"""The ``event`` evidence of a world-size change and of the findings it explains."""
_EXPLAINED = (Category.MATCH_LOSS, Category.STATE_CHANGE, Category.IMPROVEMENT, Category.STRUCTURE_CHANGE)
"""What a sharding transform's own findings may be about: its count, its state, the graph it rewrote."""


def _sizes(ctx: Context, event: Finding) -> tuple[int, int, str]:
    """The two world sizes and where they come from: the configs when both declare one, else the logs."""
    b = ctx.config.world_size(ctx.baseline.root, ctx.settings.baseline_config)
    c = ctx.config.world_size(ctx.candidate.root, ctx.settings.candidate_config)
    if b is not None and c is not None and b != c:
        return b, c, "config world_size"
    ev = dict(event.evidence)
    br, cr = ev.get("baseline_ranks"), ev.get("candidate_ranks")
    if isinstance(br, list) and isinstance(cr, list) and br and cr:
        return len(br), len(cr), "ranks logged"
    return 0, 0, ""


def _dims(text: str) -> tuple[list[str], str] | None:
    shape, _, dtype = text.partition(" : ")
    return (shape.split("x"), dtype) if shape and dtype else None


def sliced(before: str, after: str, ratio: Fraction) -> bool:
    """Whether ``after`` (``shape : dtype`` as a dump writes it) is ``before`` with some dimensions scaled by
    ``ratio`` and nothing else changed."""
    b, c = _dims(before), _dims(after)
    if b is None or c is None or b[1] != c[1] or len(b[0]) != len(c[0]):
        return False
    scaled = 0
    for x, y in zip(b[0], c[0], strict=True):
        if x == y:
            continue
        dx, dy = limits.digits(x), limits.digits(y)  # symbolic, or no size a tensor has: None
        if dx is None or dy is None or dx * ratio != dy:
            return False
        scaled += 1
    return scaled > 0


def _all_sliced(f: Finding, ratio: Fraction) -> bool:
    ev = dict(f.evidence)
    nodes = ev.get("nodes")
    if not isinstance(nodes, list | tuple) or not nodes or ev.get("count") != len(nodes):
        return False  # a node the evidence does not list could be changed otherwise
    return all(isinstance(n, list | tuple) and len(n) == 4 and sliced(str(n[2]), str(n[3]), ratio)
               for n in nodes)


def world_size(ctx: Context, findings: list[Finding]) -> list[Finding]:
    """``findings`` with what a world-size change explains marked so (see the module docstring)."""
    event = next((f for f in findings if f.code == WORLD_SIZE.code), None)
    if event is None:
        event = next((f for f in findings if f.code == SETTING_CHANGED.code
                      and dict(f.evidence).get("setting") == "world_size"), None)
    if event is None:
        return findings
    b, c, source = _sizes(ctx, event)
    if not b or not c or b == c:
        return findings
    # lazy: exact ratios only where the world size changed (fractions costs ~2 ms of every start-up)
    from fractions import Fraction

    ratio = Fraction(b, c)
    why = f"world size {b} -> {c} ({source}): the sharding stage shards for it"
    sharding = {r.transform for r in ctx.rows if r.stage == SHARDING_STAGE}
    out = []
    for f in findings:
        ev = dict(f.evidence)
        if f is event:
            f = dataclasses.replace(f, evidence=tuple(sorted({**ev, "event": EVENT, "event_root": True,
                                                              "world_sizes": [b, c],
                                                              "world_size_source": source}.items())))
        elif (f.transform in sharding and f.category in _EXPLAINED) or (
                f.category is Category.SHAPE_CHANGE and _all_sliced(f, ratio)):
            # explained: nothing left to review (the event's own finding is what to look at)
            sev = Severity.INFO if f.severity is Severity.WARNING else f.severity
            f = dataclasses.replace(f, explained_by=why, gating=False, severity=sev, evidence=tuple(sorted(
                {**ev, "event": EVENT, "explained_kind": "the world-size change"}.items())))
        out.append(f)
    return out


__all__ = ["EVENT", "sliced", "world_size"]
