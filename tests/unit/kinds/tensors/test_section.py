"""Markdown and terminal rendering of the tensor section."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from ad_diff.core.view import ViewContext
from ad_diff.kinds.tensors.analysis import analyze_tensors
from ad_diff.kinds.tensors.section import view
from ad_diff.settings import Settings
from tests.views import NO_CONTEXT, markdown, terminal

FIX = Path(__file__).resolve().parents[4] / "fixtures" / "tensors"


def _analysis(base: Path, cand: Path, **kw: object):
    return analyze_tensors(base / "tensors", cand / "tensors", Settings(baseline=base, candidate=cand, **kw))  # type: ignore[arg-type]


def test_markdown_shows_verdicts_and_evidence() -> None:
    a = _analysis(FIX / "gpu" / "baseline", FIX / "gpu" / "within")
    md = markdown(view(a, NO_CONTEXT))
    assert "| <code>logits</code> |" in md
    assert "acceptable drift" in md
    assert "baseline's RMSE" in md  # reference-mode evidence
    assert "100.0% /" in md  # top-1 agreement


def test_markdown_says_where_the_plots_are_without_dead_links() -> None:
    a = _analysis(FIX / "synthetic" / "beyond" / "baseline", FIX / "synthetic" / "beyond" / "candidate",
                  tensor_plots=True)
    md = markdown(view(a, ViewContext(plots="out/plots", html="report.html")))
    assert "beyond tolerance" in md
    # a relative link to a file of the job is dead on GitHub: the folder and the HTML report are named instead
    assert "](" not in md
    assert ("of 1 drifting tensor(s): inline in the HTML report `report.html` "
            "and as PNG files in `out/plots/`") in md
    assert "drifting tensor(s)" not in markdown(view(a, NO_CONTEXT))  # nothing written: nothing said


def test_markdown_lists_one_sided_and_unreadable() -> None:
    a = _analysis(FIX / "synthetic" / "garbage" / "baseline", FIX / "synthetic" / "garbage" / "candidate")
    md = markdown(view(a, NO_CONTEXT))
    assert "unreadable candidate file `more.pt`" in md
    assert "Recorded in one run only" in md


def test_terminal_renders() -> None:
    a = _analysis(FIX / "synthetic" / "nan" / "baseline", FIX / "synthetic" / "nan" / "candidate")
    con = Console(record=True, width=160)
    con.print(terminal(view(a, NO_CONTEXT)))
    assert "new NaN/Inf" in con.export_text()


def _captures(root: Path, nodes: int) -> Path:
    import torch
    from safetensors.torch import save_file

    (root / "tensors").mkdir(parents=True)
    save_file({"logits": torch.ones(2, 8)}, str(root / "tensors" / "outputs.safetensors"))
    save_file({f"mul_{i}": torch.ones(4) for i in range(nodes)}, str(root / "tensors" / "nodes.safetensors"))
    return root


def test_node_captures_of_one_run_fold_into_one_line_per_run(tmp_path: Path) -> None:
    a = _analysis(_captures(tmp_path / "b", 135), _captures(tmp_path / "c", 5))
    assert sum(1 for u in a.unmatched if u.present_in == "baseline") == 130
    md = markdown(view(a, NO_CONTEXT))
    assert "<details><summary>130 nodes recorded by the baseline only</summary>" in md
    head = md.split("<details><summary>130 nodes")[0]
    assert "mul_99" not in head  # the names are inside the fold, not one line each before it
    con = Console(record=True, width=160)
    con.print(terminal(view(a, NO_CONTEXT)))
    text = con.export_text()
    assert "130 nodes recorded by the baseline only" in text
    assert "mul_99" not in text
