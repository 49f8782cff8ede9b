"""Group the findings of one comparison by root cause (``CauseGroup``), in the order every report shows them.

1. Findings are placed at their transform. Consistency and input findings, and run-level findings, stand
   alone; tensor findings without a transform form one numeric-drift group (or join the group of the
   transform their first drifting node came from, or of their first likely cause, or the "different inputs"
   finding that explains them). Findings a drift cause names (``drift_cause``: the count that rose, the config
   setting) go with the drift, whose title then says what drifted and why
   (``ad_diff.kinds.tensors.causes``).
2. Each transform links to the earlier transform its findings follow from (``ad_diff.explain.links``: graph
   hints, config likely causes, a run that stopped); following the links gives each transform's root.
3. A group is one root transform with the findings there (``root``) and at every transform linked to it
   (``consequences``). What the root findings and the incoming hints say decides the kind of cause and its
   one-line title and evidence.
4. Groups are ordered: gating groups first, then groups with problems left to review, then acknowledged or
   explained ones, then improvements, then notes; within each band in pipeline order (run-level first,
   tensors last).

A rewritten region (``Role.REGION_REWRITTEN``) at a transform whose match count changed is how that count
change looks in the graph; it is kept as that change's evidence at info level instead of a warning of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ad_diff.core.escape import excerpt
from ad_diff.core.headline import cap_parts
from ad_diff.core.model import Category, Finding, Severity, TransformComparison
from ad_diff.core.redact import redact_text
from ad_diff.core.rules import MESSAGE_LIMIT, Role
from ad_diff.explain.describe import (
    DRIFT_TITLED,
    LOG_ONLY,
    SNAPSHOT_BASELINE,
    Builder,
    Raw,
    Title,
    drift_described,
    drift_group,
    importance,
    marked,
)
from ad_diff.explain.links import hints, parent, positions, rank_links, root_of, stop_links
from ad_diff.explain.model import CauseGroup, CauseKind
from ad_diff.explain.roles import first, has
from ad_diff.gate import report_rank
from ad_diff.settings import FailOn

STANDALONE = (Category.CONSISTENCY, Category.INPUT, Category.UNACCOUNTED, Category.EXPECTED_CHANGES)
"""Categories whose findings are about a run or an artifact, never a consequence of a transform."""


def _fold_regions(findings: Sequence[Finding], rows: dict[str, TransformComparison]) -> list[Finding]:
    """Rewritten regions at a transform whose count changed become that change's info-level evidence."""
    out = []
    for f in findings:
        row = rows.get(f.transform or "")
        folds = has(f, Role.REGION_REWRITTEN) and f.severity is Severity.WARNING
        if folds and row is not None and row.changed:
            ev = dict(f.evidence) | {"folded_into": "the match count change at this transform"}
            f = dataclasses.replace(f, severity=Severity.INFO, evidence=tuple(sorted(ev.items())))
        out.append(f)
    return out


def build(
    findings: Sequence[Finding],
    rows: tuple[TransformComparison, ...],
    fail_on: FailOn,
    graph_compared: bool = False,
    from_snapshot: bool = False,
) -> tuple[list[Finding], tuple[CauseGroup, ...]]:
    """Group ``findings`` (see the module doc). Returns the findings, each carrying its group's id, in report
    order (group by group, root findings first), and the groups. ``from_snapshot``: the baseline is a
    snapshot, so the graphs were not compared node by node although the candidate's dumps were read."""
    pos = positions(rows)
    by_row = {r.transform: r for r in reversed(rows)}  # first occurrence wins
    findings = _fold_regions(findings, by_row)
    raw: list[Raw] = []
    findings = _events(findings, pos, raw)
    at: dict[str, list[Finding]] = {}
    alone: list[Finding] = []
    drift: list[Finding] = []
    inputs_differ = [f for f in findings if has(f, Role.INPUTS_DIFFER)]
    for f in findings:
        if has(f, Role.INPUTS_DIFFER):
            continue
        if f.category in STANDALONE or f.transform is None or f.transform not in pos:
            named = f.category is Category.NUMERIC_DRIFT or "drift_cause" in dict(f.evidence)
            (drift if named else alone).append(f)
        else:
            at.setdefault(f.transform, []).append(f)
    stops = stop_links(findings, rows, pos)
    confined = rank_links(findings, pos)
    parents = {t: parent(t, fs, pos, stops, confined) for t, fs in at.items()}
    members: dict[str, list[str]] = {}
    for t in sorted(at, key=lambda t: pos[t]):
        members.setdefault(root_of(t, parents), []).append(t)
    node_drift = first((f for fs in at.values() for f in fs), Role.FIRST_DRIFT_NODE)
    drift_root = root_of(node_drift.transform or "", parents) if node_drift is not None else None
    caused_at = None
    if drift:
        # lazy: the tensor kind's drift causes load only where something drifted (start-up, docs/benchmark.md)
        from ad_diff.kinds.tensors.causes import cause_transform

        caused_at = cause_transform(drift)
    if drift_root is None and caused_at in at:  # the drift's first cause is at a transform: grouped there
        drift_root = root_of(caused_at or "", parents)
    divergence = first((f for f in findings if f.transform in pos), Role.FIRST_DIVERGENCE)
    untraced = SNAPSHOT_BASELINE if from_snapshot else LOG_ONLY
    builder = Builder(by_row, pos, graph_compared, divergence, untraced)
    for r, ts in members.items():
        root = sorted(at.get(r, []), key=importance)
        cons = sorted(
            (f for t in ts if t != r for f in at[t]), key=lambda f: (pos[f.transform or ""], importance(f))
        )
        if r == drift_root:
            cons += sorted(drift, key=importance)
        incoming = [h for f in cons for h in hints(f) if h.cause_transform == r]
        kind, title, ev = builder.describe(r, root, incoming, root + cons)
        if r == drift_root and kind in DRIFT_TITLED:
            kind, title, ev = drift_described(drift, (kind, title, ev))
        raw.append((kind, title, ev, r, pos[r], root, cons))
    if drift and drift_root is None:
        raw.append(drift_group(drift, inputs_differ, len(rows)))
        inputs_differ = []
    for f in [*inputs_differ, *alone]:
        where = f.transform if f.transform in pos else None
        kind = {Category.INPUT: CauseKind.INPUT, Category.EXPECTED_CHANGES: CauseKind.STALE_EXPECTATION}.get(
            f.category, CauseKind.OTHER)
        title = marked(f.message, [where, f.node, f.tensor])
        raw.append((kind, title, "", where, pos[where] if where else None, [f], []))
    groups = [_group(k, title, ev, t, by_row[t].stage if t in by_row else None, p, rf, cf)
              for k, title, ev, t, p, rf, cf in raw]
    groups.sort(key=lambda g: (report_rank(g, fail_on), -1 if g.position is None else g.position, g.title))
    numbered: list[CauseGroup] = []
    ordered: list[Finding] = []
    for i, g in enumerate(groups, 1):
        head = tuple(dataclasses.replace(f, group=i) for f in g.root)
        tail = tuple(dataclasses.replace(f, group=i) for f in g.consequences)
        numbered.append(dataclasses.replace(g, id=i, root=head, consequences=tail))
        ordered += [*head, *tail]
    return ordered, tuple(numbered)


def _events(findings: Sequence[Finding], pos: dict[str, int], raw: list[Raw]) -> list[Finding]:
    """One group per run-level event (``event`` evidence: a world-size change, a run's dumps that are another
    run's) headed by the finding that reports it (``event_root``, else the most important one), with every
    other finding it explains or that shows it as a consequence; the findings left to place."""
    rest: list[Finding] = []
    by_event: dict[str, list[Finding]] = {}
    for f in findings:
        ev = dict(f.evidence)
        event = ev.get("event")
        (by_event.setdefault(str(event), []) if event else rest).append(f)
    for event, members in by_event.items():
        if event.startswith("dumps_of_another_run"):
            ordered = sorted(members, key=lambda f: (pos.get(f.transform or "", len(pos)), importance(f)))
            # headed where the event shows first
            head = [next((f for f in ordered if f.severity is Severity.ERROR), ordered[0])]
            cons = [f for f in ordered if f not in head]
            where = head[0].transform if head[0].transform in pos else None
            raw.append((CauseKind.DUMPS_OF_ANOTHER_RUN, marked(head[0].message, [where]),
                        f"{len(cons) + 1} finding(s) show the dumps are not the log's or the config's"
                        if cons else "", where, pos[where] if where else None, head, cons))
            continue
        head = [f for f in members if dict(f.evidence).get("event_root")]
        if not head:  # an explained finding whose event's own finding was filtered out: placed as usual
            rest += members
            continue
        cons = sorted((f for f in members if f not in head),
                      key=lambda f: (pos.get(f.transform or "", len(pos)), importance(f)))
        ev = dict(head[0].evidence)
        sizes, source = ev.get("world_sizes"), ev.get("world_size_source")
        title = (marked(f"world size changed {sizes[0]} \u2192 {sizes[1]} ({source})", [])
                 if isinstance(sizes, list) and len(sizes) == 2 else marked(head[0].message, []))
        evidence = (f"{len(cons)} finding(s) of the sharding stage and of the shapes it slices follow from it"
                    if cons else head[0].message)
        raw.append((CauseKind.WORLD_SIZE_CHANGED, title, evidence, None, None, head, cons))
    return rest


def _group(kind: CauseKind, title: Title, ev: str, t: str | None, stage: str | None, p: int | None,
           rf: Sequence[Finding], cf: Sequence[Finding]) -> CauseGroup:
    """A :class:`CauseGroup` whose title is a headline (:mod:`ad_diff.core.headline`): a longer title is cut;
    its whole text is the message of the finding it comes from, in the body."""
    head, _ = cap_parts(title)
    # evidence may be raw log text (a failure line of 100,000 characters): bounded like a finding message
    return CauseGroup(0, kind, head, excerpt(redact_text(ev), MESSAGE_LIMIT), t, stage, p, tuple(rf),
                      tuple(cf))


__all__ = ["build", "marked"]
