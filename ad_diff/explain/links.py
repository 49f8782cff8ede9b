"""The causal links between findings that the analyses give evidence for (and nothing more).

A finding at transform X *follows from* an earlier transform C when:

* the graph analysis traced X's match loss upstream to C (``root_cause`` hints ``metadata_lost_upstream`` and
  ``op_form_changed_upstream``, ``ad_diff.kinds.graph.hints``): node-level evidence, preferred;
* the config analysis named C's config change as the likely cause of X's change (``config_explanation:
  likely_cause``, ``config_changes`` naming ``transforms.C.*``);
* the run whose side of X is missing stopped (``ADL009``) at C, before reaching X;
* X's difference is confined to some ranks other than the primary one (whose dumps the graph analysis
  reads) and C is where a difference confined to the same ranks first appears: on those ranks nothing
  traces a cause, and the first divergence is the root cause of what follows it there.

Only links to an earlier transform in pipeline order are kept, so following them always ends.
Positions without evidence are never linked: two losses in a log-only comparison stay two root causes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ad_diff.core.model import BASELINE, CANDIDATE, Finding, State, TransformComparison
from ad_diff.core.rules import Role
from ad_diff.explain.roles import has

#: Hint kinds that point upstream at the transform where the cause appeared.
UPSTREAM_HINTS = ("metadata_lost_upstream", "op_form_changed_upstream")
NO_UPSTREAM = "no_upstream_difference"


@dataclass(frozen=True)
class HintRef:
    """A root-cause hint as attached to a match loss (``evidence["root_cause"]`` items)."""

    kind: str
    cause_transform: str
    cause_stage: str
    message: str
    nodes: tuple[str, ...] = ()
    from_transform: str | None = None
    """The transform whose match loss carries the hint."""


def hints(f: Finding) -> list[HintRef]:
    """The root-cause hints on ``f`` (dicts from the JSON-ready evidence, or ``Hint`` objects)."""
    raw = dict(f.evidence).get("root_cause") or []
    out = []
    for h in raw if isinstance(raw, (list, tuple)) else []:
        get: Any = h.get if isinstance(h, Mapping) else (lambda k, _h=h: getattr(_h, k, None))
        kind, message = get("kind"), get("message")
        if isinstance(kind, str) and isinstance(message, str):
            out.append(
                HintRef(
                    kind,
                    str(get("cause_transform") or ""),
                    str(get("cause_stage") or ""),
                    message,
                    tuple(str(n) for n in (get("nodes") or ())),
                    f.transform,
                )
            )
    return out


def config_cause(f: Finding) -> str | None:
    """The transform whose config change the config analysis named as ``f``'s likely cause."""
    ev = dict(f.evidence)
    if ev.get("config_explanation") != "likely_cause":
        return None
    for key in ev.get("config_changes") or ():
        parts = str(key).split(".")
        if len(parts) >= 3 and parts[0] == "transforms":
            return parts[1]
    return None


def positions(rows: Iterable[TransformComparison]) -> dict[str, int]:
    """Transform name -> index of its first row (pipeline order)."""
    pos: dict[str, int] = {}
    for i, r in enumerate(rows):
        pos.setdefault(r.transform, i)
    return pos


def stop_links(
    findings: Iterable[Finding], rows: tuple[TransformComparison, ...], pos: Mapping[str, int]
) -> dict[str, str]:
    """Transform -> the transform where a run stopped (:attr:`Role.RUN_STOPPED`), for the transforms it never
    reached."""
    out: dict[str, str] = {}
    for f in findings:
        if not has(f, Role.RUN_STOPPED) or f.transform is None or f.transform not in pos:
            continue
        ev = dict(f.evidence)
        never = ev.get("not_reached")
        if isinstance(never, (list, tuple)) and never:
            names = [str(t) for t in never]
        else:  # no list: every later row that the stopped run lacks
            run = CANDIDATE if ev.get("run") == CANDIDATE else BASELINE
            names = [
                r.transform
                for r in rows[pos[f.transform] + 1 :]
                if (r.baseline if run == BASELINE else r.candidate).state is State.ABSENT
            ]
        for name in names:
            out.setdefault(name, f.transform)
    return out


def rank_links(findings: Iterable[Finding], pos: Mapping[str, int]) -> dict[str, str]:
    """Transform -> the earlier transform where a difference confined to the same ranks first appears (the
    log kind marks such findings ``confined_to_ranks``)."""
    confined: list[tuple[int, str, tuple[str, ...]]] = []
    for f in findings:
        ranks = dict(f.evidence).get("confined_to_ranks")
        if f.transform in pos and isinstance(ranks, list | tuple) and ranks:
            confined.append((pos[f.transform or ""], f.transform or "", tuple(sorted(map(str, ranks)))))
    first: dict[tuple[str, ...], tuple[int, str]] = {}
    for p, t, ranks in sorted(confined):
        first.setdefault(ranks, (p, t))
    return {t: first[ranks][1] for p, t, ranks in confined if first[ranks][0] < p}


def parent(transform: str, at: list[Finding], pos: Mapping[str, int], stops: Mapping[str, str],
           confined: Mapping[str, str] | None = None) -> str | None:
    """The earlier transform the findings ``at`` this transform follow from, by the strongest evidence."""
    here = pos[transform]

    def earlier(c: str | None) -> bool:
        return c is not None and c in pos and pos[c] < here

    graph = [h.cause_transform for f in at for h in hints(f) if h.kind in UPSTREAM_HINTS]
    graph = [c for c in graph if earlier(c)]
    if graph:
        return min(
            graph, key=lambda c: pos[c]
        )  # the first place in the pipeline where the difference appears
    config = [c for c in (config_cause(f) for f in at) if earlier(c)]
    if config:
        return min(config, key=lambda c: pos[c or ""])
    stop = stops.get(transform)
    if earlier(stop):
        return stop
    first = (confined or {}).get(transform)
    return first if earlier(first) else None


def root_of(transform: str, parents: Mapping[str, str | None]) -> str:
    """Follow ``parents`` to the transform with none (links only go upstream, so this ends)."""
    seen = {transform}
    while (up := parents.get(transform)) is not None and up not in seen:
        seen.add(up)
        transform = up
    return transform


__all__ = [
    "NO_UPSTREAM",
    "UPSTREAM_HINTS",
    "HintRef",
    "config_cause",
    "hints",
    "parent",
    "positions",
    "rank_links",
    "root_of",
    "stop_links",
]
