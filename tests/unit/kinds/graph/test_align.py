"""Node alignment fallback chain on synthetic decoder graphs."""

from __future__ import annotations

from pathlib import Path

from ad_diff.kinds.graph.align import align_sections, scope_of
from ad_diff.kinds.graph.index import norm_target, strip_counter
from ad_diff.kinds.graph.model import GraphSection
from ad_diff.kinds.graph.parse import parse_text
from scripts.synth_dumps import Spec, build


def section(spec: Spec) -> GraphSection:
    return parse_text(build(spec), Path("x.txt")).sections[0]


def test_helpers() -> None:
    assert strip_counter("linear_13") == "linear"
    assert strip_counter("model_layers_0_q_weight") == "model_layers_0_q_weight"
    assert norm_target("<function f at 0x7f00ab>") == "<function f>"
    assert scope_of("model_layers_12_self_attn_q") == "model_layers_12"
    assert scope_of("linear_3") is None


def test_identical_graphs_align_exactly() -> None:
    al = align_sections(section(Spec(layers=2)), section(Spec(layers=2)))
    assert set(al.counts()) == {"exact"}
    assert al.structure_equal


def test_shifted_counters_align_without_false_exact_pairs() -> None:
    b, c = section(Spec(layers=3)), section(Spec(layers=3, counter_offset=1))
    al = align_sections(b, c)
    assert al.structure_equal
    assert not al.regions
    pairs = {p.baseline: p for p in al.pairs()}
    # linear_3 exists in both runs but is another layer's projection in the candidate: never paired by name.
    assert pairs["linear_3"].candidate == "linear_4"
    assert pairs["linear_3"].match_kind == "renamed"
    assert pairs["input_ids"].match_kind == "exact"


def test_fusion_in_one_layer_is_one_region_per_norm() -> None:
    b, c = section(Spec(layers=3)), section(Spec(layers=3, counter_offset=1, unfused_layers=(1,)))
    al = align_sections(b, c)
    assert len(al.regions) == 2
    for r in al.regions:
        assert r.kind == "rewritten"
        assert len(r.baseline) == 1
        assert r.baseline[0].startswith("torch_rmsnorm")
        assert len(r.candidate) == 8
        assert r.frontier  # bounded by aligned nodes
        assert r.baseline_lines[0].startswith("%torch_rmsnorm")
    assert {u.reason for u in al.unmatched} == {"rewritten"}
    # Every other node still aligns, including layer 2 after the changed layer.
    assert sum(al.counts().values()) == len(b.nodes) - 2


def test_op_form_change_regions_and_sequence_free_pairs() -> None:
    al = align_sections(section(Spec(layers=2)), section(Spec(layers=2, rope_narrow=True)))
    assert len(al.regions) == 2
    r = al.regions[0]
    assert [n.split("_")[0] for n in r.baseline] == ["split", "getitem", "getitem"]
    assert len(r.candidate) == 6
    assert not al.structure_equal


def test_sequence_fallback_pairs_what_signatures_cannot() -> None:
    # Two parallel identical chains: signatures are ambiguous, names differ, order decides.
    def txt(names: tuple[str, str]) -> str:
        a, b = names
        return (
            "# Transform: t\n# Stage: s\n\n%x : 2 : torch.float32\n"
            f"%{a} = aten.relu.default(%x : 2 : torch.float32) : 2 : torch.float32\n"
            f"%{b} = aten.relu.default(%x : 2 : torch.float32) : 2 : torch.float32\n"
            f"output %{a}, %{b}\n"
        )

    b = parse_text(txt(("relu", "relu_1")), Path("b")).sections[0]
    c = parse_text(txt(("relu_5", "relu_6")), Path("c")).sections[0]
    al = align_sections(b, c)
    kinds = {p.baseline: (p.candidate, p.match_kind) for p in al.pairs()}
    assert kinds["relu"][0] == "relu_5"
    assert kinds["relu_1"][0] == "relu_6"
    assert not al.unmatched


def test_added_and_removed_regions() -> None:
    base = "# Transform: t\n# Stage: s\n\n%x : 2 : torch.float32\n"
    neg = "%n = aten.neg.default(%x : 2 : torch.float32) : 2 : torch.float32\n"
    b = parse_text(base + neg + "output %n\n", Path("b"))
    c = parse_text(base + "output %x\n", Path("c"))
    al = align_sections(b.sections[0], c.sections[0])
    assert [r.kind for r in al.regions] == ["removed"]
    assert [(u.run, u.name, u.reason) for u in al.unmatched] == [("baseline", "n", "removed")]
    assert al.rewired == []  # the output reads an unmatched node: part of the region, not a rewiring
