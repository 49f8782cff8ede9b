"""`ad-diff candidates` and `ad-diff note` through the real entry point: exit codes and output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, run_cli
from tests.unit.candidates.conftest import SRC, fake_tree

C = FIXTURES / "candidates"
SCENARIOS = ROOT / "fixtures" / "scenarios"


@pytest.mark.parametrize("columns", [80, 200])
def test_candidates_terminal_view_by_default_fits_columns(columns: int) -> None:
    res = run_cli("candidates", C / "moe", "--trtllm-src", SRC, env={"COLUMNS": str(columns)})
    assert res.code == 0, res.err
    assert not res.out.startswith("## ")  # not raw markdown
    assert res.out.startswith("Fusion candidates: ")
    lines = res.out.splitlines()
    assert max(map(len, lines)) <= columns
    if columns == 200:
        assert max(map(len, lines)) > 120  # the width is used, not a fixed 80
    assert "1. moe: mixture-of-experts block left unfused" in res.out


def test_candidates_final_dump_touching_the_output_line_does_not_crash() -> None:
    # issue 13 §4: KeyError: 'output' on a final dump whose pattern's neighbourhood reached the output node
    for run in (C / "edges", C / "sqrt_div", C / "moe", C / "moe_grouped"):
        res = run_cli("candidates", run, "--min-count", "1", "-f", "json")
        assert res.code == 0, (run, res.err)
        assert "internal error" not in res.err
        assert json.loads(res.out)["candidates"]


def test_candidates_sqrt_div_names_why_the_existing_matcher_did_not_take_it() -> None:
    res = run_cli(
        "candidates",
        C / "sqrt_div",
        "--transform",
        "match_rmsnorm_pattern",
        "--trtllm-src",
        SRC,
        "-f",
        "text",
    )
    assert res.code == 0, res.err
    first = next(b for b in res.out.split("\n\n") if b.startswith("Candidate: rmsnorm\n"))
    assert (
        "op auto_deploy::flashinfer_rms_norm at "
        "tensorrt_llm/_torch/auto_deploy/custom_ops/normalization/rms_norm.py:11" in first
    )
    assert (
        "weakness: upstream match_rmsnorm_pattern matches weight * (data * rsqrt(mean(data^2) + eps))"
        in first
    )
    assert (
        "this graph computes w * (x / sqrt(mean(x^2) + 1e-05)): mul, rsqrt only upstream; div, sqrt only here"
        in first
    )


def test_candidates_markdown_format() -> None:
    res = run_cli("candidates", C / "unfused", "-f", "markdown")
    assert res.code == 0, res.err
    assert "## Fusion candidates" in res.out
    assert (
        "| 2 | `rmsnorm` | pow → mean → add → rsqrt → mul → mul | 4 | 0, 1 | 20 | not_searched | defer |"
        in res.out
    )
    assert "Existing kernel lookup: **not done**" in res.out
    assert "Candidate: swiglu" in res.out


def test_candidates_json_with_source_tree(tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    res = run_cli(
        "candidates",
        C / "unfused",
        "--trtllm-src",
        fake_tree(tmp_path / "src", True),
        "-f",
        "json",
        "-o",
        out,
    )
    assert res.code == 0, res.err
    assert res.out == ""
    data = json.loads(out.read_text())
    rms = next(c for c in data["candidates"] if c["name"] == "rmsnorm")
    assert rms["lookup"]["status"] == "found"
    assert rms["recommendation"] == "use_existing_kernel"
    assert rms["lookup"]["evidence"][0]["symbol"] == "auto_deploy::torch_rmsnorm"
    sw = next(c for c in data["candidates"] if c["name"] == "swiglu")
    # the fake tree's silu_and_mul holds both distinctive ops: found by name only, flagged as a risk
    assert sw["lookup"]["status"] == "found"
    assert sw["lookup"]["evidence"][0]["matched_by"] == "op_tokens"
    assert any("matched by op names only" in r for r in sw["risks"])
    epi = next(c for c in data["candidates"] if c["name"] == "gemm_epilogue")
    assert epi["lookup"]["status"] == "not_found"
    assert epi["recommendation"] == "defer"


def test_candidates_transform_option() -> None:
    res = run_cli("candidates", C / "unfused", "--transform", "compile_model", "-f", "text")
    assert res.code == 0
    assert res.out.startswith("Candidate: ")
    assert "\nCandidate: rmsnorm\n" in res.out
    bad = run_cli("candidates", C / "unfused", "--transform", "nope")
    assert bad.code == 2
    assert "no dump written after transform 'nope'" in bad.err
    assert "compile_model" in bad.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["candidates", "missing_dir"], "expected a run folder"),
        (["candidates", str(C / "unfused"), "--trtllm-src", str(C)], "not a TensorRT-LLM source tree"),
        (["candidates", str(C / "unfused"), "--min-count", "0"], "--min-count"),
    ],
)
def test_candidates_input_errors(args: list[str], message: str) -> None:
    res = run_cli(*args)
    assert res.code == 2
    assert message in res.err
    assert "Traceback" not in res.err


def test_note_pass_markdown() -> None:
    res = run_cli(
        "note",
        C / "unfused",
        C / "norm_only",
        "--candidate",
        "rmsnorm",
        "--tests",
        "pytest -k rmsnorm: 3 passed",
    )
    assert res.code == 0, res.err
    out = res.out
    assert "## Iteration note: rmsnorm" in out
    assert "**Graph validation:** **PASS**" in out
    assert "| `auto_deploy.flashinfer_rmsnorm.default` | 0 | 5 |" in out
    assert "| pattern_matcher | `match_rmsnorm_pattern` | disabled | matches=5 |  |" in out
    assert "| post_load_fusion | `fuse_rmsnorm` | matches=0 | matches=5 | +5 |" in out
    assert "pytest -k rmsnorm: 3 passed" in out
    assert "metadata loss: none found by the graph analysis" in out  # both runs have graphs/
    assert "numeric drift: not analysed" in out
    assert "**Path:** existing kernel (inferred" in out


def test_note_fail_json_and_tests_file(tmp_path: Path) -> None:
    tf = tmp_path / "tests.txt"
    tf.write_text("tests/unit/test_swiglu.py::test_a PASSED\ntests/unit/test_swiglu.py::test_b PASSED\n")
    res = run_cli(
        "note",
        C / "unfused",
        C / "norm_only",
        "--candidate",
        "swiglu",
        "--tests-file",
        tf,
        "-f",
        "json",
        "--path",
        "triton_fallback",
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["schema_version"] == 1
    assert data["kind"] == "iteration_note"
    assert data["validation"]["status"] == "fail"
    assert data["validation"]["baseline_instances"] == 2
    assert data["validation"]["candidate_instances"] == 2
    assert data["validation"]["remaining_nodes"] == ["linear_4", "linear_11"]
    assert data["path"] == "triton_fallback"
    assert data["path_source"] == "option"
    assert data["tests"].count("PASSED") == 2
    assert any(r.startswith("unfused instances:") for r in data["risks"])


def test_note_full_fusion_and_unknown_candidate(tmp_path: Path) -> None:
    res = run_cli("note", C / "unfused", C / "fused", "--candidate", "swiglu", "-f", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["validation"]["status"] == "pass"
    assert {"target": "auto_deploy.torch_swiglu.default", "baseline": 0, "candidate": 2} in data[
        "validation"
    ]["fused_ops"]
    # a known family without an instance left in the baseline is not evaluated, not an error (against a
    # copy: one folder given twice is a usage error, a run compared with itself has no verdict)
    shutil.copytree(C / "fused", tmp_path / "fused", symlinks=True)
    copy = tmp_path / "fused"
    gone = json.loads(run_cli("note", C / "fused", copy, "--candidate", "swiglu", "-f", "json").out)
    assert gone["validation"]["status"] == "not_evaluated"


def test_note_unknown_candidate_exits_2_with_the_known_names() -> None:
    res = run_cli("note", C / "unfused", C / "fused", "--candidate", "nope")
    assert res.code == 2
    assert res.out == ""
    assert "--candidate 'nope' is not a known candidate name" in res.err
    assert "candidates in the baseline's final graph: swiglu, rmsnorm, gemm_epilogue" in res.err
    assert "families: attention, attention_adjacent, attention_layout, elementwise_chain" in res.err
    assert "Traceback" not in res.err


def test_note_usage_errors(tmp_path: Path) -> None:
    both = run_cli(
        "note", C / "unfused", C / "fused", "--candidate", "x", "--tests", "a", "--tests-file", tmp_path
    )
    assert both.code == 2
    assert "either --tests or --tests-file" in both.err
    bad = run_cli("note", C / "unfused", C / "fused", "--candidate", "rmsnorm", "--path", "magic")
    assert bad.code == 2
    assert "--path must be one of" in bad.err


UNFUSED_SCENARIO = next(
    (p for p in (SCENARIOS / "unfused", ROOT / "fixtures" / "runs" / "unfused") if p.is_dir()), None
)


def test_generated_unfused_scenario_yields_rmsnorm_and_swiglu() -> None:
    assert UNFUSED_SCENARIO is not None, "fixtures/runs/unfused missing: run scripts/make_fixtures.py"
    run = UNFUSED_SCENARIO / "candidate" if (UNFUSED_SCENARIO / "candidate").is_dir() else UNFUSED_SCENARIO
    data = json.loads(run_cli("candidates", run, "-f", "json").out)
    fams = {c["family"] for c in data["candidates"]}
    assert {"rmsnorm", "swiglu"} <= fams


def test_note_tests_file_that_is_a_fifo_or_too_large_is_refused(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "tests.fifo"
    os.mkfifo(fifo)  # reading it would block for ever
    res = run_cli("note", C / "unfused", C / "fused", "--candidate", "swiglu", "--tests-file", fifo)
    assert res.code == 2
    assert "tests.fifo" in res.err
    assert "not a regular file" in res.err
    big = tmp_path / "tests.txt"
    big.write_bytes(b"PASSED\n" * 200_000)  # 1.4 MB
    res = run_cli("note", C / "unfused", C / "fused", "--candidate", "swiglu", "--tests-file", big)
    assert res.code == 2
    assert "more than the 1,048,576 bytes accepted for a text file of test results" in res.err
