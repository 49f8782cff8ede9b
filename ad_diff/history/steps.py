"""Steps, not noise: where a transform's state or count changed and the new value held.

A segment is a stretch of runs with one value. A segment of at least ``min_run`` runs is *settled*. Between
two settled segments of different values lies a **step**: it names the last run with the old value and
the first run after it; runs in between whose value is neither are listed as unsettled (``via``). A value
that leaves a settled value for fewer than ``min_run`` runs and comes back is a **flaky** deviation, not a
step. A change at the end of the history that has not held ``min_run`` runs yet is **pending**.

Each change is judged as the pair comparison would judge the two values (``classify_log`` on one row):
its category, its finding codes, and whether it gates at ``--fail-on``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ad_diff.core.model import Finding, Side, State, TransformComparison
from ad_diff.core.rules import Role
from ad_diff.explain.roles import has
from ad_diff.gate import decide
from ad_diff.history.logkind import LogEnd, RunLog, classify_log
from ad_diff.history.model import Cell, Change, Flaky, RunValue, Value
from ad_diff.history.segments import Segments, decode
from ad_diff.settings import FailOn

_LOG = RunLog(Path("history"), (), None, (), (), (), (), LogEnd.COMPLETE, "")
_GAINS = (Role.TRANSFORM_ADDED, Role.MATCH_GAINED)  # a transform new with matches, one that matches more


@dataclass(frozen=True, slots=True)
class Judgement:
    """What a pair comparison of two values says."""

    category: str
    codes: tuple[str, ...]
    message: str
    gating: bool
    direction: str
    """``down`` (matches lost), ``up`` (matches gained) or ``changed``."""
    findings: tuple[Finding, ...]


def category(findings: list[Finding]) -> str:
    """``collapse`` / ``partial_loss`` (match loss with / without the collapse flag), ``new_matches``, else
    ``state_change``."""
    losses = [f for f in findings if f.category == "match_loss"]
    if losses:
        return "collapse" if any(f.collapse for f in losses) else "partial_loss"
    if any(has(f, *_GAINS) for f in findings):
        return "new_matches"
    return "state_change"


@lru_cache(maxsize=4096)
def judge(
    stage: str, transform: str, before: Value, after: Value, collapse_fraction: float, fail_on: FailOn
) -> Judgement:
    """Classify the change ``before -> after`` of one transform with the log rules of ``compare``."""
    row = TransformComparison(
        stage, transform, 0, Side(before.state, before.matches), Side(after.state, after.matches)
    )
    found = sorted(classify_log((row,), _LOG, _LOG, collapse_fraction), key=Finding.sort_key)
    cat = category(found)
    direction = {"collapse": "down", "partial_loss": "down", "new_matches": "up"}.get(cat, "changed")
    message = found[0].message if found else f"{transform}: {before.text()} -> {after.text()}"
    return Judgement(
        cat,
        tuple(f.code for f in found),
        message,
        bool(decide(found, fail_on).gated),
        direction,
        tuple(found),
    )


@dataclass(frozen=True, slots=True)
class _Seg:
    value: int
    start: int
    length: int


@dataclass
class KeyContext:
    """How to name one key's runs (by position among its model's used runs) and judge its changes."""

    model: str
    stage: str
    transform: str
    occurrence: int
    run_names: list[str]
    """Every run of the history, in order."""
    model_runs: np.ndarray
    """Position in the model's used runs -> index in the history."""
    commits: dict[tuple[int, int], str | None]
    model_code: int

    def runs(self, pos: int) -> str:
        """The name of the model's ``pos``-th used run."""
        return self.run_names[int(self.model_runs[pos])]

    def run_index(self, pos: int) -> int:
        """The history index of the model's ``pos``-th used run."""
        return int(self.model_runs[pos])

    def commit(self, pos: int) -> str | None:
        """The commit of this model's leaf in its ``pos``-th used run, when known."""
        return self.commits.get((self.model_code, int(self.model_runs[pos])))


def _value(code: int) -> Value:
    state, matches = decode(code)
    return Value(State(state), matches)


def _deviations(ctx: KeyContext, segs: list[_Seg]) -> tuple[RunValue, ...]:
    return tuple(
        RunValue(ctx.runs(p), _value(s.value)) for s in segs for p in range(s.start, s.start + s.length)
    )


def _change(
    ctx: KeyContext, kind: str, old: _Seg, segs: list[_Seg], min_run: int, opts: tuple[float, str], since: int
) -> Change:
    """The change from settled ``old`` through ``segs`` (``segs[-1]`` holds the new value)."""
    new = segs[-1]
    first_after = segs[0].start
    before, after = _value(old.value), _value(new.value)
    j = judge(ctx.stage, ctx.transform, before, after, *opts)
    confirmed = new.start + min_run - 1 if kind == "step" else None
    window_pos = confirmed if confirmed is not None else first_after
    last_before = old.start + old.length - 1
    return Change(
        kind,
        ctx.model,
        ctx.stage,
        ctx.transform,
        ctx.occurrence,
        before,
        after,
        ctx.runs(last_before),
        ctx.runs(first_after),
        None if confirmed is None else ctx.runs(confirmed),
        new.length,
        _deviations(ctx, segs[:-1]),
        j.category,
        j.codes,
        j.message,
        j.gating,
        ctx.run_index(window_pos) >= since,
        ctx.commit(last_before),
        ctx.commit(first_after),
    )


def analyse_key(
    ctx: KeyContext, segs: list[_Seg], min_run: int, opts: tuple[float, str], since: int
) -> tuple[list[Change], list[Change], list[Flaky], str]:
    """Steps, pending changes, flaky groups and the cell mark of one key with two or more segments."""
    settled = [i for i, s in enumerate(segs) if s.length >= min_run]
    steps: list[Change] = []
    pending: list[Change] = []
    deviations: dict[int, list[_Seg]] = {}
    if not settled:  # never settled: flaky around the value it held longest
        totals: dict[int, int] = {}
        for s in segs:
            totals[s.value] = totals.get(s.value, 0) + s.length
        ref = max(totals, key=lambda v: totals[v])
        deviations[ref] = [s for s in segs if s.value != ref]
    else:
        ref = segs[settled[0]].value
        deviations.setdefault(ref, []).extend(s for s in segs[: settled[0]] if s.value != ref)
        for a, b in zip(settled, [*settled[1:], len(segs)], strict=False):
            old = segs[a]
            between = segs[a + 1 : b]
            final = segs[b] if b < len(segs) else (between[-1] if between else None)
            if final is None:
                continue
            if final.value == old.value:
                deviations.setdefault(old.value, []).extend(s for s in between if s.value != old.value)
                continue
            # the old value may come back briefly before it goes: those runs are blips, the step starts after
            tail = between if b < len(segs) else between[:-1]
            back = max((i for i, s in enumerate(tail) if s.value == old.value), default=-1)
            if back >= 0:
                deviations.setdefault(old.value, []).extend(s for s in tail[:back] if s.value != old.value)
                old = tail[back]
            rest = [*tail[back + 1 :], final]
            (steps if b < len(segs) else pending).append(
                _change(ctx, "step" if b < len(segs) else "pending", old, rest, min_run, opts, since)
            )
    flaky = [
        Flaky(ctx.model, ctx.stage, ctx.transform, ctx.occurrence, _value(v), _deviations(ctx, ds))
        for v, ds in deviations.items()
        if ds
    ]
    if steps:
        mark = judge(ctx.stage, ctx.transform, steps[-1].before, steps[-1].after, *opts).direction
    else:
        mark = "pending" if pending else "flaky" if flaky else ""
    return steps, pending, flaky, mark


def find_changes(
    seg: Segments,
    model_runs: list[np.ndarray],
    runs: list[str],
    models: list[str],
    stages: list[str],
    transforms: list[str],
    commits: dict[tuple[int, int], str | None],
    min_run: int,
    opts: tuple[float, str],
    since: int,
) -> tuple[list[Change], list[Change], list[Flaky], dict[str, dict[tuple[str, str, int], Cell]]]:
    """Every key's steps, pending changes and flaky deviations, and the current-counts cells per model.

    ``commits[(model code, run index)]`` is the commit of that leaf; ``opts`` is ``(collapse_fraction,
    fail_on)``; ``since`` the first run index whose steps gate.
    """
    steps: list[Change] = []
    pending: list[Change] = []
    flaky: list[Flaky] = []
    order = np.lexsort((seg.key_position, seg.key_model))  # per model, in pipeline order
    current: dict[str, dict[tuple[str, str, int], Cell]] = {name: {} for name in models}
    n_segs = np.diff(seg.key_first)
    for k in order.tolist():
        lo, hi = int(seg.key_first[k]), int(seg.key_first[k + 1])
        mi = int(seg.key_model[k])
        stage, transform, occ = (
            stages[seg.key_stage[k]],
            transforms[seg.key_transform[k]],
            int(seg.key_occurrence[k]),
        )
        mark = ""
        if n_segs[k] > 1:
            ctx = KeyContext(models[mi], stage, transform, occ, runs, model_runs[mi], commits, mi)
            segs = [
                _Seg(int(v), int(s), int(n))
                for v, s, n in zip(
                    seg.seg_value[lo:hi], seg.seg_start[lo:hi], seg.seg_length[lo:hi], strict=False
                )
            ]
            k_steps, k_pending, k_flaky, mark = analyse_key(ctx, segs, min_run, opts, since)
            steps += k_steps
            pending += k_pending
            flaky += k_flaky
        current[models[mi]][(stage, transform, occ)] = Cell(_value(int(seg.seg_value[hi - 1])), mark)
    index = {name: i for i, name in enumerate(runs)}
    steps.sort(key=lambda c: (index[c.first_after], c.model))
    pending.sort(key=lambda c: (index[c.first_after], c.model))
    return steps, pending, flaky, current
