"""Drift causes: the ranking falls through structural -> config -> none found, titles stay short, and the
ops a rewritten region changed are named (ad_diff.kinds.tensors.causes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.core.graphops import op_name
from ad_diff.core.model import Category, Finding, Severity
from ad_diff.kinds.tensors import causes as C
from tests.conftest import FIXTURES, run_cli


def _drift(value: float = 0.09) -> Finding:
    return Finding(
        "ADT001",
        Category.NUMERIC_DRIFT,
        Severity.ERROR,
        "m",
        tensor="logits",
        evidence=(("statistic", "rmse"), ("value", value)),
    )


def test_op_names_and_the_op_absent_from_the_fused_op() -> None:
    assert op_name("aten.gelu.default") == "gelu"
    assert op_name("auto_deploy.torch_swiglu.default") == "torch_swiglu"
    assert C.ops_text(["linear", "gelu", "mul"], ["torch_swiglu"]) == "`gelu` absent from `torch_swiglu`"
    # a fused op whose name holds the op it replaced is a swap, not an absence
    assert (
        C.ops_text(["linear"], ["torch_fake_quant_fp8_linear"])
        == "`linear` \u2192 `torch_fake_quant_fp8_linear`"
    )


def test_a_getitem_target_is_a_generic_op() -> None:
    # FX writes operator.getitem as '<built-in function getitem>': its op name is the generic 'getitem',
    # never named as "absent from the fused op"
    name = op_name("<built-in function getitem>")
    assert name in C.GENERIC_OPS
    assert C.ops_text([name, "gelu"], ["torch_swiglu"]) == "`gelu` absent from `torch_swiglu`"


def test_rank_falls_through_to_config_then_to_none_found() -> None:
    structural = [C.DriftCause(C.CauseTier.COUNT_CHANGED, "t: 0 \u2192 2 matches", "t")]
    config = [C.DriftCause(C.CauseTier.CONFIG, "quant_config added", evidence=(("key", "quant_config"),))]
    assert [c.kind for c in C.rank(None, structural, config)] == [
        C.CauseTier.COUNT_CHANGED,
        C.CauseTier.CONFIG,
    ]
    assert C.headline(C.rank(None, structural, config)) == "t: 0 \u2192 2 matches, quant_config added"
    assert [c.kind for c in C.rank(None, [], config)] == [C.CauseTier.CONFIG]
    assert C.rank(None, [], []) == (C.NONE_FOUND,)
    # with evidence the runs lack, nothing points at the kernels: no cause is listed (what was not compared
    # is said once, in the group's evidence)
    assert C.rank(None, [], [], ["graph dumps"]) == ()


@settings(max_examples=60, deadline=None)
@given(summary=st.text(min_size=0, max_size=400), detail=st.text(max_size=400), value=st.floats(0, 1e9))
def test_a_drift_title_is_at_most_160_characters(summary: str, detail: str, value: float) -> None:
    cause = C.DriftCause(C.CauseTier.COUNT_CHANGED, summary or "t", "t", detail)
    f = _drift(value)
    f = Finding(
        f.code,
        f.category,
        f.severity,
        f.message,
        tensor=f.tensor,
        evidence=(*f.evidence, ("causes", [cause])),
    )
    title = C.drift_title([f])
    assert title is not None
    assert len(title) <= C.TITLE_LIMIT
    assert title.startswith("logits drift (")


def _causes(base: Path, cand: Path) -> list[dict[str, object]]:
    res = run_cli(base, cand, "-f", "json")
    assert res.code in (0, 1), res.err
    data = json.loads(res.out)
    drift = [f for f in data["findings"] if f["code"] == "ADT001"]
    assert drift, "the logits must drift"
    return drift[0]["evidence"]["causes"]


def test_removing_the_structural_cause_falls_through_to_config_then_to_none(tmp_path: Path) -> None:
    """On the FP8 scenario: the transform that changed is the first cause; with the candidate's log and graphs
    made the baseline's, the quant_config change is; with its config the baseline's too, no cause is found."""
    src = FIXTURES / "scenarios/fp8_checkpoint_drift"
    base, cand = tmp_path / "baseline", tmp_path / "candidate"
    shutil.copytree(src / "baseline", base)
    shutil.copytree(src / "candidate", cand)
    first = _causes(base, cand)
    assert (first[0]["kind"], first[0]["transform"]) == ("count_changed", "quantize_fp8_linear_from_config")
    assert "quant_config added" in [c["summary"] for c in first]
    for part in ("graphs", "ad.log"):
        target = cand / part
        shutil.rmtree(target) if target.is_dir() else target.unlink()
        (shutil.copytree if (base / part).is_dir() else shutil.copy)(base / part, target)
    second = _causes(base, cand)
    assert [(c["kind"], c["summary"]) for c in second] == [("config_changed", "quant_config added")]
    shutil.rmtree(cand / "config")
    shutil.copytree(base / "config", cand / "config")
    assert [c["kind"] for c in _causes(base, cand)] == ["none_found"]
