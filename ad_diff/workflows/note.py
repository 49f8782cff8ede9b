"""The iteration note a reviewer expects for a fusion change, filled from a baseline/candidate comparison.

``build_note`` runs the normal comparison (``ad_diff.pipeline.run``), scans both runs' final dumps for the
named candidate pattern, and collects: the implementation path, graph validation (instances before/after,
fused ops before/after, with the dump files), ``[SUMMARY]`` matches of the affected transforms, the tests run
and the open risks. Analyses the pipeline did not run are stated as "not analysed", never guessed.
JSON form: docs/note.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ad_diff.candidates import find_candidates, read_dump
from ad_diff.candidates.lookup import KNOWN
from ad_diff.candidates.model import Candidate, CandidateReport
from ad_diff.candidates.ops import namespace
from ad_diff.core.escape import fence_block, md_code, md_escape
from ad_diff.core.graphops import op_name
from ad_diff.core.jsonable import dumps
from ad_diff.core.model import Side, TransformComparison
from ad_diff.core.sinks import values
from ad_diff.errors import AdDiffError, UsageError
from ad_diff.result import DiffResult

SCHEMA_VERSION = 1
PATHS = ("existing_kernel", "triton_fallback")
_RISK_CATEGORIES = ("match_loss", "metadata_loss", "numeric_drift")


@dataclass(frozen=True, slots=True)
class OpCount:
    """How often one fused op appears in the final graph of each run."""

    target: str
    baseline: int
    candidate: int


@dataclass(frozen=True, slots=True)
class Validation:
    """Graph validation of the change: is the pattern gone from the candidate's final graph?"""

    status: str
    """``pass`` (every baseline instance gone), ``fail`` (instances remain: partial) or ``not_evaluated``."""
    reason: str
    baseline_dump: str | None
    candidate_dump: str | None
    pattern: tuple[str, ...] = ()
    baseline_instances: int = 0
    candidate_instances: int = 0
    remaining_nodes: tuple[str, ...] = ()
    """First nodes of the instances left in the candidate graph (evidence of a partial match)."""
    fused_ops: tuple[OpCount, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "status": self.status,
            "reason": self.reason,
            "baseline_dump": self.baseline_dump,
            "candidate_dump": self.candidate_dump,
            "pattern": list(self.pattern),
            "baseline_instances": self.baseline_instances,
            "candidate_instances": self.candidate_instances,
            "remaining_nodes": list(self.remaining_nodes),
            "fused_ops": [
                {"target": o.target, "baseline": o.baseline, "candidate": o.candidate} for o in self.fused_ops
            ],
        }


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """``[SUMMARY]`` result of one affected transform in both runs."""

    stage: str
    transform: str
    before: str
    after: str
    delta: int | None


@dataclass(frozen=True, slots=True)
class IterationNote:
    """Everything the note says, before rendering."""

    candidate: str
    family: str | None
    path: str
    """``existing_kernel``, ``triton_fallback`` or ``unknown``."""
    path_source: str
    """``option``, ``inferred`` (from ops new in the candidate graph) or ``unknown``."""
    validation: Validation
    summary: tuple[SummaryRow, ...]
    tests: str | None
    risks: tuple[str, ...]
    verdict: str
    """The comparison's gate verdict at ``--fail-on error`` (``pass``/``fail``)."""
    baseline: str
    candidate_run: str
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON form (``schema_version`` first)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "iteration_note",
            "candidate": self.candidate,
            "family": self.family,
            "baseline": self.baseline,
            "candidate_run": self.candidate_run,
            "path": self.path,
            "path_source": self.path_source,
            "validation": self.validation.to_json(),
            "summary": [
                {
                    "stage": r.stage,
                    "transform": r.transform,
                    "before": r.before,
                    "after": r.after,
                    "delta": r.delta,
                }
                for r in self.summary
            ],
            "tests": self.tests,
            "risks": list(self.risks),
            "verdict": self.verdict,
            "notes": list(self.notes),
        }


def _side(s: Side) -> str:
    if s.state.value == "applied":
        return f"matches={s.matches}" if s.matches is not None else "applied"
    return s.state.value


def _custom_ops(report: CandidateReport | None) -> Counter[str]:
    if report is None:
        return Counter()
    dump = read_dump(Path(report.dump), Path(report.run))  # checked again: the file may have changed since
    return Counter(
        n.target
        for s in dump.sections
        for n in s.nodes
        if n.op == "call" and namespace(n.target) not in ("", "aten", "prims")
    )


def _scan(
    run: Path, trtllm_src: Path | None, min_count: int, notes: list[str], side: str
) -> CandidateReport | None:
    try:
        return find_candidates(run, trtllm_src=trtllm_src, min_count=min_count)
    except AdDiffError as e:
        notes.append(f"{side} graph not scanned: {e}")
        return None


def _validate(
    name: str,
    family: str | None,
    base: CandidateReport | None,
    cand: CandidateReport | None,
    found: Candidate | None,
) -> Validation:
    bd = base.dump if base else None
    cd = cand.dump if cand else None
    if base is None or cand is None:
        return Validation(
            "not_evaluated", "graph dumps missing in one run: graph validation not possible", bd, cd
        )
    if found is None:
        return Validation(
            "not_evaluated",
            f"no repeated pattern called {name!r} in the baseline's final graph "
            "(see `ad-diff candidates BASELINE`)",
            bd,
            cd,
        )
    left = [c for c in cand.candidates if c.signature == found.signature]
    remaining = [i for c in left for i in c.instances]
    known_ops = set(KNOWN.get(found.family, ((), ()))[0])
    b_ops, c_ops = _custom_ops(base), _custom_ops(cand)
    # Only ops of this family count (a known name, or the family in the op name): another fusion landing in
    # the same change must not decide the path or clutter the validation table.
    fused = sorted(
        t for t in set(b_ops) | set(c_ops) if op_name(t) in known_ops or found.family in op_name(t)
    )
    ops = tuple(OpCount(t, b_ops[t], c_ops[t]) for t in fused)
    if remaining:
        if len(remaining) < found.count:
            reason = f"{len(remaining)} of {found.count} instance(s) still unfused in the candidate graph"
            reason += " (partial match)"
        else:
            reason = (
                f"none of the {found.count} instance(s) was fused: the pattern is unchanged in the candidate"
            )
            reason += " graph"
        status = "fail"
    else:
        reason = f"all {found.count} instance(s) of the pattern are gone from the candidate graph"
        status = "pass"
    return Validation(
        status,
        reason,
        bd,
        cd,
        found.pattern,
        found.count,
        len(remaining),
        tuple(i.nodes[0] for i in remaining[:10]),
        ops,
    )


def _path(option: str | None, v: Validation) -> tuple[str, str]:
    if option is not None:
        if option not in PATHS:
            raise UsageError(f"--path must be one of {', '.join(PATHS)}, not {option!r}")
        return option, "option"
    new = [o.target for o in v.fused_ops if o.candidate > o.baseline]
    if not new:
        return "unknown", "unknown"
    return ("triton_fallback" if any("triton" in t for t in new) else "existing_kernel"), "inferred"


def _summary(result: DiffResult, family: str | None) -> tuple[SummaryRow, ...]:
    affected = set(KNOWN.get(family or "", ((), ()))[1])
    rows: list[TransformComparison] = [r for r in result.transforms if r.transform in affected or r.changed]
    return tuple(
        SummaryRow(r.stage, r.transform, _side(r.baseline), _side(r.candidate), r.delta) for r in rows
    )


def _risks(result: DiffResult, v: Validation, found: Candidate | None) -> list[str]:
    risks = []
    for cat in _RISK_CATEGORIES:
        fs = [f for f in result.findings if f.category == cat]
        risks += [f"{cat.replace('_', ' ')}: [{f.code}] {f.message}" for f in fs[:5]]
        if len(fs) > 5:
            risks.append(
                f"{cat.replace('_', ' ')}: {len(fs) - 5} more finding(s) (see `ad-diff BASELINE CANDIDATE`)"
            )
    if "graph" not in result.sections:
        risks.append("metadata loss: not analysed (the comparison produced no graph analysis)")
    elif not any(f.category == "metadata_loss" for f in result.findings):
        risks.append("metadata loss: none found by the graph analysis")
    if "tensors" not in result.sections:
        risks.append("numeric drift: not analysed (no recorded tensors compared)")
    elif not any(f.category == "numeric_drift" for f in result.findings):
        risks.append("numeric drift: none beyond tolerance")
    if v.status == "fail":
        risks.append(f"unfused instances: {v.reason}; first remaining: {', '.join(v.remaining_nodes)}")
    if found is not None:
        risks += [r for r in found.risks if not r.startswith("other variant")]
    return risks


def check_candidate_name(name: str, base: CandidateReport | None, found: Candidate | None) -> None:
    """Refuse a name that is neither a candidate of the baseline's final graph nor a known family (exit 2,
    with the names that would do). A known family with no instance left is fine: the note says
    ``not_evaluated``."""
    if found is not None or name in KNOWN:
        return
    listed = [c.name for c in base.candidates] if base else []
    families = sorted(KNOWN)
    here = (
        f"candidates in the baseline's final graph: {', '.join(listed)}"
        if listed
        else "no repeated pattern in the baseline's final graph"
        if base
        else "the baseline's graph was not scanned"
    )
    raise UsageError(
        f"--candidate {name!r} is not a known candidate name; {here}; families: {', '.join(families)} "
        "(see `ad-diff candidates BASELINE`)"
    )


def build_note(
    baseline: Path,
    candidate_run: Path,
    name: str,
    tests: str | None = None,
    path: str | None = None,
    trtllm_src: Path | None = None,
) -> IterationNote:
    """Compare the runs and fill the iteration note for candidate ``name`` (a name or family from
    ``ad-diff candidates``)."""
    # lazy: the comparison loads when a note is built, not on import
    from ad_diff import gate, pipeline
    from ad_diff.settings import Settings

    notes: list[str] = []
    base = _scan(baseline, trtllm_src, 2, notes, "baseline")
    found = base.get(name) if base else None
    check_candidate_name(name, base, found)
    result = pipeline.run(Settings(baseline=baseline, candidate=candidate_run))
    cand = _scan(candidate_run, None, 1, notes, "candidate")
    family = found.family if found else (name if name in KNOWN else None)
    v = _validate(name, family, base, cand, found)
    p, p_src = _path(path, v)
    verdict = gate.decide(result.findings, gate.FailOn.ERROR).verdict
    return IterationNote(
        name,
        family,
        p,
        p_src,
        v,
        _summary(result, family),
        tests,
        tuple(_risks(result, v, found)),
        verdict,
        str(baseline),
        str(candidate_run),
        tuple(notes),
    )


def render_markdown(n: IterationNote) -> str:
    """The note as PR-ready markdown."""
    n = values(n)  # every value on one line, bounded (core/sinks.py)
    v = n.validation
    path = {"existing_kernel": "existing kernel", "triton_fallback": "Triton fallback"}.get(
        n.path, "not known"
    )
    src = {"option": " (stated)", "inferred": " (inferred from ops new in the candidate graph)"}.get(
        n.path_source, ""
    )
    out = [f"## Iteration note: {md_escape(n.candidate)}", ""]
    out.append(
        f"- **Candidate:** {md_code(n.candidate)}" + (f" (family {md_code(n.family)})" if n.family else "")
    )
    out.append(f"- **Path:** {path}{src}")
    out.append(f"- **Graph validation:** **{v.status.upper().replace('_', ' ')}**: {md_escape(v.reason)}")
    out.append(f"- **ad-diff verdict:** {n.verdict}")
    out += ["", "### Graph validation", ""]
    out.append(f"- Baseline dump: {md_code(v.baseline_dump) if v.baseline_dump else 'none'}")
    out.append(f"- Candidate dump: {md_code(v.candidate_dump) if v.candidate_dump else 'none'}")
    if v.pattern:
        out.append(f"- Pattern: {md_code(' -> '.join(v.pattern))}")
        out.append(f"- Instances: {v.baseline_instances} in baseline, {v.candidate_instances} in candidate")
    if v.fused_ops:
        out += ["", "| Op | Baseline | Candidate |", "|---|---:|---:|"]
        out += [f"| {md_code(o.target)} | {o.baseline} | {o.candidate} |" for o in v.fused_ops]
    out += ["", "### `[SUMMARY]` matches", ""]
    if n.summary:
        out += ["| Stage | Transform | Before | After | Delta |", "|---|---|---|---|---:|"]
        for r in n.summary:
            d = "" if r.delta is None else f"{r.delta:+d}"
            out.append(f"| {md_escape(r.stage)} | {md_code(r.transform)} | {r.before} | {r.after} | {d} |")
    else:
        out.append("No affected transform changed its result.")
    out += ["", "### Tests run", ""]
    if not n.tests:
        out.append("_Not stated (pass `--tests` or `--tests-file`)._")
    else:
        out.append(fence_block(n.tests, "text") if "\n" in n.tests else md_escape(n.tests))
    out += ["", "### Open risks", ""]
    out += [f"- {md_escape(r)}" for r in n.risks] or ["- none found"]
    if n.notes:
        out += ["", "### Notes", ""] + [f"- {md_escape(x)}" for x in n.notes]
    return "\n".join(out) + "\n"


def render_json(n: IterationNote) -> str:
    """JSON form (docs/note.md)."""
    n = values(n, lines=False)  # every value bounded (core/sinks.py)
    return dumps(n.to_json(), ensure_ascii=True) + "\n"
