"""The margin rule (ad_diff.kinds.tensors.routing): random router noise below it never gates; a flip with a
margin above it always does, naming the layer and the token. Any top-k scheme: the choice is compared as
sets, ranked by logits (softmax and sigmoid keep each row's order) or taken from the captured choice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from ad_diff.core.moe import MoeRouting
from ad_diff.kinds.tensors import routing as R
from ad_diff.kinds.tensors.classify import routing_findings
from ad_diff.kinds.tensors.find import read_index
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorKind


def _records(tmp: Path, name: str, **arrays: np.ndarray) -> dict[str, object]:
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / f"{name}.safetensors"
    save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, str(path))
    return {r.name: r for r in read_index(path, TensorKind.NODE)}


def _layer(k: int, scheme: str = "softmax") -> MoeRouting:
    return MoeRouting(3, "moe_3", "torch_moe", "router", k, "topk argument", scheme, True, None, "chosen")


def _judge(tmp: Path, base: np.ndarray, cand: np.ndarray, k: int, chosen: tuple[np.ndarray, np.ndarray] | None
           = None) -> R.Compared:
    extra_b = {"chosen": chosen[0]} if chosen else {}
    extra_c = {"chosen": chosen[1]} if chosen else {}
    b = _records(tmp / "b", "nodes", router=base, **extra_b)
    c = _records(tmp / "c", "nodes", router=cand, **extra_c)
    data = R.LayerData(b["router"], c["router"], (b["chosen"], c["chosen"]) if chosen else None)  # type: ignore[arg-type]
    return R.compare_layer(data, k, (2, base.shape[0] // 2) if base.shape[0] % 2 == 0 else None)


def _findings(compared: R.Compared, k: int) -> list[object]:
    layer = R.layer_routing(_layer(k), compared, None, "router logits' top-k", None)
    return routing_findings(TensorAnalysis((), (), (), routing=(layer,), moe_layers=1))


shapes = st.tuples(st.integers(1, 96), st.integers(2, 64)).map(lambda te: (te[0] * 2, te[1]))


@settings(max_examples=60, deadline=None)
@given(shape=shapes, k=st.integers(1, 8), scale=st.floats(1e-6, 3e-2), gaussian=st.booleans(),
       offset=st.floats(-5, 5), seed=st.integers(0, 2**31 - 1), sigmoid=st.booleans())
def test_random_router_noise_below_the_margin_rule_never_gates(
    tmp_path_factory, shape, k, scale, gaussian, offset, seed, sigmoid  # type: ignore[no-untyped-def]
) -> None:
    t, e = shape
    k = min(k, e - 1)
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal((t, e)) + offset).astype(np.float32)
    noise = rng.standard_normal((t, e)) if gaussian else rng.uniform(-1, 1, (t, e))
    cand = (base + scale * noise).astype(np.float32)
    if sigmoid:  # a sigmoid router (DeepSeek-style scores) ranks as its logits do: same verdict
        base, cand = 1 / (1 + np.exp(-base)), 1 / (1 + np.exp(-cand))
    compared = _judge(tmp_path_factory.mktemp("r"), base, cand, k)
    assert all(f.near_tie for _, f in compared.flips)
    findings = _findings(compared, k)
    assert not [f for f in findings if f.code == "ADT015"]  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None)
@given(shape=shapes, k=st.integers(1, 8), scale=st.floats(0, 1e-2), seed=st.integers(0, 2**31 - 1),
       pick=st.integers(0, 10**6), above=st.floats(1.5, 50))
def test_a_flip_with_a_margin_above_the_rule_always_gates_and_names_layer_and_token(
    tmp_path_factory, shape, k, scale, seed, pick, above  # type: ignore[no-untyped-def]
) -> None:
    t, e = shape
    k = min(k, e - 1)
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((t, e)).astype(np.float32)
    cand = (base + scale * rng.uniform(-1, 1, (t, e))).astype(np.float32)
    chosen_b = np.argsort(-base, axis=1, kind="stable")[:, :k]
    chosen_c = np.argsort(-cand, axis=1, kind="stable")[:, :k].copy()
    spread = (cand - base).max(axis=1) - (cand - base).min(axis=1)
    noise = float(np.sqrt(np.mean(spread.astype(np.float64) ** 2)))
    # the routing (a kernel after the logits) takes in, at one token, an expert whose score lies further
    # below the k-th than the margin rule allows
    token = pick % t
    ranked = np.argsort(-base[token], kind="stable")
    limit = max(R.NEAR_TIE * noise, float(R.step("F32", np.array([base[token, ranked[k - 1]]]))[0]))
    far = [x for x in ranked[k:] if base[token, ranked[k - 1]] - base[token, x] > above / 1.5 * limit]
    if not far:  # no expert that far below at this token: make one
        base[token, ranked[-1]] = base[token, ranked[k - 1]] - above * limit - 1.0
        cand[token, ranked[-1]] = base[token, ranked[-1]]
        chosen_b = np.argsort(-base, axis=1, kind="stable")[:, :k]
        chosen_c = np.argsort(-cand, axis=1, kind="stable")[:, :k].copy()
        far = [ranked[-1]]
    chosen_c[token, -1] = far[-1]
    compared = _judge(tmp_path_factory.mktemp("r"), base, cand, k, (chosen_b, chosen_c))
    clear = [f for _, f in compared.flips if not f.near_tie]
    assert clear
    (finding,) = [f for f in _findings(compared, k) if f.code == "ADT015"]  # type: ignore[attr-defined]
    assert finding.severity.value == "error"  # type: ignore[attr-defined]
    index = list(np.unravel_index(token, (2, t // 2)))
    assert "MoE layer 3 (moe_3)" in finding.message  # type: ignore[attr-defined]
    tokens = [f["token"] for f in dict(finding.evidence)["flips"]]  # type: ignore[attr-defined]
    assert [int(i) for i in index] in tokens


def test_margin_is_the_gap_the_change_crossed() -> None:
    scores = np.array([5.0, 4.0, 3.9, 1.0])
    assert R.flip_margin(scores, np.array([0, 1]), np.array([0, 2]), 2) == np.float64(4.0 - 3.9)
    assert R.flip_margin(scores, np.array([0, 1]), np.array([0, 3]), 2) == 3.0
    assert R.flip_margin(np.array([2.0, 2.0, 1.0]), np.array([0]), np.array([1]), 1) == 0.0


def test_token_rows_of_flat_batched_and_head_layouts() -> None:
    assert R.token_rows((8,), 8, [3]) == [3]
    assert R.token_rows((2, 4), 8, [5]) == [5]
    assert R.token_rows((2, 4, 3), 8, [1]) == [3, 4, 5]
    assert R.token_rows((2, 3, 4), 8, [5], (2, 4)) == [13, 17, 21]  # [batch, heads, position]
    assert R.token_rows((5, 7), 8, [1]) == []


def test_a_captured_choice_that_is_no_expert_is_refused(tmp_path: Path) -> None:
    base = np.arange(16, dtype=np.float32).reshape(4, 4)
    bad = np.array([[0, 9], [1, 2], [0, 1], [2, 3]], dtype=np.int64)
    with pytest.raises(ValueError, match=r"no expert of 0\.\.3"):
        _judge(tmp_path, base, base, 2, (bad, bad))
