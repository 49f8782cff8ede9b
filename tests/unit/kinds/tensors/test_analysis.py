"""Scenario tests of analyze_tensors on the generated (synthetic) and GPU-recorded fixtures."""

from __future__ import annotations

import json
from pathlib import Path

from ad_diff.core.jsonable import to_jsonable
from ad_diff.core.model import Severity
from ad_diff.kinds.tensors.analysis import analyze_tensors
from ad_diff.kinds.tensors.classify import classify
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorVerdict
from ad_diff.settings import Settings

FIX = Path(__file__).resolve().parents[4] / "fixtures" / "tensors"
SYN, GPU = FIX / "synthetic", FIX / "gpu"


def _run(base: Path, cand: Path, **kw: object):
    settings = Settings(baseline=base, candidate=cand, **kw)  # type: ignore[arg-type]
    return analyze_tensors(base / "tensors", cand / "tensors", settings)


def _syn(name: str, **kw: object):
    return _run(SYN / name / "baseline", SYN / name / "candidate", **kw)


def _codes(analysis: TensorAnalysis) -> list[str]:
    return [f.code for f in classify(analysis)]


def test_within_tolerance_has_no_finding() -> None:
    a = _syn("within")
    assert classify(a) == []
    logits = next(c for c in a.comparisons if c.name == "logits")
    assert logits.verdict is TensorVerdict.ACCEPTABLE
    assert logits.stats is not None
    assert logits.stats.outside > 0
    json.dumps(to_jsonable(a), allow_nan=False)


def test_beyond_tolerance() -> None:
    a = _syn("beyond")
    assert _codes(a) == ["ADT001"]
    f = classify(a)[0]
    assert f.tensor == "logits"
    assert f.severity is Severity.ERROR
    ev = dict(f.evidence)
    assert ev["statistic"] == "rmse"
    assert ev["value"] > ev["limit"]
    assert 0 < ev["top1_agreement"] < 1


def test_nan_introduced() -> None:
    a = _syn("nan")
    assert _codes(a) == ["ADT002"]
    assert "5 NaN, 1 Inf" in classify(a)[0].message


def test_shape_mismatch() -> None:
    a = _syn("shape")
    assert _codes(a) == ["ADT003"]
    c = next(c for c in a.comparisons if c.name == "logits")
    assert c.stats is None
    assert c.mismatch == "shape"


def test_missing_in_one_run() -> None:
    a = _syn("missing")
    assert _codes(a) == ["ADT005"]
    assert [(u.name, u.present_in) for u in a.unmatched] == [("hidden", "baseline")]


def test_malicious_and_garbage_files_become_error_findings() -> None:
    a = _syn("malicious")
    assert "ADT008" in _codes(a)
    assert "ADT005" in _codes(a)
    assert not Path("/tmp/ad_diff_pwned").exists()
    g = _syn("garbage")
    assert _codes(g).count("ADT008") == 2
    assert all(f.severity is Severity.ERROR for f in classify(g))


def test_pt_dict_within() -> None:
    a = _syn("pt_dict")
    assert classify(a) == []
    assert sorted(c.name for c in a.comparisons) == ["extra.hidden", "logits"]


def test_inputs_differ(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(SYN / "within", tmp_path / "w")
    shutil.copy(SYN / "shape" / "candidate" / "tensors" / "outputs.safetensors",
                tmp_path / "w" / "candidate" / "tensors" / "inputs.safetensors")  # fmt: skip
    a = _run(tmp_path / "w" / "baseline", tmp_path / "w" / "candidate")
    assert "ADT009" in _codes(a)


def test_elementwise_statistic_cries_wolf_on_rounding_noise() -> None:
    a = _syn("within", tolerances={"default": {"statistic": "elementwise"}})
    assert _codes(a) == ["ADT001"]


def test_reference_mode_on_gpu_fixtures() -> None:
    within = _run(GPU / "baseline", GPU / "within")
    beyond = _run(GPU / "baseline", GPU / "beyond")
    bug = _run(GPU / "baseline", GPU / "no_rope_k")
    lw = next(c for c in within.comparisons if c.name == "logits")
    assert lw.judgement is not None
    assert lw.judgement.statistic == "reference"
    assert lw.stats is not None
    assert lw.stats.outside_share > 0.2
    assert "ADT001" not in _codes(within)
    assert [f.code for f in classify(beyond) if f.tensor == "logits"] == ["ADT001"]
    assert [f.code for f in classify(bug) if f.tensor == "logits"] == ["ADT001"]


def test_first_drifting_node_in_graph_order() -> None:
    order = json.loads((GPU / "baseline" / "graph_order.json").read_text())
    base, cand = GPU / "baseline", GPU / "beyond"
    settings = Settings(baseline=base, candidate=cand)
    a = analyze_tensors(base / "tensors", cand / "tensors", settings, node_order=order,
                        node_transform={"layers_0_down_proj": "fuse_swiglu_fp8"}, order_source="test order")
    assert a.first_drift is not None
    # silu/mul were fused away (one-sided captures); the first common node that drifts is layer 0's down_proj
    assert a.first_drift.node == "layers_0_down_proj"
    assert a.first_drift.transform == "fuse_swiglu_fp8"
    assert a.first_drift.order_source == "test order"
    (f,) = [f for f in classify(a) if f.code == "ADT007"]
    assert "layers_0_down_proj" in f.message
    assert "order from the test order" in f.message
    drifting = [c.name for c in a.comparisons if c.kind == "node" and not c.passed]
    assert min(order.index(n) for n in drifting if n in order) == a.first_drift.position
    nodes = [c.name for c in a.comparisons if c.kind == "node" and c.name in order]
    assert len(nodes) > 50
    assert nodes == sorted(nodes, key=order.index)
    assert any(u.kind == "node" and u.name.startswith("fused_swiglu_fp8") for u in a.unmatched)
    assert not any(f.code in ("ADT005", "ADT006") for f in classify(a))  # one-sided nodes are not findings


def test_without_graph_order_no_node_is_named() -> None:
    base, cand = GPU / "baseline", GPU / "beyond"
    a = analyze_tensors(base / "tensors", cand / "tensors", Settings(baseline=base, candidate=cand))
    assert a.first_drift is not None
    assert a.first_drift.node is None
    assert a.first_drift.drifting_nodes > 0
    assert a.first_drift.order_source is None
    assert "ADT007" not in _codes(a)
    (f,) = [f for f in classify(a) if f.code == "ADT011"]
    assert f.node is None
    assert "cannot be named (no graph order" in f.message
    assert any("cannot be named" in n for n in a.notes)


def test_order_that_places_no_drifting_node_names_none() -> None:
    base, cand = GPU / "baseline", GPU / "beyond"
    a = analyze_tensors(base / "tensors", cand / "tensors", Settings(baseline=base, candidate=cand),
                        node_order=["unrelated_node"], order_source="baseline's final graph dump 009_x.txt")
    assert a.first_drift is not None
    assert a.first_drift.node is None
    (f,) = [f for f in classify(a) if f.code == "ADT011"]
    assert "009_x.txt" in f.message


def test_json_keeps_statistics_and_judgement_of_drifting_tensors() -> None:
    data = to_jsonable(_syn("beyond"))
    logits = next(c for c in data["comparisons"] if c["name"] == "logits")
    assert logits["verdict"] == "beyond tolerance"
    assert logits["stats"]["outside"] > 0
    assert logits["stats"]["rmse"] > 0
    assert logits["judgement"]["within"] is False
    assert logits["baseline"] == {"name": "logits", "file": "outputs.safetensors", "format": "safetensors",
                                  "dtype": "BF16", "shape": [4, 16, 64]}


def test_one_wrong_row_in_512_gates_with_and_without_a_reference() -> None:
    for name, criterion in (("one_row", "rows:reference"), ("one_row_noref", "rows:spread")):
        a = _syn(name)
        (c,) = a.comparisons
        assert c.verdict is TensorVerdict.BEYOND
        assert c.judgement is not None
        assert c.judgement.statistic == criterion
        assert "whole tensor" in c.judgement.reason  # the whole-tensor figure alone would pass
        assert c.stats is not None
        assert c.stats.rows is not None
        assert (c.stats.rows.rows, c.stats.rows.outliers) == (512, 1)
        (f,) = classify(a)
        assert f.code == "ADT001"
        assert "worst rows: [2, 127]" in f.message
        assert "argmax" in f.message
        ev = dict(f.evidence)
        assert ev["rows_outliers"] == 1
        assert ev["worst_rows"][0]["index"] == [2, 127]
        assert "next_token_agreement" in ev


def test_evenly_spread_rounding_noise_passes() -> None:
    for name in ("spread_noise", "spread_noise_noref"):
        a = _syn(name)
        (c,) = a.comparisons
        assert c.verdict is TensorVerdict.ACCEPTABLE, c.judgement
        assert c.stats is not None
        assert c.stats.rows is not None
        assert c.stats.rows.outliers == 0
        assert classify(a) == []


def test_gathered_logits_compare_the_last_position_with_a_note() -> None:
    base, cand = SYN / "gathered" / "baseline", SYN / "gathered" / "candidate"
    settings = Settings(baseline=base, candidate=cand)
    a = analyze_tensors(base / "tensors", cand / "tensors", settings,
                        gathered={"candidate": "gather_logits_before_lm_head applied in its log"})
    (c,) = a.comparisons
    assert c.mismatch is None
    assert c.shape_note is not None
    assert c.passed
    assert c.stats is not None
    assert c.stats.numel == 4 * 256
    assert c.stats.max_abs == 0
    assert c.stats.reference is not None  # the reference's last position too
    assert any("keeps only the last position" in n for n in a.notes)
    # without the transform's evidence the same pair is a shape change
    plain = analyze_tensors(base / "tensors", cand / "tensors", settings)
    assert [f.code for f in classify(plain)] == ["ADT003"]


def test_an_ambiguous_layout_stays_a_shape_change() -> None:
    from dataclasses import replace

    from ad_diff.kinds.tensors.analysis import last_position

    tensors = SYN / "gathered" / "baseline" / "tensors"
    full = analyze_tensors(tensors, tensors, Settings(baseline=SYN, candidate=SYN)).comparisons[0].baseline
    assert last_position(full, replace(full, shape=(4, 1, 256))) is not None
    for shape in ((1, 128, 256), (4, 2, 256), (4, 1, 255), (4 * 128, 256), (4, 128, 1, 2)):
        assert last_position(full, replace(full, shape=shape)) is None, shape


def test_first_capture_where_the_bad_rows_appear(tmp_path: Path) -> None:
    import shutil

    import torch
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(8)
    good = torch.randn(4, 128, 64, generator=g).bfloat16()
    bad = good.clone()
    bad[2, 127] = (bad[2, 127].float() + 0.3 * torch.randn(64, generator=g)).bfloat16()
    for side in ("baseline", "candidate"):
        shutil.copytree(SYN / "one_row" / side, tmp_path / side)
        layer1 = good if side == "baseline" else bad
        save_file({"layer0": good, "layer1": layer1.clone(), "layer2": layer1.clone()},
                  str(tmp_path / side / "tensors" / "nodes.safetensors"))
    a = analyze_tensors(tmp_path / "baseline" / "tensors", tmp_path / "candidate" / "tensors",
                        Settings(baseline=tmp_path, candidate=tmp_path),
                        node_order=["layer0", "layer1", "layer2"], order_source="test order")
    assert a.rows_origin == "layer1"
    (f,) = [f for f in classify(a) if f.code == "ADT001"]
    assert "bad rows first appear at node capture layer1" in f.message
    unordered = analyze_tensors(tmp_path / "baseline" / "tensors", tmp_path / "candidate" / "tensors",
                                Settings(baseline=tmp_path, candidate=tmp_path))
    assert unordered.rows_origin is None  # no graph order: no capture is named
