"""Drift gets a cause: the ranked likely causes of the recorded tensors' drift, with their evidence.

Invariant: every drifting tensor finding (``ADT001``, ``ADT002``) carries ``evidence["causes"]``, the list of
:class:`DriftCause` that have evidence, best first (empty when none has), and ``evidence["unchecked"]``, the
evidence the search could not compare (``graph dumps``, ``config``): said once, never dressed up as a cause.
The ranking, one rule per tier (first tier that has one wins):

0. a routing regression of a MoE layer (``ADT015``: experts changed at clear margins, or router logits drift);
1. the first drifting captured node and the transform that produced it (``ADT007``, per-node captures);
2. structural differences upstream of the outputs, in pipeline order: a transform whose match count rose or
   fell (with the ops its new rewritten regions changed: ``gelu`` absent from ``torch_swiglu``), a region
   whose op targets were swapped one for one at a transform with the same count (a kernel or backend
   change), aligned nodes whose dtype or shape changed (``ADG003``);
3. config changes that change numerics (:data:`NUMERIC_KEYS`: ``quant_config``, dtypes, backends, a
   transform toggled);
4. a drift confined to a few rows of a MoE model whose routers were not captured: a possible routing flip
   (``ADT016``);
5. "no structural or config cause found", said as such, only when graphs, log and config were all compared
   and agree: it points at a kernel. When some of them were not compared, no cause is listed.

Tiers 2 and 3 are both listed when both hold (the config change usually explains the structural one). The
findings a cause names (the count change, the config setting) get ``evidence["drift_cause"]``, so the
grouping puts them under the drift they explain: a count that rises with drift is not an improvement.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from ad_diff.core.jsonable import json_pairs, to_jsonable
from ad_diff.core.model import Category, Finding, Side, State, TransformComparison
from ad_diff.core.words import WordEnum
from ad_diff.kinds.tensors import rules as R

if TYPE_CHECKING:
    from ad_diff.core.kindfacts import ConfigFacts, GraphFacts

DRIFT_CODES = (R.DRIFT.code, R.NONFINITE.code)
"""Findings of a drifting tensor: each carries the causes."""
NUMERIC_KEYS = (
    "quant_config", "quant_config.*", "*quant*", "*dtype*", "*precision*", "*backend*", "*kernel*",
    "transforms.*.enabled", "transforms.*.backend", "transforms.*.dtype",
)  # fmt: skip
"""Dotted config keys (globs) whose change can change numerics."""
GENERIC_OPS = frozenset({
    "linear", "mm", "matmul", "bmm", "addmm", "mul", "add", "sub", "div", "view", "reshape", "transpose",
    "permute", "contiguous", "getitem", "cat", "split", "split_with_sizes", "expand", "unsqueeze", "squeeze",
    "t", "to", "_to_copy", "clone", "narrow", "slice",
})  # fmt: skip
"""Ops a fusion absorbs without changing the maths: not named as "absent from the fused op"."""
MAX_OPS = 4


class CauseTier(WordEnum):
    """What kind of evidence a drift cause rests on (the JSON ``causes[].kind``)."""

    FIRST_NODE = "first_drifting_node"
    COUNT_CHANGED = "count_changed"
    OP_SWAPPED = "op_swapped"
    DTYPE_CHANGED = "dtype_changed"
    CONFIG = "config_changed"
    ROUTING = "routing_regression"
    ROUTING_POSSIBLE = "routing_flip_possible"
    NONE = "none_found"


@dataclass(frozen=True)
class DriftCause:
    """One likely cause of the drift: a short summary for titles and the evidence behind it."""

    kind: CauseTier
    summary: str
    """A few words: ``match_swiglu_pattern: 0 → 2 matches``."""
    transform: str | None = None
    """The transform the cause is at (``None`` for run-level settings and for none found)."""
    detail: str = ""
    """What changed there, backticks marking op names: ```gelu` absent from `torch_swiglu```."""
    evidence: tuple[tuple[str, Any], ...] = field(default=(), metadata=json_pairs())

    @property
    def structural(self) -> bool:
        """A difference in the graphs or the log (tier 1 or 2)."""
        return self.kind not in (CauseTier.CONFIG, CauseTier.NONE, CauseTier.ROUTING_POSSIBLE)

    @property
    def text(self) -> str:
        """Summary and detail in one line."""
        return f"{self.summary}, {self.detail}" if self.detail else self.summary

    @property
    def names(self) -> tuple[str, ...]:
        """The transform and op names the cause mentions (titles show them as code)."""
        ev = dict(self.evidence)
        ops = [*(ev.get("ops_removed") or ()), *(ev.get("ops_added") or ())]
        return tuple(n for n in (self.transform, ev.get("key"), *ops) if isinstance(n, str) and n)


def cause_of(value: Any) -> DriftCause:
    """A :class:`DriftCause` from itself or its JSON form (finding evidence holds the JSON form)."""
    if isinstance(value, DriftCause):
        return value
    ev = value.get("evidence") or {}
    return DriftCause(
        CauseTier(value["kind"]),
        str(value["summary"]),
        value.get("transform"),
        str(value.get("detail") or ""),
        _ev(ev if isinstance(ev, Mapping) else dict(ev)),
    )


NONE_FOUND = DriftCause(CauseTier.NONE, "no structural or config cause found", detail="look at the kernels")
"""Graphs, log and config were compared and agree: what is left is how the ops compute."""


def ops_text(removed: Sequence[str], added: Sequence[str]) -> str:
    """How a region's ops changed: ```gelu` absent from `torch_swiglu``` or ```linear` -> `fp8_linear```."""
    gone = [o for o in removed if o not in added]
    absent = [o for o in gone if o not in GENERIC_OPS and not any(o in a for a in added)]
    new = ", ".join(f"`{o}`" for o in added[:MAX_OPS]) or "nothing"
    if absent:
        return ", ".join(f"`{o}`" for o in absent[:MAX_OPS]) + f" absent from {new}"
    old = ", ".join(f"`{o}`" for o in gone[:MAX_OPS]) or "nothing"
    return f"{old} \u2192 {new}"


def _side(s: Side) -> str:
    return str(s.matches) if s.state is State.APPLIED and s.matches is not None else s.state.value


def structural_causes(
    rows: Sequence[TransformComparison], graph: GraphFacts | None, findings: Iterable[Finding]
) -> list[DriftCause]:
    """Tier 2, in pipeline order (see the module doc); ``graph``: what the graph kind measured, if it ran."""
    regions = {t: (list(rm), list(ad), swap) for t, rm, ad, swap in graph.region_ops} if graph else {}
    shape = {f.transform: f for f in findings if f.category is Category.SHAPE_CHANGE and f.transform}
    out: list[DriftCause] = []
    seen: set[str] = set()
    for r in rows:
        t = r.transform
        if t in seen:
            continue
        seen.add(t)
        removed, added, swap = regions.get(t, ([], [], False))
        count = f"{_side(r.baseline)} \u2192 {_side(r.candidate)}"
        ev: dict[str, Any] = {"baseline": _side(r.baseline), "candidate": _side(r.candidate)}
        if removed or added:
            ev |= {"ops_removed": removed, "ops_added": added}
        ops = ops_text(removed, added) if removed or added else ""
        if r.changed:
            out.append(DriftCause(CauseTier.COUNT_CHANGED, f"{t}: {count} matches", t, ops, _ev(ev)))
        elif swap:
            out.append(DriftCause(CauseTier.OP_SWAPPED, f"{t}: op swapped", t, ops, _ev(ev)))
        if t in shape:
            f = shape[t]
            text = f.message.removeprefix(f"{t}: ")
            out.append(
                DriftCause(
                    CauseTier.DTYPE_CHANGED, f"{t}: dtype or shape changed", t, text, (("finding", f.code),)
                )
            )
    return out


def _ev(d: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(d.items()))


def config_causes(config: ConfigFacts | None) -> list[DriftCause]:
    """Tier 3: changed config keys matching :data:`NUMERIC_KEYS` (``config``: the keys that differ)."""
    out: list[DriftCause] = []
    for c in config.changes if config is not None else ():
        key = c.key
        if not any(fnmatchcase(key, p) for p in NUMERIC_KEYS):
            continue
        if c.change == "added":
            what = f"{key} added"
        elif c.change == "removed":
            what = f"{key} removed"
        else:
            what = f"{key}: {c.before} \u2192 {c.after}"
        out.append(DriftCause(CauseTier.CONFIG, what, c.transform,
                              evidence=(("key", key), ("origin", c.origin))))
    return out


def none_found(unchecked: Sequence[str] = ()) -> DriftCause:
    """Tier 4, saying which evidence was missing (``unchecked``: "graph dumps", "config") when some was."""
    if not unchecked:
        return NONE_FOUND
    return dataclasses.replace(NONE_FOUND, detail="not compared: " + ", ".join(unchecked))


def routing_causes(findings: Iterable[Finding]) -> tuple[list[DriftCause], list[DriftCause]]:
    """Tier 0 (a routing regression, ``ADT015``) and tier 4 (a possible routing flip, ``ADT016``)."""
    regression: list[DriftCause] = []
    possible: list[DriftCause] = []
    for f in findings:
        ev = dict(f.evidence)
        if f.code == R.ROUTING_REGRESSION.code:
            what = ("router logits drift" if ev.get("router_passed") is False
                    else f"{ev.get('clear')} of {ev.get('tokens')} tokens changed experts at clear margins")
            regression.append(DriftCause(
                CauseTier.ROUTING, f"routing regression at MoE layer {ev.get('layer')} ({f.node})",
                detail=what, evidence=(("finding", f.code), ("node", f.node))))  # fmt: skip
        elif f.code == R.ROUTING_POSSIBLE.code and not possible:
            possible.append(DriftCause(  # fmt: skip
                CauseTier.ROUTING_POSSIBLE, "possible routing flip (drift in a few rows of a MoE model)",
                detail="capture the routers to tell", evidence=(("finding", f.code),)))
    return regression, possible


def rank(
    node: Finding | None,
    structural: list[DriftCause],
    config: list[DriftCause],
    unchecked: Sequence[str] = (),
    routing: tuple[list[DriftCause], list[DriftCause]] = ([], []),
) -> tuple[DriftCause, ...]:
    """The causes that have evidence, best first (see the module doc); the none-found conclusion only when
    nothing was ``unchecked`` (graphs, log and config all compared and agreeing); else possibly empty."""
    out: list[DriftCause] = list(routing[0])
    if node is not None and node.node:
        via = f" (from {node.transform})" if node.transform else ""
        ev = (("finding", node.code), ("node", node.node))
        out.append(
            DriftCause(
                CauseTier.FIRST_NODE, f"first drifting node {node.node}{via}", node.transform, evidence=ev
            )
        )
    out += structural + config + routing[1]
    if out:
        return tuple(out)
    return () if unchecked else (NONE_FOUND,)


def headline_causes(causes: Sequence[DriftCause]) -> list[DriftCause]:
    """The causes :func:`headline` names (the first, and the config change it names beside it)."""
    if not causes:
        return []
    first = causes[0]
    config = next((c for c in causes if c.kind is CauseTier.CONFIG), None)
    if first.structural and config is not None and config.transform in (None, first.transform):
        return [first, config]
    return [first]


def headline(causes: Sequence[DriftCause], detail: bool = True) -> str:
    """The likely cause in a title: the first cause (with its detail unless ``detail`` is False), plus the
    first config change when the first is structural (the config change is usually why the structure
    changed). Plain text: backticks are dropped (titles mark names themselves)."""
    named = headline_causes(causes)
    if not named:
        return ""
    text = named[0].text if detail else named[0].summary
    if len(named) == 2:
        text += ", " + named[1].summary.removeprefix(f"transforms.{named[0].transform}.")
    return text.replace("`", "")


def mark_causes(
    findings: Sequence[Finding],
    causes: Sequence[DriftCause],
    tensors: Sequence[str],
    unchecked: Sequence[str] = (),
) -> list[Finding]:
    """``findings`` with ``evidence["causes"]`` on the drift findings and ``evidence["drift_cause"]`` (the
    drifting tensors) on the findings the headline's causes name: at its transform, or the config setting."""
    named = headline_causes(causes)
    at = {c.transform for c in named if c.transform}
    keys = {str(dict(c.evidence).get("key")) for c in named if c.kind is CauseTier.CONFIG}
    out = []
    for f in findings:
        ev = dict(f.evidence)
        if f.code in DRIFT_CODES:
            ev["causes"] = to_jsonable(list(causes))
            ev["unchecked"] = list(unchecked)
        elif f.code not in DRIFT_CODES and (
            f.transform in at or (f.transform is None and ev.get("setting") in keys)
        ):
            ev["drift_cause"] = list(tensors)
        else:
            out.append(f)
            continue
        out.append(dataclasses.replace(f, evidence=tuple(sorted(ev.items()))))
    return out


TITLE_LIMIT = 160


def stat_text(f: Finding) -> str:
    """The drift in a few words: ``NRMSE 0.0249``, ``9.45x the baseline's error vs the reference``."""
    if f.code == R.NONFINITE.code:
        return "new NaN/Inf"
    ev = dict(f.evidence)
    stat, value = ev.get("statistic"), ev.get("value")
    if not isinstance(value, (int, float)):
        return "beyond tolerance"
    ratio = ev.get("reference_ratio")
    if stat == "reference" and isinstance(ratio, (int, float)):
        return f"{ratio:.3g}x the baseline's error vs the reference"
    limit = ev.get("limit")
    over = f" > {limit:.3g}" if isinstance(limit, (int, float)) else ""
    if stat == "rmse":
        return f"NRMSE {value:.3g}{over}"
    outliers, rows = ev.get("rows_outliers"), ev.get("rows_judged")
    if isinstance(stat, str) and stat.startswith("rows:") and isinstance(outliers, int):
        return f"{outliers} of {rows} rows outliers, worst {value:.3g}x{over}x"
    return f"{stat} {value:.3g}{over}"


def drift_title(drift: Sequence[Finding]) -> str | None:
    """``logits drift (NRMSE 0.09 > 0.016) <- <likely cause>``, at most :data:`TITLE_LIMIT` characters, the
    cause only when one has evidence; ``None`` when no drift finding went through the cause search."""
    heads = [f for f in drift if f.code in DRIFT_CODES and "causes" in dict(f.evidence)]
    if not heads:
        return None
    first = heads[0]
    causes = [cause_of(c) for c in dict(first.evidence)["causes"]]
    more = f" and {len(heads) - 1} more" if len(heads) > 1 else ""
    what = f"{first.tensor or 'tensor'}{more} drift ({stat_text(first)})"
    if not causes:
        return what if len(what) <= TITLE_LIMIT else what[: TITLE_LIMIT - 1] + "\u2026"
    for detail in (True, False):  # the op detail goes first when the title would be too long
        text = f"{what} \u2190 {headline(causes, detail)}"
        if len(text) <= TITLE_LIMIT:
            return text
    return text[: TITLE_LIMIT - 1] + "\u2026"


def causes_text(drift: Sequence[Finding]) -> str:
    """The group's evidence line: ``likely causes: 1. ...; 2. ...``, or, with none, what was not compared
    (said here once: the title and the findings do not repeat it)."""
    causes = first_causes(drift)
    if causes:
        listed = "; ".join(f"{i}. {c.text}" for i, c in enumerate(causes[:3], 1))
        return f"likely causes: {listed}" + (f" (+{len(causes) - 3} more)" if len(causes) > 3 else "")
    head = next((f for f in drift if f.code in DRIFT_CODES and "causes" in dict(f.evidence)), None)
    unchecked = dict(head.evidence).get("unchecked") if head is not None else None
    if unchecked:
        return "no cause found; not compared: " + ", ".join(str(u) for u in unchecked)
    return "no cause found"


def first_causes(drift: Sequence[Finding]) -> list[DriftCause]:
    """The causes on the first drift finding that has them (empty when none has)."""
    for f in drift:
        causes = dict(f.evidence).get("causes") if f.code in DRIFT_CODES else None
        if causes:
            return [cause_of(c) for c in causes]
    return []


def cause_transform(drift: Sequence[Finding]) -> str | None:
    """The transform the first cause of the drift is at (where the grouping puts the drift)."""
    causes = first_causes(drift)
    return causes[0].transform if causes else None


__all__ = [
    "NONE_FOUND", "NUMERIC_KEYS", "TITLE_LIMIT", "CauseTier", "DriftCause", "cause_of", "cause_transform",
    "causes_text", "routing_causes",
    "config_causes", "drift_title", "first_causes", "headline", "headline_causes", "mark_causes",
    "none_found", "ops_text", "rank", "stat_text", "structural_causes",
]  # fmt: skip
