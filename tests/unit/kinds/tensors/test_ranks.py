"""Sharded against unsharded runs (issue 42, item 5): each rank's outputs are compared with the other run's
under the same tolerances, and the rounding of a bf16 all-reduce stays within them.

The tensors are made by torch the way a tensor-parallel layer makes them: a row-parallel projection whose
shards each compute a partial product (fp32 accumulation, bf16 result) that a bf16 all-reduce sums, one
rounding per step of the ring; the unsharded run computes the same projection in one product.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.kinds.tensors import ranks
from ad_diff.kinds.tensors.analysis import analyze_tensors
from ad_diff.kinds.tensors.classify import classify
from ad_diff.kinds.tensors.model import TensorVerdict
from ad_diff.settings import Settings

torch = pytest.importorskip("torch")
from ad_diff.recording import save_tensors  # noqa: E402  (needs torch)

TOKENS, HIDDEN, VOCAB = 16, 512, 1024


def _weights(seed: int) -> tuple[object, object]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(TOKENS, HIDDEN, generator=g).to(torch.bfloat16)
    w = (torch.randn(VOCAB, HIDDEN, generator=g) / HIDDEN**0.5).to(torch.bfloat16)
    return x, w


def _unsharded(x: object, w: object) -> object:
    return (x.float() @ w.float().T).to(torch.bfloat16)  # type: ignore[attr-defined]


def _all_reduced(x: object, w: object, world: int, drop: int | None = None) -> object:
    """The row-parallel product over ``world`` shards of the hidden dim, summed by a bf16 ring all-reduce
    (each step rounds to bf16); ``drop``: a shard whose partial never arrives (a broken collective)."""
    shards = zip(x.chunk(world, dim=1), w.chunk(world, dim=1), strict=True)  # type: ignore[attr-defined]
    parts = [(xs.float() @ ws.float().T).to(torch.bfloat16) for xs, ws in shards]
    total = torch.zeros_like(parts[0])
    for i, p in enumerate(parts):
        if i != drop:
            total = (total.float() + p.float()).to(torch.bfloat16)
    return total


def _runs(tmp_path: Path, world: int, seed: int, broken_rank: int | None = None) -> tuple[Path, Path]:
    x, w = _weights(seed)
    base, cand = tmp_path / "base", tmp_path / "cand"
    save_tensors(base, {"logits": _unsharded(x, w)}, inputs={"input_ids": torch.arange(TOKENS)})
    for r in range(world):
        out = _all_reduced(x, w, world, drop=0 if r == broken_rank else None)
        save_tensors(cand, {"logits": out}, inputs={"input_ids": torch.arange(TOKENS)}, rank=r)
    return base, cand


def _analyze(base: Path, cand: Path):  # noqa: ANN202
    return analyze_tensors(base / "tensors", cand / "tensors", Settings(baseline=base, candidate=cand))


@pytest.mark.parametrize("world", [2, 4, 8])
def test_each_rank_of_a_sharded_run_is_judged_against_the_unsharded_one(tmp_path: Path, world: int) -> None:
    a = _analyze(*_runs(tmp_path, world, seed=world))
    assert sorted(c.name for c in a.comparisons) == [f"logits@rank{r}" for r in range(world)]
    assert all(c.verdict in (TensorVerdict.IDENTICAL, TensorVerdict.ACCEPTABLE) for c in a.comparisons)
    assert classify(a) == []  # the inputs agree too: no "inputs differ" from the layout
    assert any("rank(s) " + ", ".join(map(str, range(world))) in n and "unsharded" in n for n in a.notes)


def test_a_rank_whose_all_reduce_lost_a_shard_gates_and_is_named(tmp_path: Path) -> None:
    a = _analyze(*_runs(tmp_path, 4, seed=3, broken_rank=2))
    bad = [f for f in classify(a) if f.severity.value == "error"]
    assert [f.tensor for f in bad] == ["logits@rank2"]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), world=st.sampled_from([2, 4, 8]))
def test_bf16_all_reduce_rounding_never_gates(tmp_path_factory: pytest.TempPathFactory, seed: int,
                                              world: int) -> None:
    a = _analyze(*_runs(tmp_path_factory.mktemp("r"), world, seed))
    assert [f for f in classify(a) if f.severity.value == "error"] == []


def test_spread_pairs_ranks_and_stands_in_with_the_lowest_rank() -> None:
    b = {"logits@rank0": "b0", "logits@rank1": "b1"}
    c = {"logits@rank0": "c0", "logits@rank1": "c1", "logits@rank2": "c2", "logits@rank3": "c3"}
    bb, cc, notes = ranks.spread(b, c)
    assert bb == {"logits@rank0": "b0", "logits@rank1": "b1", "logits@rank2": "b0", "logits@rank3": "b0"}
    assert cc == c
    assert notes == ["the candidate run's tensors of rank(s) 2, 3 are compared with the baseline run's "
                     "rank 0 (same tolerances: every rank holds the whole output)"]


def test_spread_leaves_rank_less_runs_and_one_sided_names_alone() -> None:
    assert ranks.spread({"logits": 1}, {"logits": 2}) == ({"logits": 1}, {"logits": 2}, [])
    b, c, _ = ranks.spread({"logits": 1, "extra": 5}, {"logits@rank0": 2, "logits@rank1": 3})
    assert b == {"logits@rank0": 1, "logits@rank1": 1, "extra": 5}
    assert c == {"logits@rank0": 2, "logits@rank1": 3}


def test_a_rank_folder_that_is_a_file_is_reported(tmp_path: Path) -> None:
    base, cand = _runs(tmp_path, 2, seed=1)
    (cand / "tensors" / "rank7").write_text("not a folder")
    a = _analyze(base, cand)
    assert any("rank7" in str(u.path) and "not a folder" in u.message for u in a.unreadable)


def test_save_tensors_refuses_a_rank_for_a_reference(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a rank's"):
        save_tensors(tmp_path, {"logits": torch.zeros(2)}, reference=True, rank=1)
    with pytest.raises(ValueError, match="whole number"):
        save_tensors(tmp_path, {"logits": torch.zeros(2)}, rank=-1)


def _cli_pair(tmp_path: Path, world: int, cand_inputs: object | None = None) -> tuple[Path, Path]:
    """Two complete runs (the identical scenario's logs and dumps) with tensors: an unsharded baseline and a
    candidate of ``world`` ranks; ``cand_inputs``: rank 1's inputs instead of the baseline's."""
    import shutil

    src = Path(__file__).resolve().parents[4] / "fixtures" / "scenarios" / "identical"
    base, cand = tmp_path / "base", tmp_path / "cand"
    shutil.copytree(src / "baseline", base)
    shutil.copytree(src / "candidate", cand)
    x, w = _weights(11)
    ids = torch.arange(TOKENS)
    save_tensors(base, {"logits": _unsharded(x, w)}, inputs={"input_ids": ids})
    for r in range(world):
        mine = cand_inputs if (r == 1 and cand_inputs is not None) else ids
        save_tensors(cand, {"logits": _all_reduced(x, w, world)}, inputs={"input_ids": mine}, rank=r)
    return base, cand


def _compare(base: Path, cand: Path, out: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    import json
    import subprocess
    import sys

    args = [sys.executable, "-m", "ad_diff", "compare", str(base), str(cand), "--json", str(out)]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    return proc.returncode, json.loads(out.read_text())


def test_a_sharded_run_of_the_same_model_passes_end_to_end(tmp_path: Path) -> None:
    code, report = _compare(*_cli_pair(tmp_path, 2), tmp_path / "r.json")
    assert (code, report["verdict"]) == (0, "pass")
    assert [f["code"] for f in report["findings"]] == []


def test_a_rank_that_recorded_other_inputs_is_one_root_cause(tmp_path: Path) -> None:
    pair = _cli_pair(tmp_path, 2, cand_inputs=torch.arange(TOKENS) + 1)
    code, report = _compare(*pair, tmp_path / "r.json")
    assert code == 1
    assert [f["code"] for f in report["findings"]] == ["ADT009"]  # its tensors are its own, not unaccounted
    assert "input_ids@rank1" in report["findings"][0]["message"]


def test_inputs_that_differ_are_one_root_cause_without_ranks_too(tmp_path: Path) -> None:
    base, cand = _cli_pair(tmp_path, 0)
    x, w = _weights(11)
    save_tensors(cand, {"logits": _unsharded(x, w)}, inputs={"input_ids": torch.arange(TOKENS) + 1})
    code, report = _compare(base, cand, tmp_path / "r.json")
    assert (code, [f["code"] for f in report["findings"]]) == (1, ["ADT009"])
