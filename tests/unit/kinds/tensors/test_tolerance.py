"""Tolerance defaults, overrides, statistic parsing and the judgement."""

from __future__ import annotations

import pytest

from ad_diff.errors import ConfigError
from ad_diff.kinds.tensors.model import ErrorHistogram, ReferenceStats, TensorStats
from ad_diff.kinds.tensors.tolerance import judge, parse_cli, parse_statistic, resolve


def _stats(**kw: object) -> TensorStats:
    base: dict[str, object] = dict(
        numel=100, compared=100, max_abs=0.01, mean_abs=0.001, max_rel=0.02, mean_rel=0.002, rmse=0.002,
        nrmse=0.005, cosine=0.9999, one_minus_cosine=1e-4, outside=30, atol=1e-5, rtol=1.6e-2, nan_baseline=0,
        nan_candidate=0,
        inf_baseline=0, inf_candidate=0, worst_index=(3,), worst_baseline=1.0, worst_candidate=1.01,
    )
    base.update(kw)
    return TensorStats(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dtype", "rtol", "atol"),
    [("BF16", 1.6e-2, 1e-5), ("F16", 1e-3, 1e-5), ("F32", 1.3e-6, 1e-5), ("F64", 1e-7, 1e-7), ("I64", 0, 0)],
)
def test_dtype_defaults_match_assert_close(dtype: str, rtol: float, atol: float) -> None:
    tol = resolve("logits", dtype)
    assert (tol.rtol, tol.atol, tol.statistic) == (rtol, atol, "auto")
    assert tol.nrmse == rtol


def test_glob_overrides_apply_in_order_after_default() -> None:
    over = {"layer*": {"rtol": 0.1}, "default": {"atol": 1e-3}, "layer1.*": {"rtol": 0.2, "statistic": "p99"}}
    tol = resolve("layer1.out", "BF16", over)
    assert (tol.atol, tol.rtol, tol.statistic, tol.quantile) == (1e-3, 0.2, "quantile", 0.99)
    assert tol.source == "default,layer*,layer1.*"
    assert resolve("other", "BF16", over).rtol == 1.6e-2


def test_unknown_key_and_bad_values_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown key"):
        resolve("x", "BF16", {"default": {"atoll": 1}})
    with pytest.raises(ConfigError, match="expected a number"):
        resolve("x", "BF16", {"default": {"atol": "big"}})
    with pytest.raises(ConfigError, match="unknown statistic"):
        parse_statistic("p999x")


def test_parse_cli() -> None:
    assert parse_cli("logits:rtol=1e-3,statistic=max") == ("logits", {"rtol": "1e-3", "statistic": "max"})
    assert parse_cli("atol=1e-4") == ("default", {"atol": "1e-4"})
    assert parse_statistic("median") == ("quantile", 0.5)


def test_auto_without_reference_uses_nrmse() -> None:
    tol = resolve("logits", "BF16")
    assert judge(_stats(nrmse=0.01), tol).within
    j = judge(_stats(nrmse=0.02), tol)
    assert not j.within
    assert j.statistic == "rmse"


def test_auto_with_reference_uses_ratio() -> None:
    tol = resolve("logits", "BF16")
    ok = _stats(nrmse=0.5, reference=ReferenceStats("F32", 0.01, 0.0113, 1.13))
    bad = _stats(nrmse=0.001, reference=ReferenceStats("F32", 0.01, 0.03, 3.0))
    assert judge(ok, tol).within
    assert judge(ok, tol).statistic == "reference"
    assert not judge(bad, tol).within


def test_new_nan_always_fails() -> None:
    rule = resolve("x", "BF16", {"default": {"statistic": "max", "atol": 1}})
    j = judge(_stats(nan_candidate=1, outside=1), rule)
    assert not j.within
    assert j.statistic == "nonfinite"


def test_elementwise_max_mean_quantile() -> None:
    s = _stats(histogram=ErrorHistogram(-12, 8, (0,) * 399 + (1,), (0,) * 400))
    assert not judge(s, resolve("x", "BF16", {"default": {"statistic": "elementwise"}})).within
    assert judge(_stats(outside=0), resolve("x", "BF16", {"default": {"statistic": "elementwise"}})).within
    assert not judge(s, resolve("x", "BF16", {"default": {"statistic": "max", "rtol": 0.01}})).within
    assert judge(s, resolve("x", "BF16", {"default": {"statistic": "max", "rtol": 0.03}})).within
    assert judge(s, resolve("x", "BF16", {"default": {"statistic": "mean", "atol": 0.001}})).within
    assert judge(s, resolve("x", "BF16", {"default": {"statistic": "p50"}})).within
    hot = _stats(histogram=ErrorHistogram(-12, 8, (0,) * 399 + (1,), (0,) * 399 + (1,)))
    assert not judge(hot, resolve("x", "BF16", {"default": {"statistic": "p50"}})).within
