"""``ad-diff candidates`` on graphs exported from tiny transformers 5 models (fixtures/candidates/hf_*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.candidates import find_candidates
from ad_diff.candidates.render import render_text
from tests.conftest import FIXTURES

C = FIXTURES / "candidates"
SRC = C / "trtllm_src"


@pytest.mark.parametrize("name", ["hf_mixtral", "hf_gpt_oss"])
def test_report_matches_its_reviewed_golden(name: str) -> None:
    folder = C / name
    text = render_text(find_candidates(folder, trtllm_src=SRC))
    golden = (folder / "expected" / "candidates.txt").read_text(encoding="utf-8")
    assert text == golden, "report changed: review, then python scripts/make_candidate_fixtures.py --goldens"


def _report(name: str):  # type: ignore[no-untyped-def]
    return find_candidates(C / name, trtllm_src=SRC)


@pytest.mark.parametrize("name", ["hf_mixtral", "hf_gpt_oss"])
def test_moe_and_attention_blocks_rank_first_with_upstream_evidence(name: str) -> None:
    r = _report(name)
    assert {c.family for c in r.candidates[:2]} == {"moe", "attention"}
    moe, att = r.get("moe"), r.get("attention")
    assert moe is not None
    assert att is not None
    assert moe.signature.startswith("moe[grouped_gemm]")
    assert "routing: cumsum, histc, index, index_put_, sort" in moe.signature
    assert "aten._grouped_mm.default" in moe.pattern
    symbols = {e.symbol for e in moe.lookup.evidence}
    assert {"match_moe_pattern", "fuse_moe", "auto_deploy::torch_moe"} <= symbols
    assert {"match_eager_attention", "auto_deploy::torch_attention"} <= {
        e.symbol for e in att.lookup.evidence
    }
    # fragments of the blocks are listed under them, not beside them
    top = {c.family for c in r.candidates}
    assert not top & {"softmax", "silu_mul"}
    assert moe.bytes_saved > 0
    assert moe.bytes_unknown == 0
    ranked = [c.bytes_saved for c in r.candidates if c.family != "attention_layout"]
    assert ranked == sorted(ranked, reverse=True)


def test_mixtral_router_is_cast_to_float32_and_gpt_oss_router_has_a_bias_and_attention_sinks() -> None:
    mix, oss = _report("hf_mixtral"), _report("hf_gpt_oss")
    assert "router: linear -> to -> softmax -> topk (float32," in mix.get("moe").signature  # type: ignore[union-attr]
    oss_moe, oss_att = oss.get("moe"), oss.get("attention")
    assert oss_moe is not None
    assert oss_att is not None
    assert "router: linear -> topk -> softmax (bias," in oss_moe.signature
    assert "(sinks, mask" in oss_att.signature
    # sliding-window and full attention layers are one attention candidate
    assert oss_att.count == 2
    assert oss_att.layers == (0, 1)


def test_fixtures_need_no_transformers() -> None:
    text = Path(C / "hf_mixtral" / "graphs" / "001_compile_compile_model.txt").read_text(encoding="utf-8")
    assert "aten._grouped_mm.default" in text
    assert "transformers." not in text
