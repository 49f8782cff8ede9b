"""Explain log findings by configuration: was this toggle on purpose?

For every finding about a transform, look for a config change behind it:

* the transform's own entry changed and the state change matches it (``enabled: true -> false`` and the
  candidate logs ``disabled``; a stage move or a removed key and the transform is absent) -> *explained by
  config*; such findings of the toggled transform itself stop gating unless ``config_explained_gates``;
* the transform's own options changed -> *explained by config*, still gating (a count change from an option
  is a real effect to review);
* a stage move in the log that the candidate config's ``stage`` predicts -> *explained by config*, like a
  toggle;
* an earlier transform's entry changed -> its change is shown as the *likely cause*, still gating (a
  downstream match loss is what the gate exists for);
* only top-level settings changed -> they are shown as a *possible cause*, still gating.

A state change that configuration normally causes (to or from ``disabled``, appearing/vanishing in a
complete log, a stage move) with no own config change behind it is *unexplained*: its findings are marked
so and an ``ADC008`` finding calls it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ad_diff.core.model import BASELINE, CANDIDATE, Category, Finding, State, TransformComparison
from ad_diff.kinds.config import rules as R
from ad_diff.kinds.config.model import ChangeKind, ConfigAnalysis, TransformConfigChange, show_value

#: Finding categories a config change can explain.
EXPLAINABLE = (Category.MATCH_LOSS, Category.STATE_CHANGE, Category.METADATA_LOSS, Category.NUMERIC_DRIFT,
               Category.STRUCTURE_CHANGE)
_MAX_CAUSES = 3


def explain_findings(
    findings: Sequence[Finding],
    rows: Sequence[TransformComparison],
    analysis: ConfigAnalysis,
    config_explained_gates: bool = False,
) -> tuple[Finding, ...]:
    """Return ``findings`` annotated with their config explanation, followed by one ``ADC008`` finding per
    unexplained toggle-like state change (see module doc)."""
    if analysis.diff is None:
        return tuple(findings)
    toggles = _classify_toggles(rows, analysis)
    pos = {k: i for i, k in enumerate(analysis.pipeline)}
    out: list[Finding] = []
    for f in findings:
        if f.transform is None or f.category not in EXPLAINABLE:
            out.append(f)
            continue
        verdict = toggles.get(f.transform)
        own = analysis.diff.for_transform(f.transform)
        if verdict is not None and verdict[0] == "explained" and own is not None:
            out.append(_annotate(f, own.describe(), "explained", own,
                                 gating=f.gating and config_explained_gates))
        elif verdict is not None and verdict[0] == "unexplained":
            out.append(_with_evidence(f, {"config_explanation": "unexplained"}))
        elif own is not None:
            out.append(_annotate(f, own.describe(), "explained", own, gating=f.gating))
        else:
            out.append(_upstream(f, analysis, pos))
    for transform, (kind, before, after, detail, stage) in toggles.items():
        if kind == "unexplained":
            out.append(R.UNEXPLAINED_STATE_CHANGE.make(
                transform=transform, stage=stage, before=before, after=after, detail=detail,
                evidence={"config_explanation": "unexplained"},
            ))
    return tuple(out)


def with_explanations(analysis: ConfigAnalysis, findings: Sequence[Finding]) -> ConfigAnalysis:
    """Copy of ``analysis`` carrying the config-related part of ``findings`` (the config rules' own findings,
    those explained by config, the ``ADC008`` ones), so the section can list them without the rest."""
    unexplained_code = R.UNEXPLAINED_STATE_CHANGE.code
    own_codes = {r.code for r in R.RULES} - {unexplained_code}
    kept = sorted((f for f in findings if f.explained_by or f.code == unexplained_code), key=Finding.sort_key)
    return replace(analysis, findings=tuple(f for f in findings if f.code in own_codes),
                   explained=tuple(f for f in kept if f.code != unexplained_code),
                   unexplained=tuple(f for f in kept if f.code == unexplained_code))


def _upstream(f: Finding, analysis: ConfigAnalysis, pos: dict[str, int]) -> Finding:
    assert analysis.diff is not None
    here = pos.get(f.transform or "", len(pos))
    causes = [t for t in analysis.diff.transforms if pos.get(t.transform, len(pos)) < here]
    causes.sort(key=lambda t: -pos[t.transform])
    if causes:
        text = "likely cause: " + causes[0].describe()
        if len(causes) > 1:
            text += "; other earlier config changes: " + ", ".join(t.transform for t in causes[1:_MAX_CAUSES])
            if len(causes) > _MAX_CAUSES:
                text += f" and {len(causes) - _MAX_CAUSES} more"
        return _annotate(f, text, "likely_cause", causes[0], gating=f.gating)
    if analysis.diff.settings:
        parts = [s.describe() for s in analysis.diff.settings[:_MAX_CAUSES]]
        text = "possible cause: settings changed (" + "; ".join(parts) + ")"
        return replace(_with_evidence(f, {"config_explanation": "possible_cause",
                                          "config_changes": tuple(s.key for s in analysis.diff.settings)}),
                       explained_by=text)
    return _with_evidence(f, {"config_explanation": "none"})


def _annotate(f: Finding, text: str, kind: str, t: TransformConfigChange, gating: bool) -> Finding:
    g = _with_evidence(f, {"config_explanation": kind, "config_changes": tuple(c.key for c in t.changes),
                           "config_source": ", ".join(t.sources())})
    return replace(g, explained_by=text, gating=gating)


def _with_evidence(f: Finding, extra: dict[str, Any]) -> Finding:
    merged = dict(f.evidence)
    merged.update(extra)
    return replace(f, evidence=tuple(sorted(merged.items())))


def _classify_toggles(
    rows: Iterable[TransformComparison], analysis: ConfigAnalysis
) -> dict[str, tuple[str, str, str, str, str]]:
    """Per transform with a toggle-like state change: (``explained``|``unexplained``, before, after,
    detail, stage). Toggle-like = to/from ``disabled``, or to/from ``absent`` where that run's log is
    complete; ``incomplete`` and ``failed`` are not configuration matters."""
    assert analysis.diff is not None
    out: dict[str, tuple[str, str, str, str, str]] = {}
    for row in rows:
        b, c = row.baseline.state, row.candidate.state
        own = analysis.diff.for_transform(row.transform)
        bs, cs = row.baseline.stage, row.candidate.stage
        if bs and cs and bs != cs:
            moved = own.change(ChangeKind.STAGE) if own is not None else None
            if moved is not None and moved.after == cs:
                out[row.transform] = ("explained", f"stage {bs}", f"stage {cs}", "", row.stage)
            else:
                out[row.transform] = ("unexplained", f"stage {bs}", f"stage {cs}",
                                      f"transforms.{row.transform}.stage is not {cs} in the candidate config",
                                      row.stage)
            continue
        if b == c or State.INCOMPLETE in (b, c):
            continue
        if State.DISABLED not in (b, c) and State.ABSENT not in (b, c):
            continue
        if (b == State.ABSENT and BASELINE not in analysis.complete_logs) or (
            c == State.ABSENT and CANDIDATE not in analysis.complete_logs
        ):
            continue
        explained = own is not None and _consistent(row, own, analysis)
        if explained:
            out[row.transform] = ("explained", b.value, c.value, "", row.stage)
        elif out.get(row.transform, ("",))[0] != "explained":
            out[row.transform] = ("unexplained", b.value, c.value, _detail(row, analysis), row.stage)
    return out


def _consistent(row: TransformComparison, own: TransformConfigChange, analysis: ConfigAnalysis) -> bool:
    """Does the config change predict this state change?"""
    assert analysis.baseline is not None
    assert analysis.candidate is not None
    states = (row.baseline.state, row.candidate.state)
    if State.ABSENT in states:
        return any(c.kind in (ChangeKind.STAGE, ChangeKind.ADDED, ChangeKind.REMOVED) for c in own.changes)
    for state, cfg in zip(states, (analysis.baseline, analysis.candidate), strict=True):
        if (state == State.DISABLED) != (cfg.enabled(row.transform) is False):
            return False
    return True


def _detail(row: TransformComparison, analysis: ConfigAnalysis) -> str:
    assert analysis.baseline is not None
    assert analysis.candidate is not None
    key = f"transforms.{row.transform}.enabled"
    b, c = analysis.baseline.enabled(row.transform), analysis.candidate.enabled(row.transform)
    if b is None and c is None:
        return "neither config mentions it"
    if b == c:
        value = "true" if b else "false"
        return f"{key} is {value} in both configs"
    def show(v: bool | None) -> str:
        return "(not mentioned)" if v is None else show_value(v)

    return f"{key}: {show(b)} -> {show(c)} does not match the logged states"


__all__ = ["EXPLAINABLE", "explain_findings", "with_explanations"]
