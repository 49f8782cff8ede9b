"""The incremental alignment (``ad_diff.kinds.graph.carry``) against the full chain it stands in for: on every
scenario with graph dumps (and on generated Llama pairs whose every later dump differs) the node pairs, their
match kinds, the analysis and the bytes of the markdown and JSON reports are the same."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import ad_diff.kinds.graph.analysis as analysis
import ad_diff.kinds.graph.carry as carry
from ad_diff.cli.app import main
from ad_diff.kinds.graph.analysis import analyze_graphs
from tests.unit.kinds.graph.test_analysis import SCENARIOS, _log

ROOT = Path(__file__).resolve().parents[4]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

from benchgen.llama import make_llama_pair  # noqa: E402

ALIGN, STEP = carry.Aligner.align, carry.step
Pairs = list[list[tuple[str, str, str, str]]]


def _analyze(monkeypatch: pytest.MonkeyPatch, root: Path, incremental: bool, logs: list[Any]
             ) -> tuple[Any, Pairs, int]:
    """The analysis of ``root``'s runs, every aligned pair's node pairs, and how many sections were carried
    by :func:`carry.step` (the incremental path taken, however small the share it has to align again)."""
    monkeypatch.setattr(analysis, "INCREMENTAL", incremental)
    monkeypatch.setattr(carry, "MAX_SHARE", 10.0)
    monkeypatch.setattr(carry.Aligner, "keep_all", True)
    pairs: Pairs = []
    steps = [0]
    align, step = ALIGN, STEP

    def spy(self: carry.Aligner, *a: Any) -> Any:
        out = align(self, *a)
        pairs.append(self.pairs())
        return out

    def counted(*a: Any) -> Any:
        got = step(*a)
        steps[0] += got is not None
        return got

    monkeypatch.setattr(carry.Aligner, "align", spy)
    monkeypatch.setattr(carry, "step", counted)
    a = analyze_graphs(root / "baseline" / "graphs", root / "candidate" / "graphs", *logs)
    return a, pairs, steps[0]


def _reports(monkeypatch: pytest.MonkeyPatch, root: Path, out: Path, incremental: bool
             ) -> tuple[bytes, bytes]:
    monkeypatch.setattr(analysis, "INCREMENTAL", incremental)
    monkeypatch.setattr(carry, "MAX_SHARE", 10.0)
    md, js = out / f"{incremental}.md", out / f"{incremental}.json"
    with pytest.raises(SystemExit):
        main([str(root / "baseline"), str(root / "candidate"), "--markdown", str(md), "--json", str(js),
              "-f", "json"])
    return md.read_bytes(), js.read_bytes()


KNOWN_DIVERGENT = {
    "fp8_checkpoint_drift": "carried pairs disagree with the full chain since inputs pair by position",
    "torch_upgrade_rename": "carried pairs disagree with the full chain since inputs pair by position",
}
"""Scenarios where the (now unused by default) incremental step differs from the full chain: strict xfail."""


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_DIVERGENT[n], strict=True))
    if n in KNOWN_DIVERGENT else n for n in SCENARIOS])
def test_incremental_alignment_matches_the_full_chain(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ROOT / "fixtures" / "scenarios" / name
    logs = [_log(root / run) for run in ("baseline", "candidate")]
    full, full_pairs, none = _analyze(monkeypatch, root, False, logs)
    inc, inc_pairs, _ = _analyze(monkeypatch, root, True, logs)
    assert none == 0
    assert inc_pairs == full_pairs
    assert inc == full
    assert _reports(monkeypatch, root, tmp_path, True) == _reports(monkeypatch, root, tmp_path, False)
    capsys.readouterr()


def test_the_scenarios_take_the_incremental_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above is not vacuous: the corpus has transforms the step carries."""
    carried = 0
    for name in SCENARIOS:
        root = ROOT / "fixtures" / "scenarios" / name
        carried += _analyze(monkeypatch, root, True, [None, None])[2]
    assert carried >= 5


@pytest.mark.parametrize("loss", ["repeat_kv", "swiglu", "rmsnorm"])
def test_incremental_alignment_on_a_generated_pair(loss: str, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    """A 6-layer Llama pair whose candidate loses one match: every later dump differs."""
    make_llama_pair(tmp_path, layers=6, loss=loss, tensors=False)
    full, full_pairs, _ = _analyze(monkeypatch, tmp_path, False, [None, None])
    inc, inc_pairs, steps = _analyze(monkeypatch, tmp_path, True, [None, None])
    assert steps >= 3
    assert inc_pairs == full_pairs
    assert inc == full
