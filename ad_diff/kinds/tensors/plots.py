"""Optional PNG plots for drifting tensors: error histogram and baseline-vs-candidate scatter.

matplotlib is an optional extra (``pip install 'ad-diff[plots]'``) imported only inside
:func:`write_plots`; :func:`available` tells whether it is installed. The data comes from the
measurement (``TensorStats.histogram`` / ``.samples``, collected when ``Settings.tensor_plots`` is on), so
no tensor is read again here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ad_diff.core import lazy
from ad_diff.core.outfile import write_via
from ad_diff.core.redact import redact_text
from ad_diff.core.sinks import plot_text
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorComparison, TensorKind

if TYPE_CHECKING:
    import matplotlib
    import matplotlib.pyplot as plt
else:
    matplotlib = lazy.module("matplotlib")
    plt = lazy.module("matplotlib.pyplot")


def available() -> bool:
    """True when matplotlib can be imported."""
    return importlib.util.find_spec("matplotlib") is not None


def plot_files(name: str) -> tuple[str, str]:
    """File names (histogram, scatter) for tensor ``name``: safe characters plus a short hash; credentials
    redacted first (a token in a tensor name must not reach a file name)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", redact_text(name))[:60] or "tensor"
    h = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]  # any name, even undecodable
    return f"{safe}-{h}-hist.png", f"{safe}-{h}-scatter.png"


def plotted(analysis: TensorAnalysis) -> list[TensorComparison]:
    """The comparisons that get plots: outputs beyond tolerance with measurements and plot data."""
    return [
        c for c in analysis.comparisons
        if c.kind is TensorKind.OUTPUT and not c.passed and c.stats is not None
        and c.stats.histogram is not None
    ]  # fmt: skip


def write_plots(analysis: TensorAnalysis, out_dir: Path) -> list[Path]:
    """Write the PNGs of every plotted tensor into ``out_dir``; returns the files written."""
    if not available():
        return []
    matplotlib.use("Agg")  # before pyplot is imported (by the first use of plt below)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for c in plotted(analysis):
        s = c.stats
        assert s is not None
        assert s.histogram is not None
        hist_name, scatter_name = plot_files(c.name)
        h = s.histogram
        width = (h.hi - h.lo) / len(h.abs_counts)
        edges = [h.lo + width * i for i in range(len(h.abs_counts))]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.bar(edges, h.abs_counts, width=width, align="edge", label="|candidate - baseline|")
        ax.axvline(_log10(c.tolerance.atol), color="red", linestyle="--", label=f"atol {c.tolerance.atol:g}")
        ax.set_xlabel("log10 absolute error (zeros in the leftmost bin)")
        ax.set_ylabel("elements")
        ax.set_title(f"{plot_text(c.name)}: error histogram", fontsize=9, parse_math=False)
        ax.legend(fontsize=8)
        fig.tight_layout()
        write_via(out_dir / hist_name, lambda buf: fig.savefig(buf, format="png", dpi=100))  # noqa: B023
        plt.close(fig)
        written.append(out_dir / hist_name)
        if s.samples:
            xs, ys = s.samples
            fig, ax = plt.subplots(figsize=(4.5, 4.5))
            ax.scatter(xs, ys, s=2, alpha=0.4)
            lo, hi = min(min(xs), min(ys)), max(max(xs), max(ys))
            ax.plot([lo, hi], [lo, hi], color="red", linewidth=0.8)
            ax.set_xlabel("baseline")
            ax.set_ylabel("candidate")
            ax.set_title(f"{plot_text(c.name)}: {len(xs)} sampled elements", fontsize=9, parse_math=False)
            fig.tight_layout()
            write_via(out_dir / scatter_name, lambda buf: fig.savefig(buf, format="png", dpi=100))  # noqa: B023
            plt.close(fig)
            written.append(out_dir / scatter_name)
    return written


def _log10(x: float) -> float:
    import math

    return math.log10(x) if x > 0 else -12.0
