"""Existing-kernel lookup on the fixture tree written in the upstream layout and on small fake trees (never
imported, only read): transforms and ops as separate evidence, ties from the source, pattern checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.candidates import find_candidates
from ad_diff.candidates.lookup import index_source, lookup, pattern_tokens, resolve_ad_dir
from ad_diff.candidates.model import LookupStatus, Recommendation
from ad_diff.errors import InputError
from tests.conftest import FIXTURES
from tests.unit.candidates.conftest import AD, SRC, fake_tree, tree_with

UNFUSED = FIXTURES / "candidates" / "unfused"
SQRT_DIV = FIXTURES / "candidates" / "sqrt_div"
MOE = FIXTURES / "candidates" / "moe"
RMS = ("aten.pow.Tensor_Scalar", "aten.mean.dim", "aten.add.Tensor", "aten.rsqrt.default", "aten.mul.Tensor")


def test_found_with_file_and_symbol(tmp_path: Path) -> None:
    idx = index_source(fake_tree(tmp_path, with_rmsnorm=True))
    lk = lookup(idx, "rmsnorm", RMS)
    assert lk.status is LookupStatus.FOUND
    where = {(e.kind, e.symbol, e.path, e.line, e.matched_by) for e in lk.evidence}
    assert ("custom_op", "auto_deploy::torch_rmsnorm", f"{AD}/custom_ops/rms_norm.py", 4, "table") in where
    assert ("transform", "match_rmsnorm_pattern", f"{AD}/transform/library/rms_norm.py", 4, "table") in where
    assert lk.evidence[0].kind == "custom_op"  # ops before transforms


def test_not_found_without_matching_op(tmp_path: Path) -> None:
    idx = index_source(fake_tree(tmp_path, with_rmsnorm=False))
    lk = lookup(idx, "rmsnorm", RMS)
    assert lk.status is LookupStatus.NOT_FOUND
    assert lk.evidence == ()
    assert "torch_rmsnorm" in lk.searched


def test_not_searched_without_tree() -> None:
    lk = lookup(None, "rmsnorm", RMS)
    assert lk.status is LookupStatus.NOT_SEARCHED
    assert lk.evidence == ()


def test_define_forms_and_token_match(tmp_path: Path) -> None:
    idx = index_source(fake_tree(tmp_path, with_rmsnorm=False))
    syms = {(r.kind, r.symbol) for r in idx.registrations}
    assert ("library_define", "auto_deploy::torch_moe") in syms
    assert ("library_define", "auto_deploy::silu_and_mul") in syms
    lk = lookup(idx, "elementwise_chain", ("aten.silu.default", "aten.mul.Tensor"))
    assert lk.status is LookupStatus.FOUND
    assert lk.evidence[0].symbol == "auto_deploy::silu_and_mul"
    assert lk.evidence[0].matched_by == "op_tokens"


def test_pattern_tokens_drop_trivial_ops() -> None:
    assert pattern_tokens(RMS) == ("mean", "pow", "rsqrt")
    assert pattern_tokens(("aten.linear.default", "aten.add.Tensor")) == ()


def test_repo_root_or_package_dir_accepted(tmp_path: Path) -> None:
    root = fake_tree(tmp_path, with_rmsnorm=True)
    assert resolve_ad_dir(root) == root / AD
    assert resolve_ad_dir(root / AD) == root / AD
    with pytest.raises(InputError, match="not a TensorRT-LLM source tree"):
        resolve_ad_dir(tmp_path / AD / "custom_ops")


def test_source_code_is_never_executed(tmp_path: Path) -> None:
    # the fake op body raises SystemExit: indexing must only read it
    idx = index_source(fake_tree(tmp_path, with_rmsnorm=True))
    assert idx.files == 3


def test_recommendations_follow_lookup(tmp_path: Path) -> None:
    with_op = find_candidates(UNFUSED, trtllm_src=fake_tree(tmp_path / "a", with_rmsnorm=True))
    rms = with_op.get("rmsnorm")
    assert rms is not None
    assert rms.recommendation is Recommendation.USE_EXISTING_KERNEL
    assert any("match_rmsnorm_pattern is disabled" in w for w in rms.weaknesses)
    without = find_candidates(UNFUSED, trtllm_src=fake_tree(tmp_path / "b", with_rmsnorm=False))
    rms = without.get("rmsnorm")
    assert rms is not None
    assert rms.lookup.status is LookupStatus.NOT_FOUND
    assert rms.recommendation is Recommendation.NEEDS_TRITON_FALLBACK
    epi = without.get("gemm_epilogue")
    assert epi is not None
    assert epi.recommendation is Recommendation.DEFER
    none = find_candidates(UNFUSED)
    assert all(c.recommendation is Recommendation.DEFER for c in none.candidates)
    assert all(c.lookup.status is LookupStatus.NOT_SEARCHED for c in none.candidates)


def _ev(lk):
    return {(e.kind, e.symbol, e.path.removeprefix(AD + "/"), e.line, e.matched_by) for e in lk.evidence}


def test_transform_and_op_are_separate_evidence_each_with_file_and_line() -> None:
    r = find_candidates(SQRT_DIV, trtllm_src=SRC)
    rms = r.get("rmsnorm")
    assert rms is not None
    assert rms.lookup.status is LookupStatus.FOUND
    ev = _ev(rms.lookup)
    # flashinfer_rms_norm is found from the source: fuse_rmsnorm's backend map names it
    assert (
        "custom_op",
        "auto_deploy::flashinfer_rms_norm",
        "custom_ops/normalization/rms_norm.py",
        11,
        "source",
    ) in ev
    assert ("transform", "fuse_rmsnorm", "transform/library/rms_norm.py", 63, "table") in ev
    assert ("transform", "match_rmsnorm_pattern", "transform/library/rms_norm.py", 38, "table") in ev
    fi = next(e for e in rms.lookup.evidence if e.symbol == "auto_deploy::flashinfer_rms_norm")
    assert [(t.transform, t.role, t.line, t.detail) for t in fi.via] == [
        ("fuse_rmsnorm", "backend", 14, "backend map key 'flashinfer'")
    ]
    kinds = [e.kind for e in rms.lookup.evidence]
    assert kinds.index("transform") > max(i for i, k in enumerate(kinds) if k == "custom_op")  # ops first


def test_exists_but_did_not_match_names_the_difference() -> None:
    rms = find_candidates(SQRT_DIV, trtllm_src=SRC).get("rmsnorm")
    assert rms is not None
    checks = {(c.transform, c.function): c for c in rms.lookup.pattern_checks}
    diff = checks[("match_rmsnorm_pattern", "_rms_norm_pattern")]
    assert diff.status == "differs"
    assert diff.only_upstream == ("mul", "rsqrt")
    assert diff.only_graph == ("div", "sqrt")
    assert diff.upstream_formula == "weight * (data * rsqrt(mean(data^2) + eps))"
    assert diff.graph_formula == "w * (x / sqrt(mean(x^2) + 1e-05))"
    assert diff.message.startswith(
        "upstream match_rmsnorm_pattern matches weight * (data * rsqrt(mean(data^2) + eps)) "
        "(_rms_norm_pattern, "
    )
    assert diff.message.endswith(
        "this graph computes w * (x / sqrt(mean(x^2) + 1e-05)): mul, rsqrt only upstream; div, sqrt only here"
    )
    assert diff.message in rms.weaknesses
    gated = checks[("match_rmsnorm_pattern", "_gated_norm_pattern")]
    assert gated.status == "unreadable"
    assert "calls gated_norm_reference" in gated.message
    assert gated.message in rms.risks  # said, not guessed
    assert checks[("fuse_rmsnorm", None)].status == "no_pattern"


def test_same_ops_is_not_called_a_difference() -> None:
    rms = find_candidates(UNFUSED, trtllm_src=SRC).get("rmsnorm")
    assert rms is not None
    (same,) = [c for c in rms.lookup.pattern_checks if c.function == "_rms_norm_pattern"]
    assert same.status == "same_ops"
    assert same.only_upstream == same.only_graph == ()
    assert "not visible in the text" in same.message


def test_moe_candidate_is_looked_up_against_the_moe_registrations() -> None:
    moe = find_candidates(MOE, trtllm_src=SRC).get("moe")
    assert moe is not None
    assert moe.count == 4
    ev = _ev(moe.lookup)
    assert ("transform", "match_moe_pattern", "transform/library/fused_moe.py", 44, "table") in ev
    assert ("transform", "fuse_moe", "transform/library/fused_moe.py", 50, "table") in ev
    assert ("custom_op", "auto_deploy::torch_moe", "custom_ops/moe/torch_moe.py", 8, "source") in ev
    assert ("custom_op", "auto_deploy::trtllm_moe_fused", "custom_ops/moe/trtllm_moe.py", 6, "source") in ev
    assert ("custom_op", "auto_deploy::triton_moe_fused", "custom_ops/moe/trtllm_moe.py", 17, "table") in ev
    assert moe.recommendation is Recommendation.USE_EXISTING_KERNEL
    assert {c.status for c in moe.lookup.pattern_checks} == {"no_pattern"}
    assert any("match_moe_pattern is applied with 0 matches" in w for w in moe.weaknesses)


def test_source_ties_find_what_the_table_does_not_know(tmp_path: Path) -> None:
    # a renamed transform inserting a known op is found from its text; the op it names but nobody
    # registers is an op_reference at the naming line
    lib = (
        "@TransformRegistry.register('fuse_rms_norm_v2')\n"
        "class F:\n"
        "    def _apply(self, gm):\n"
        "        gm.graph.call_function(torch.ops.auto_deploy.flashinfer_rms_norm, ())\n"
        "        gm.graph.call_function(torch.ops.auto_deploy.cpp_only_rms_norm.default, ())\n"
    )
    root = tree_with(tmp_path, {"transform/library/norm.py": lib})
    lk = lookup(index_source(root), "rmsnorm", RMS, ("pow", "mean", "add", "rsqrt", "mul"))
    ev = _ev(lk)
    assert ("transform", "fuse_rms_norm_v2", "transform/library/norm.py", 1, "source") in ev
    assert ("op_reference", "auto_deploy::cpp_only_rms_norm", "transform/library/norm.py", 5, "source") in ev
    tr = next(e for e in lk.evidence if e.kind == "transform")
    assert "auto_deploy::flashinfer_rms_norm (line 4)" in tr.note


def test_known_names_follow_upstream_spelling() -> None:
    from ad_diff.candidates.lookup import KNOWN

    ops, transforms = KNOWN["rmsnorm"]
    assert "flashinfer_rms_norm" in ops  # the registered op name upstream
    assert "flashinfer_rmsnorm" not in ops  # that is the Python function's name, not the op's
    assert set(KNOWN["moe"][1]) == {"match_moe_pattern", "fuse_moe"}
