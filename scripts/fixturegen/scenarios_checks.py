"""Scenarios of issue 27's self-checks (parts 4 and 5, and its silent passes): a run that is not what its
config, its log or its folder says must never pass."""

from __future__ import annotations

from dataclasses import replace

from .run_folder import default_yaml, overlay_yaml
from .scenarios import BASE, CAND, Cause, Finding, Scenario

_CFG = (("config/default.yaml", default_yaml()),)
_CANON = (("post_export", "cleanup_canonicalize_graph", "cleanup_input_constraints"),)
_WORLD2 = (("config/default.yaml", default_yaml()), ("config/world_size_2.yaml", overlay_yaml({}, world_size=2)))
_LAST_DUMP = "graphs/026_compile_compile_model.txt"
_SEEDED = tuple(("nodes", n, "seeded") for n in ("flashinfer_rmsnorm", "linear", "linear_1", "linear_2"))
_TENSORS = (("outputs", "logits", "seeded"), *_SEEDED)


def check_scenarios() -> list[Scenario]:
    """One scenario per class: a misspelled config key, a candidate that links the baseline's files, a
    per-node capture with new NaN, dumps of a transform the log never ran, a rank that logged nothing."""
    return [
        Scenario(
            "config_key_misspelled", "The candidate's overlay enables a transform under a misspelled key.",
            "Both runs carry config/default.yaml (fuse_gemms disabled, as in AD). The candidate adds "
            "config/fusion.yaml with `fuse_gemm: {enabled: true}` (one character short of fuse_gemms), which "
            "AD ignores: its log shows fuse_gemms disabled, like the baseline's, and no fuse_gemm line.",
            "A gating config finding at fuse_gemm that asks 'did you mean fuse_gemms?': the fusion the change "
            "meant to enable never ran.", "fail",
            (Finding("config", "fuse_gemm", "post_load_fusion", "enabled, never ran; did you mean fuse_gemms?"),),
            replace(BASE, config=_CFG),
            replace(CAND, config=(*_CFG, ("config/fusion.yaml", overlay_yaml({"fuse_gemm": {"enabled": True}})))),
            root_causes=(Cause("other", None, (), "the key never ran, so no transform row heads it"),)),
        Scenario(
            "candidate_links_baseline", "A candidate dump is a symbolic link to the baseline's.",
            "The candidate's last dump (compile_model) is a relative symbolic link to the baseline's file of "
            "the same name: the candidate folder was assembled from the baseline's artifacts.",
            "A gating input finding naming the linked file (the candidate's file is the baseline's), besides "
            "the refused dump and the cut dump folder it leaves.", "fail",
            (Finding("input", None, None, "graphs/026_compile_compile_model.txt is the baseline's file"),
             Finding("incomplete_run", "compile_model", "compile", "its dump is refused: the folder stops")),
            BASE, replace(CAND, links=((_LAST_DUMP, "../../baseline/" + _LAST_DUMP),)),
            root_causes=(Cause("input", None), Cause("input", None), Cause("incomplete_run", "compile_model"))),
        Scenario(
            "node_capture_nan", "A per-node capture is all NaN in the candidate; the logits are fine.",
            "Both runs record the logits and four per-node captures (flashinfer_rmsnorm, linear, linear_1, "
            "linear_2) with equal values, except the candidate's linear_1, which is all NaN.",
            "A gating numeric finding naming linear_1 (new NaN/Inf always fails), whatever the logits say.",
            "fail",
            (Finding("numeric_drift", None, None, "linear_1: 512 NaN (first drifting node and new NaN)"),),
            replace(BASE, tensor_files=_TENSORS),
            replace(CAND, tensor_files=(("outputs", "logits", "seeded"), *(
                (f, n, "nan" if n == "linear_1" else fill) for f, n, fill in _SEEDED))),
            # ADT013 names its node, not a tensor (as ADT007 does): the consequence has no transform or tensor
            root_causes=(Cause("numeric_drift", None, (None,), "the first drifting node heads the drift"),)),
        Scenario(
            "dumps_not_logged", "The candidate's graphs/ holds a dump of a transform its log never ran.",
            "The candidate's log is the identical run's; its graphs/ comes from a run that also ran "
            "post_export/cleanup_canonicalize_graph, so it holds that transform's dump (and every later "
            "dump numbered one higher).",
            "A gating consistency finding at cleanup_canonicalize_graph (the dumps and the log do not describe "
            "one run), not 'ran in the candidate only'.", "fail",
            (Finding("consistency", "cleanup_canonicalize_graph", "post_export", "dumped, never logged"),),
            BASE, replace(CAND, dumps_from=replace(CAND.spec, extra=_CANON), dump_all=True),
            root_causes=(Cause("dumps_of_another_run", None, (),
                               "the log never ran the transform: the dumps are another run's; no row heads it"),)),
        Scenario(
            "rank_silent", "Both configs say world size 2; the candidate's rank 1 logged nothing.",
            "Both runs carry config/world_size_2.yaml (`world_size: 2`). The baseline's log holds ranks 0 "
            "and 1; the candidate's only rank 0 (rank 1 died before its first transform, or its output was "
            "lost).",
            "An incomplete run naming rank 1 (gates), with the world-size change it causes as a warning.",
            "fail",
            (Finding("incomplete_run", None, None, "rank 1 of world_size 2 logged no result"),
             Finding("config", None, None, "world size changed: a consequence")),
            replace(BASE, ranks=(0, 1), config=_WORLD2), replace(CAND, config=_WORLD2),
            root_causes=(Cause("other", None, (), "the silent rank has no transform to head it"),)),
    ]


__all__ = ["check_scenarios"]
