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

A rewritten region (``ADG005``) at a transform whose match count changed is how that count change looks in
the graph; it is kept as that change's evidence at info level instead of a warning of its own.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ad_diff.core.escape import excerpt
from ad_diff.core.headline import cap_parts, evidence_rank_scope
from ad_diff.core.model import Category, Finding, Severity, Side, State, TransformComparison
from ad_diff.core.redact import redact_text
from ad_diff.core.rules import MESSAGE_LIMIT
from ad_diff.explain.links import NO_UPSTREAM, HintRef, hints, parent, positions, root_of, stop_links
from ad_diff.explain.model import CauseGroup, CauseKind, TitlePart
from ad_diff.gate import report_rank
from ad_diff.kinds.tensors.causes import DRIFT_CODES, cause_transform, drift_title, first_causes

if TYPE_CHECKING:
    from ad_diff.result import DiffResult

STANDALONE = (Category.CONSISTENCY, Category.INPUT, Category.UNACCOUNTED)
"""Categories whose findings are about a run or an artifact, never a consequence of a transform."""
_HINT_FORM = re.compile(
    r"^(?P<t>.+?) rewrote `(?P<b>.*)` in the baseline; in the candidate that part of the "
    r"graph is `(?P<c>.*)` since (?P<cause>\S+)$"
)
_CODE_ORDER = (
    "ADL009",
    "ADL004",
    "ADL003",
    "ADG001",
    "ADG010",
    "ADL001",
    "ADL002",
    "ADT009",
    "ADT007",
    "ADL008",
    "ADL006",
)
Title = tuple[TitlePart, ...]
Described = tuple[CauseKind, Title, str]
_Raw = tuple[CauseKind, Title, str, str | None, int | None, Sequence[Finding], Sequence[Finding]]


def _code(name: str) -> TitlePart:
    return (name, True)


def _text(s: str) -> TitlePart:
    return (s, False)


def _strip(message: str, transform: str | None) -> str:
    """``message`` without its ``<transform>: `` prefix (titles name the transform already)."""
    if transform and message.startswith(transform + ": "):
        return message[len(transform) + 2 :]
    return message


def marked(message: str, names: Sequence[str | None]) -> Title:
    """``message`` as title parts, each occurrence of ``names`` (transform, node, tensor) marked as code."""
    wanted = sorted({n for n in names if n}, key=len, reverse=True)
    if not wanted:
        return (_text(message),)
    pattern = re.compile("|".join(re.escape(n) for n in wanted))
    parts: list[TitlePart] = []
    last = 0
    for m in pattern.finditer(message):
        if m.start() > last:
            parts.append(_text(message[last : m.start()]))
        parts.append(_code(m.group(0)))
        last = m.end()
    if last < len(message):
        parts.append(_text(message[last:]))
    return tuple(parts)


def _importance(f: Finding) -> tuple[int, int, tuple[object, ...]]:
    order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    rank = _CODE_ORDER.index(f.code) if f.code in _CODE_ORDER else len(_CODE_ORDER)
    return (order[f.severity], rank, f.sort_key())


def _fold_regions(findings: Sequence[Finding], rows: dict[str, TransformComparison]) -> list[Finding]:
    """Rewritten regions at a transform whose count changed become that change's info-level evidence."""
    out = []
    for f in findings:
        row = rows.get(f.transform or "")
        if f.code == "ADG005" and f.severity is Severity.WARNING and row is not None and row.changed:
            ev = dict(f.evidence) | {"folded_into": "the match count change at this transform"}
            f = dataclasses.replace(f, severity=Severity.INFO, evidence=tuple(sorted(ev.items())))
        out.append(f)
    return out


def _side(s: Side) -> str:
    return str(s.matches) if s.state is State.APPLIED and s.matches is not None else s.state.value


def _count_text(r: TransformComparison | None) -> str:
    return "" if r is None else f"{_side(r.baseline)} \u2192 {_side(r.candidate)}"


def _op_form(h: HintRef) -> str:
    """A hint's op-form change as one line: ```a -> b` became `c -> d`, which X no longer matches``."""
    m = _HINT_FORM.match(h.message)
    if m is None:
        return h.message
    return f"`{m['b']}` became `{m['c']}`, which {m['t']} no longer matches"


LOG_ONLY = "no graph dumps to trace it upstream (log-only comparison)"
SNAPSHOT_BASELINE = ("the baseline is a snapshot (counts and metadata coverage only): no node-level graph "
                     "comparison to trace it upstream")
"""Why a match loss has no upstream evidence, when the graphs were not compared node by node."""


class _Builder:
    """Kind, title and evidence of one group from its root findings and the hints pointing at it."""

    def __init__(
        self,
        rows: dict[str, TransformComparison],
        pos: dict[str, int],
        graph_compared: bool,
        divergence: Finding | None,
        untraced: str = LOG_ONLY,
    ) -> None:
        self.rows = rows
        self.pos = pos
        self.graph_compared = graph_compared
        self.untraced = untraced
        self.divergence = divergence
        """The first structural divergence of the graphs (``ADG004``), when there is one."""

    def describe(
        self, t: str, root: list[Finding], incoming: list[HintRef], members: list[Finding]
    ) -> Described:
        row = self.rows.get(t)
        by = {f.code: f for f in sorted(root, key=_importance, reverse=True)}  # most important wins a code
        if "ADL009" in by:
            f = by["ADL009"]
            run = f.message.split(" ", 1)[0]
            side = None if row is None else (row.baseline if run == "baseline" else row.candidate)
            where = " in " if side is not None and side.state is State.INCOMPLETE else " after "
            return (
                CauseKind.INCOMPLETE_RUN,
                (_text(f"{run} run stopped{where}"), _code(t)),
                f.message.split("incomplete: ", 1)[-1],
            )
        cut = [f for f in root if f.category is Category.INCOMPLETE_RUN and f.severity is Severity.ERROR]
        if cut:  # e.g. ADG011: the dumps stop early although the log ran on; what follows was never compared
            return (
                CauseKind.INCOMPLETE_RUN,
                (_text("run incomplete from "), _code(t)),
                _strip(cut[0].message, t),
            )
        if "ADL004" in by:
            failure = (row.candidate.failure if row else None) or _strip(by["ADL004"].message, t)
            same = any(h.kind == NO_UPSTREAM for f in root for h in hints(f))
            tail = "; the graph it received was the same in both runs" if same else ""
            return CauseKind.TRANSFORM_FAILED, (_code(t), _text(" failed")), f"{failure}{tail}"
        if "ADL003" in by:
            return self._stopped(t, by["ADL003"], root)
        meta = [f for f in root if f.category is Category.METADATA_LOSS and f.severity is Severity.ERROR]
        if meta:
            return CauseKind.METADATA_LOST, (_text("metadata lost at "), _code(t)), _strip(meta[0].message, t)
        losses = [f for f in root if f.code in ("ADL001", "ADL002")]
        if losses:  # it lost matches itself: what it no longer wrote is why later transforms lose theirs
            return self._lost(t, losses[0])
        meta_hints = [h for h in incoming if h.kind == "metadata_lost_upstream"]
        if meta_hints:
            return CauseKind.METADATA_LOST, (_text("metadata lost at "), _code(t)), meta_hints[0].message
        form = [h for h in incoming if h.kind == "op_form_changed_upstream"]
        if form:
            return self._form(t, form[0], root)
        config = [f for f in members if f.explained_by and f.transform != t]
        if config:
            own = next((f for f in root if f.code == "ADC001"), None)
            ev = own.message if own else (config[0].explained_by or "").removeprefix("likely cause: ")
            return CauseKind.CONFIG_CHANGED, (_text("config of "), _code(t), _text(" changed")), ev
        if "ADT007" in by:
            f = by["ADT007"]
            return CauseKind.NUMERIC_DRIFT, (_text("drift first at node "), _code(f.node or t)), f.message
        if self._improved(root, row):
            return self._improvement(t, root, row)
        top = sorted(root, key=_importance)[0]
        text = _strip(top.message, t)
        title = marked(text, [t, top.node, top.tensor])
        return CauseKind.OTHER, title if t in text else (_code(t), _text(": "), *title), ""

    @staticmethod
    def _stopped(t: str, f: Finding, root: list[Finding]) -> Described:
        ev = dict(f.evidence)
        state = str(ev.get("state") or "stopped")
        matched = f"matched {ev['before']} in the baseline" if ev.get("before") is not None else ""
        if state != "disabled":
            return CauseKind.TRANSFORM_STOPPED, (_code(t), _text(f" {state} in the candidate")), matched
        cfg = ev.get("config_explanation")
        if f.explained_by and cfg == "explained":
            return CauseKind.TRANSFORM_DISABLED, (_code(t), _text(" disabled by config")), f.explained_by
        unexplained = next((g for g in root if g.code == "ADC008"), None)
        if unexplained is not None:
            return (
                CauseKind.TRANSFORM_DISABLED,
                (_code(t), _text(" disabled with no config change behind it")),
                f"{matched}; {_strip(unexplained.message, t)}",
            )
        if cfg == "unexplained":
            return (
                CauseKind.TRANSFORM_DISABLED,
                (_code(t), _text(" disabled with no config change behind it")),
                matched,
            )
        return CauseKind.TRANSFORM_DISABLED, (_code(t), _text(" disabled in the candidate")), matched

    def _form(self, t: str, h: HintRef, root: list[Finding]) -> Described:
        first = self.rows.get(t)
        if first is None or first.stage not in ("factory", "export"):
            return CauseKind.OP_FORM_CHANGED, (_text("op form changed by "), _code(t)), _op_form(h)
        region = next((f for f in root if f.code == "ADG005"), None)
        regions = dict(region.evidence).get("regions") if region else None
        node = None
        if isinstance(regions, list) and regions and isinstance(regions[0], dict):
            node = next(iter(regions[0].get("baseline") or regions[0].get("candidate") or []), None)
        at: Title = (_text(" at node "), _code(str(node))) if node else ()
        return (
            CauseKind.GRAPH_DIFFERS,
            (_text("the exported graph ("), _code(t), _text(") differs"), *at),
            _op_form(h),
        )

    def _lost(self, t: str, f: Finding) -> Described:
        ev = dict(f.evidence)
        if ev.get("config_explanation") == "explained" and f.explained_by:
            return (
                CauseKind.CONFIG_CHANGED,
                (_text("config of "), _code(t), _text(" changed")),
                f.explained_by,
            )
        before, after = ev.get("before"), ev.get("after")
        where = evidence_rank_scope(ev)  # a loss on some ranks only says which, as its finding does
        if after == 0:
            title: Title = (_code(t), _text(f" stopped matching{where} ({before} \u2192 0)"))
        else:
            title = (_code(t), _text(f" lost {ev.get('lost')} of {before} matches{where} ({before} \u2192 "
                                     f"{after})"))
        div = self.divergence
        if any(h.kind == NO_UPSTREAM for h in hints(f)):
            why = "the graph it received was the same in both runs: the change is in the transform itself"
        elif div is not None and self.pos.get(div.transform or "", len(self.pos)) < self.pos.get(t, -1):
            why = f"upstream, the {div.message}; no hint ties that difference to this loss"
        elif self.graph_compared:
            why = "no upstream difference in the graph dumps explains it"
        else:
            why = self.untraced
        return CauseKind.MATCH_LOST, title, why

    @staticmethod
    def _improved(root: list[Finding], row: TransformComparison | None) -> bool:
        if any(f.severity is not Severity.INFO for f in root):
            return False
        gained = row is not None and row.delta is not None and row.delta > 0
        added = row is not None and row.baseline.state is not State.APPLIED and bool(row.candidate.matches)
        return any(f.category is Category.IMPROVEMENT for f in root) or gained or added

    @staticmethod
    def _improvement(t: str, root: list[Finding], row: TransformComparison | None) -> Described:
        if row is not None and row.baseline.state is State.APPLIED:
            title: Title = (_code(t), _text(f" matches more ({_count_text(row)})"))
        elif row is not None and row.baseline.state is State.ABSENT:
            title = (_code(t), _text(f" is new and matches {row.candidate.matches}"))
        else:
            title = (_code(t), _text(f" now runs and matches ({_count_text(row)})"))
        said = [f for f in root if f.category is Category.IMPROVEMENT] + [
            f for f in root if f.code == "ADC001"
        ]
        ev = "; ".join(_strip(f.message, t) for f in said) or _strip(
            sorted(root, key=_importance)[0].message, t
        )
        return CauseKind.IMPROVEMENT, title, ev


def build(
    findings: Sequence[Finding],
    rows: tuple[TransformComparison, ...],
    fail_on: str,
    graph_compared: bool = False,
    from_snapshot: bool = False,
) -> tuple[list[Finding], tuple[CauseGroup, ...]]:
    """Group ``findings`` (see the module doc). Returns the findings, each carrying its group's id, in report
    order (group by group, root findings first), and the groups. ``from_snapshot``: the baseline is a
    snapshot, so the graphs were not compared node by node although the candidate's dumps were read."""
    pos = positions(rows)
    by_row = {r.transform: r for r in reversed(rows)}  # first occurrence wins
    findings = _fold_regions(findings, by_row)
    at: dict[str, list[Finding]] = {}
    alone: list[Finding] = []
    drift: list[Finding] = []
    inputs_differ = [f for f in findings if f.code == "ADT009"]
    for f in findings:
        if f.code == "ADT009":
            continue
        if f.category in STANDALONE or f.transform is None or f.transform not in pos:
            named = f.category is Category.NUMERIC_DRIFT or "drift_cause" in dict(f.evidence)
            (drift if named else alone).append(f)
        else:
            at.setdefault(f.transform, []).append(f)
    stops = stop_links(findings, rows, pos)
    parents = {t: parent(t, fs, pos, stops) for t, fs in at.items()}
    members: dict[str, list[str]] = {}
    for t in sorted(at, key=lambda t: pos[t]):
        members.setdefault(root_of(t, parents), []).append(t)
    node_drift = next((f for fs in at.values() for f in fs if f.code == "ADT007"), None)
    drift_root = root_of(node_drift.transform or "", parents) if node_drift is not None else None
    caused_at = cause_transform(drift)
    if drift_root is None and caused_at in at:  # the drift's first cause is at a transform: grouped there
        drift_root = root_of(caused_at or "", parents)
    first = next((f for f in findings if f.code == "ADG004" and f.transform in pos), None)
    builder = _Builder(by_row, pos, graph_compared, first, SNAPSHOT_BASELINE if from_snapshot else LOG_ONLY)
    raw: list[_Raw] = []
    for r, ts in members.items():
        root = sorted(at.get(r, []), key=_importance)
        cons = sorted(
            (f for t in ts if t != r for f in at[t]), key=lambda f: (pos[f.transform or ""], _importance(f))
        )
        if r == drift_root:
            cons += sorted(drift, key=_importance)
        incoming = [h for f in cons for h in hints(f) if h.cause_transform == r]
        kind, title, ev = builder.describe(r, root, incoming, root + cons)
        if r == drift_root and kind in _DRIFT_TITLED:
            kind, title, ev = _drift_described(drift, (kind, title, ev))
        raw.append((kind, title, ev, r, pos[r], root, cons))
    if drift and drift_root is None:
        raw.append(_drift_group(drift, inputs_differ, len(rows)))
        inputs_differ = []
    for f in [*inputs_differ, *alone]:
        where = f.transform if f.transform in pos else None
        kind = CauseKind.INPUT if f.category is Category.INPUT else CauseKind.OTHER
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


def _group(kind: CauseKind, title: Title, ev: str, t: str | None, stage: str | None, p: int | None,
           rf: Sequence[Finding], cf: Sequence[Finding]) -> CauseGroup:
    """A :class:`CauseGroup` whose title is a headline (:mod:`ad_diff.core.headline`): a longer title is cut;
    its whole text is the message of the finding it comes from, in the body."""
    head, _ = cap_parts(title)
    # evidence may be raw log text (a failure line of 100,000 characters): bounded like a finding message
    return CauseGroup(0, kind, head, excerpt(redact_text(ev), MESSAGE_LIMIT), t, stage, p, tuple(rf),
                      tuple(cf))
_DRIFT_TITLED = (CauseKind.IMPROVEMENT, CauseKind.OTHER, CauseKind.CONFIG_CHANGED, CauseKind.NUMERIC_DRIFT)
"""Kinds a group headed by the drift's first cause takes the drift's title over from: a count that rose with
the drift is its cause, not an improvement (a failure, a loss or lost metadata keeps its own title)."""


def _drift_described(drift: Sequence[Finding], otherwise: Described) -> Described:
    """The drift's kind, title (what drifted and its likely cause) and evidence (the ranked causes)."""
    title = drift_title(drift)
    if title is None:
        return otherwise
    head = next(f for f in drift if f.code in DRIFT_CODES and dict(f.evidence).get("causes"))
    causes = first_causes(drift)
    listed = "; ".join(f"{i}. {c.text}" for i, c in enumerate(causes[:3], 1))
    more = f" (+{len(causes) - 3} more)" if len(causes) > 3 else ""
    names = [head.tensor, *(n for c in causes[:2] for n in c.names)]
    return CauseKind.NUMERIC_DRIFT, marked(title, names), f"likely causes: {listed}{more}"


def _drift_group(drift: list[Finding], inputs_differ: list[Finding], n_rows: int) -> _Raw:
    """The tensor findings no transform explains: under "different inputs" when recorded, else one group."""
    drift = sorted(drift, key=_importance)
    if inputs_differ:
        f = inputs_differ[0]
        return (
            CauseKind.INPUT,
            (_text("the runs recorded different inputs"),),
            f.message,
            None,
            n_rows,
            inputs_differ,
            drift,
        )
    titled = drift_title(drift)
    if titled is not None:
        kind, title, ev = _drift_described(drift, (CauseKind.NUMERIC_DRIFT, (), ""))
        head = [f for f in drift if f.code in DRIFT_CODES][:1]
        return kind, title, ev, None, n_rows, head, [f for f in drift if f not in head]
    node = next((f for f in drift if f.code == "ADT007"), None)
    if node is not None:
        return (
            CauseKind.NUMERIC_DRIFT,
            (_text("drift first at node "), _code(node.node or "?")),
            node.message,
            None,
            n_rows,
            [node],
            [f for f in drift if f is not node],
        )
    errors = [f for f in drift if f.severity is Severity.ERROR]
    if len(errors) > 1:
        names = [f.tensor for f in errors if f.tensor]
        ev = "first: " + ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        return (
            CauseKind.NUMERIC_DRIFT,
            (_text(f"{len(errors)} recorded tensors drift or differ"),),
            ev,
            None,
            n_rows,
            drift,
            [],
        )
    top = drift[0]
    return (
        CauseKind.NUMERIC_DRIFT,
        marked(top.message, [top.tensor, top.node]),
        "",
        None,
        n_rows,
        [top],
        drift[1:],
    )


__all__ = ["build", "marked", "regroup"]


def regroup(result: DiffResult, fail_on: str) -> DiffResult:
    """``result`` with its findings grouped anew: for a result built or edited by hand (tests, tools), whose
    groups no longer cover its findings; the pipeline's results are grouped already."""
    findings, groups = build(
        result.findings, result.transforms, fail_on, graph_compared="graph" in result.sections,
        from_snapshot=getattr(result.skipped.get("graph"), "reason", None) == "snapshot",
    )
    return dataclasses.replace(result, findings=tuple(findings), groups=groups)
