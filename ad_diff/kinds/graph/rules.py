"""Graph-dump rules (``ADG0xx``): what the two runs' graph dumps say beyond the match counts.

Detection lives in :mod:`ad_diff.graph_analysis`; this module only describes the findings. Root-cause hints for
a match loss are not rules of their own: they attach to the log classifier's match-loss finding as evidence
(see :func:`ad_diff.graph_analysis.attach_hints`).
"""

from __future__ import annotations

from ad_diff.core.model import Severity
from ad_diff.core.rules import Rule

METADATA_LOST = Rule(
    code="ADG001",
    name="metadata-lost",
    category="metadata_loss",
    severity=Severity.ERROR,
    template="{transform}: {count} node(s) lost shape/dtype metadata in the candidate (e.g. {examples}); "
    "candidate node coverage {before} -> {after}, baseline {baseline}",
    doc="Fires at the first transform after which nodes that carry shape and dtype metadata (`meta[\"val\"]`) in "
    "the baseline dump are written as `? : N/A` / `? : unknown` in the candidate dump, the two nodes having been "
    "aligned across the runs. It is reported once, where the loss first appears, with the nodes involved and the "
    "candidate's metadata coverage before and after that transform. Later pattern matchers that read shapes or "
    "dtypes (most fusions and quantization passes) silently match less on such nodes, so a match loss further "
    "down the pipeline often traces back here. Fix the transform so that it copies or re-propagates "
    "`meta[\"val\"]` on the nodes it creates (or request shape propagation in its post-cleanup).",
)

SNAPSHOT_COVERAGE = Rule(
    code="ADG010",
    name="metadata-lost-vs-snapshot",
    category="metadata_loss",
    severity=Severity.ERROR,
    template="{transform}: {after} node(s) without shape/dtype metadata after this transform; the golden "
    "snapshot recorded {before}",
    doc="When the baseline is a snapshot (`ad-diff snapshot`, written from a run that had graph dumps) the "
    "candidate's dumps are counted the same way: a transform after which more nodes lack `meta[\"val\"]` than the "
    "snapshot recorded has lost metadata. Without the baseline's dumps no node-level alignment is possible, so "
    "the finding names the transform and the counts; compare against a run folder for the nodes involved.",
)

COVERAGE_DROPPED = Rule(
    code="ADG002",
    name="metadata-coverage-dropped",
    category="metadata_loss",
    severity=Severity.WARNING,
    template="{transform}: candidate metadata coverage fell {before} -> {after} while the baseline stayed at "
    "{baseline}",
    doc="Fires when a transform lowers the share of candidate nodes that carry shape/dtype metadata, the "
    "baseline does not lose as much at the same transform, and no aligned node explains it (ADG001 did not fire "
    "there): typically the nodes without metadata are new nodes that have no counterpart in the baseline. The "
    "coverage numbers count placeholders and call nodes; argument coverage is in the JSON report.",
)

METADATA_CHANGED = Rule(
    code="ADG003",
    name="metadata-changed",
    category="metadata_loss",
    severity=Severity.WARNING,
    template="{transform}: {count} aligned node(s) changed dtype or shape in the candidate (e.g. {examples})",
    doc="Fires at the first transform after which aligned nodes have a different dtype, or a different concrete "
    "shape, in the candidate (symbolic dimension names such as `s44` vs `s70` are not compared). A dtype change "
    "usually means a cast was added or dropped; it can change numerics and can stop dtype-specific patterns.",
)

FIRST_DIVERGENCE = Rule(
    code="ADG004",
    name="first-structural-divergence",
    category="structure_change",
    severity=Severity.INFO,
    template="graphs first differ in structure after {transform}: {detail}",
    doc="Names the first transform, in pipeline order, after which the two runs' graphs differ in structure "
    "(a node with no counterpart, or an aligned node reading different inputs or literals). Everything before it "
    "is the same graph up to node names. It is informational: whether the difference is a regression is decided "
    "by the match counts and the other rules.",
)

REGION_REWRITTEN = Rule(
    code="ADG005",
    name="region-rewritten",
    category="structure_change",
    severity=Severity.WARNING,
    template="{transform}: {count} rewritten region(s) appear ({detail})",
    doc="Fires at the transform where a rewritten region first appears: a group of baseline nodes and candidate "
    "nodes with no counterpart in the other run, bounded by the same aligned nodes. A fusion that stopped "
    "matching in one layer shows up as one region (the fused op on one side, its unfused pattern on the other), "
    "not as a list of unrelated adds and removes. The markdown report shows the region's lines from both dumps.",
)

ONE_SIDED_CHANGE = Rule(
    code="ADG006",
    name="one-sided-transform-changed-graph",
    category="structure_change",
    severity=Severity.INFO,
    template="{transform} ran in the {run} only and changed its graph ({detail})",
    doc="A transform whose dump exists in one run only (added, removed or renamed in the configuration) and which "
    "changed that run's graph (nodes added or removed). One-sided transforms that left the graph as it was are "
    "listed in the report but raise no finding.",
)

LOG_SAYS_NOTHING_BUT_GRAPH_CHANGED = Rule(
    code="ADG007",
    name="unlogged-graph-change",
    category="consistency",
    severity=Severity.WARNING,
    template="{run}: {transform} logged {logged} but its dump changed the graph ({detail})",
    doc="Cross-check of one run's log against its own dumps: the transform logged zero matches, `skipped` or "
    "`disabled`, yet nodes were added or removed between the previous dump and its dump. Either the transform "
    "reports its match count wrongly, or its cleanup changed the graph; counts in the log then understate what "
    "happened.",
)

LOG_SAYS_MATCHES_BUT_GRAPH_SAME = Rule(
    code="ADG008",
    name="matches-without-graph-change",
    category="consistency",
    severity=Severity.INFO,
    template="{run}: {transform} logged {logged} match(es) but its dump is identical to the previous one",
    doc="Cross-check of one run's log against its own dumps: the transform logged matches but its dump is "
    "byte-identical to the previous dump. Some transforms act outside the graph (weights, caches, compilation), "
    "so this is informational; for a pattern matcher it means the matches did not reach the graph.",
)

DUMP_UNREADABLE = Rule(
    code="ADG009",
    name="graph-dump-unreadable",
    category="input",
    severity=Severity.ERROR,
    template="{run}: graph dump could not be parsed: {error}; graph checks for this dump did not run "
    "(its match count from the log still stands)",
    doc="A dump file in `graphs/` is unreadable or does not follow any known dump format (FORMATS.md section 2): "
    "cut mid-line by a crash, not UTF-8, or garbage. The file is left out of the graph analysis (its transform "
    "is compared on the log only) and the message gives the file, the line and what was expected. It gates: "
    "metadata loss at that transform cannot be ruled out, and missing data must not read as a pass.",
)

RULES: tuple[Rule, ...] = (
    METADATA_LOST,
    COVERAGE_DROPPED,
    METADATA_CHANGED,
    FIRST_DIVERGENCE,
    REGION_REWRITTEN,
    ONE_SIDED_CHANGE,
    LOG_SAYS_NOTHING_BUT_GRAPH_CHANGED,
    LOG_SAYS_MATCHES_BUT_GRAPH_SAME,
    DUMP_UNREADABLE,
    SNAPSHOT_COVERAGE,
)
