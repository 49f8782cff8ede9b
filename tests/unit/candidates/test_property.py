"""Property test: the scan finishes on any generated graph and reports only what the graph holds.

Graphs are random DAGs (plus a few back references, which hostile dumps can hold) over the op mix the scan
distinguishes: pointwise, reductions, layout, GEMMs, routers (topk), custom ops; values read by the output
line at random. For each: no exception, every instance node is a node of its section, never the output
line (no generated node is called ``output``), no node in two instances, at least ``min_count`` instances
per group, formulas within their bound.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ad_diff.candidates.formula import MAX_LEN
from ad_diff.candidates.scan import scan_dump
from tests.unit.candidates.conftest import call, dump, t

TARGETS = (
    "aten.add.Tensor",
    "aten.mul.Tensor",
    "aten.div.Tensor",
    "aten.sqrt.default",
    "aten.rsqrt.default",
    "aten.pow.Tensor_Scalar",
    "aten.mean.dim",
    "aten.sum.dim_IntList",
    "aten.softmax.int",
    "aten.silu.default",
    "aten.sigmoid.default",
    "aten.neg.default",
    "aten.cat.default",
    "aten.view.default",
    "aten.transpose.int",
    "aten.linear.default",
    "aten.bmm.default",
    "aten.topk.default",
    "aten.index_add_.default",
    "<built-in function getitem>",
    "auto_deploy.torch_attention.default",
    "auto_deploy.torch_rope_bsnd.default",
    "aten.embedding.default",
)
EXAMPLES = int(os.environ.get("AD_DIFF_FUZZ_EXAMPLES", "120"))


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 40))
    lines = [t("p0"), t("p1")]
    names = ["p0", "p1"]
    for i in range(n):
        target = draw(st.sampled_from(TARGETS))
        k = draw(st.integers(0, 3))
        args = []
        for _ in range(k):
            if draw(st.integers(0, 9)) == 0:  # a reference to a later node, or to the node itself
                args.append(t(f"n{draw(st.integers(i, n))}"))
            elif draw(st.booleans()):
                args.append(t(draw(st.sampled_from(names))))
            else:
                args.append(t(f"model_layers_{draw(st.integers(0, 3))}_w"))  # a parameter
        if draw(st.booleans()):
            args.append("[-1]")
        if draw(st.integers(0, 5)) == 0:
            args.append(f"[{draw(st.sampled_from(names))}, 2]")  # a list literal naming a node
        lines.append(call(f"n{i}", target, *args))
        names.append(f"n{i}")
    outs = draw(st.lists(st.sampled_from(names), max_size=4))
    lines.append("output " + ", ".join(f"%{o}" for o in outs) if outs else "output")
    copies = draw(st.integers(1, 3))  # repeated sections make repeated patterns
    return dump(*[(f"s{i}", lines) for i in range(copies)])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(1, 3))
def test_scan_never_crashes_and_reports_only_graph_nodes(d, min_count) -> None:
    groups = scan_dump(d, min_count=min_count)
    by_section = {s.name: {n.name for n in s.nodes if n.op != "output"} for s in d.sections}
    for g in groups:
        assert len(g.instances) >= min_count
        assert len(g.formula) <= MAX_LEN
        assert len(g.pattern) == len(g.instances[0].nodes)
        for inst in g.instances:
            assert set(inst.nodes) <= by_section[inst.section]
    # a node belongs to at most one instance
    seen: set[tuple[str, str]] = set()
    for g in groups:
        for inst in g.instances:
            for node in inst.nodes:
                assert (inst.section, node) not in seen, (node, g.family)
                seen.add((inst.section, node))
