"""Optional PNG plots for drifting tensors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.kinds.tensors import plots
from ad_diff.kinds.tensors.analysis import analyze_tensors
from ad_diff.settings import Settings

SYN = Path(__file__).resolve().parents[4] / "fixtures" / "tensors" / "synthetic"


def test_plot_file_names_are_safe_and_distinct() -> None:
    a, b = plots.plot_files("a/b|c"), plots.plot_files("a_b_c")
    assert a != b
    assert all(ch.isalnum() or ch in "_.-" for ch in a[0])


@pytest.mark.skipif(not plots.available(), reason="matplotlib not installed")
def test_write_plots_for_drifting_tensors(tmp_path: Path) -> None:
    base, cand = SYN / "beyond" / "baseline", SYN / "beyond" / "candidate"
    a = analyze_tensors(base / "tensors", cand / "tensors", Settings(base, cand, tensor_plots=True))
    written = plots.write_plots(a, tmp_path)
    assert sorted(p.name for p in written) == sorted(plots.plot_files("logits"))
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)


def test_missing_matplotlib_is_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "matplotlib" else real(n, *a))
    base, cand = SYN / "beyond" / "baseline", SYN / "beyond" / "candidate"
    pngs = Settings(base, cand, tensor_plots=True, plots_dir=Path("plots"))
    a = analyze_tensors(base / "tensors", cand / "tensors", pngs)
    assert any("matplotlib is not installed" in n for n in a.notes)
    # the HTML report draws the plots itself: their data is collected without matplotlib, and no note
    html_only = analyze_tensors(base / "tensors", cand / "tensors", Settings(base, cand, tensor_plots=True))
    assert not any("matplotlib" in n for n in html_only.notes)
    assert plots.plotted(html_only)
    assert all(c.stats is not None and c.stats.samples for c in plots.plotted(html_only))
