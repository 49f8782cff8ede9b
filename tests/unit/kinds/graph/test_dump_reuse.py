"""The accounting reads a dump pair only where its answer is not known already
(:class:`ad_diff.kinds.graph.facts.DumpComparisons`): a pair with the bodies of a pair read before
is answered from it, and a covered pair with such bodies counts as differing, so the pair after it is covered
too. Neither may change a report: on generated Llama pairs whose every later dump differs, and on scenarios
with graph dumps, the markdown and JSON reports are the same bytes as when every pair is read."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import ad_diff.kinds.graph.facts as inv
from ad_diff.cli.app import main

ROOT = Path(__file__).resolve().parents[4]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

from benchgen.llama import make_llama_pair  # noqa: E402

SCENARIOS = ("fusion_one_layer", "rename_only", "reordered_pipeline", "swiglu_overmatch", "metadata_loss",
             "cache_restore")


def _reports(root: Path, out: Path, tag: str) -> tuple[bytes, bytes]:
    md, js = out / f"{tag}.md", out / f"{tag}.json"
    with pytest.raises(SystemExit):
        main([str(root / "baseline"), str(root / "candidate"), "--markdown", str(md), "--json", str(js),
              "-f", "json"])
    return md.read_bytes(), js.read_bytes()


def _both(root: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, int, int]:
    """The reports with reuse and with every pair read, and how many pairs each read."""
    reads = [0]
    real = inv.dump_difference

    def counted(b: Path, c: Path) -> Any:
        reads[0] += 1
        return real(b, c)

    monkeypatch.setattr(inv, "dump_difference", counted)
    reused = _reports(root, out, "reused")
    n_reused, reads[0] = reads[0], 0
    monkeypatch.setattr(inv.DumpComparisons, "known", lambda self, b, c, bodies: None)
    read_all = _reports(root, out, "read")
    return reused, read_all, n_reused, reads[0]


@pytest.mark.parametrize("loss", ["repeat_kv", "swiglu"])
def test_reuse_changes_no_report_on_a_generated_pair(loss: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    make_llama_pair(tmp_path / "pair", layers=4, loss=loss, tensors=False)
    reused, read_all, n_reused, n_read = _both(tmp_path / "pair", tmp_path, monkeypatch)
    assert reused == read_all
    assert n_reused < n_read  # not vacuous: the generated pairs have no-op transforms after the loss
    capsys.readouterr()


@pytest.mark.parametrize("name", SCENARIOS)
def test_reuse_changes_no_report_on_a_scenario(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    reused, read_all, n_reused, n_read = _both(ROOT / "fixtures" / "scenarios" / name, tmp_path, monkeypatch)
    assert reused == read_all
    assert n_reused <= n_read
    capsys.readouterr()
