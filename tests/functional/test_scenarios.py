"""Every generated two-run scenario: the verdict and findings its manifest promises, and byte-exact
snapshots of the markdown and JSON reports (written by scripts/update_golden.py, reviewed in git diff)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT, run_cli

MANIFEST = yaml.safe_load((FIXTURES / "scenarios/manifest.yaml").read_text())["scenarios"]
NAMES = sorted(n for n in MANIFEST if (FIXTURES / "scenarios" / n / "baseline").is_dir())


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, tuple[int, str, str]]:
    out: dict[str, tuple[int, str, str]] = {}
    tmp = tmp_path_factory.mktemp("scen")
    for name in NAMES:
        rel = Path("fixtures/scenarios") / name
        md, js = tmp / f"{name}.md", tmp / f"{name}.json"
        res = run_cli(rel / "baseline", rel / "candidate", "--markdown", md, "--json", js, "-f", "json")
        assert res.code in (0, 1), f"{name}: {res.err}"
        assert res.out == js.read_text()
        out[name] = (res.code, md.read_text(), js.read_text())
    return out


@pytest.mark.parametrize("name", NAMES)
def test_manifest_expectations(outputs, name: str) -> None:
    exp = MANIFEST[name]
    code, _, js = outputs[name]
    data = json.loads(js)
    assert code == exp["exit_code"] and data["verdict"] == exp["verdict"]
    got = {(f["category"], f["transform"]) for f in data["findings"]}
    for want in exp["findings"]:
        assert (want["category"], want["transform"]) in got, f"missing {want}"
        if "collapse" in want:
            hit = [f for f in data["findings"] if (f["category"], f["transform"]) == (want["category"], want["transform"])]
            assert any(f["collapse"] == want["collapse"] for f in hit)
    if not exp["findings"]:
        assert [f for f in data["findings"] if f["severity"] == "error"] == []


@pytest.mark.parametrize("name", NAMES)
def test_snapshots(outputs, name: str) -> None:
    exp = FIXTURES / "scenarios" / name / "expected"
    code, md, js = outputs[name]
    assert (exp / "report.md").read_text() == md, "markdown changed: review and run scripts/update_golden.py"
    assert (exp / "report.json").read_text() == js, "JSON changed: review and run scripts/update_golden.py"
    assert int((exp / "exit_code").read_text()) == code


#: The scenarios with the most findings of each kind (graph, config, tensors, hostile names) plus batch output.
DETERMINISM_CASES = {
    "graph": ("fixtures/scenarios/metadata_loss/baseline", "fixtures/scenarios/metadata_loss/candidate"),
    "graph_fusion": ("fixtures/scenarios/fusion_one_layer/baseline", "fixtures/scenarios/fusion_one_layer/candidate"),
    "config": ("fixtures/scenarios/config_unexplained/baseline", "fixtures/scenarios/config_unexplained/candidate"),
    "tensors": ("fixtures/tensors/gpu/baseline", "fixtures/tensors/gpu/beyond"),
    "hostile_names": ("fixtures/hostile/markup_names/baseline", "fixtures/hostile/markup_names/candidate"),
    "batch": ("batch", "fixtures/scenarios"),
}


@pytest.mark.parametrize("case", sorted(DETERMINISM_CASES))
def test_output_is_byte_identical_across_hash_seeds(tmp_path: Path, case: str) -> None:
    base, cand = DETERMINISM_CASES[case]
    args: tuple[str | Path, ...]
    if base == "batch":  # three models per side, compared in parallel: the order must not depend on timing
        for side in ("b", "c"):
            for name in ("metadata_loss", "config_unexplained", "partial_loss"):
                (tmp_path / side).mkdir(exist_ok=True)
                (tmp_path / side / name).symlink_to(ROOT / cand / name / ("baseline" if side == "b" else "candidate"))
        args = ("batch", tmp_path / "b", tmp_path / "c", "--jobs", "2")
    else:
        args = (base, cand)
    outs = []
    for seed in ("1", "4242"):
        md, js = tmp_path / f"{seed}.md", tmp_path / f"{seed}.json"
        res = run_cli(*args, "--markdown", md, "--json", js, "-f", "json", env={"PYTHONHASHSEED": seed})
        assert res.code in (0, 1), res.err
        outs.append((res.out, md.read_text(), js.read_text()))
    assert outs[0] == outs[1]
    assert ROOT.is_dir()
