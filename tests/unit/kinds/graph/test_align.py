"""Node alignment fallback chain on synthetic decoder graphs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.kinds.graph import align as align_module
from ad_diff.kinds.graph.align import align_sections, scope_of
from ad_diff.kinds.graph.aligned import SectionAlignment
from ad_diff.kinds.graph.diff import MetaChangeKind
from ad_diff.kinds.graph.index import GraphIndex, norm_target, strip_counter
from ad_diff.kinds.graph.linememo import LineMemo
from ad_diff.kinds.graph.measure import meta_changes
from ad_diff.kinds.graph.model import GraphSection, MatchKind
from ad_diff.kinds.graph.parse import parse_text
from scripts.synth_dumps import Spec, build
from tests.unit.kinds.graph.test_index import sections


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


F32 = "torch.float32"


def _graph(lines: list[str]) -> GraphSection:
    return parse_text("# Transform: t\n# Stage: s\n\n" + "\n".join(lines) + "\n", Path("x.txt")).sections[0]


def test_counter_shifted_names_are_not_exact_pairs() -> None:
    """Two branches of different widths joined by a cat: their backward signatures are equal, so a name-first
    aligner paired baseline add_1 (1x2) with candidate add_1 (1x4: baseline's add, renamed by an upstream
    insertion) and reported a shape change. The shapes disagree, so it is no exact pair."""
    x = f"%x : 1x8 : {F32}"
    tail = [
        f"%narrow = aten.narrow.default(%x : 1x8 : {F32}, -1, 0, 4) : 1x4 : {F32}",
        f"%{{a}} = aten.add.Tensor(%narrow : 1x4 : {F32}, 1.0) : 1x4 : {F32}",
        f"%narrow_1 = aten.narrow.default(%x : 1x8 : {F32}, -1, 4, 2) : 1x2 : {F32}",
        f"%{{b}} = aten.add.Tensor(%narrow_1 : 1x2 : {F32}, 1.0) : 1x2 : {F32}",
        f"%cat = aten.cat.default([{{a}}, {{b}}], -1) : 1x6 : {F32}",
        "output %cat, %mul",
    ]
    base = _graph([x, f"%mul = aten.mul.Tensor(%x : 1x8 : {F32}, 2.0) : 1x8 : {F32}",
                   *(t.format(a="add", b="add_1") for t in tail)])
    cand = _graph([x, f"%add = aten.add.Tensor(%x : 1x8 : {F32}, 0.0) : 1x8 : {F32}",
                   f"%mul = aten.mul.Tensor(%add : 1x8 : {F32}, 2.0) : 1x8 : {F32}",
                   *(t.format(a="add_1", b="add_2") for t in tail)])
    al = align_sections(base, cand)
    pairs = {p.baseline: (p.candidate, p.match_kind) for p in al.pairs()}
    assert pairs["add"][0] == "add_1"
    assert pairs["add_1"][0] == "add_2"
    assert pairs["add_1"][1] is not MatchKind.EXACT
    assert meta_changes(al) == []  # no shape change: every pair is the same node
    assert [(u.run, u.name) for u in al.unmatched] == [("candidate", "add")]


def test_stable_input_names_keep_their_identity_through_a_shape_change() -> None:
    """``input_ids`` is the same input in both runs even when its shape changes (a real shape change); a
    counter-named placeholder is identified by what reads it, not by its number."""
    lin = ("%{out} = aten.linear.default(%{x} : 1x64 : " + F32 + ", %{w} : {shape} : " + F32 + ") : 1x{n} : "
           + F32)
    base = _graph([
        "%input_ids : 1xs44 : torch.int64", f"%h : 1x64 : {F32}", f"%fused_weight_0 : 64x64 : {F32}",
        f"%fused_weight_1 : 128x64 : {F32}",
        lin.format(out="linear", x="h", w="fused_weight_0", shape="64x64", n=64),
        f"%relu = aten.relu.default(%linear : 1x64 : {F32}) : 1x64 : {F32}",
        lin.format(out="linear_1", x="relu", w="fused_weight_1", shape="128x64", n=128),
        "output %input_ids, %linear_1",
    ])
    cand = _graph([  # an upstream group more: the candidate's fused_weight_1 is new, baseline's is now _2
        "%input_ids : 2xs44 : torch.int64", f"%h : 1x64 : {F32}", f"%fused_weight_0 : 64x64 : {F32}",
        f"%fused_weight_1 : 256x64 : {F32}", f"%fused_weight_2 : 128x64 : {F32}",
        lin.format(out="linear", x="h", w="fused_weight_0", shape="64x64", n=64),
        lin.format(out="linear_1", x="h", w="fused_weight_1", shape="256x64", n=256),
        f"%relu = aten.relu.default(%linear : 1x64 : {F32}) : 1x64 : {F32}",
        lin.format(out="linear_2", x="relu", w="fused_weight_2", shape="128x64", n=128),
        "output %input_ids, %linear_2",
    ])
    al = align_sections(base, cand)
    pairs = {p.baseline: (p.candidate, p.match_kind) for p in al.pairs()}
    assert pairs["input_ids"] == ("input_ids", MatchKind.EXACT)
    assert pairs["fused_weight_1"][0] == "fused_weight_2"
    assert pairs["linear_1"][0] == "linear_2"
    changed = [(m.baseline, m.candidate) for m in meta_changes(al) if m.kind is MetaChangeKind.CHANGED]
    assert changed == [("input_ids", "input_ids")]
    assert sorted(u.name for u in al.unmatched) == ["fused_weight_1", "linear_1"]
    assert {u.run for u in al.unmatched} == {"candidate"}


def test_lost_metadata_still_pairs_exactly() -> None:
    """Metadata loss must stay detectable: an unknown shape agrees with any shape."""
    neg = f"%neg = aten.neg.default(%x : 1x8 : {F32})"
    base = _graph([f"%x : 1x8 : {F32}", f"{neg} : 1x8 : {F32}", "output %neg"])
    cand = _graph([f"%x : 1x8 : {F32}", f"{neg} : ? : N/A", "output %neg"])
    al = align_sections(base, cand)
    assert {p.baseline: p.match_kind for p in al.pairs()}["neg"] is MatchKind.EXACT
    assert [m.kind for m in meta_changes(al)] == [MetaChangeKind.LOST]


def _result(al: SectionAlignment) -> tuple[object, ...]:
    return (al.mb.tolist(), al.mc.tolist(), al.kind.tolist(), al.unmatched, al.regions, al.rewired,
            meta_changes(al))


def test_shared_leading_nodes_change_no_result() -> None:
    """Both sections parsed through one memo share their leading nodes as objects, so the index takes them
    from the baseline's and pairs them without a look: the alignment equals one over separate parses."""
    pairs = [(Spec(layers=3), Spec(layers=3, unfused_layers=(2,))),
             (Spec(layers=3, fused_norm=False), Spec(layers=3, fused_norm=False, norm_meta=False)),
             (Spec(layers=4, rope_narrow=True), Spec(layers=4, rope_fused=True, rope_fused_layers=(3,))),
             (Spec(layers=2), Spec(layers=2, counter_offset=1)),
             (Spec(layers=2), Spec(layers=2))]
    for sb, sc in pairs:
        memo = LineMemo()
        b = parse_text(build(sb), Path("b"), memo).sections[0]
        c = parse_text(build(sc), Path("c"), memo).sections[0]
        fast = align_sections(b, c)
        slow = align_sections(section(sb), section(sc))
        assert slow.c.shared == 0
        if sb == sc or sb.layers == 3:
            assert fast.c.shared > 0
        assert _result(fast) == _result(slow), (sb, sc)
        plain = GraphIndex(c, ids=fast.c.ids)  # (ids are compared within one table)
        assert fast.c.names == plain.names
        for field in ("tid", "op", "mknown", "mshape", "mdtype", "mtext", "lits", "ext", "in_ptr", "in_src",
                      "in_arg", "us_ptr", "us_node", "us_arg", "fwd", "bwd"):
            assert np.array_equal(getattr(fast.c, field), getattr(plain, field)), field


def test_repeated_names_take_nothing_from_the_other_index() -> None:
    text = build(Spec(layers=2))
    lines = text.split("\n")
    k = next(i for i, ln in enumerate(lines) if ln.startswith("%embedding"))
    dup = "\n".join([*lines[: k + 1], lines[k].replace("%embedding =", "%input_ids ="), *lines[k + 1 :]])
    memo = LineMemo()
    b = parse_text(text, Path("b"), memo).sections[0]
    c = parse_text(dup, Path("c"), memo).sections[0]  # 'input_ids' twice: positions are not the same
    fast = align_sections(b, c)
    assert fast.c.shared == 0
    slow = align_sections(section(Spec(layers=2)), parse_text(dup, Path("c")).sections[0])
    assert _result(fast) == _result(slow)


@settings(max_examples=300, deadline=None)
@given(lb=sections(), edits=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["mul", "drop", "shape",
                                                                                    "swap"])), max_size=3))
def test_exact_step_on_arrays_equals_the_visit_in_dump_order(lb: list[str], edits: list[tuple[int, str]]
                                                             ) -> None:
    """Where no name repeats, the ``exact`` step decides every same-name pair at once (columns, then the
    chain of inputs that are exact pairs themselves); it pairs exactly what the visit of the candidate's
    nodes in dump order pairs (the general form, kept for sections that repeat a name)."""
    lc = list(lb)
    for at, how in edits:
        k = 1 + at % max(1, len(lc) - 2)
        if " = " not in lc[k]:
            continue
        if how == "mul":
            lc[k] = lc[k].replace("aten.add", "aten.mul")
        elif how == "shape":
            lc[k] = lc[k].rsplit(" : ", 2)[0] + " : 3x1 : " + F32
        elif how == "swap":  # the same inputs in another order: not the same wiring
            head, rest = lc[k].split("(", 1)
            inner, tail = rest.rsplit(") : ", 1)
            if "[" not in inner:
                lc[k] = f"{head}({', '.join(reversed(inner.split(', ')))}) : {tail}"
        else:
            del lc[k]
    memo = LineMemo()
    head = "# Transform: t\n# Stage: s\n\n"
    b = parse_text(head + "\n".join(lb) + "\n", Path("b.txt"), memo).sections[0]
    c = parse_text(head + "\n".join(lc) + "\n", Path("c.txt"), memo).sections[0]
    B = GraphIndex(b)
    C = GraphIndex(c, like=B)
    if not (B.unique and C.unique):
        return
    fast, slow = SectionAlignment("x", B, C), SectionAlignment("x", B, C)
    align_module._exact(fast)
    if C.shared:
        slow.pair(np.arange(C.shared), np.arange(C.shared), MatchKind.EXACT)
    align_module._exact_by_name(slow)
    assert fast.mb.tolist() == slow.mb.tolist()
    assert fast.kind.tolist() == slow.kind.tolist()


def test_inputs_in_another_order_are_no_exact_pair() -> None:
    """``add(x0, x1)`` against ``add(x1, x0)`` under one name: the inputs are exact pairs, but not at the same
    argument positions, so the node is not exact (and reads other inputs: rewired)."""
    head = [f"%x0 : 2x0 : {F32}", f"%x1 : 2x1 : {F32}"]
    args = f"%x0 : 2x1 : {F32}", f"%x1 : 2x1 : {F32}"
    base = _graph([*head, f"%add = aten.add.Tensor({args[0]}, {args[1]}) : 2x1 : {F32}", "output %add"])
    cand = _graph([*head, f"%add = aten.add.Tensor({args[1]}, {args[0]}) : 2x1 : {F32}", "output %add"])
    al = align_sections(base, cand)
    assert {p.baseline: p.match_kind for p in al.pairs()}["add"] is not MatchKind.EXACT
    assert al.rewired == [("add", "add")]
