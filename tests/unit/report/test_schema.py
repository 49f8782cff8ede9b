"""The report's JSON Schema (``ad-diff schema``): valid, followed by every report ad-diff writes, and strict
enough to fail on a report it does not describe."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ad_diff.report.schema import report_schema
from tests.conftest import FIXTURES, ROOT, run_cli

REPORTS = sorted(FIXTURES.glob("**/expected/report.json"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(v: jsonschema.Draft202012Validator, doc: Any) -> list[str]:
    # oneOf hides the reason: check against the report branch for a readable message
    report = {**report_schema()["$defs"]["report"], "$defs": report_schema()["$defs"]}
    if v.is_valid(doc):
        return []
    return [f"{list(e.absolute_path)}: {e.message[:200]}"
            for e in jsonschema.Draft202012Validator(report).iter_errors(doc)] or ["not valid"]


def test_there_are_fixture_reports() -> None:
    assert len(REPORTS) >= 30


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.parent.parent.name)
def test_every_fixture_report_follows_the_schema(path: Path,
                                                 validator: jsonschema.Draft202012Validator) -> None:
    assert _errors(validator, json.loads(path.read_text())) == []


def test_a_live_report_with_tensors_and_an_error_object_follow_it(
        validator: jsonschema.Draft202012Validator, tmp_path: Path) -> None:
    pair = FIXTURES / "scenarios/identical"
    res = run_cli(pair / "baseline", pair / "candidate", "-f", "json")
    assert _errors(validator, json.loads(res.out)) == []
    err = run_cli(pair / "baseline", tmp_path / "missing", "-f", "json")
    assert err.code == 2
    assert _errors(validator, json.loads(err.out)) == []


def test_tensor_sections_follow_it(validator: jsonschema.Draft202012Validator, tmp_path: Path) -> None:
    for side in ("baseline", "candidate"):  # a run with a log and the drifting tensors of a synthetic pair
        (tmp_path / side).mkdir()
        log = FIXTURES / "scenarios/identical" / side / "ad.log"
        (tmp_path / side / "ad.log").write_bytes(log.read_bytes())
        src = FIXTURES / "tensors/synthetic/beyond" / side / "tensors"
        (tmp_path / side / "tensors").mkdir()
        for f in src.iterdir():
            (tmp_path / side / "tensors" / f.name).write_bytes(f.read_bytes())
    res = run_cli(tmp_path / "baseline", tmp_path / "candidate", "-f", "json")
    doc = json.loads(res.out)
    assert "tensors" in doc["sections"]
    assert _errors(validator, doc) == []


@pytest.mark.parametrize(("where", "change"), [
    ((), {"unknown_key": 1}),
    (("summary",), {"surprise": 0}),
    (("findings", 0), {"category": "not_a_category"}),
    (("findings", 0), {"severity": "fatal"}),
    (("groups", 0), {"cause": "gremlins"}),
    (("transforms", 0, "candidate"), {"state": "half_applied"}),
    ((), {"verdict": "maybe"}),
])
def test_a_report_it_does_not_describe_fails(where: tuple[Any, ...], change: dict[str, Any],
                                             validator: jsonschema.Draft202012Validator) -> None:
    doc = copy.deepcopy(json.loads((FIXTURES / "scenarios/metadata_loss/expected/report.json").read_text()))
    target = doc
    for k in where:
        target = target[k]
    target.update(change)
    assert not validator.is_valid(doc)


def test_the_command_prints_the_schema() -> None:
    res = run_cli("schema")
    assert res.code == 0
    assert json.loads(res.out) == report_schema()


def test_the_schema_doc_is_generated_from_it() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_schema_doc.py", "--check"], cwd=ROOT)
    assert proc.returncode == 0, "docs/report-schema.md is stale: run python scripts/gen_schema_doc.py"
