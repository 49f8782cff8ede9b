"""Existing-kernel lookup on small fake source trees (never imported, only read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.errors import InputError
from ad_diff.workflows.candidates import find_candidates
from ad_diff.workflows.candidates.lookup import index_source, lookup, pattern_tokens, resolve_ad_dir
from ad_diff.workflows.candidates.model import LookupStatus, Recommendation
from tests.conftest import FIXTURES
from tests.unit.candidates.conftest import AD, fake_tree

UNFUSED = FIXTURES / "candidates" / "unfused"
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
