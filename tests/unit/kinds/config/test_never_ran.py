"""Configured transforms that never ran (issue 27, part 4): a key one typo away from a transform the runs
show gates and says "did you mean"; a key far from every known one stays a non-gating ADC004 warning."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ad_diff import gate
from ad_diff.core.model import Severity
from ad_diff.core.spelling import distance, near
from ad_diff.kinds.config.classify import classify
from ad_diff.kinds.config.compare import analyze_config
from ad_diff.kinds.config.model import ConfigSource, EffectiveConfig, SourceKind
from tests.unit.kinds.config.scenarios import make_log

LOG = make_log("explained", 0)
KEYS = sorted({r.transform for r in LOG.transforms})
ALPHABET = "abcdefghijklmnopqrstuvwxyz_0123456789"


def _cfg(transforms: dict[str, dict[str, object]]) -> EffectiveConfig:
    # an overlay (not complete): transforms the log shows and this config does not name are no finding
    return EffectiveConfig(ConfigSource(SourceKind.LAYERED, ("model_x.yaml",), "test", False),
                           {"transforms": transforms}, {})


@st.composite
def one_typo(draw: st.DrawFn) -> tuple[str, str]:
    """A known key and that key after one random edit (insert, delete, substitute, swap neighbours)."""
    key = draw(st.sampled_from(KEYS))
    i = draw(st.integers(0, len(key) - 1))
    c = draw(st.sampled_from(ALPHABET))
    edit = draw(st.sampled_from(("insert", "delete", "substitute", "swap")))
    if edit == "insert":
        typo = key[:i] + c + key[i:]
    elif edit == "delete":
        typo = key[:i] + key[i + 1:]
    elif edit == "substitute":
        typo = key[:i] + c + key[i + 1:]
    else:
        j = min(i + 1, len(key) - 1)
        typo = key[:i] + key[j] + key[i] + key[j + 1:] if j > i else key
    assume(typo not in KEYS)
    return key, typo


def _findings(candidate: dict[str, dict[str, object]], baseline: dict[str, dict[str, object]] | None = None):
    return classify(analyze_config(_cfg(baseline or {}), _cfg(candidate), LOG, LOG))


@settings(max_examples=150, deadline=None)
@given(one_typo())
def test_one_typo_in_the_candidate_gates_and_names_the_key(pair: tuple[str, str]) -> None:
    key, typo = pair
    findings = _findings({typo: {"enabled": True}})
    [f] = [f for f in findings if f.transform == typo and f.code != "ADC001"]
    assert f.code == "ADC010"
    assert key in dict(f.evidence)["did_you_mean"]
    assert f"did you mean {key}" in f.message or f" or {key}" in f.message
    assert gate.decide(findings, "error").exit_code == gate.EXIT_REGRESSION


@settings(max_examples=50, deadline=None)
@given(one_typo())
def test_a_typo_the_candidate_fixed_warns_only(pair: tuple[str, str]) -> None:
    key, typo = pair
    findings = classify(analyze_config(_cfg({typo: {"enabled": True}}), _cfg({key: {"enabled": True}}),
                                       LOG, LOG))
    [f] = [f for f in findings if f.code == "ADC010"]
    assert f.severity is Severity.WARNING
    assert "baseline config" in f.message
    assert gate.decide(findings, "error").exit_code == gate.EXIT_OK


@settings(max_examples=100, deadline=None)
@given(st.text(ALPHABET, min_size=6, max_size=30))
def test_a_key_far_from_every_known_key_is_a_warning(key: str) -> None:
    assume(all(distance(key, k, 3) > 3 for k in KEYS))
    findings = _findings({key: {"enabled": True}})
    [f] = [f for f in findings if f.transform == key and f.code != "ADC001"]
    assert (f.code, f.severity) == ("ADC004", Severity.WARNING)
    assert "did you mean" not in f.message
    assert gate.decide(findings, "error").exit_code == gate.EXIT_OK


def test_a_disabled_or_logged_key_is_no_finding() -> None:
    typo = KEYS[0] + "s"
    findings = _findings({typo: {"enabled": False}, KEYS[1]: {"enabled": True}})
    assert [f.code for f in findings if f.code != "ADC001"] == []


def _full(a: str, b: str) -> int:
    """The optimal-string-alignment distance without a bound (the textbook table)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@settings(max_examples=300, deadline=None)
@given(st.text("abc_", max_size=9), st.text("abc_", max_size=9), st.integers(0, 4))
def test_bounded_distance_is_the_distance_up_to_its_bound(a: str, b: str, limit: int) -> None:
    assert distance(a, b, limit) == min(_full(a, b), limit + 1)


def test_near_returns_every_closest_key_and_nothing_for_a_known_one() -> None:
    assert near("fuse_gemm", ["fuse_gemms", "fuse_moe"]) == ("fuse_gemms",)
    assert near("match_roe_pattern", ["match_moe_pattern", "match_rope_pattern"]) == (
        "match_moe_pattern", "match_rope_pattern")
    assert near("fuse_gemms", ["fuse_gemms"]) == ()
    assert near("abc", ["xyz"]) == ()
