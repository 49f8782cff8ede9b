"""Classification of the per-transform log comparison (codes ``ADL0xx``).

Match counts are exact, deterministic metrics: any drop is real, so there is no tolerance here. The
only judgement is whether a loss is a *collapse* (to zero, or by at least ``collapse_fraction``).
"""

from __future__ import annotations

from ad_diff.core.model import Finding, Severity, State, TransformComparison
from ad_diff.core.rules import Rule
from ad_diff.kinds.log.model import LogEnd, RunLog

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO

COLLAPSE = Rule(
    "ADL001", "match-collapse", "match_loss", E,
    "{transform}: matches collapsed {before} -> {after}",
    "A transform that matched in the baseline matches nothing in the candidate, or lost at least the "
    "collapse fraction (default 50%) of its matches. Usually a pattern that no longer recognises the "
    "graph (an upstream rewrite changed the op form, or metadata it needs was dropped). Look at the graph "
    "section for the first divergence and root-cause hints.",
)
PARTIAL = Rule(
    "ADL002", "partial-match-loss", "match_loss", E,
    "{transform}: matches dropped {before} -> {after} ({pct}% lost)",
    "The candidate matched fewer times than the baseline, by less than the collapse fraction. Counts "
    "are exact, so any drop is real: typically one layer or one branch no longer fits the pattern.",
)
STOPPED = Rule(
    "ADL003", "transform-stopped", "match_loss", E,
    "{transform}: matched {before} in baseline but is {state} in candidate{detail}",
    "A transform that made matches in the baseline did not run to completion in the candidate (disabled, "
    "skipped, failed or missing from the log), so every one of its matches is lost. When it was disabled "
    "on purpose, record that in the expected-changes file.",
)
FAILED = Rule(
    "ADL004", "transform-failed", "state_change", E,
    "{transform}: failed in candidate: {failure}",
    "The candidate logged `Transform <t> failed: ...` (swallowed by skip_on_error) where the baseline did "
    "not fail. Even without lost matches this hides a bug.",
)
STATE = Rule(
    "ADL005", "state-change", "state_change", W,
    "{transform}: {bstate} -> {cstate}",
    "The transform's state changed (e.g. applied with 0 matches -> disabled, skipped -> applied) without "
    "losing matches. Worth a look in review; it does not gate.",
)
ADDED = Rule(
    "ADL006", "transform-added", "state_change", I,
    "{transform}: new in candidate ({cstate}, {after} matches)",
    "A transform ran in the candidate only and made matches. Informational.",
)
REMOVED = Rule(
    "ADL007", "transform-removed", "state_change", I,
    "{transform}: ran in baseline only ({bstate})",
    "A transform that made no matches in the baseline does not appear in the candidate's log.",
)
GAIN = Rule(
    "ADL008", "match-gain", "improvement", I,
    "{transform}: matches rose {before} -> {after}",
    "The candidate matched more often than the baseline, including a transform that was disabled or "
    "skipped in the baseline and now runs and matches (a fusion switched on). Usually the point of the "
    "change; listed so a reviewer can confirm it.",
)
INCOMPLETE = Rule(
    "ADL009", "run-incomplete", "incomplete_run", E,
    "{run} run is incomplete: {detail}",
    "A log ends in a crash (traceback), stops inside a transform or mid-line, or stops before transforms "
    "the other run reached. Transforms it never reached cannot be compared, so this always gates: an "
    "incomplete run must never read as 'no regressions'.",
)
RANKS = Rule(
    "ADL010", "rank-disagreement", "consistency", W,
    "{run} log: ranks disagree on {what}",
    "Multi-rank logs: another rank logged a different state or match count than the compared rank for "
    "the same transform. Sharding-dependent patterns can legitimately differ; otherwise it is a bug.",
)
UNRECOGNISED = Rule(
    "ADL011", "unrecognised-lines", "input", W,
    "{run} log: {count} AutoDeploy line(s) in no known format (first at line {line}: {text})",
    "Lines that carry an AutoDeploy transform prefix and look like results ([SUMMARY], enabled=...) but "
    "match none of the formats in docs/formats.md. Their transforms may be missing from the comparison; "
    "a new AD log format needs a parser update.",
)
RETRY = Rule(
    "ADL012", "pipeline-restarted", "consistency", W,
    "{run} log: the pipeline started {count} times (restart at line {line}); the last one is compared",
    "A transform key appeared twice in one log, which means the pipeline ran again in the same process or "
    "log (a retry). Only the last pipeline is compared.",
)
STAGE_MOVED = Rule(
    "ADL013", "stage-moved", "state_change", I,
    "{transform}: moved from stage {bstage} to {cstage}",
    "The same transform ran in a different stage in the candidate (a config moved it).",
)

RULES: tuple[Rule, ...] = (
    COLLAPSE, PARTIAL, STOPPED, FAILED, STATE, ADDED, REMOVED, GAIN, INCOMPLETE, RANKS, UNRECOGNISED,
    RETRY, STAGE_MOVED,
)


def _health(run: str, log: RunLog, not_reached: list[TransformComparison], last: str | None) -> list[Finding]:
    """Findings about one log as a whole: completeness, ranks, unrecognised lines, restarts."""
    out: list[Finding] = []
    parts = []
    if log.end in (LogEnd.CRASHED, LogEnd.TRUNCATED):
        parts.append(f"{log.end.value} ({log.end_detail})")
    if not_reached:
        first = not_reached[0]
        parts.append(
            f"its log stops after {last or 'no transform'}; {len(not_reached)} transform(s) the other run "
            f"ran were never reached (first: {first.stage}/{first.transform})"
        )
    if parts:
        stopped = next((r for r in reversed(log.transforms) if r.state is State.INCOMPLETE), None)
        where = stopped or (log.transforms[-1] if log.transforms else None)
        out.append(INCOMPLETE.make(
            run=run, detail="; ".join(parts),
            transform=where.transform if where else None, stage=where.stage if where else None, evidence={
            "log": str(log.path), "end": log.end.value, "not_reached": [r.transform for r in not_reached]}))
    for what in log.rank_disagreement:  # 'stage/transform (rank n)'
        transform = what.split("/", 1)[-1].split(" ", 1)[0]
        out.append(RANKS.make(run=run, what=what, transform=transform))
    unrec = [i for i in log.issues if i.kind == "unrecognised"]
    if unrec:
        out.append(UNRECOGNISED.make(run=run, count=len(unrec), line=unrec[0].line, text=unrec[0].text[:120],
                                     evidence={"lines": [i.line for i in unrec[:50]]}))
    retries = [i for i in log.issues if i.kind == "retry"]
    if retries:
        out.append(RETRY.make(run=run, count=log.pipelines, line=retries[-1].line))
    return out


def _tail_not_reached(rows: tuple[TransformComparison, ...], run: str) -> tuple[list[TransformComparison], str | None]:
    """Rows after this run's last logged transform that only the other run has: never reached."""
    def side(r: TransformComparison):  # noqa: ANN202
        return r.baseline if run == "baseline" else r.candidate
    last = max((i for i, r in enumerate(rows) if side(r).state is not State.ABSENT), default=-1)
    tail = [r for r in rows[last + 1 :] if side(r).state is State.ABSENT]
    return tail, (rows[last].transform if last >= 0 else None)


def _stopped_early(log: RunLog, tail: list[TransformComparison]) -> bool:
    """A tail means the run stopped early unless it is one transform the other run merely added/removed.

    A crash without a traceback (SIGKILL, OOM killer) leaves a clean-looking log that simply stops, so a
    tail of several transforms is read as a stop even when the log itself looks complete.
    """
    return bool(tail) and (log.end is not LogEnd.COMPLETE or len(tail) > 1)


def classify_log(
    rows: tuple[TransformComparison, ...],
    baseline: RunLog,
    candidate: RunLog,
    collapse_fraction: float = 0.5,
) -> list[Finding]:
    """Turn the per-transform rows and the two logs' health into findings (unsorted)."""
    b_tail, b_last = _tail_not_reached(rows, "baseline")
    c_tail, c_last = _tail_not_reached(rows, "candidate")
    b_tail = b_tail if _stopped_early(baseline, b_tail) else []
    c_tail = c_tail if _stopped_early(candidate, c_tail) else []
    findings = _health("baseline", baseline, b_tail, b_last) + _health("candidate", candidate, c_tail, c_last)
    skip = {id(r) for r in b_tail} | {id(r) for r in c_tail}
    for r in rows:
        if id(r) not in skip:
            findings.extend(_classify_row(r, collapse_fraction))
    return findings


def _classify_row(r: TransformComparison, frac: float) -> list[Finding]:
    b, c = r.baseline, r.candidate
    t, s = r.transform, r.stage
    out: list[Finding] = []
    if State.INCOMPLETE in (b.state, c.state):
        return out  # the run stopped inside this transform: reported once, as ADL009 on that run
    if b.stage and c.stage and b.stage != c.stage:
        out.append(STAGE_MOVED.make(transform=t, stage=s, bstage=b.stage, cstage=c.stage))
    if c.state is State.FAILED and b.state is not State.FAILED:
        out.append(FAILED.make(transform=t, stage=s, failure=c.failure or "(no message)"))
    bm = b.matches or 0
    if b.state is State.APPLIED and c.state is State.APPLIED:
        cm = c.matches or 0
        if cm < bm:
            lost = bm - cm
            ev = {"before": bm, "after": cm, "lost": lost, "collapse_fraction": frac}
            if cm == 0 or lost >= frac * bm:
                out.append(COLLAPSE.make(transform=t, stage=s, before=bm, after=cm, collapse=True, evidence=ev))
            else:
                out.append(PARTIAL.make(transform=t, stage=s, before=bm, after=cm,
                                        pct=round(100 * lost / bm), evidence=ev))
        elif cm > bm:
            out.append(GAIN.make(transform=t, stage=s, before=bm, after=cm))
        return out
    if b.state is State.APPLIED and bm > 0:
        detail = f" ({c.failure})" if c.failure else ""
        out.append(STOPPED.make(transform=t, stage=s, before=bm, state=c.state.value, detail=detail,
                                collapse=True, evidence={"before": bm, "after": 0, "state": c.state.value}))
        return out
    if b.state is State.ABSENT:
        if c.matches:
            out.append(ADDED.make(transform=t, stage=s, cstate=c.state.value, after=c.matches))
        return out
    if c.state is State.ABSENT:
        out.append(REMOVED.make(transform=t, stage=s, bstate=b.state.value))
        return out
    if c.state is State.APPLIED and c.matches and b.state in (State.DISABLED, State.SKIPPED):
        # switched on and matching: a gain, not a state change to review
        out.append(GAIN.make(transform=t, stage=s, before=f"0 ({b.state.value})", after=c.matches,
                             evidence={"before_state": b.state.value, "after": c.matches}))
        return out
    if b.state is not c.state and c.state is not State.FAILED:
        out.append(STATE.make(transform=t, stage=s, bstate=b.state.value, cstate=c.state.value))
    return out
