"""Settings: every knob of one comparison, resolved from defaults < config file < CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FAIL_ON_CHOICES = ("error", "match_loss", "collapse", "never")
"""Gate levels: ``error`` fails on any error-severity finding (every match loss is one); ``match_loss``
fails on match losses and incomplete runs only; ``collapse`` on collapses and incomplete runs only;
``never`` reports only."""


@dataclass(frozen=True)
class Settings:
    """All options of one comparison. Built by the CLI (or a config file); read by the pipeline."""

    baseline: Path
    candidate: Path
    baseline_log: Path | None = None
    candidate_log: Path | None = None
    rank: int = 0
    fail_on: str = "error"
    collapse_fraction: float = 0.5
    """A loss of at least this share of the baseline matches is a collapse (a drop to 0 always is)."""
    ignore_transforms: tuple[str, ...] = ()
    """Transform keys (fnmatch globs) left out of the comparison entirely."""
    ignore_codes: tuple[str, ...] = ()
    """Finding codes dropped from the result."""
    graphs: bool = True
    """Analyse graph dumps when both runs have them."""
    tensors: bool = True
    """Compare recorded tensors when both runs have them."""
    tolerances: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``{"default": {...}, "<glob>": {"atol": .., "rtol": .., "statistic": ..}}``; see docs/config.md."""
    tensor_device: str = "cpu"
    baseline_config: Path | None = None
    candidate_config: Path | None = None
    expected_changes: Path | None = None
    """Expected-changes file (ad_diff.expectations): matching findings become acknowledged, not gating."""
    progress: bool = False
    config_explained_gates: bool = False
    """Whether a state change of a transform that its own config change explains (toggled, moved) still
    gates. Downstream match losses always keep gating, with the config change shown as likely cause."""
    graph_options: dict[str, Any] = field(default_factory=dict)
    """The config file's ``graph`` table, passed through to the graph-dump analysis."""
    config_diff_options: dict[str, Any] = field(default_factory=dict)
    """The config file's ``config_diff`` table, passed through to the AD config comparison."""
    model: str | None = None
    """Model name of this pair (``ad-diff batch`` sets it); expected-change entries with ``model`` match it."""

    tensor_plots: bool = False
    """Collect samples/histograms and let the CLI write PNG plots for drifting tensors (needs matplotlib)."""
    plots_dir: Path | None = None
    """Where ``--plots`` writes PNGs of drifting tensors (the markdown links them relative to the report)."""
