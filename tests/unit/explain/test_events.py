"""Run-level events (issue 40): what a world-size change explains, property-tested against a reference, and
the accounting over facts (switched-off inputs, unrecognised lines never gating)."""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ad_diff.explain.events import sliced
from ad_diff.gate import decide
from ad_diff.pipeline import run
from ad_diff.settings import Settings
from tests.conftest import FIXTURES

DIMS = st.lists(st.integers(1, 4096), min_size=1, max_size=4)
DTYPES = st.sampled_from(["torch.bfloat16", "torch.float32"])


def _text(dims: list[int] | list[str], dtype: str) -> str:
    return "x".join(map(str, dims)) + f" : {dtype}"


@given(dims=DIMS, dtype=DTYPES, ws=st.sampled_from([(1, 2), (2, 4), (1, 8), (4, 2)]), data=st.data())
def test_a_shape_scaled_by_the_world_size_ratio_is_sliced(dims: list[int], dtype: str, ws: tuple[int, int],
                                                          data: st.DataObject) -> None:
    ratio = Fraction(*ws)
    which = data.draw(st.lists(st.integers(0, len(dims) - 1), min_size=1, unique=True))
    scaled = [d * ws[1] for d in dims]  # divisible both ways
    after = [Fraction(d) * ratio if i in which else d for i, d in enumerate(scaled)]
    assert sliced(_text(scaled, dtype), _text([int(a) for a in after], dtype), ratio)


@given(dims=DIMS, dtype=DTYPES, bump=st.integers(1, 7), data=st.data())
def test_any_other_change_is_not_sliced(dims: list[int], dtype: str, bump: int, data: st.DataObject) -> None:
    ratio = Fraction(1, 2)
    scaled = [d * 2 for d in dims]
    i = data.draw(st.integers(0, len(dims) - 1))
    other = list(scaled)
    other[i] = scaled[i] // 2 + bump  # not the ratio
    assert not sliced(_text(scaled, dtype), _text(other, dtype), ratio)
    assert not sliced(_text(scaled, dtype), _text(scaled, "torch.float16"), ratio)  # a dtype change
    assert not sliced(_text(scaled, dtype), _text(scaled, dtype), ratio)  # nothing scaled
    assert not sliced(_text(scaled, dtype), _text([*scaled, 1], dtype), ratio)  # another rank
    assert sliced(_text(["s44", *scaled], dtype), _text(["s44", *(x // 2 for x in scaled)], dtype), ratio)


@given(dim=st.text(min_size=1, max_size=30), big=st.integers(21, 5000))
def test_a_dimension_that_is_no_size_is_never_sliced_and_never_raises(dim: str, big: int) -> None:
    """A dump's shape is input: a dimension of any text (Unicode digits such as ``²``, thousands of digits)
    is either a size both sides scale or not sliced; ``sliced`` never raises (the fuzz run of issue 43 found
    ``int()`` refusing 4,401 digits)."""
    ratio = Fraction(1, 2)
    for before, after in ((f"{dim}x8", "4x8"), ("4x8", f"{dim}x8"), ("9" * big + "x8", "4" * big + "x8")):
        got = sliced(_text(before.split("x"), "torch.bfloat16"), _text(after.split("x"), "torch.bfloat16"),
                     ratio)
        assert got in (True, False)
    assert not sliced(_text(["²", "8"], "torch.float32"), _text(["1", "8"], "torch.float32"), ratio)
    assert not sliced(_text(["8" * big], "torch.float32"), _text(["4" * big], "torch.float32"), ratio)


def test_switched_off_tensors_are_no_facts() -> None:
    """--no-tensors on tensors that differ: nothing gates, the accounting says tensors were switched off."""
    pair = FIXTURES / "scenarios/no_tensors_within"
    result = run(Settings(pair / "baseline", pair / "candidate", tensors=False))
    assert decide(result.findings, "error").exit_code == 0
    assert result.accounting is not None
    assert result.accounting.switched_off == ("tensors",)
    assert "tensor" not in {item for item, _, _ in result.accounting.inventory}


def test_an_unrecognised_transform_line_is_a_warning_never_a_gate(tmp_path: Path) -> None:
    """A line a transform logs that no reader claims, changed in the candidate: ADA002, not a gate."""
    pair = FIXTURES / "scenarios/identical"
    base, cand = tmp_path / "baseline", tmp_path / "candidate"
    shutil.copytree(pair / "baseline", base)
    shutil.copytree(pair / "candidate", cand)
    log = cand / "ad.log"
    text = log.read_text()
    assert "Skipping sharding for single device" in text
    log.write_text(text.replace("Skipping sharding for single device", "Sharding 3 layers for 2 devices"))
    result = run(Settings(base, cand))
    found = [f for f in result.findings if f.code == "ADA002"]
    assert [f.transform for f in found] == ["detect_sharding"]
    assert "Sharding 3 layers for 2 devices" in found[0].message
    assert decide(result.findings, "error").exit_code == 0


def test_an_ignored_transforms_facts_are_no_facts(tmp_path: Path) -> None:
    """--ignore-transform takes the transform's result, lines, dump and config out of the accounting."""
    pair = FIXTURES / "scenarios/identical"
    base, cand = tmp_path / "baseline", tmp_path / "candidate"
    shutil.copytree(pair / "baseline", base)
    shutil.copytree(pair / "candidate", cand)
    log = cand / "ad.log"
    log.write_text(log.read_text().replace("Skipping sharding for single device", "something else"))
    result = run(Settings(base, cand, ignore_transforms=("detect_sharding",)))
    assert not [f for f in result.findings if f.code.startswith("ADA")]
    assert result.accounting is not None
    assert result.accounting.unrecognised == 0
