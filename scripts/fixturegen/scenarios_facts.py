"""Scenarios of issue 40 ("one model of the run"): ad-diff judges what the runs did, not how they printed it.

Most are derived from a scenario of :mod:`.scenarios` by one change of presentation (log format, prefix,
verbosity, the dumps' output line), of run events (a graph-cache load, a world size) or of what the user
switched off, so that their expected outcome is the original's by construction; the others add one
substantive change (a loss after the cache point, dumps left over from another model, a rank-only change).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .model import ModelSpec
from .run_folder import Side, default_yaml
from .scenarios import BASE, CAND, M2, PLF, PM, Cause, Finding, Scenario
from .tensors import TensorSpec
from .transforms import Knobs

_CACHE_POINT = "sharding_transform_executor"
By = dict[str, Scenario]


def _graph_cache(by: By) -> Side:
    """cache_restore's candidate, restored from AD's graph cache instead of a pipeline snapshot."""
    side = replace(by["cache_restore"].candidate, restore_cache="graph")
    assert side.restored_at == _CACHE_POINT
    return side


def graph_cache_load(by: By) -> Scenario:
    return Scenario(
        "graph_cache_load", "The candidate loaded AD's graph cache (AD_ENABLE_CACHING).",
        "The candidate logs `[cache] Loaded graph from /cache/ad-graphs/<key>/graph.pt` (AD logger prefix, no "
        "transform context) where cache_restore logs its pipeline snapshot line, and runs only the transforms "
        f"after the sharding stage: no log lines and no dumps up to {_CACHE_POINT}, its dump counter restarting "
        "at 001 with load_weights.",
        f"Pass with no error or warning: the transforms up to {_CACHE_POINT} are not compared, restored from "
        "AD's graph cache (one note, not one finding per transform); everything after is compared as usual and "
        "is the same.", "pass", (),
        BASE, _graph_cache(by))


def graph_cache_then_loss(by: By) -> Scenario:
    side = _graph_cache(by)
    return Scenario(
        "graph_cache_then_loss", "The candidate loaded AD's graph cache, then fuse_rmsnorm fused less.",
        "graph_cache_load's candidate, whose fuse_rmsnorm (after the cache point) leaves layer 1's two norms as "
        "`torch_rmsnorm` (its fused kernel's support check rejects them): fuse_rmsnorm 5 -> 3 in the log, and "
        "the dumps from fuse_rmsnorm on keep those two `torch_rmsnorm` nodes.",
        "Fail with exactly one root cause, the match loss at fuse_rmsnorm (5 -> 3; its input graph, "
        "load_weights' dump, is the same in both runs); the transforms the cache restored are not compared and "
        "get no finding.", "fail",
        (Finding("match_loss", "fuse_rmsnorm", PLF, "5 -> 3 (partial: layer 1's norms)", collapse=False),),
        BASE, replace(side, spec=replace(side.spec, knobs=Knobs(fuse_rmsnorm_keeps=("model.layers.1.",)))),
        root_causes=(Cause("match_lost", "fuse_rmsnorm", (),
                           "after the cache point; the restored transforms are no cause"),))


def dump_output_parens(by: By) -> Scenario:
    metadata = by["metadata_loss"]
    return replace(
        metadata, name="dump_output_parens",
        summary="The metadata_loss pair; the candidate's dumps print their output line `output(...)`.",
        injected=metadata.injected + " Every candidate dump prints its output line `output(%a, %b)` instead of "
                                     "`output %a, %b` (the form an upstream skill documents).",
        expect_text=metadata.expect_text + " Exactly metadata_loss's verdict, root causes and findings: the output "
                                           "line's print form is presentation.",
        candidate=replace(metadata.candidate, dump_output="parens"))


def log_formats_mixed(by: By) -> Scenario:
    same = by["identical"]
    return Scenario(
        "log_formats_mixed", "The identical pair, logged by two TensorRT-LLM versions.",
        "Nothing the runs did: the baseline's log is V2 (`enabled=..., num_matches=N` and `elapsed time:` lines) "
        "behind the timestamped L1 prefix `[TRT-LLM AUTO-DEPLOY] [RANK 0] [I]`; the candidate's is V3 "
        "(`[PRE-CLEANUP]`, `[APPLY]`, `[POST-CLEANUP]`, `[SUMMARY]` lines) behind the standalone L3 prefix "
        "`[AUTO-DEPLOY] [INFO] [RANK 0]`. Same model, pipeline, counts and graphs.",
        "Pass with no findings: a log format is presentation, not behaviour (only the header's format line may "
        "say that the formats differ).", "pass", (),
        replace(same.baseline, style=replace(same.baseline.style, fmt="V2", prefix="L1")),
        replace(same.candidate, style=replace(same.candidate.style, fmt="V3", prefix="L3")))


def log_verbosity_mixed(by: By) -> Scenario:
    same = by["identical"]
    return Scenario(
        "log_verbosity_mixed", "The identical pair; only the candidate logged at debug level.",
        "Both logs are V3. The baseline's has the L1 prefix at the usual verbosity; the candidate's the L3 prefix "
        "with debug on: `<t> config:` lines, multi-line `Model after <t>:` reprs, `[CUDA MEM]` lines and more "
        "chatter around them. Same model, pipeline, counts and graphs.",
        "Pass with no findings: verbosity is presentation; debug lines are never facts.", "pass", (),
        replace(same.baseline, style=replace(same.baseline.style, fmt="V3", prefix="L1", noise=1)),
        replace(same.candidate, style=replace(same.candidate.style, fmt="V3", prefix="L3", noise=2)))


def world_size_tp2(by: By) -> Scenario:
    return Scenario(
        "world_size_tp2", "Baseline on one device (TP=1), candidate tensor-parallel on two (TP=2).",
        "The baseline's config/default.yaml says `world_size: 1`, the candidate's `world_size: 2`; the "
        "candidate's log holds ranks 0 and 1 (the same counts on both). In the baseline detect_sharding logs "
        "`Skipping sharding for single device` and both sharding transforms match 0; in the candidate it logs "
        "`Running TP sharding detection` and plans 6 shards (each layer's MLP gate and up column-split, down "
        "row-split), which sharding_transform_executor applies (0 -> 6): from its dump on the MLP weights are "
        "sliced (gate/up 128x64 -> 64x64, down 64x128 -> 64x64), torch_swiglu's output halves (128 -> 64) and an "
        "`auto_deploy.torch_dist_all_reduce` follows each down projection.",
        "Pass: the world-size change is reported once (a warning naming `world_size` 1 -> 2 in "
        "config/default.yaml) and explains the sharding transforms' count changes, the sliced shapes and the "
        "all-reduces; nothing gates; every other transform is compared on rank 0 and is the same.", "pass",
        (Finding("config", None, None, "world_size 1 -> 2: explains detect_sharding and "
                                       "sharding_transform_executor (0 -> 6) and the sliced MLP shapes"),),
        replace(BASE, spec=replace(BASE.spec, knobs=Knobs(world_size=1)),
                config=(("config/default.yaml", default_yaml(world_size=1)),)),
        replace(CAND, spec=replace(CAND.spec, knobs=Knobs(world_size=2)), ranks=(0, 1),
                config=(("config/default.yaml", default_yaml(world_size=2)),)))


def stale_dumps(by: By) -> Scenario:
    return Scenario(
        "stale_dumps", "The candidate's dumps are left over from another model's run.",
        "The candidate's log is the normal 2-layer run (match_rmsnorm_pattern matched 5), but its graphs/ holds "
        "the dumps of a 4-layer model's run: 9 `torch_rmsnorm` nodes appear in the dump after "
        "match_rmsnorm_pattern.",
        "Fail: a consistency finding at match_rmsnorm_pattern (the log's count, 5, and the op instances its dump "
        "adds, 9, disagree: the dumps are not this run's) gates as the root cause. The dumps' differences from "
        "the baseline's (two more layers) follow from the same cause, not findings of their own.", "fail",
        (Finding("consistency", "match_rmsnorm_pattern", PM, "logged 5, its dump adds 9 torch_rmsnorm"),),
        BASE, replace(CAND, dumps_from=replace(CAND.spec, model=ModelSpec(layers=4))),
        root_causes=(Cause("dumps_of_another_run", "match_rmsnorm_pattern", (),
                           "a log/dump consistency finding: the dumps are another model's"),))


def rank1_executor(by: By) -> Scenario:
    rank1 = by["rank1_regresses"]
    return replace(
        rank1, name="rank1_executor",
        summary="Rank 1 loses its RMSNorm fusions and its sharding executor changes; rank 0 is fine.",
        injected="Two ranks under `mpirun --tag-output`, saved by Slurm as slurm-48213.out (as rank1_regresses). "
                 "In the candidate rank 1 reports match_rmsnorm_pattern 5 -> 0, sharding_transform_executor 0 -> 2 "
                 "and fuse_rmsnorm 5 -> 0; rank 0 is unchanged and its dumps (the only ones AD writes) are "
                 "identical.",
        expect_text="Fail with one root cause: match_rmsnorm_pattern stopped matching on rank 1 of 2 (5 -> 0; rank "
                    "0: 5 -> 5), with fuse_rmsnorm's loss on that rank (5 -> 0) among its consequences and the "
                    "executor's change on that rank (0 -> 2) tied to it, not an unaccounted difference. No "
                    "sentence says every transform is the same.",
        findings=(*rank1.findings,
                  Finding("improvement", "sharding_transform_executor", "sharding",
                          "0 -> 2 on rank 1 of 2: tied to the collapse on that rank, no gate")),
        candidate=replace(rank1.candidate, rank1_counts=(
            ("match_rmsnorm_pattern", 0), ("sharding_transform_executor", 2), ("fuse_rmsnorm", 0))),
        root_causes=(Cause("match_lost", "match_rmsnorm_pattern", ("fuse_rmsnorm",),
                           "rank 1 of 2; fuse_rmsnorm's loss and the executor's change on that rank are its "
                           "consequences"),))


def no_tensors_within(by: By) -> Scenario:
    same = by["identical"]
    return replace(
        same, name="no_tensors_within",
        summary="The identical pair with recorded logits that differ within tolerance, run with --no-tensors.",
        injected="Both runs record tensors/outputs.safetensors (bf16 logits of the same model); the candidate's "
                 "carry a little kernel noise, so the files' bytes differ while the values stay within the "
                 "default tolerance. ad-diff is run with `--no-tensors`.",
        expect_text="Pass with no findings: tensors the user switched off leave the comparison (the header says "
                    "so once); their bytes are never an unaccounted difference.",
        baseline=replace(same.baseline, tensors=TensorSpec(M2)),
        candidate=replace(same.candidate, tensors=TensorSpec(M2, kernel_noise=0.002)),
        args=("--no-tensors",))


BUILDERS: list[Callable[[By], Scenario]] = [
    graph_cache_load, graph_cache_then_loss, dump_output_parens, log_formats_mixed, log_verbosity_mixed,
    world_size_tp2, stale_dumps, rank1_executor, no_tensors_within]


def fact_scenarios(existing: list[Scenario]) -> list[Scenario]:
    """The issue 40 scenarios, in manifest order; ``existing`` holds the scenarios they are derived from."""
    by = {sc.name: sc for sc in existing}
    return [build(by) for build in BUILDERS]


__all__ = ["fact_scenarios"]
