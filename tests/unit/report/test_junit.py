"""JUnit XML: one test case per transform (and tensor), failures for gated findings, valid per
junit-10.xsd."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from ad_diff import gate, pipeline
from ad_diff.core.model import Severity
from ad_diff.report import junit
from ad_diff.result import regroup
from ad_diff.settings import Settings
from ad_diff.workflows.batch import run_batch
from tests.ci_runs import BASE_LOG, REGRESSED_LOG, pair
from tests.conftest import ROOT, make_run

XSD = xmlschema.XMLSchema(ROOT / "tests" / "data" / "junit-10.xsd")


def _result(tmp_path: Path, **kw):
    base, cand = pair(tmp_path)
    result = pipeline.run(Settings(base, cand, **kw))
    return result, gate.judge(result.findings, result.groups, "error")


def test_schema_accepts_report_and_rejects_a_broken_one(tmp_path: Path) -> None:
    xml = junit.render(*_result(tmp_path))
    XSD.validate(xml)
    with pytest.raises(xmlschema.XMLSchemaValidationError):  # the validator can fail: a case without a name
        XSD.validate(xml.replace('name="fuse_rmsnorm"', ""))


def test_one_case_per_transform_and_failures_for_gated_findings(tmp_path: Path) -> None:
    root = ET.fromstring(junit.render(*_result(tmp_path)))
    suite = root.find("testsuite[@name='transforms']")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert sorted(cases) == ["fuse_gemms", "fuse_rmsnorm", "match_rope_pattern"]
    assert cases["match_rope_pattern"].find("failure").get("type") == "ADL001"
    assert cases["fuse_gemms"].find("failure").get("type") == "ADL003"
    assert cases["fuse_rmsnorm"].find("failure") is None
    assert root.get("failures") == "2"
    assert root.get("tests") == "4"  # 3 transforms + the run case


def test_non_gated_findings_go_to_system_out(tmp_path: Path) -> None:
    exp = tmp_path / "e.yaml"
    exp.write_text("- transform: fuse_gemms\n  reason: disabled on purpose\n")
    root = ET.fromstring(junit.render(*_result(tmp_path, expected_changes=exp)))
    case = root.find("testsuite/testcase[@name='fuse_gemms']")
    assert case.find("failure") is None
    assert "acknowledged: disabled on purpose" in case.find("system-out").text


def test_tensor_cases_and_control_characters(tmp_path: Path) -> None:
    from dataclasses import replace

    from ad_diff.kinds.log.rules import STATE

    result, verdict = _result(tmp_path)
    drift = replace(
        STATE.make(transform=None, bstate="a", cstate="b"),
        code="ADT001",
        category="numeric_drift",
        severity=Severity.ERROR,
        tensor="logits",
        message="logits drift \x1b[31mred\x1b[0m",
    )
    result = regroup(replace(result, findings=(*result.findings, drift)), "error")
    xml = junit.render(result, gate.judge(result.findings, result.groups, "error"))
    XSD.validate(xml)
    case = ET.fromstring(xml).find("testsuite[@name='tensors']/testcase[@name='logits']")
    assert case.find("failure").get("type") == "ADT001"
    assert "\x1b" not in xml


def test_batch_junit_is_valid_and_has_an_error_per_broken_model(tmp_path: Path) -> None:
    b, c = tmp_path / "b", tmp_path / "c"
    make_run(b / "m1", BASE_LOG)
    make_run(c / "m1", REGRESSED_LOG)
    (b / "m2").mkdir()
    (c / "m2").mkdir()
    make_run(b / "m3", BASE_LOG)
    xml = junit.render_batch(run_batch(b, c, lambda n, x, y: Settings(x, y)))
    XSD.validate(xml)
    root = ET.fromstring(xml)
    assert root.find("testsuite[@name='m1.transforms']") is not None
    assert root.find("testsuite[@name='m2.run']/testcase/error") is not None
    assert root.find("testsuite[@name='unpaired']/testcase[@name='m3']/failure") is not None
    assert root.get("errors") == "1"
    assert root.get("failures") == "3"


def test_every_compared_output_tensor_is_a_test_case() -> None:
    """Passing tensors are test cases too (a suite listing only failures cannot show what was checked)."""
    from ad_diff import pipeline
    from tests.conftest import ROOT

    gpu = ROOT / "fixtures/tensors/gpu"
    result = pipeline.run(Settings(gpu / "baseline", gpu / "within"))
    xml = junit.render(result, gate.judge(result.findings, result.groups, "error"))
    XSD.validate(xml)
    cases = ET.fromstring(xml).findall("testsuite[@name='tensors']/testcase")
    assert [c.get("name") for c in cases] == ["logits"]
    assert cases[0].find("failure") is None


def test_root_causes_are_carried_once_and_named_in_each_failure() -> None:
    root_dir = ROOT / "fixtures/scenarios/failed_transform"
    result = pipeline.run(Settings(root_dir / "baseline", root_dir / "candidate"))
    xml = junit.render(result, gate.judge(result.findings, result.groups, "error"))
    XSD.validate(xml)  # properties sit where the schema wants them
    root = ET.fromstring(xml)
    run = root.find("testsuite[@name='run']")
    assert run is not None
    props = {p.get("name"): p.get("value") for p in run.iter("property")}
    assert props["root_cause.1"] == "transform_failed: match_eager_attention failed"
    text = run.findtext("system-out") or ""
    assert "root cause 1 (transform_failed, gates): match_eager_attention failed" in text
    failures = list(root.iter("failure"))
    assert len(failures) == 5  # failures still count findings, one each: the groups add no test cases
    assert all("[error, " in (f.text or "") and "root cause 1: match_eager_attention failed" in (f.text or "")
               for f in failures)
