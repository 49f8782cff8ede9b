"""The input kinds, in the order the pipeline runs them (a later kind may read an earlier one's section).

Adding a kind: one folder (model, parse, align, measure, rules, section and an ``__init__`` exposing its
:class:`~ad_diff.kinds.base.Kind` object) and one line here.
"""

from __future__ import annotations

from typing import Any

from ad_diff.kinds.base import Kind
from ad_diff.kinds.config import CONFIG
from ad_diff.kinds.graph import GRAPH
from ad_diff.kinds.log import LOG
from ad_diff.kinds.tensors import TENSORS

KINDS: tuple[Kind[Any], ...] = (LOG, GRAPH, TENSORS, CONFIG)
"""Every kind: the log first (the spine), graphs before tensors (node order), config last (it explains).
The reports render the sections of the kinds a comparison ran (``DiffResult.section_kinds``)."""

__all__ = ["CONFIG", "KINDS", "LOG"]
