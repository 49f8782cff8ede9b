"""What a root cause is: the kind, one-line title and evidence of a causal group (``ad_diff.explain.groups``).

:class:`Builder` reads a group's root findings and the hints pointing at it (a transform that failed, was
disabled or stopped, lost metadata or matches, wrote another op form; a config change; drift first seen at a
node; an improvement); :func:`drift_group` and :func:`drift_described` title the tensor findings no transform
explains, or the group the drift's first cause heads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ad_diff.core import lazy
from ad_diff.core.headline import evidence_rank_scope
from ad_diff.core.model import Category, Finding, Severity, Side, State, TransformComparison
from ad_diff.core.rules import Role
from ad_diff.explain.links import NO_UPSTREAM, HintRef, hints
from ad_diff.explain.model import CauseKind, TitlePart
from ad_diff.explain.roles import first, has, heads, role

_HINT_FORM = lazy.pattern(
    r"^(?P<t>.+?) rewrote `(?P<b>.*)` in the baseline; in the candidate that part of the "
    r"graph is `(?P<c>.*)` since (?P<cause>\S+)$"
)
Title = tuple[TitlePart, ...]
Described = tuple[CauseKind, Title, str]
Raw = tuple[CauseKind, Title, str, str | None, int | None, Sequence[Finding], Sequence[Finding]]


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


def importance(f: Finding) -> tuple[int, int, tuple[object, ...]]:
    """Sort key of a group's findings: worst severity first, then the rules that best name a cause
    (:attr:`~ad_diff.core.rules.Rule.heads`)."""
    order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    return (order[f.severity], heads(f), f.sort_key())


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


class Builder:
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
        """The first structural divergence of the graphs (:attr:`Role.FIRST_DIVERGENCE`), if any."""

    def describe(
        self, t: str, root: list[Finding], incoming: list[HintRef], members: list[Finding]
    ) -> Described:
        """Kind, title and evidence of the group rooted at transform ``t``."""
        row = self.rows.get(t)
        by = {role(f): f for f in sorted(root, key=importance, reverse=True)}  # most important wins a role
        if Role.RUN_STOPPED in by:
            f = by[Role.RUN_STOPPED]
            said = dict(f.evidence)
            run = str(said.get("run") or "")
            side = None if row is None else (row.baseline if run == "baseline" else row.candidate)
            where = " in " if side is not None and side.state is State.INCOMPLETE else " after "
            return (
                CauseKind.INCOMPLETE_RUN,
                (_text(f"{run} run stopped{where}"), _code(t)),
                str(said.get("detail") or f.message),
            )
        cut = [f for f in root if f.category is Category.INCOMPLETE_RUN and f.severity is Severity.ERROR]
        if cut:  # e.g. ADG011: the dumps stop early although the log ran on; what follows was never compared
            return (
                CauseKind.INCOMPLETE_RUN,
                (_text("run incomplete from "), _code(t)),
                _strip(cut[0].message, t),
            )
        if Role.TRANSFORM_FAILED in by:
            failure = (row.candidate.failure if row else None) or _strip(by[Role.TRANSFORM_FAILED].message, t)
            same = any(h.kind == NO_UPSTREAM for f in root for h in hints(f))
            tail = "; the graph it received was the same in both runs" if same else ""
            return CauseKind.TRANSFORM_FAILED, (_code(t), _text(" failed")), f"{failure}{tail}"
        if Role.TRANSFORM_STOPPED in by:
            return self._stopped(t, by[Role.TRANSFORM_STOPPED], root)
        meta = [f for f in root if f.category is Category.METADATA_LOSS and f.severity is Severity.ERROR]
        if meta:
            return CauseKind.METADATA_LOST, (_text("metadata lost at "), _code(t)), _strip(meta[0].message, t)
        losses = [f for f in root if has(f, Role.MATCH_LOST)]
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
            own = first(root, Role.OWN_CONFIG_CHANGED)
            ev = own.message if own else (config[0].explained_by or "").removeprefix("likely cause: ")
            return CauseKind.CONFIG_CHANGED, (_text("config of "), _code(t), _text(" changed")), ev
        if Role.FIRST_DRIFT_NODE in by:
            f = by[Role.FIRST_DRIFT_NODE]
            return CauseKind.NUMERIC_DRIFT, (_text("drift first at node "), _code(f.node or t)), f.message
        if self._improved(root, row):
            return self._improvement(t, root, row)
        top = sorted(root, key=importance)[0]
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
        unexplained = first(root, Role.STATE_CHANGE_UNEXPLAINED)
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
        row = self.rows.get(t)
        if row is None or row.stage not in ("factory", "export"):
            return CauseKind.OP_FORM_CHANGED, (_text("op form changed by "), _code(t)), _op_form(h)
        region = first(root, Role.REGION_REWRITTEN)
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
        confined = ev.get("confined_to_ranks")
        if isinstance(confined, list | tuple) and confined:
            ranks = ", ".join(map(str, confined))
            why = (f"the first difference on rank{'s' if len(confined) > 1 else ''} {ranks}; the graph dumps "
                   "are another rank's, so no graph traces it")
        elif any(h.kind == NO_UPSTREAM for h in hints(f)):
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
            f for f in root if has(f, Role.OWN_CONFIG_CHANGED)
        ]
        ev = "; ".join(_strip(f.message, t) for f in said) or _strip(
            sorted(root, key=importance)[0].message, t
        )
        return CauseKind.IMPROVEMENT, title, ev


DRIFT_TITLED = (CauseKind.IMPROVEMENT, CauseKind.OTHER, CauseKind.CONFIG_CHANGED, CauseKind.NUMERIC_DRIFT)
"""Kinds a group headed by the drift's first cause takes the drift's title over from: a count that rose with
the drift is its cause, not an improvement (a failure, a loss or lost metadata keeps its own title)."""


def drift_described(drift: Sequence[Finding], otherwise: Described) -> Described:
    """The drift's kind, title (what drifted and its likely cause) and evidence (the ranked causes)."""
    # lazy: the tensor kind's drift causes load only where something drifted (start-up, docs/benchmark.md)
    from ad_diff.kinds.tensors.causes import causes_text, drift_title, first_causes

    title = drift_title(drift)
    if title is None:
        return otherwise
    head = next(f for f in drift if has(f, Role.DRIFT) and "causes" in dict(f.evidence))
    causes = first_causes(drift)
    names = [head.tensor, *(n for c in causes[:2] for n in c.names)]
    return CauseKind.NUMERIC_DRIFT, marked(title, names), causes_text(drift)


def drift_group(drift: list[Finding], inputs_differ: list[Finding], n_rows: int) -> Raw:
    """The tensor findings no transform explains: under "different inputs" when recorded, else one group."""
    drift = sorted(drift, key=importance)
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
    # lazy: the tensor kind's drift causes load only where something drifted (start-up, docs/benchmark.md)
    from ad_diff.kinds.tensors.causes import drift_title

    titled = drift_title(drift)
    if titled is not None:
        kind, title, ev = drift_described(drift, (CauseKind.NUMERIC_DRIFT, (), ""))
        head = [f for f in drift if has(f, Role.DRIFT)][:1]
        return kind, title, ev, None, n_rows, head, [f for f in drift if f not in head]
    node = first(drift, Role.FIRST_DRIFT_NODE)
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


__all__ = ["DRIFT_TITLED", "LOG_ONLY", "SNAPSHOT_BASELINE", "Builder", "Described", "Raw", "drift_described",
           "drift_group", "importance", "marked"]
