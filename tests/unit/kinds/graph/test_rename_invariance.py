"""A rename is no difference: a consistent renaming of every node of one run's dumps (what a torch upgrade
does: ``view_default_2`` for ``view_2``, ``arg0_1`` for ``input_ids``, counters shifted or permuted) leaves
targets and wiring as they were, so the graph analysis measures nothing and the rules draw no finding."""

from __future__ import annotations

import random
import re
import shutil
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ad_diff.kinds.graph.analysis import analyze_graphs
from ad_diff.kinds.graph.classify import classify
from ad_diff.kinds.graph.measure import align_dumps
from ad_diff.kinds.graph.model import Arg, GraphDump
from ad_diff.kinds.graph.parse import parse
from ad_diff.kinds.graph.render import render
from tests.conftest import ROOT

PAIR = ROOT / "fixtures" / "scenarios" / "identical"
DUMPS = sorted((PAIR / "candidate" / "graphs").glob("*.txt"))
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


def renaming(dumps: list[GraphDump], rnd: random.Random, style: str, inputs: bool) -> dict[str, str]:
    """One consistent renaming of the run: every call node (and, with ``inputs``, every graph input) gets a
    new name, the same one in every dump. ``permute`` deals the call names out among the call nodes (each
    counter name now belongs to another node, the worst case for a name-first alignment); ``scheme`` names
    nodes the way another torch would (``aten_view_default_5`` for ``view_2``)."""
    calls = sorted({n.name for d in dumps for s in d.sections for n in s.nodes if n.op == "call"})
    out: dict[str, str] = {}
    if style == "permute":
        dealt = calls[:]
        rnd.shuffle(dealt)
        out.update(zip(calls, dealt, strict=True))
    else:
        shift = rnd.randrange(0, 5)
        for name in calls:
            base, _, n = name.rpartition("_") if name[-1].isdigit() else (name, "", "")
            k = (int(n) if n.isdigit() else 0) + shift
            out[name] = f"aten_{base or name}_default_{k}"
    if inputs:
        ins = sorted({n.name for d in dumps for s in d.sections for n in s.nodes if n.op == "placeholder"})
        out.update({name: f"arg{i}_{rnd.randrange(1, 3)}" for i, name in enumerate(ins)})
    return out


def renamed(dump: GraphDump, names: dict[str, str]) -> GraphDump:
    """``dump`` with every node renamed through ``names`` (its references and list literals too)."""
    def arg(a: Arg) -> Arg:
        if a.node:
            return replace(a, text=names.get(a.text, a.text))
        if a.refs:
            text = _WORD.sub(lambda m: names.get(m.group(0), m.group(0)), a.text)
            return replace(a, text=text, refs=tuple(names.get(r, r) for r in a.refs))
        return a

    sections = tuple(replace(s, nodes=tuple(replace(n, name=names.get(n.name, n.name),
                                                    args=tuple(arg(a) for a in n.args)) for n in s.nodes))
                     for s in dump.sections)
    return replace(dump, sections=sections)


STYLE = st.sampled_from(["permute", "scheme"])


@settings(max_examples=30, deadline=None)
@given(rnd=st.randoms(use_true_random=False), style=STYLE, inputs=st.booleans(),
       which=st.sampled_from(DUMPS))
def test_a_renamed_dump_aligns_completely(rnd: random.Random, style: str, inputs: bool, which: Path) -> None:
    dump = parse(which)
    other = renamed(dump, renaming([dump], rnd, style, inputs))
    got = align_dumps(dump, other)
    assert got.unmatched == ()
    assert got.rewired == ()
    assert got.changes == ()
    assert got.notes == ()


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rnd=st.randoms(use_true_random=False), style=STYLE)
def test_a_renamed_run_yields_no_graph_finding(tmp_path_factory, rnd: random.Random, style: str) -> None:
    cand = tmp_path_factory.mktemp("renamed")
    shutil.rmtree(cand)
    shutil.copytree(PAIR / "candidate" / "graphs", cand)
    dumps = [parse(p) for p in sorted(cand.glob("*.txt"))]
    names = renaming(dumps, rnd, style, inputs=True)
    for d in dumps:
        d.path.write_text(render(renamed(d, names)), encoding="utf-8")
    a = analyze_graphs(PAIR / "baseline" / "graphs", cand)
    assert classify(a, None, None) == []
    assert a.first_divergence is None


def test_a_renamed_run_says_its_dumps_differ_in_names_only() -> None:
    from ad_diff.kinds.graph.section import view
    from tests.views import NO_CONTEXT, markdown

    root = ROOT / "fixtures" / "scenarios"
    renamed = analyze_graphs(root / "torch_upgrade_rename" / "baseline" / "graphs",
                             root / "torch_upgrade_rename" / "candidate" / "graphs")
    renamed_md = markdown(view(renamed, NO_CONTEXT))
    assert "transform(s) whose dumps differ in node names only" in renamed_md
    assert "carry the same differences" not in renamed_md
    changed = analyze_graphs(root / "partial_loss" / "baseline" / "graphs",
                             root / "partial_loss" / "candidate" / "graphs")
    changed_md = markdown(view(changed, NO_CONTEXT))
    assert "later transform(s) whose dumps carry the same differences" in changed_md
