"""JUnit XML for Jenkins / GitLab: one test case per transform and per tensor, failures for gated findings.

Layout (validated against the Jenkins ``junit-10.xsd`` in the tests)::

    <testsuites name="ad-diff" tests=.. failures=.. errors=..>
      <testsuite name="[model.]transforms">
        one <testcase classname="ad-diff.<stage>" name="<transform>"> per row
      <testsuite name="[model.]tensors">     one <testcase name="<tensor>"> per recorded tensor seen
      <testsuite name="[model.]run">         one <testcase name="run"> for run-level findings

A gated finding is a ``<failure type="<code>" message="...">``; other findings (warnings, acknowledged or
explained ones, errors below the gate level) are listed in the test case's ``<system-out>``. Every text and
attribute from an input goes through the sink layer's :func:`~ad_diff.core.sinks.xml` (XML 1.0 forbids most
control characters, and AD logs carry ANSI escapes: they are shown as escapes, with bidi and zero-width
characters).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ad_diff.core.model import Finding
from ad_diff.core.sinks import values, xml
from ad_diff.explain.model import CauseGroup
from ad_diff.gate import FindingVerdict, GroupVerdict, Verdict
from ad_diff.report.views import views
from ad_diff.result import DiffResult

if TYPE_CHECKING:
    from ad_diff.result import BatchResult


def _line(f: Finding, causes: Mapping[int, CauseGroup]) -> str:
    tags = [f.severity.value, f.code]
    g = causes.get(f.group or 0)
    if g is not None:
        tags.append(f"root cause {g.id}: {g.title}")
    if f.acknowledged:
        tags.append(f"acknowledged: {f.acknowledged}")
    if f.explained_by:
        tags.append(f"explained by config: {f.explained_by}")
    return f"[{', '.join(tags)}] {f.message}"


def _case(
    suite: ET.Element,
    classname: str,
    name: str,
    findings: list[FindingVerdict],
    causes: Mapping[int, CauseGroup],
) -> int:
    """Add one test case; return its number of failures."""
    case = ET.SubElement(suite, "testcase", classname=xml(classname), name=xml(name), time="0")
    gated = [fv.finding for fv in findings if fv.gated]
    for f in gated:
        fail = ET.SubElement(case, "failure", type=f.code, message=xml(f.message))
        fail.text = xml(_line(f, causes))
    rest = [fv.finding for fv in findings if not fv.gated]
    if rest:
        ET.SubElement(case, "system-out").text = xml("\n".join(_line(f, causes) for f in rest))
    return len(gated)


def _suite(
    root: ET.Element,
    name: str,
    cases: list[tuple[str, str, list[FindingVerdict]]],
    causes: Mapping[int, CauseGroup],
    groups: tuple[GroupVerdict, ...] = (),
) -> None:
    suite = ET.SubElement(root, "testsuite", name=xml(name))
    if groups:  # the root causes, once, on the run suite: properties for tools, text for people
        props = ET.SubElement(suite, "properties")
        for g in (gv.group for gv in groups):
            ET.SubElement(props, "property", name=f"root_cause.{g.id}", value=xml(f"{g.cause}: {g.title}"))
    failures = sum(_case(suite, cn, n, fs, causes) for cn, n, fs in cases)
    if groups:
        ET.SubElement(suite, "system-out").text = xml(
            "\n".join(
                f"root cause {g.id} ({g.cause}{', gates' if gv.gated else ''}): {g.title}"
                + (f"\n  evidence: {g.evidence}" if g.evidence else "")
                + "".join(f"\n  -> {f.message}" for f in g.consequences if f.severity.value == "error")
                for gv in groups
                for g in (gv.group,)
            )
        )
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suite.set("time", "0")


def tensor_names(result: DiffResult) -> list[str]:
    """Tensor names for the tensors suite: every output tensor compared or recorded in one run only, plus
    any tensor a finding names (a first drifting node capture, say)."""
    names = {f.tensor for f in result.findings if f.tensor}
    for view in views(result):
        names.update(view.tensors)
    return sorted(names)


def _add_result(root: ET.Element, result: DiffResult, verdict: Verdict, prefix: str = "") -> None:
    by_transform: dict[str, list[FindingVerdict]] = defaultdict(list)
    by_tensor: dict[str, list[FindingVerdict]] = defaultdict(list)
    known = {r.transform for r in result.transforms}
    run_level: list[FindingVerdict] = []
    causes = {g.id: g for g in verdict.causes()}
    for fv in verdict.findings:
        f = fv.finding
        if f.tensor:
            by_tensor[f.tensor].append(fv)
        elif f.transform in known:
            by_transform[f.transform or ""].append(fv)
        else:
            run_level.append(fv)
    seen: set[str] = set()
    cases = []
    for r in result.transforms:
        # A transform that runs twice gets two cases; its findings go to the first (findings carry no
        # occurrence).
        name = r.transform + (f"#{r.occurrence}" if r.occurrence else "")
        fs = [] if r.transform in seen else by_transform.get(r.transform, [])
        seen.add(r.transform)
        cases.append((f"ad-diff.{prefix}{r.stage}", name, fs))
    _suite(root, f"{prefix}transforms", cases, causes)
    tensors = tensor_names(result)
    if tensors:
        _suite(
            root,
            f"{prefix}tensors",
            [(f"ad-diff.{prefix}tensors", t, by_tensor.get(t, [])) for t in tensors],
            causes,
        )
    problems = tuple(gv for gv in verdict.groups if gv.group.severity.value != "info" or gv.gated)
    _suite(root, f"{prefix}run", [(f"ad-diff.{prefix}run", "run", run_level)], causes, problems)


def _finish(root: ET.Element) -> str:
    for attr in ("tests", "failures", "errors"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in root.iter("testsuite"))))
    root.set("time", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render(result: DiffResult, verdict: Verdict) -> str:
    """JUnit XML of one comparison."""
    result, verdict = values((result, verdict))  # every value on one line, bounded (core/sinks.py)
    root = ET.Element("testsuites", name="ad-diff")
    _add_result(root, result, verdict)
    return _finish(root)


def render_batch(batch: BatchResult) -> str:
    """JUnit XML of a batch: the suites of every model, prefixed ``<model>.``; a model that could not be
    compared is one test case with an ``<error>``, and a model with no candidate run one with a failure."""
    batch = values(batch)  # every value on one line, bounded (core/sinks.py)
    root = ET.Element("testsuites", name="ad-diff")
    for m in batch.models:
        if m.result is not None and m.verdict is not None:
            _add_result(root, m.result, m.verdict, prefix=f"{m.name}.")
            continue
        suite = ET.SubElement(
            root,
            "testsuite",
            name=xml(f"{m.name}.run"),
            tests="1",
            failures="0",
            errors="1",
            skipped="0",
            time="0",
        )
        case = ET.SubElement(
            suite, "testcase", classname=xml(f"ad-diff.{m.name}.run"), name="compare", time="0"
        )
        ET.SubElement(case, "error", type="input-error", message=xml(m.error or "error")).text = xml(
            m.error or ""
        )
    if batch.baseline_only:
        suite = ET.SubElement(
            root,
            "testsuite",
            name="unpaired",
            tests=str(len(batch.baseline_only)),
            failures=str(len(batch.baseline_only) if batch.judged.unpaired_gate else 0),
            errors="0",
            skipped="0",
            time="0",
        )
        for name in batch.baseline_only:
            case = ET.SubElement(suite, "testcase", classname="ad-diff.unpaired", name=xml(name), time="0")
            if batch.judged.unpaired_gate:
                ET.SubElement(
                    case, "failure", type="unpaired",
                    message=xml(f"{name}: baseline run has no candidate run"),
                ).text = xml(name)
    return _finish(root)
