"""What one kind tells the others of the runs it compared (the pipeline puts it in the
:class:`~ad_diff.kinds.base.Context`; no kind reads another kind's section): the graph kind's final node
order, renames and rewritten regions, the config kind's changed keys.

Apart from :mod:`ad_diff.core.facts` (what every kind hands the accounting pass) because only a comparison
whose graph or config kind ran builds them: a log-only comparison never loads this module (start-up: each
frozen data class costs about 0.4 ms to create, its methods are compiled from source).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class GraphFacts:
    """What the graph kind tells the other kinds of the dumps it compared (the pipeline puts it in the
    context; no kind reads the graph kind's section)."""

    final_order: tuple[str, ...] | None = None
    """The node names of the baseline's final dump, in graph order (``None`` when the last dumps were not
    compared)."""
    final_source: str | None = None
    """Which dump that order comes from, as a sentence."""
    renamed: tuple[tuple[str, str], ...] = ()
    """Candidate node name -> the baseline name it aligned with, in the final dumps."""
    moe: tuple[Any, ...] = ()
    """The MoE layers of the final graph and their routers (:class:`ad_diff.core.moe.MoeRouting`)."""
    node_transform: tuple[tuple[str, str], ...] = ()
    """Candidate node -> the first transform after which it had no baseline counterpart."""
    region_ops: tuple[tuple[str, tuple[str, ...], tuple[str, ...], bool], ...] = ()
    """Per transform (pipeline order): the ops of the regions first rewritten there, removed (baseline) and
    added (candidate), and whether every region is a one-for-one swap of op targets."""


@dataclass(frozen=True, slots=True)
class SettingChange:
    """One config key that differs between the runs' effective configs."""

    key: str
    transform: str | None
    """The transform whose entry holds the key (``None``: a run-level setting)."""
    change: str
    """What kind of change: ``added``, ``removed`` (one run has the key), ``enabled``, ``stage``,
    ``option`` (a transform entry's field), ``setting`` (a run-level value)."""
    before: str
    after: str
    origin: str = ""


@dataclass(frozen=True, slots=True)
class ConfigFacts:
    """What the config kind tells the other kinds: the keys that differ (no kind reads its section)."""

    changes: tuple[SettingChange, ...] = ()


__all__ = ["ConfigFacts", "GraphFacts", "SettingChange"]
