"""Pattern mining on real-export dumps (fixtures/candidates), synthetic ones (scripts/synth_dumps.py) and
hand-made dumps whose patterns touch placeholders and the output line."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ad_diff.candidates import find_candidates
from ad_diff.candidates.ops import kind, op_name
from ad_diff.candidates.scan import scan_dump
from ad_diff.kinds.graph.parse import parse, parse_text
from tests.conftest import FIXTURES, ROOT
from tests.unit.candidates.conftest import C, call, dump, t

UNFUSED = FIXTURES / "candidates" / "unfused" / "graphs" / "026_compile_compile_model.txt"
FUSED = FIXTURES / "candidates" / "fused" / "graphs" / "026_compile_compile_model.txt"
RMS = (
    "aten.pow.Tensor_Scalar",
    "aten.mean.dim",
    "aten.add.Tensor",
    "aten.rsqrt.default",
    "aten.mul.Tensor",
    "aten.mul.Tensor",
)


def _synth():
    spec = importlib.util.spec_from_file_location("synth_dumps", ROOT / "scripts" / "synth_dumps.py")
    assert spec
    assert spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["synth_dumps"] = mod
    spec.loader.exec_module(mod)
    return mod


def _by_family(groups):
    out = {}
    for g in groups:
        out.setdefault(g.family, g)
    return out


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("aten.mul.Tensor", "mul"),
        ("auto_deploy.torch_rmsnorm.default", "torch_rmsnorm"),
        ("<built-in function getitem>", "getitem"),
        ("view", "view"),
    ],
)
def test_op_name(target: str, expected: str) -> None:
    assert op_name(target) == expected


def test_kinds() -> None:
    assert kind("aten.rsqrt.default") == "elementwise"
    assert kind("aten.mean.dim") == "reduction"
    assert kind("aten.linear.default") == "gemm"
    assert kind("auto_deploy.cached_attention.default") == "attention"
    assert kind("auto_deploy.torch_rope_bsnd.default") == "rope"
    assert kind("aten.mul.Tensor", "SymInt") == "symbolic"
    assert kind("aten.embedding.default") == "other"


def test_unfused_run_yields_rmsnorm_and_swiglu() -> None:
    fams = _by_family(scan_dump(parse(UNFUSED)))
    rms = fams["rmsnorm"]
    assert rms.pattern == RMS
    assert rms.formula == "w * (x * rsqrt(mean(x^2) + 1e-05))"
    # two norms per layer; the final norm reads the last residual add and forms its own (single) pattern
    assert len(rms.instances) == 4
    assert [i.layer for i in rms.instances] == [0, 0, 1, 1]
    assert rms.instances[0].nodes == ("pow_1", "mean", "add", "rsqrt", "mul", "mul_1")
    assert rms.removed_per_instance == 5
    assert rms.nodes_removed == 20
    sw = fams["swiglu"]
    assert sw.pattern == (
        "aten.linear.default",
        "aten.silu.default",
        "aten.linear.default",
        "aten.mul.Tensor",
    )
    assert [i.nodes for i in sw.instances] == [
        ("linear_4", "silu", "linear_5", "mul_9"),
        ("linear_11", "silu_1", "linear_12", "mul_19"),
    ]
    assert [i.layer for i in sw.instances] == [0, 1]


def test_ranking_puts_most_saved_first_and_layout_last() -> None:
    groups = scan_dump(parse(UNFUSED))
    compute = [g for g in groups if g.family != "attention_layout"]
    assert groups[: len(compute)] == compute
    keys = [(g.bytes_saved, g.nodes_removed) for g in compute]
    assert keys == sorted(keys, reverse=True)
    # the SwiGLU's intermediates (two GEMM outputs, the silu) outweigh the norm's per-token scalars
    top = {g.family: g for g in compute}
    assert top["swiglu"].bytes_saved > top["rmsnorm"].bytes_saved > 0
    assert groups[0].family == "swiglu"


def test_fused_run_has_no_norm_or_swiglu_left() -> None:
    fams = _by_family(scan_dump(parse(FUSED), min_count=1))
    assert "rmsnorm" not in fams
    assert "swiglu" not in fams


def test_signature_has_no_node_names_or_layers() -> None:
    rms = _by_family(scan_dump(parse(UNFUSED)))["rmsnorm"]
    assert "pow_1" not in rms.signature
    assert "layers" not in rms.signature
    assert rms.signature.startswith("aten.pow.Tensor_Scalar($0, 2); aten.mean.dim(#0, [-1], True)")


def test_residual_stream_does_not_chain_layers() -> None:
    # every region stays within one layer: no instance is larger than a norm plus a residual add and a GEMM
    for g in scan_dump(parse(UNFUSED), min_count=1):
        assert len(g.pattern) <= 8, g.pattern


def test_synthetic_unfused_layers_and_cast_form() -> None:
    synth = _synth()
    text = synth.build(synth.Spec(layers=4, fused_norm=True, unfused_layers=(1, 3)))
    groups = scan_dump(parse_text(text, Path("synth.txt")))
    rms = [g for g in groups if g.family == "rmsnorm"]
    assert rms, [g.family for g in groups]
    layers = sorted({i.layer for g in rms for i in g.instances})
    assert layers == [1, 3]
    # the synthetic norm casts to fp32 and back: the casts belong to the pattern
    assert any("aten.to.dtype" in g.pattern for g in rms)


def test_min_count_filters_singletons() -> None:
    d = parse(UNFUSED)
    assert len(scan_dump(d, min_count=1)) > len(scan_dump(d, min_count=2)) > len(scan_dump(d, min_count=5))


EDGES = C / "edges" / "graphs" / "001_compile_compile_model.txt"


def test_patterns_touching_placeholders_and_the_output_line() -> None:
    # regression (issue 13 §4): a norm without weight whose result only the output line reads crashed with
    # KeyError: 'output' when its neighbourhood was searched for a layer index
    groups = scan_dump(parse(EDGES), min_count=1)
    rms = next(g for g in groups if g.family == "rmsnorm")
    assert [i.nodes for i in rms.instances] == [
        ("pow_1", "mean_1", "add_1", "sqrt_1", "div_1"),
        ("pow_2", "mean_2", "add_2", "sqrt_2", "div_2"),
    ]
    assert rms.formula == "x / sqrt(mean(x^2) + 1e-06)"
    every = {n for g in groups for i in g.instances for n in i.nodes}
    assert "output" not in every
    # mul_3 is read by the output line: its value is materialised, so it ends its region
    chains = {i.nodes for g in groups for i in g.instances if g.family == "elementwise_chain"}
    assert ("silu_3", "exp_3") in chains
    assert not any("mul_3" in nodes for nodes in chains)


def test_second_section_reusing_names_and_a_node_named_like_output() -> None:
    groups = scan_dump(parse(EDGES), min_count=1)
    model = [i for g in groups for i in g.instances if i.section == "model"]
    assert sorted(i.nodes for i in model) == [("neg_2", "add_2"), ("output_1", "add_1")]


def test_hostile_sections_and_names_do_not_crash(tmp_path: Path) -> None:
    # two sections with the same name, a repeated node name, a placeholder called "output", a node that
    # reads itself: the scan must finish and report only nodes that exist
    body = [
        t("output"),
        call("a", "aten.neg.default", t("output")),
        call("a", "aten.exp.default", t("a")),
        call("b", "aten.add.Tensor", t("a"), t("b")),
        call("c", "aten.mul.Tensor", t("b"), "2.0"),
        "output %c, %output, %missing",
    ]
    d = dump(("m", body), ("m", body[:2] + ["output %a"]))
    groups = scan_dump(d, min_count=1)
    for g in groups:
        for inst in g.instances:
            names = {n.name for s in d.sections for n in s.nodes if n.op != "output"}
            assert set(inst.nodes) <= names
    (tmp_path / "graphs").mkdir()
    text = EDGES.read_text().replace("# GraphModule: model", "# GraphModule: (root)")
    (tmp_path / "graphs" / "001_compile_compile_model.txt").write_text(text)
    report = find_candidates(tmp_path, min_count=1)
    assert report.candidates
    assert all(c.instances for c in report.candidates)


def test_long_layout_chain_is_peeled_without_revisiting() -> None:
    # view -> view -> ... -> add: the chain is peeled from the region edge by a worklist (linear); what
    # remains is the arithmetic
    lines = [t("x"), t("y")]
    prev = "x"
    for i in range(3000):
        lines.append(call(f"v{i}", "aten.view.default", t(prev), "[2, 8]"))
        prev = f"v{i}"
    lines += [
        call("s", "aten.add.Tensor", t(prev), t("y")),
        call("e", "aten.exp.default", t("s")),
        "output %e",
    ]
    groups = scan_dump(dump(("(root)", lines)), min_count=1)
    assert [i.nodes for g in groups for i in g.instances] == [("s", "e")]


def test_moe_blocks_absorb_their_fragments() -> None:
    groups = scan_dump(parse(C / "moe" / "graphs" / "028_compile_compile_model.txt"))
    fams = [g.family for g in groups]
    assert fams.count("moe") == 1
    # the router softmax and the experts' silu * mul belong to the moe candidate, not to fragments
    assert not {"softmax", "silu_mul", "elementwise_chain"} & set(fams)
