"""Why the graph kind did not compare: a typed reason (``SkipReason``), a sentence, and a number as a number.

One run's graphs/ is empty while the other's holds dumps: the finding names the other run's count, the JSON
report's ``skipped.graph`` carries it as ``count`` (never inside ``detail``), and the report follows the
schema.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema

from ad_diff import gate, pipeline
from ad_diff.kinds.base import SkipReason
from ad_diff.report import json as json_report
from ad_diff.report import markdown
from ad_diff.report.schema import report_schema
from ad_diff.settings import Settings
from tests.conftest import FIXTURES

SCEN = FIXTURES / "scenarios" / "metadata_loss"


def test_one_empty_dump_folder_is_counted_not_spelled(tmp_path: Path) -> None:
    base, cand = tmp_path / "baseline", tmp_path / "candidate"
    shutil.copytree(SCEN / "baseline", base)
    shutil.copytree(SCEN / "candidate", cand)
    files = sorted((cand / "graphs").iterdir())
    for f in files:
        f.unlink()
    n = len(list((base / "graphs").iterdir()))
    result = pipeline.run(Settings(base, cand))
    skipped = result.skipped["graph"]
    assert skipped.reason is SkipReason.EMPTY_ONE
    assert skipped.count == n
    assert skipped.run == "candidate"
    assert skipped.detail == "the candidate run's graphs/ holds no dumps"
    [f] = [f for f in result.findings if f.code == "ADI004"]
    assert f.message.startswith(f"candidate: graphs/ holds no dump files (NNN_<stage>_<transform>.txt) "
                                f"while the baseline run has {n};")
    verdict = gate.judge(result.findings, result.groups, "error")
    doc = json.loads(json_report.render(result, verdict))
    assert doc["skipped"]["graph"] == {"reason": "empty_one", "detail": skipped.detail, "run": "candidate",
                                       "count": n}
    jsonschema.validate(doc, report_schema())
    assert "metadata loss: not analysed (the candidate run's graphs/ holds no dumps)" in markdown.render(
        result, verdict)


def test_every_reason_is_a_json_word() -> None:
    words = {r.value for r in SkipReason}
    assert words == {"no_data", "disabled", "one_sided", "empty", "empty_one", "unreadable", "snapshot"}
    assert all(f"{r}" == r.value == str(r) for r in SkipReason)
    item = report_schema()["$defs"]["report"]["properties"]["skipped"]["additionalProperties"]
    assert set(item["properties"]["reason"]["enum"]) == words
