"""The scenario catalogue: for each scenario a baseline and a candidate :class:`Side`, a SCENARIO.md text
and the expected ad-diff outcome (verdict and findings) that goes into ``manifest.yaml``."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .log_writer import LogStyle
from .model import ModelSpec
from .pipeline import RunSpec
from .run_folder import Side, default_yaml, overlay_yaml
from .tensors import TensorSpec
from .transforms import Knobs

M2 = ModelSpec(layers=2)
M3 = ModelSpec(layers=3)
BASE = Side(spec=RunSpec(model=M2), style=LogStyle(seed=1))
CAND = Side(spec=RunSpec(model=M2), style=LogStyle(seed=2))


@dataclass(frozen=True)
class Finding:
    """An expected finding: category (``ad_diff.core.model.Category``) and the transform it points at (None for
    a run-level finding). Every error and warning ad-diff reports must be listed; info findings may be."""

    category: str
    transform: str | None
    stage: str | None
    note: str = ""
    collapse: bool | None = None


@dataclass(frozen=True)
class Cause:
    """An expected gating root cause (``ad_diff.explain.model.CauseKind``), the transform that heads it, and the
    transforms (or tensors) of its error consequences, in any order."""

    cause: str
    transform: str | None
    consequences: tuple[str | None, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class FalsePositive:
    """A finding ad-diff reports today although the scenario's intent says it should not, with the reason and
    the work that removes it. The manifest test accepts it only while it is reported."""

    code: str
    category: str
    transform: str | None
    why: str


@dataclass(frozen=True)
class Scenario:
    """A baseline/candidate pair with its story and expected outcome."""

    name: str
    summary: str
    injected: str
    expect_text: str
    verdict: str
    findings: tuple[Finding, ...]
    baseline: Side
    candidate: Side
    extra: dict[str, object] = field(default_factory=dict)
    root_causes: tuple[Cause, ...] = ()
    """For a failing scenario: every gating root cause, in report order."""
    false_positives: tuple[FalsePositive, ...] = ()
    args: tuple[str, ...] = ()
    """Extra ad-diff arguments; ``{scenario}`` stands for the scenario's folder."""
    reference: TensorSpec | None = None
    """A reference written to ``<scenario>/reference/`` (for ``--reference``)."""


def _spec(side: Side, **kw: object) -> Side:
    return replace(side, spec=replace(side.spec, **kw))


def _style(side: Side, **kw: object) -> Side:
    return replace(side, style=replace(side.style, **kw))


PM, PLF = "pattern_matcher", "post_load_fusion"
ROPE_DOWNSTREAM = Finding("match_loss", "match_rope_layout", PM, "downstream of the root cause")

_partial_b = _spec(BASE, model=M3)
_partial_c = _spec(CAND, model=replace(M3, norm_variant=((1, "sqrt_div"),)))
_PARTIAL_FINDINGS = (
    Finding("structure_change", "export_to_gm", "export", "layer 1's RMSNorm is exported as sqrt/div: the root cause"),
    Finding("match_loss", "match_rmsnorm_pattern", PM, "7 -> 5 (partial, 29% lost)", collapse=False),
    Finding("match_loss", "fuse_rmsnorm", PLF, "7 -> 5, downstream of match_rmsnorm_pattern"),
)
_PARTIAL_CAUSES = (Cause("graph_differs", "export_to_gm", ("match_rmsnorm_pattern", "fuse_rmsnorm"),
                         "the candidate model itself differs: its exported graph holds the sqrt/div form"),)
_PARTIAL_TEXT = ("ad-diff should name the exported graph as the root cause (layer 1's RMSNorm is `sqrt -> div` "
                 "instead of `rsqrt -> mul`), with its consequences: a partial match loss at match_rmsnorm_pattern "
                 "(7 -> 5) and fuse_rmsnorm (7 -> 5) downstream, and the unfused RMSNorm chain of layer 1 in the "
                 "candidate's graphs.")
_PARTIAL_INJ = ("3-layer model. The candidate's layer 1 writes RMSNorm as `w * (x / sqrt(mean(x^2) + eps))` "
                "(both norms of the layer), which match_rmsnorm_pattern does not recognise.")


def _formats(name: str, style: dict[str, object], what: str, dump: str = "D3") -> Scenario:
    return Scenario(
        name, f"The partial_loss pair written {what}.", _PARTIAL_INJ, _PARTIAL_TEXT, "fail", _PARTIAL_FINDINGS,
        replace(_style(_partial_b, **style), dump=dump), replace(_style(_partial_c, **style), dump=dump),
        root_causes=_PARTIAL_CAUSES,
    )


_cfg_default = (("config/default.yaml", default_yaml()),)


def scenarios() -> list[Scenario]:
    """All scenarios, in manifest order."""
    s: list[Scenario] = []
    s.append(Scenario(
        "identical", "Same model, same pipeline; only the logged timings differ.", "Nothing (different timing seed).",
        "No findings; timings must not be reported as regressions.", "pass", (), BASE, CAND))
    s.append(Scenario(
        "match_collapse", "match_rope_pattern stops matching entirely.",
        "The candidate model writes rotate_half in interleaved form (`stack((-x[..., 1::2], x[..., ::2]), -1)"
        ".flatten(-2)`) in every layer, which match_rope_pattern does not recognise.",
        "Root cause: the exported graph differs (rotate_half in interleaved form, `slice -> stack -> flatten`); "
        "consequences: match_rope_pattern collapses (4 -> 0) and match_rope_layout (4 -> 0) downstream.",
        "fail",
        (Finding("structure_change", "export_to_gm", "export", "interleaved rotate_half: the root cause"),
         Finding("match_loss", "match_rope_pattern", PM, "4 -> 0", collapse=True), ROPE_DOWNSTREAM),
        BASE, _spec(CAND, model=replace(M2, rope_variant=((0, "interleaved"), (1, "interleaved")))),
        root_causes=(Cause("graph_differs", "export_to_gm", ("match_rope_pattern", "match_rope_layout")),)))
    s.append(Scenario("partial_loss", "A matcher matches fewer in one of three layers.", _PARTIAL_INJ,
                      _PARTIAL_TEXT, "fail", _PARTIAL_FINDINGS, _partial_b, _partial_c, root_causes=_PARTIAL_CAUSES))
    s.append(Scenario(
        "disabled_transform", "A transform that matched in the baseline is disabled in the candidate.",
        "Candidate runs with match_swiglu_pattern `enabled: false` (log: `[SUMMARY] disabled`); its dump "
        "file repeats the previous graph.",
        "Match loss at match_swiglu_pattern (2 -> disabled: stopped running).", "fail",
        (Finding("match_loss", "match_swiglu_pattern", PM, "2 -> disabled"),),
        BASE, _spec(CAND, disabled=frozenset({"match_swiglu_pattern"})),
        root_causes=(Cause("transform_disabled", "match_swiglu_pattern"),)))
    s.append(Scenario(
        "failed_transform", "A matcher fails under skip_on_error in the candidate (issue 13's failed matcher).",
        "match_eager_attention raises; the log shows `Transform match_eager_attention failed: ...` and "
        "`[SUMMARY] skipped`. The graph stays unfused, so match_grouped_attention, match_attention_layout and "
        "insert_cached_attention find nothing.",
        "Root cause first: match_eager_attention failed (with the exception text; the graph it received was the "
        "same in both runs), with its own match loss (2 -> failed); then, as its consequences, the downstream "
        "losses at match_grouped_attention, match_attention_layout, insert_cached_attention.", "fail",
        (Finding("state_change", "match_eager_attention", PM, "failed: the root cause"),
         Finding("match_loss", "match_eager_attention", PM, "2 -> failed"),
         Finding("match_loss", "match_grouped_attention", PM, "downstream"),
         Finding("match_loss", "match_attention_layout", PM, "downstream"),
         Finding("match_loss", "insert_cached_attention", "cache_init", "downstream")),
        BASE, _spec(CAND, fail=(("match_eager_attention",
                                 "RuntimeError: Expected softmax input of rank 4 with static head dim, got rank 3"),)),
        root_causes=(Cause("transform_failed", "match_eager_attention",
                           ("match_grouped_attention", "match_attention_layout", "insert_cached_attention")),)))
    s.append(Scenario(
        "crash_midway", "The candidate crashes inside a transform.",
        "sharding_transform_executor raises an uncaught CUDA error after `[APPLY] applying transform...`; the log "
        "ends with a Python traceback and graphs/ stops at detect_sharding.",
        "Incomplete run pointing at sharding_transform_executor (traceback's last line as detail); transforms "
        "after it are absent in the candidate, not match losses.", "fail",
        (Finding("incomplete_run", "sharding_transform_executor", "sharding"),),
        BASE, _spec(CAND, crash_in="sharding_transform_executor"),
        root_causes=(Cause("incomplete_run", "sharding_transform_executor"),)))
    s.append(Scenario(
        "improvement", "The candidate matches more.",
        "Both runs use a 3-layer model whose layer 1 writes RMSNorm as sqrt/div; the candidate's "
        "match_rmsnorm_pattern also recognises that form.",
        "No regression; an improvement at match_rmsnorm_pattern (5 -> 7) and fuse_rmsnorm (5 -> 7).", "pass",
        (Finding("improvement", "match_rmsnorm_pattern", PM, "5 -> 7"),
         Finding("improvement", "fuse_rmsnorm", PLF, "5 -> 7")),
        _spec(_partial_c, model=_partial_c.spec.model),
        _spec(replace(_partial_c, style=LogStyle(seed=3)), knobs=Knobs(rmsnorm_accepts_sqrt_div=True))))
    s.append(Scenario(
        "rename_only", "A new no-op transform shifts names and file numbers only.",
        "Candidate adds post_export/cleanup_canonicalize_graph (0 matches) after cleanup_input_constraints. It "
        "rebuilds the graph and re-creates every linear node; a scratch node takes one name, so every later "
        "`linear_<i>` is `linear_<i+1>` in the candidate, and every later dump file number is one higher.",
        "Pass with no findings (the new transform with 0 matches is at most informational).", "pass", (),
        BASE, _spec(CAND, extra=(("post_export", "cleanup_canonicalize_graph", "cleanup_input_constraints"),))))
    s.append(Scenario(
        "fusion_one_layer", "A fusion stops matching in one layer only.",
        "3-layer model; the candidate's layer 1 MLP computes `up(x) * silu(gate(x))` (operands swapped), which "
        "match_swiglu_pattern does not match. The final candidate graph keeps silu/mul and both linears in layer 1.",
        "Partial match loss at match_swiglu_pattern (3 -> 2), localised to layer 1's nodes.", "fail",
        (Finding("match_loss", "match_swiglu_pattern", PM, "3 -> 2", collapse=False),),
        _spec(BASE, model=M3), _spec(CAND, model=replace(M3, mlp_variant=((1, "swapped"),))),
        root_causes=(Cause("match_lost", "match_swiglu_pattern", (),
                           "the swapped operands only rewire an aligned node (no hint links the export to the loss): "
                           "the loss is its own root cause, the export difference named in its evidence"),)))
    s.append(Scenario(
        "metadata_loss", "A rewrite drops shape metadata; a later shape-checking matcher then matches less.",
        "The candidate's match_rope_pattern creates the rope nodes for k without `meta[\"val\"]` (dumped as "
        "`? : N/A`, and `? : unknown` where used as arguments). match_rope_layout only rewrites rope nodes whose "
        "metadata proves a bnsd layout, so it skips those.",
        "Metadata loss at match_rope_pattern (same counts, nodes lost shape/dtype); match loss at "
        "match_rope_layout (4 -> 2), attributed to the metadata loss.", "fail",
        (Finding("metadata_loss", "match_rope_pattern", PM, "torch_rope nodes for k lose meta['val']"),
         Finding("match_loss", "match_rope_layout", PM, "4 -> 2, caused by the metadata loss")),
        BASE, _spec(CAND, knobs=Knobs(rope_drop_meta_k=True)),
        root_causes=(Cause("metadata_lost", "match_rope_pattern", ("match_rope_layout",)),)))
    s.append(Scenario(
        "op_form_change", "An upstream transform changes the op form a matcher relies on.",
        "The candidate's cleanup_noop_slice also rewrites q's `split_with_sizes -> getitem` into "
        "`narrow -> contiguous -> view` (it matches 2 instead of 0). match_rope_pattern only knows the split form, "
        "so it loses the q rope in every layer.",
        "Match loss at match_rope_pattern (4 -> 2) and match_rope_layout (4 -> 2); the graph diff at "
        "cleanup_noop_slice (new narrow/contiguous/view nodes) is the root cause.", "fail",
        (Finding("match_loss", "match_rope_pattern", PM, "4 -> 2 (50% lost: a collapse at the default 0.5 fraction)", collapse=True), ROPE_DOWNSTREAM,
         Finding("structure_change", "cleanup_noop_slice", "post_export", "split/getitem -> narrow/contiguous/view")),
        BASE, _spec(CAND, knobs=Knobs(split_to_narrow_q=True)),
        root_causes=(Cause("op_form_changed", "cleanup_noop_slice", ("match_rope_pattern", "match_rope_layout")),)))
    s.append(_formats("formats_v0", {"fmt": "V0"}, "in log format V0 (no brackets) with L1 prefix"))
    s.append(_formats("formats_v1", {"fmt": "V1"}, "in log format V1 (`enabled=..., num_matches=N`) with L1 prefix"))
    s.append(_formats("formats_v2", {"fmt": "V2"}, "in log format V2 (V1 + `elapsed time:`) with L1 prefix"))
    s.append(_formats("formats_v3_l1", {"fmt": "V3", "prefix": "L1"}, "in log format V3 with the L1 prefix"))
    s.append(_formats("formats_v3_l2", {"fmt": "V3", "prefix": "L2"},
                      "in log format V3 with the L2 prefix (standalone logger without rank; the `[stage=..., "
                      "transform=...]` and `[APPLY]` context prefixes are lost, see FORMATS.md 1.1)"))
    s.append(_formats("formats_v3_l3", {"fmt": "V3", "prefix": "L3"}, "in log format V3 with the L3 prefix"))
    s.append(_formats("dump_d1", {"fmt": "V1"}, "with D1 dumps (dtype only, root GraphModule only) and a V1 log",
                      dump="D1"))
    s.append(_formats("dump_d2", {"fmt": "V2"}, "with D2 dumps (shape+dtype, root only, no sections) and a V2 log",
                      dump="D2"))
    s.append(Scenario(
        "multi_rank", "Two ranks log interleaved; rank 1 disagrees with rank 0 in both runs.",
        "Both logs hold rank 0 and rank 1 lines interleaved (rank 1 duplicates rank 0). In both runs rank 1 "
        "reports match_rmsnorm_pattern matches=4 where rank 0 reports 5. Graph dumps are rank 0 only.",
        "Every rank is compared with the same rank of the other run: no regression. The disagreement between "
        "the ranks already existed in the baseline, so it is a consistency warning, not a regression.",
        "pass",
        (Finding("consistency", "match_rmsnorm_pattern", PM, "rank 1 says 4, rank 0 says 5, in both runs"),),
        replace(BASE, ranks=(0, 1), rank1_counts=(("match_rmsnorm_pattern", 4),)),
        replace(CAND, ranks=(0, 1), rank1_counts=(("match_rmsnorm_pattern", 4),))))
    s += _capture_scenarios() + _run_end_scenarios()
    s.append(Scenario(
        "noisy_log", "The identical pair with a very noisy log.",
        "Debug level (config and multi-line `Model after` reprs, `[CUDA MEM]` lines), ANSI colours "
        "(`\\x1b[32m[SUMMARY]\\x1b[0m`, dim `skipped`/`disabled`), Python warnings, and in the candidate a first "
        "pipeline attempt that aborts after cleanup_noop_add and restarts (graphs/ holds the second attempt).",
        "No regression; the retry is parsed (last pipeline used) and noted as a consistency warning.", "pass",
        (Finding("consistency", None, None, "the candidate's pipeline started twice (ADL012); the last is compared"),),
        _style(BASE, noise=2, colors=True), _style(CAND, noise=2, colors=True, retry=True)))
    s.append(Scenario(
        "config_explained", "A config overlay disables a transform; a downstream transform loses matches.",
        "Candidate's config/model_x.yaml sets `match_rmsnorm_pattern: {enabled: false}`; the log shows it "
        "disabled and fuse_rmsnorm finds nothing to fuse (5 -> 0).",
        "Root cause: match_rmsnorm_pattern disabled by config/model_x.yaml (its own loss explained, not gating); "
        "its consequence, the match loss at fuse_rmsnorm, still gates: a downstream loss is what the gate is for "
        "until the expected-changes file acknowledges it.", "fail",
        (Finding("match_loss", "match_rmsnorm_pattern", PM, "disabled by config/model_x.yaml"),
         Finding("match_loss", "fuse_rmsnorm", PLF, "downstream; explained by the same overlay")),
        replace(BASE, config=_cfg_default),
        replace(_spec(CAND, disabled=frozenset({"match_rmsnorm_pattern"})),
                config=(*_cfg_default, ("config/model_x.yaml", overlay_yaml(
                    {"match_rmsnorm_pattern": {"enabled": False}}, compile_backend="torch-simple")))),
        root_causes=(Cause("transform_disabled", "match_rmsnorm_pattern", ("fuse_rmsnorm",)),)))
    s.append(Scenario(
        "config_unexplained", "A transform goes disabled without any config change.",
        "Both runs carry the same config/default.yaml (match_rope_pattern enabled); the candidate log shows "
        "match_rope_pattern `[SUMMARY] disabled`.",
        "Match loss at match_rope_pattern with a config finding (disabled, but no config says so); "
        "match_rope_layout downstream.", "fail",
        (Finding("match_loss", "match_rope_pattern", PM, "4 -> disabled"),
         Finding("config", "match_rope_pattern", PM, "disabled in the log, enabled in config"), ROPE_DOWNSTREAM),
        replace(BASE, config=_cfg_default),
        replace(_spec(CAND, disabled=frozenset({"match_rope_pattern"})), config=_cfg_default),
        root_causes=(Cause("transform_disabled", "match_rope_pattern", ("match_rope_layout",)),)))
    s.append(Scenario(
        "config_not_applied", "Config says enabled; the log says disabled.",
        "Candidate's config/model_x.yaml sets `match_swiglu_pattern: {enabled: true}` and config/merged.yaml "
        "(the merged result) shows it enabled, yet the candidate log shows it `[SUMMARY] disabled`.",
        "Config finding (overlay not applied) at match_swiglu_pattern plus its match loss (2 -> disabled).",
        "fail",
        (Finding("config", "match_swiglu_pattern", PM, "enabled in config/merged.yaml, disabled in the log"),
         Finding("match_loss", "match_swiglu_pattern", PM, "2 -> disabled")),
        replace(BASE, config=_cfg_default),
        replace(_spec(CAND, disabled=frozenset({"match_swiglu_pattern"})),
                config=(*_cfg_default,
                        ("config/model_x.yaml", overlay_yaml({"match_swiglu_pattern": {"enabled": True}})),
                        ("config/merged.yaml", default_yaml().replace(
                            "# Subset of", "# Merged (default.yaml + model_x.yaml); subset of")))),
        root_causes=(Cause("transform_disabled", "match_swiglu_pattern"),)))
    s.append(Scenario(
        "new_fusion", "A fusion switched on that matches everywhere: a success.",
        "The baseline runs with config/unfused.yaml setting `match_swiglu_pattern: {enabled: false}` (unfused "
        "`silu * mul` in both layers); the candidate drops that overlay, so the fusion runs and matches in every "
        "layer (disabled -> 2).",
        "PASS with one improvement at match_swiglu_pattern (0, disabled -> 2), explained by the config change; "
        "its rewritten regions are the fusion itself, folded under it: no warnings to review.", "pass",
        (Finding("improvement", "match_swiglu_pattern", PM, "disabled -> 2 matches"),
         Finding("structure_change", "match_swiglu_pattern", PM, "the fused regions, info under the improvement"),
         Finding("config", "match_swiglu_pattern", PM, "enabled in the candidate's config (info)")),
        replace(_spec(BASE, disabled=frozenset({"match_swiglu_pattern"})),
                config=(*_cfg_default, ("config/unfused.yaml",
                                        overlay_yaml({"match_swiglu_pattern": {"enabled": False}})))),
        replace(CAND, config=_cfg_default)))
    s += _graph_scenarios()
    from .scenarios_checks import check_scenarios  # it builds on this module's sides

    s += check_scenarios()
    s += _precision_scenarios()
    s += _drift_scenarios()
    from .scenarios_facts import fact_scenarios  # derived from the scenarios above

    s += fact_scenarios(s)
    return s


_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity "
        "of 79.11 GiB of which 1.12 GiB is free.")


def _capture_scenarios() -> list[Scenario]:
    """Issue 18: logs as people capture them (every rank compared; CI and launcher prefixes)."""
    two = dict(ranks=(0, 1))
    return [
        Scenario(
            "rank1_regresses", "Only rank 1 loses its RMSNorm fusions; rank 0 and the dumps look fine.",
            "Two ranks under `mpirun --tag-output` (`[1,r]<stdout>:` before every line), saved by Slurm as "
            "slurm-48213.out. In the candidate rank 1 reports match_rmsnorm_pattern and fuse_rmsnorm 5 -> 0 "
            "while rank 0 still matches 5. The dumps are rank 0's (AD's graph writer skips other ranks), so "
            "they are identical: only the log shows the loss.",
            "One root cause: match_rmsnorm_pattern stopped matching on rank 1 of 2 (5 -> 0; rank 0: 5 -> 5), "
            "with fuse_rmsnorm's loss on the same rank (5 -> 0) as its consequence: the fusion has nothing left "
            "to fuse once the matcher stopped, although rank 1 wrote no dumps to show the link. Each loss is "
            "reported once, naming rank 1 of 2, and no sentence says every transform is the same.", "fail",
            (Finding("match_loss", "match_rmsnorm_pattern", PM, "5 -> 0 on rank 1 of 2 (rank 0: 5 -> 5)",
                     collapse=True),
             Finding("match_loss", "fuse_rmsnorm", PLF, "5 -> 0 on rank 1 of 2")),
            replace(BASE, capture="mpirun", log_name="slurm-48213.out", **two),
            replace(CAND, capture="mpirun", log_name="slurm-48213.out",
                    rank1_counts=(("match_rmsnorm_pattern", 0), ("fuse_rmsnorm", 0)), **two),
            root_causes=(
                Cause("match_lost", "match_rmsnorm_pattern", ("fuse_rmsnorm",),
                      "the first divergence on rank 1 (rank 0's dumps are identical); fuse_rmsnorm's loss on "
                      "the same rank follows from it: one cause, one root cause"),)),
        Scenario(
            "world_size_change", "The candidate runs on 4 ranks instead of 2.",
            "The baseline's log holds ranks 0 and 1, the candidate's ranks 0 to 3 (every rank logs the same "
            "counts).",
            "A world size change (config warning naming both sizes); ranks 0 and 1 are compared, with no "
            "regression.", "pass",
            (Finding("config", None, None, "baseline 2 ranks, candidate 4; ranks 0, 1 compared"),),
            replace(BASE, **two), replace(CAND, ranks=(0, 1, 2, 3))),
        Scenario(
            "ci_capture_mixed", "The partial_loss pair saved as a GitHub Actions log of a 2-rank mpirun job.",
            _PARTIAL_INJ + " Both runs ran on 2 ranks under `mpirun --tag-output` inside a GitHub Actions "
            "step; the log is the raw job log (`2026-04-24T10:00:03.0000000Z ` before every line, "
            "`##[group]` around the step) with mpirun's own untagged warnings in between, saved as "
            "job-log.txt.",
            _PARTIAL_TEXT + " Both ranks lose the same: the findings say `on all ranks`.", "fail",
            _PARTIAL_FINDINGS,
            replace(_partial_b, capture="mixed", log_name="job-log.txt", **two),
            replace(_partial_c, capture="mixed", log_name="job-log.txt", **two), root_causes=_PARTIAL_CAUSES),
    ]


_MOVED_PREV = ("the graph analysis takes each candidate dump's 'previous dump' in the baseline's order, "
               "where the moved match_rmsnorm_pattern is paired; the candidate's own previous dump is the same "
               "graph (the fixture's dumps agree with its log). Removed when kinds/graph/analysis.py diffs each "
               "dump against the one before it in its own run.")


def _run_end_scenarios() -> list[Scenario]:
    """Issue 13: how a run ends (shutdown noise, a restore, a dead rank, a kill) and a reordered pipeline."""
    last0 = (("compile_model", 0),)
    return [
        Scenario(
            "shutdown_traceback", "Both runs print an ignored exception at interpreter shutdown.",
            "After every transform and after generation, both logs end with Python's `Exception ignored in: "
            "<function MpiPoolSession.__del__>` and a traceback ending in `AttributeError: 'NoneType' object "
            "has no attribute 'shutdown'`.",
            "Pass with no findings: the runs finished; the shutdown message is a note saying both runs show "
            "it.",
            "pass", (), replace(BASE, shutdown_error=True), replace(CAND, shutdown_error=True)),
        Scenario(
            "cache_restore", "The candidate restored AD's pipeline cache at the sharding boundary.",
            "The candidate logs `Restored AutoDeploy pipeline snapshot for 'sharding_transform_executor' "
            "from /cache/...` and runs only the transforms after it: no log lines and no dumps before "
            "weight_load, its dump counter restarting at 001.",
            "Pass: the transforms up to sharding_transform_executor are restored, not compared (never lost); "
            "everything after is compared as usual.", "pass", (),
            BASE, replace(CAND, restored_at="sharding_transform_executor")),
        Scenario(
            "rank_died", "Rank 1 dies with an OOM halfway; rank 0 completes.",
            "Two ranks interleaved. In the candidate rank 1 starts match_swiglu_pattern, prints a "
            "torch.OutOfMemoryError traceback and logs nothing more; rank 0 runs to the end.",
            "Incomplete run naming rank 1 (it stopped inside match_swiglu_pattern, with the traceback's last "
            "line); it gates.", "fail",
            (Finding("incomplete_run", "match_swiglu_pattern", PM, "rank 1 of 2 crashed"),),
            replace(BASE, ranks=(0, 1)),
            replace(CAND, ranks=(0, 1), rank_dies=(1, "match_swiglu_pattern", _OOM)),
            root_causes=(Cause("incomplete_run", "match_swiglu_pattern", (), "rank 1 of 2 stopped there"),)),
        Scenario(
            "one_transform_short", "The candidate's log and dumps end just before the last transform.",
            "Both runs' compile_model reports 0 matches; D2 dumps, so compile_model (whose result is no "
            "GraphModule) writes no dump file. The candidate was killed after visualize_namespace: its log "
            "and graphs/ stop there, with no traceback and no end-of-run lines.",
            "Incomplete run (the candidate never reached compile_model, the pipeline's final transform); it "
            "gates.", "fail",
            (Finding("incomplete_run", "visualize_namespace", "visualize", "stops before compile_model"),),
            replace(BASE, counts=last0, dump="D2"),
            replace(CAND, counts=last0, killed_before="compile_model", dump="D2"),
            root_causes=(Cause("incomplete_run", "visualize_namespace", (), "its last transform"),)),
        Scenario(
            "reordered_pipeline", "The same transforms run in another order.",
            "The candidate runs match_rmsnorm_pattern after match_swiglu_pattern instead of before "
            "quantize_fp8_linear_from_config; every count is the same.",
            "A pipeline-order finding at match_rmsnorm_pattern (warning, reported once): never `all the "
            "same`.", "pass",
            (Finding("state_change", "match_rmsnorm_pattern", PM, "runs after match_swiglu_pattern"),),
            BASE, _spec(CAND, moves=(("match_rmsnorm_pattern", "match_swiglu_pattern"),)),
            false_positives=(
                FalsePositive("ADG007", "consistency", "quantize_fp8_linear_from_config", _MOVED_PREV),
                FalsePositive("ADG005", "structure_change", "quantize_fp8_linear_from_config", _MOVED_PREV),
                FalsePositive("ADG007", "consistency", "detect_hidden_states_for_capture", _MOVED_PREV))),
    ]


GEMMS = frozenset({"fuse_gemms"})


def _graph_scenarios() -> list[Scenario]:
    """Scenarios of the graph kind's classes (issue 13): counter-shifted names, cut dump folders, a log and
    dumps that come from different runs."""
    swapped = replace(M3, mlp_variant=((1, "swapped"),))
    return [
        Scenario(
            "counter_shifted_fused_weights", "A partial SwiGLU loss shifts every later FX counter name.",
            "3-layer model, post_load_fusion/fuse_gemms on in both runs. The candidate's layer 1 MLP computes "
            "`up(x) * silu(gate(x))`, so match_swiglu_pattern misses it (3 -> 2) and fuse_gemms fuses its "
            "gate/up linears (3 -> 4). Every later `fused_weight_<n>`, `linear_<n>`, `split_output_<n>` and "
            "`getitem_<n>` is numbered one higher in the candidate: `fused_weight_2` is 128x64 (layer 2 qkv) in "
            "the baseline and 256x64 (layer 1 gate/up) in the candidate. AD's `split_output` nodes carry no "
            "metadata in either run.",
            "The partial match loss at match_swiglu_pattern and the extra fuse_gemms match; no metadata loss "
            "and no shape change: same-name nodes of different shapes are different nodes, and nodes without "
            "metadata in both runs lost nothing.", "fail",
            (Finding("match_loss", "match_swiglu_pattern", PM, "3 -> 2", collapse=False),
             Finding("improvement", "fuse_gemms", PLF, "3 -> 4 (layer 1's gate/up fused)")),
            _spec(BASE, model=M3, enabled=GEMMS), _spec(CAND, model=swapped, enabled=GEMMS),
            root_causes=(Cause("match_lost", "match_swiglu_pattern"),)),
        Scenario(
            "dumps_truncated", "The candidate's dump folder stops early while its log is complete.",
            "The candidate ran the whole pipeline (its log is complete) but its graphs/ folder holds only "
            "the first 16 dumps, up to sharding_transform_executor: a half-copied artifact folder, or a job "
            "killed while it was dumping. The numbering has no hole, so only the log shows the loss.",
            "An incomplete run (the candidate's dumps stop after sharding_transform_executor while its log "
            "shows 10 more transforms ran); those transforms did not run 'in the baseline only'.", "fail",
            (Finding("incomplete_run", "load_weights", "weight_load", "first transform without a dump"),),
            BASE, replace(CAND, dump_keep=16),
            root_causes=(Cause("incomplete_run", "load_weights"),)),
        Scenario(
            "log_dump_conflict", "The candidate's log and dumps come from different runs.",
            "The candidate's log is from a run where match_rope_pattern matched 4, its graphs/ folder from "
            "a run where match_rope_pattern was disabled: the dump after match_rope_pattern is byte-identical "
            "to the one before, and so is match_rope_layout's.",
            "A log/dump conflict (upstream ad-conf-check's CONFLICT) at match_rope_pattern and at "
            "match_rope_layout: pattern matchers that logged matches must have changed the graph. Both say one "
            "thing, that the candidate's dumps are another run's: one root cause, where it shows first.", "fail",
            (Finding("consistency", "match_rope_pattern", PM, "logged 4, dump unchanged"),
             Finding("consistency", "match_rope_layout", PM, "logged 4, dump unchanged")),
            BASE, replace(CAND, dumps_from=replace(CAND.spec, disabled=frozenset({"match_rope_pattern"}))),
            root_causes=(Cause("dumps_of_another_run", "match_rope_pattern", ("match_rope_layout",),
                               "the candidate's dumps are another run's; match_rope_layout shows it too"),)),
    ]


def _precision_scenarios() -> list[Scenario]:
    """Issue 27 part 6: harmless changes give no note, and a headline says exactly what changed."""
    four = dict(ranks=(0, 1, 2, 3))
    return [
        Scenario(
            "torch_upgrade_rename", "The candidate's torch names every node differently; nothing else changed.",
            "Every dump of the candidate names its nodes the way another torch version does: "
            "`aten_view_default_3` for `view_2`, `aten_mul_tensor_4` for `mul_3` (the overload in the name, "
            "counters one higher), `l_input_ids_` for the graph input `input_ids`. Targets and wiring are "
            "the baseline's.",
            "Pass with no findings: names are no identity; the graphs compute the same.", "pass", (),
            BASE, replace(CAND, renamed=True)),
        Scenario(
            "piecewise_resplit", "compile_model splits the graph into other pieces in the candidate.",
            "Both runs compile with piecewise CUDA graphs: compile_model's dump holds `monolithic.model` and "
            "its pieces `monolithic.model.submod_N` (torch.fx split_module). The baseline splits around the "
            "attention ops (5 pieces); the candidate also around every RMSNorm (15 pieces), so each "
            "`submod_N` holds other nodes and its inputs are other values.",
            "Pass: the split graphs are compared inlined, so no piece input pairs with an unrelated node (no "
            "shape change); the other split is at most an informational note at compile_model.", "pass",
            (Finding("structure_change", "compile_model", "compile", "info: split into other pieces"),),
            _spec(BASE, piecewise=("attention",)), _spec(CAND, piecewise=("attention", "rmsnorm"))),
        Scenario(
            "rank2_of_4_loss", "Only rank 2 of 4 loses its SwiGLU fusions.",
            "Four ranks log interleaved. In the candidate rank 2 reports match_swiglu_pattern 2 -> 0; ranks "
            "0, 1 and 3 still match 2. The dumps are rank 0's, identical in both runs.",
            "A match loss at match_swiglu_pattern whose headline names the rank: `on rank 2 of 4 (2 -> 0)`.",
            "fail",
            (Finding("match_loss", "match_swiglu_pattern", PM, "2 -> 0 on rank 2 of 4", collapse=True),),
            replace(BASE, **four), replace(CAND, rank_counts=((2, "match_swiglu_pattern", 0),), **four),
            root_causes=(Cause("match_lost", "match_swiglu_pattern"),)),
        Scenario(
            "node_captures_one_side", "The baseline recorded every node, the candidate only the first few.",
            "Both runs record the logits (equal). The baseline's tensors/nodes.safetensors holds a capture of "
            "every call node of its last graph; the candidate's only the first 5 (a smaller capture list). "
            "Every node recorded by both runs is equal.",
            "Pass: the captures both runs hold agree; the nodes only the baseline recorded are summarised in "
            "one folded line with their count, not one line each.", "pass", (),
            replace(BASE, node_captures=1000), replace(CAND, node_captures=5)),
    ]


#: A single run folder (fixtures/runs/unfused): RMSNorm and SwiGLU matchers disabled.
UNFUSED = replace(_spec(BASE, model=M3, disabled=frozenset({"match_rmsnorm_pattern", "match_swiglu_pattern"})),
                  config=(("config/default.yaml", default_yaml()), ("config/unfused.yaml", overlay_yaml(
                      {"match_rmsnorm_pattern": {"enabled": False}, "match_swiglu_pattern": {"enabled": False}}))))


GELU2 = replace(M2, mlp_variant=((0, "gelu_mul"), (1, "gelu_mul")))
T2 = TensorSpec(model=M2)
FP8_CONFIG = ("config/fp8.yaml", overlay_yaml({}, quant_config={"quant_algo": "FP8", "kv_cache_quant_algo": None}))
NUM, INP = "numeric_drift", "input"


def _drift_scenarios() -> list[Scenario]:
    """Issue 27: drift gets a cause (structural, config, none found) and references are trusted by
    construction (the baseline's, equal in both runs, or given with --reference)."""
    tb = replace(BASE, tensors=T2)
    return [
        Scenario(
            "fp8_checkpoint_drift", "The candidate serves an FP8 checkpoint; its logits drift.",
            "The candidate's config/fp8.yaml adds `quant_config: {quant_algo: FP8}`, so "
            "quantize_fp8_linear_from_config goes from `skipped` to 14 matches (every decoder linear becomes "
            "`torch_fake_quant_fp8_linear`); its logits are computed with FP8 decoder linears. Both runs record "
            "the same float32 reference (the model's own logits), so it judges them.",
            "The logits drift, and the drift's first cause is quantize_fp8_linear_from_config (skipped -> 14, "
            "`linear` replaced by `torch_fake_quant_fp8_linear`) together with the added quant_config: one "
            "root cause, not 'unexplained drift' beside an 'improvement'.", "fail",
            (Finding(NUM, None, None, "logits beyond tolerance; first cause: the quantize transform + quant_config"),
             Finding("improvement", "quantize_fp8_linear_from_config", PM,
                     "skipped -> 14, grouped under the drift as its cause")),
            replace(BASE, config=_cfg_default, tensors=replace(T2, reference="true")),
            replace(_spec(CAND, knobs=Knobs(quantize_fp8=True)), config=(*_cfg_default, FP8_CONFIG),
                    tensors=TensorSpec(M2, fp8_linears=True, reference="true")),
            root_causes=(Cause(NUM, "quantize_fp8_linear_from_config", ("logits",)),)),
        Scenario(
            "swiglu_overmatch", "A SwiGLU matcher also swallows a GELU-gated MLP.",
            "Both runs' model has GELU-gated MLPs (`down(gelu(gate(x)) * up(x))`) in both layers. The "
            "candidate's match_swiglu_pattern also accepts `gelu` and rewrites them to `torch_swiglu` (SiLU): "
            "0 -> 2 matches; its logits are those of the SiLU MLP.",
            "The logits drift, caused by match_swiglu_pattern (0 -> 2): its rewritten region drops `gelu` "
            "(`gelu` absent from the fused op). The count that rose is a cause of the drift, not an "
            "improvement.", "fail",
            (Finding(NUM, None, None, "logits beyond tolerance; first cause: match_swiglu_pattern's region"),
             Finding("improvement", "match_swiglu_pattern", PM, "0 -> 2, folded under the drift as its cause")),
            _spec(replace(BASE, tensors=TensorSpec(GELU2)), model=GELU2),
            _spec(replace(CAND, tensors=T2), model=GELU2, knobs=Knobs(swiglu_accepts_gelu=True)),
            root_causes=(Cause(NUM, "match_swiglu_pattern", ("logits",)),)),
        Scenario(
            "drift_no_cause", "The logits drift while graphs, log and config are the same.",
            "Same pipeline, graphs and config in both runs; the candidate's logits carry 5% relative noise (a "
            "kernel that computes differently).",
            "The logits drift, and the report says that no structural or config cause was found (look at the "
            "kernels).", "fail",
            (Finding(NUM, None, None, "no structural or config cause found"),),
            replace(tb, config=_cfg_default),
            replace(CAND, tensors=TensorSpec(M2, kernel_noise=0.05), config=_cfg_default),
            root_causes=(Cause(NUM, None, ()),)),
        Scenario(
            "reference_candidate_only", "The candidate records its own reference; its logits are 3x+7.",
            "The baseline records no reference. The candidate's logits are `3x + 7` of the baseline's, and its "
            "tensors/reference/ holds those same values in float32.",
            "A reference only the candidate supplies is not used and gates (ADT012); judged without it, the "
            "logits drift beyond tolerance.", "fail",
            (Finding(INP, None, None, "reference supplied by the candidate only: not used"),
             Finding(NUM, None, None, "logits beyond tolerance (NRMSE)")),
            tb, replace(CAND, tensors=TensorSpec(M2, affine=(3.0, 7.0), reference="own")),
            root_causes=(Cause(INP, None), Cause(NUM, None, ()))),
        Scenario(
            "reference_differs", "Both runs record a reference, and they differ.",
            "The baseline's reference is its model's float32 logits; the candidate's is its own output in "
            "float32. The logits agree within rounding.",
            "References that differ between the runs are not used and gate (ADT012); the logits pass by "
            "normalised RMSE.", "fail",
            (Finding(INP, None, None, "the runs' references differ: not used"),),
            replace(BASE, tensors=replace(T2, reference="true")),
            replace(CAND, tensors=TensorSpec(M2, kernel_noise=0.005, reference="own")),
            root_causes=(Cause(INP, None),)),
        Scenario(
            "user_reference", "The user gives the reference with --reference.",
            "Neither run's reference is trusted: the candidate records its own (its output in float32). The "
            "user passes `--reference reference/`, the model's float32 logits; the candidate's logits agree "
            "within rounding.",
            "The user's reference judges both runs (the runs' own are not used, without a finding); pass.",
            "pass", (),
            tb, replace(CAND, tensors=TensorSpec(M2, kernel_noise=0.0005, reference="own")),
            args=("--reference", "{scenario}/reference"), reference=TensorSpec(M2, reference="true")),
    ]


#: A single run folder (fixtures/runs/unfused): RMSNorm and SwiGLU matchers disabled.
UNFUSED = replace(_spec(BASE, model=M3, disabled=frozenset({"match_rmsnorm_pattern", "match_swiglu_pattern"})),
                  config=(("config/default.yaml", default_yaml()), ("config/unfused.yaml", overlay_yaml(
                      {"match_rmsnorm_pattern": {"enabled": False}, "match_swiglu_pattern": {"enabled": False}}))))
