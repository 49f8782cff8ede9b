"""The fixture generator is deterministic: regenerating a scenario reproduces the committed bytes."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
sys.path.insert(0, str(ROOT / "scripts"))

pytest.importorskip("torch")


def _tree(root: Path) -> dict[str, bytes]:
    # expected/ holds ad-diff's report snapshots (scripts/update_golden.py), not generator output
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != "expected"
    }


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fixturegen.generate import generate

    out = tmp_path_factory.mktemp("fixtures")
    # both use the same 2-layer export, so this costs one torch.export
    generate(out, ["identical", "metadata_loss"])
    return out


@pytest.mark.parametrize("name", ["identical", "metadata_loss"])
def test_regenerated_scenario_matches_committed_bytes(regenerated: Path, name: str) -> None:
    fresh = _tree(regenerated / "scenarios" / name)
    committed = _tree(FIXTURES / "scenarios" / name)
    assert sorted(fresh) == sorted(committed)
    changed = [k for k in fresh if fresh[k] != committed[k]]
    assert changed == [], f"regenerated files differ from the committed ones: {changed[:5]}"


def test_manifest_matches_committed(regenerated: Path) -> None:
    assert (regenerated / "scenarios" / "manifest.yaml").read_bytes() == (
        FIXTURES / "scenarios" / "manifest.yaml"
    ).read_bytes()


def test_dump_files_follow_ad_numbering(regenerated: Path) -> None:
    names = sorted(
        p.name for p in (regenerated / "scenarios" / "identical" / "baseline" / "graphs").iterdir()
    )
    # build_model yields no GraphModule, so the first file is the export; disabled transforms still dump
    assert names[0] == "001_export_export_to_gm.txt"
    gemms = next(i for i, n in enumerate(names) if n.endswith("_post_load_fusion_fuse_gemms.txt"))
    graphs = regenerated / "scenarios" / "identical" / "baseline" / "graphs"
    body = lambda n: (graphs / n).read_text().split("\n", 2)[2]  # noqa: E731
    assert body(names[gemms]) == body(names[gemms - 1])  # fuse_gemms is disabled: repeats the graph
    assert [int(n[:3]) for n in names] == list(range(1, len(names) + 1))
    text = (regenerated / "scenarios" / "identical" / "baseline" / "graphs" / names[-1]).read_text()
    assert text.startswith(
        "# Transform: compile_model\n# Stage: compile\n# GraphModules found: 1\n\n\n" + "=" * 80
    )
    assert "# GraphModule: model\n" in text  # compile_model wraps the GraphModule: root is not one


def test_metadata_loss_candidate_has_nodes_without_val(regenerated: Path) -> None:
    graphs = regenerated / "scenarios" / "metadata_loss"
    rope = next((graphs / "candidate" / "graphs").glob("*_match_rope_pattern.txt")).read_text()
    assert "= auto_deploy.torch_rope.default(" in rope
    assert ") : ? : N/A\n" in rope
    assert ": ? : unknown, 1, 2)" in rope
    base = next((graphs / "baseline" / "graphs").glob("*_match_rope_pattern.txt")).read_text()
    assert "? : N/A" not in base


def test_no_machine_paths_or_addresses(regenerated: Path) -> None:
    files = [p for p in (regenerated / "scenarios").rglob("*") if p.is_file()]
    assert len(files) > 20, "the generator wrote (almost) nothing: the scan below would pass on nothing"
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert str(ROOT) not in text, path
        assert "/tmp/pytest" not in text, path
        assert " at 0x" not in text, path


_SKIP = "Skipping sharding for single device"
_CTX = "[stage=sharding, transform=detect_sharding] "


@pytest.mark.parametrize(
    ("fmt", "prefix", "line"),
    [
        # V0 and V1 do not patch the logger: a transform's own line has no context
        ("V0", "L1", f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {_SKIP}"),
        ("V1", "L1", f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {_SKIP}"),
        # V2's decorator prefixes every line logged during the call
        ("V2", "L1", f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {_CTX}{_SKIP}"),
        ("V3", "L1", f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {_CTX}[APPLY] {_SKIP}"),
        # L2's info() bypasses log(): no rank, no context
        ("V3", "L2", f"[AUTO-DEPLOY] [INFO] {_SKIP}"),
        ("V3", "L3", f"[AUTO-DEPLOY] [INFO] [RANK 0] {_CTX}[APPLY] {_SKIP}"),
        ("V2", "L3", f"[AUTO-DEPLOY] [INFO] [RANK 0] {_CTX}{_SKIP}"),
    ],
)
def test_a_transforms_own_line_is_written_in_every_format(fmt: str, prefix: str, line: str) -> None:
    from fixturegen.events import Event
    from fixturegen.log_writer import LogStyle, render_log

    ev = Event("sharding", "detect_sharding", "applied", 0, said=(("info", _SKIP),))
    lines = render_log([ev], LogStyle(fmt=fmt, prefix=prefix, noise=0)).splitlines()
    own = [i for i, text in enumerate(lines) if text.endswith(_SKIP)]
    assert len(own) == 1
    assert re.sub(r"^\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] ", "", lines[own[0]]) == line  # L1's timestamp
    result = next(i for i, text in enumerate(lines) if "num_matches=0" in text or "[SUMMARY]" in text)
    assert own[0] < result, "a transform logs its own lines while it applies, before its result line"


def test_the_pipeline_records_what_a_transform_logs() -> None:
    from fixturegen.pipeline import RunSpec, run

    said = {ev.key: ev.said for ev in run(RunSpec()).events if ev.said}
    assert said == {"detect_sharding": (("info", _SKIP),)}


def _bodies(spec: object) -> dict[str, str]:
    """Each transform's D3 dump without its two header lines (``# Transform:``, ``# Stage:``)."""
    from fixturegen.pipeline import run

    return {key: texts["D3"].split("\n", 2)[2] for _, key, texts in run(spec).dumps if texts["D3"]}


def _weights(text: str, part: str) -> set[str]:
    return set(re.findall(rf"%model_layers_\d+_mlp_{part}_proj_weight : (\w+) :", text))


@pytest.mark.parametrize("fused", [True, False], ids=["swiglu", "unfused_mlp"])
def test_tensor_parallel_sharding_slices_the_mlp(fused: bool) -> None:
    from fixturegen.model import ModelSpec
    from fixturegen.pipeline import RunSpec, run
    from fixturegen.transforms import Knobs

    m = ModelSpec()
    off = frozenset() if fused else frozenset({"match_swiglu_pattern"})
    one, two = RunSpec(disabled=off), RunSpec(disabled=off, knobs=Knobs(world_size=2))
    counts = {ev.key: ev.matches for ev in run(two).events}
    assert counts["detect_sharding"] == counts["sharding_transform_executor"] == 3 * m.layers
    said = {ev.key: ev.said for ev in run(two).events}
    assert said["detect_sharding"] == (("info", "Running TP sharding detection"),)
    b1, b2 = _bodies(one), _bodies(two)
    # planning changes no graph: everything up to and including detect_sharding is the single-device graph
    upto = list(b1).index("detect_sharding") + 1
    assert [b2[k] for k in list(b1)[:upto]] == [b1[k] for k in list(b1)[:upto]]
    before, after = b1["sharding_transform_executor"], b2["sharding_transform_executor"]
    half, hidden = m.intermediate // 2, m.hidden
    assert _weights(before, "down") == {f"{hidden}x{m.intermediate}"}
    assert _weights(after, "down") == {f"{hidden}x{half}"}  # row split: input features
    assert _weights(after, "gate") == _weights(after, "up") == {f"{half}x{hidden}"}  # column split
    if fused:
        swiglu = re.findall(r"^%torch_swiglu\w* = .* : 1x\w+x(\d+) : torch\.float32$", after, re.M)
        assert swiglu == [str(half)] * m.layers
    else:
        gate_out = r"^%\w+ = aten\.linear\.default\(.*_mlp_gate_proj_weight : .*\) : 1x\w+x(\d+) :"
        gate = re.findall(gate_out, after, re.M)
        assert gate == [str(half)] * m.layers
    # one all-reduce after each down projection, whose output keeps the hidden size; the residual reads it
    all_reduce = r"^%(\w+) = auto_deploy\.torch_dist_all_reduce\.default\(%(\w+) : 1x\w+x(\d+) :"
    reduce = re.findall(all_reduce, after, re.M)
    assert len(reduce) == m.layers
    for name, arg, width in reduce:
        assert width == str(hidden)
        assert re.search(rf"^%{arg} = aten\.linear\.default\(.*_mlp_down_proj_weight", after, re.M)
        assert re.search(rf"^%add_\d+ = aten\.add\.Tensor\(.*%{name} :", after, re.M)
    assert "torch_dist_all_reduce" not in before


def test_single_device_sharding_changes_nothing() -> None:
    from fixturegen.pipeline import RunSpec, run
    from fixturegen.transforms import Knobs

    assert Knobs().world_size == 1  # every existing scenario runs on one device
    counts = {ev.key: ev.matches for ev in run(RunSpec()).events}
    assert counts["detect_sharding"] == counts["sharding_transform_executor"] == 0
    b = _bodies(RunSpec())
    keys = list(b)
    at = keys.index("detect_sharding")
    assert b[keys[at - 1]] == b["detect_sharding"] == b["sharding_transform_executor"]


def test_a_graph_cache_load_is_logged_like_the_optimizer_logs_it() -> None:
    from fixturegen.events import Event
    from fixturegen.log_writer import LogStyle, Story, render_lines, restore_line

    snapshot = restore_line(Story(restored_at="t"))
    assert snapshot.startswith("Restored AutoDeploy pipeline snapshot for 't' from ")
    line = restore_line(Story(restored_at="t", restore_cache="graph"))
    assert re.fullmatch(r"\[cache\] Loaded graph from /cache/ad-graphs/[0-9a-f]{64}/graph\.pt", line)
    with pytest.raises(ValueError, match="unknown cache"):
        restore_line(Story(restored_at="t", restore_cache="disk"))
    ev = Event("weight_load", "load_weights", "applied", 0)
    for fmt in ("V0", "V1", "V2", "V3"):
        story = Story(restored_at="t", restore_cache="graph")
        text = [t for _, t in render_lines([ev], LogStyle(fmt=fmt, noise=0), story)]
        # the optimizer logs it before the first transform it runs, outside any transform's context
        assert text[0].endswith(f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {line}"), (fmt, text[0])


SCENARIOS = FIXTURES / "scenarios"


def _result(log: str, key: str, rank: int = 0) -> str:
    """The last result ``rank`` logged for ``key`` in a V3 log: ``matches=N``, ``skipped`` or ``disabled``."""
    pattern = rf"\[RANK {rank}\] \[I\] \[stage=\w+, transform={key}\] \[SUMMARY\] (\w+(?:=\d+)?)"
    return re.findall(pattern, log)[-1]


def test_graph_cache_load_fixture() -> None:
    cand = SCENARIOS / "graph_cache_load" / "candidate"
    log = (cand / "ad.log").read_text()
    assert "[cache] Loaded graph from /cache/ad-graphs/" in log
    assert "Restored AutoDeploy" not in log
    # nothing logged or dumped up to the cache point
    assert "transform=export_to_gm" not in log
    assert "transform=sharding_transform_executor" not in log
    assert sorted(p.name for p in (cand / "graphs").iterdir())[0] == "001_weight_load_load_weights.txt"


def test_derived_scenarios_keep_their_origins_expectations() -> None:
    """A scenario made from another by a change of presentation or run events promises the same outcome."""
    from fixturegen.scenarios import scenarios

    by = {sc.name: sc for sc in scenarios()}
    derived = {
        "graph_cache_load": "cache_restore",
        "dump_output_parens": "metadata_loss",
        "log_formats_mixed": "identical",
        "log_verbosity_mixed": "identical",
        "no_tensors_within": "identical",
    }
    for name, origin in derived.items():
        d, o = by[name], by[origin]
        assert (d.verdict, d.findings, d.root_causes) == (o.verdict, o.findings, o.root_causes), name
    # one more rank-1 change tied to the same collapse: the same single root cause
    causes = {n: [(c.cause, c.transform, c.consequences) for c in by[n].root_causes]
              for n in ("rank1_executor", "rank1_regresses")}
    assert causes["rank1_executor"] == causes["rank1_regresses"]


def test_graph_cache_then_loss_fixture() -> None:
    cand = SCENARIOS / "graph_cache_then_loss" / "candidate"
    assert "[cache] Loaded graph from " in (cand / "ad.log").read_text()
    # the log's loss and the dump's agree: two norms stay unfused
    assert _result((cand / "ad.log").read_text(), "fuse_rmsnorm") == "matches=3"
    assert next((cand / "graphs").glob("*_fuse_rmsnorm.txt")).read_text().count("torch_rmsnorm.default(") == 2


def test_fuse_rmsnorm_keeps_the_norms_it_names() -> None:
    from fixturegen.pipeline import RunSpec, run
    from fixturegen.transforms import Knobs

    spec = RunSpec(knobs=Knobs(fuse_rmsnorm_keeps=("model.layers.1.",)))
    counts = {ev.key: ev.matches for ev in run(spec).events}
    assert counts["match_rmsnorm_pattern"] == 5
    assert counts["fuse_rmsnorm"] == 3
    kept = re.findall(r"^%\w+ = auto_deploy\.torch_rmsnorm\.default\(%\w+ : \S+ : \S+, %(\w+) :",
                      _bodies(spec)["fuse_rmsnorm"], re.M)
    assert kept == ["model_layers_1_input_layernorm_weight", "model_layers_1_post_attention_layernorm_weight"]


@pytest.mark.parametrize(("form", "line"), [("bare", "output %a, %b"), ("parens", "output(%a, %b)"),
                                            ("spaced", "output (%a, %b)")])
def test_dump_output_forms_change_the_output_line_only(regenerated: Path, form: str, line: str) -> None:
    from fixturegen.dump_writer import print_output

    assert print_output("# Transform: t\n%a = f() : ? : N/A\noutput %a, %b\n", form).splitlines()[-1] == line
    for path in sorted((regenerated / "scenarios" / "identical" / "baseline" / "graphs").iterdir()):
        text = path.read_text()
        printed = print_output(text, form)
        changed = [(a, b) for a, b in zip(text.splitlines(), printed.splitlines(), strict=True) if a != b]
        assert all(a.startswith("output ") and b.startswith("output") for a, b in changed)
        assert len(changed) == (0 if form == "bare" else text.count("\noutput "))


def test_dump_output_parens_fixture() -> None:
    for side, want in (("baseline", "output %"), ("candidate", "output(%")):
        graphs = SCENARIOS / "dump_output_parens" / side / "graphs"
        outs = [ln for p in graphs.iterdir() for ln in p.read_text().splitlines() if ln.startswith("output")]
        assert len(outs) == len(list(graphs.iterdir()))
        assert all(ln.startswith(want) for ln in outs)


@pytest.mark.parametrize(("name", "formats"), [("log_formats_mixed", (("V2", "L1"), ("V3", "L3"))),
                                               ("log_verbosity_mixed", (("V3", "L1"), ("V3", "L3")))])
def test_mixed_presentation_fixtures(name: str, formats: tuple[tuple[str, str], ...]) -> None:
    for side, (fmt, prefix) in zip(("baseline", "candidate"), formats, strict=True):
        log = (SCENARIOS / name / side / "ad.log").read_text()
        assert ("[SUMMARY] matches=" in log) == (fmt == "V3")
        assert (" elapsed time: total=" in log) == (fmt == "V2")
        assert ("[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] [stage=" in log) == (prefix == "L1")
        assert ("[AUTO-DEPLOY] [INFO] [RANK 0] [stage=" in log) == (prefix == "L3")
    if name == "log_verbosity_mixed":
        base, cand = ((SCENARIOS / name / s / "ad.log").read_text() for s in ("baseline", "candidate"))
        for debug in ("[DEBUG]", " config: stage=", " Model after ", "[CUDA MEM] "):
            assert debug not in base
            assert debug in cand


def test_world_size_tp2_fixture() -> None:
    for side, ws, ranks in (("baseline", 1, (0,)), ("candidate", 2, (0, 1))):
        run_dir = SCENARIOS / "world_size_tp2" / side
        assert f"world_size: {ws}\n" in (run_dir / "config" / "default.yaml").read_text()
        log = (run_dir / "ad.log").read_text()
        assert f"    world_size={ws},\n" in log
        assert re.findall(r"\[RANK (\d+)\]", log)
        assert {int(r) for r in re.findall(r"\[RANK (\d+)\]", log)} == set(ranks)
        want = "matches=0" if ws == 1 else "matches=6"
        for r in ranks:
            assert _result(log, "detect_sharding", r) == want
            assert _result(log, "sharding_transform_executor", r) == want
    graphs = SCENARIOS / "world_size_tp2" / "candidate" / "graphs"
    dump = next(graphs.glob("*_sharding_transform_executor.txt"))
    assert dump.read_text().count("= auto_deploy.torch_dist_all_reduce.default(") == 2


def test_stale_dumps_fixture() -> None:
    cand = SCENARIOS / "stale_dumps" / "candidate"
    assert _result((cand / "ad.log").read_text(), "match_rmsnorm_pattern") == "matches=5"
    after = next((cand / "graphs").glob("*_match_rmsnorm_pattern.txt")).read_text()
    before = next((cand / "graphs").glob("*_match_rope_layout.txt")).read_text()
    assert after.count("= auto_deploy.torch_rmsnorm.default(") - before.count("torch_rmsnorm.default(") == 9


def test_rank1_executor_fixture() -> None:
    base = (SCENARIOS / "rank1_executor" / "baseline" / "slurm-48213.out").read_text()
    cand = (SCENARIOS / "rank1_executor" / "candidate" / "slurm-48213.out").read_text()
    keys = ("match_rmsnorm_pattern", "sharding_transform_executor", "fuse_rmsnorm")
    assert [_result(cand, k, 1) for k in keys] == ["matches=0", "matches=2", "matches=0"]
    for k in keys:
        assert _result(cand, k, 0) == _result(base, k, 0) == _result(base, k, 1)
    dumps = [[p.read_bytes() for p in sorted((SCENARIOS / "rank1_executor" / s / "graphs").iterdir())]
             for s in ("baseline", "candidate")]
    assert dumps[0] == dumps[1]


def test_no_tensors_within_fixture() -> None:
    from safetensors.torch import load_file

    a, b = (load_file(str(SCENARIOS / "no_tensors_within" / s / "tensors" / "outputs.safetensors"))["logits"]
            for s in ("baseline", "candidate"))
    assert not a.equal(b)  # the files differ ...
    assert ((a.float() - b.float()).norm() / a.float().norm()).item() < 0.01  # ... within tolerance
