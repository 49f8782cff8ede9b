"""Renderers: the reviewer template, markdown escaping, JSON form."""

from __future__ import annotations

import json
from pathlib import Path

from ad_diff.candidates import find_candidates
from ad_diff.candidates.model import Candidate, Instance, KernelLookup, LookupStatus, Recommendation
from ad_diff.candidates.render import render_json, render_markdown, template
from tests.conftest import FIXTURES, ROOT
from tests.unit.candidates.conftest import SRC, fake_tree

UNFUSED = FIXTURES / "candidates" / "unfused"


def test_template_fields(tmp_path: Path) -> None:
    r = find_candidates(UNFUSED, trtllm_src=fake_tree(tmp_path, with_rmsnorm=True))
    c = r.get("rmsnorm")
    assert c is not None
    lines = template(c).splitlines()
    assert lines[0] == "Candidate: rmsnorm"
    assert lines[1].startswith("Affected graph pattern: aten.pow.Tensor_Scalar -> aten.mean.dim")
    assert lines[2] == "Existing kernel lookup: found"
    assert lines[3] == "Evidence:"
    assert lines[4] == (
        "  - op auto_deploy::torch_rmsnorm at tensorrt_llm/_torch/auto_deploy/custom_ops/rms_norm.py:4 "
        "[custom_op, table]"
    )
    assert lines[5] == (
        "  - transform match_rmsnorm_pattern at "
        "tensorrt_llm/_torch/auto_deploy/transform/library/rms_norm.py:4 "
        "[table]"
    )
    assert lines[6] == "Recommendation: use_existing_kernel"
    assert lines[7] == "Strengths / weaknesses / risks:"
    assert all(x.startswith("- ") for x in lines[8:])


def test_markdown_escapes_names() -> None:
    c = Candidate(
        "x|y",
        "elementwise_chain",
        ("aten.mul.Tensor", "aten.add.Tensor"),
        "sig",
        (Instance("(root)", ("a|b", "c"), 0, 3), Instance("(root)", ("d", "e"), 1, 9)),
        2,
        KernelLookup(LookupStatus.NOT_SEARCHED),
        Recommendation.DEFER,
    )
    from ad_diff.candidates.model import CandidateReport

    md = render_markdown(CandidateReport("run<1>", "d.txt", "t", "s", 10, (c,), None))
    assert "a\\|b" in md
    assert "run&lt;1>" in md
    assert "| 1 | `x\\|y` |" in md


def test_json_form_is_documented_shape() -> None:
    r = find_candidates(UNFUSED)
    data = json.loads(render_json(r))
    assert data["schema_version"] == 3
    assert data["kind"] == "candidates"
    assert data["lookup_done"] is False
    c = data["candidates"][0]
    assert set(c) >= {
        "name",
        "family",
        "pattern",
        "signature",
        "count",
        "layers",
        "nodes_removed",
        "instances",
        "lookup",
        "recommendation",
        "strengths",
        "weaknesses",
        "risks",
    }
    assert c["lookup"]["status"] == "not_searched"
    doc = (ROOT / "docs" / "candidates.md").read_text()
    for key in [*data, *c]:
        assert f"`{key}`" in doc, key


def test_json_keys_of_evidence_and_pattern_checks_are_documented() -> None:
    data = json.loads(render_json(find_candidates(FIXTURES / "candidates" / "sqrt_div", trtllm_src=SRC)))
    rms = next(c for c in data["candidates"] if c["name"] == "rmsnorm")
    doc = (ROOT / "docs" / "candidates.md").read_text()
    ev = next(e for e in rms["lookup"]["evidence"] if e["via"])
    keys = [*rms["lookup"], *ev, *ev["via"][0], *rms["lookup"]["pattern_checks"][0]]
    for key in keys:
        assert f"`{key}`" in doc, key


def test_markdown_lists_pattern_checks_and_cuts_long_instances() -> None:
    md = render_markdown(find_candidates(FIXTURES / "candidates" / "moe", trtllm_src=SRC))
    row = "| 1 | `moe` | moe \\[per_expert_loop\\] router: linear -> softmax -> topk (renormalised, routing: "
    assert row in md
    assert "Upstream search patterns beside this graph:" in md
    assert "registers no search pattern" in md
    assert "more)" in md  # 66 nodes per block: the instance row lists the first ones only


def test_output_is_deterministic() -> None:
    assert render_markdown(find_candidates(UNFUSED)) == render_markdown(find_candidates(UNFUSED))
