"""Graph-dump rules: what the two runs' graph dumps say beyond the match counts (``ADG0xx``), and what their
``graphs/`` folders say about themselves (``ADI002``-``ADI005``).

This module only describes the findings; :mod:`ad_diff.kinds.graph.classify` draws them from the measured
:class:`~ad_diff.kinds.graph.model.GraphAnalysis` and :class:`~ad_diff.kinds.graph.folder.FolderScan`.
Root-cause hints for a match loss are not rules of their own: they attach to the log's match-loss finding as
evidence (``root_cause``) in the explain stage.
"""

from __future__ import annotations

from ad_diff.core.model import Category, Severity
from ad_diff.core.rules import Rule

METADATA_LOST = Rule(
    code="ADG001",
    name="metadata-lost",
    category=Category.METADATA_LOSS,
    severity=Severity.ERROR,
    template="{transform}: {count} node(s) lost shape/dtype metadata in the candidate (e.g. {examples}); "
    "candidate node coverage {before} -> {after}, baseline {baseline}",
    doc="Fires at the first transform after which nodes that carry shape and dtype metadata "
    "(`meta[\"val\"]`) in the baseline dump are written as `? : N/A` / `? : unknown` in the candidate dump, "
    "the two nodes having been aligned across the runs. It is reported once, where the loss first appears, "
    "with the nodes involved and the candidate's metadata coverage before and after that transform. Later "
    "pattern matchers that read shapes or dtypes (most fusions and quantization passes) silently match less "
    "on such nodes, so a match loss further down the pipeline often traces back here. Fix the transform so "
    "that it copies or re-propagates `meta[\"val\"]` on the nodes it creates (or request shape propagation "
    "in its post-cleanup).",
)

SNAPSHOT_COVERAGE = Rule(
    code="ADG010",
    name="metadata-lost-vs-snapshot",
    category=Category.METADATA_LOSS,
    severity=Severity.ERROR,
    template="{transform}: {after} node(s) without shape/dtype metadata after this transform; the golden "
    "snapshot recorded {before}",
    doc="When the baseline is a snapshot (`ad-diff snapshot`, written from a run that had graph dumps) the "
    "candidate's dumps are counted the same way: a transform after which more nodes lack `meta[\"val\"]` "
    "than the snapshot recorded has lost metadata. Without the baseline's dumps no node-level alignment is "
    "possible, so the finding names the transform and the counts; compare against a run folder for the nodes "
    "involved.",
)

COVERAGE_DROPPED = Rule(
    code="ADG002",
    name="metadata-coverage-dropped",
    category=Category.METADATA_LOSS,
    severity=Severity.WARNING,
    template="{transform}: candidate metadata coverage fell {before} -> {after} while the baseline stayed at "
    "{baseline}",
    doc="Fires when a transform lowers the share of candidate nodes that carry shape/dtype metadata, the "
    "baseline does not lose as much at the same transform, and no aligned node explains it (ADG001 did not "
    "fire there): typically the nodes without metadata are new nodes that have no counterpart in the "
    "baseline. The coverage numbers count placeholders and call nodes; argument coverage is in the JSON "
    "report.",
)

METADATA_CHANGED = Rule(
    code="ADG003",
    name="metadata-changed",
    category=Category.METADATA_LOSS,
    severity=Severity.WARNING,
    template="{transform}: {count} aligned node(s) changed dtype or shape in the candidate (e.g. {examples})",
    doc="Fires at the first transform after which aligned nodes have a different dtype, or a different "
    "concrete shape, in the candidate (symbolic dimension names such as `s44` vs `s70` are not compared). A "
    "dtype change usually means a cast was added or dropped; it can change numerics and can stop "
    "dtype-specific patterns.",
)

FIRST_DIVERGENCE = Rule(
    code="ADG004",
    name="first-structural-divergence",
    category=Category.STRUCTURE_CHANGE,
    severity=Severity.INFO,
    template="graphs first differ in structure after {transform}: {detail}",
    doc="Names the first transform, in pipeline order, after which the two runs' graphs differ in structure "
    "(a node with no counterpart, or an aligned node reading different inputs or literals). Everything "
    "before it is the same graph up to node names. It is informational: whether the difference is a "
    "regression is decided by the match counts and the other rules.",
)

REGION_REWRITTEN = Rule(
    code="ADG005",
    name="region-rewritten",
    category=Category.STRUCTURE_CHANGE,
    severity=Severity.WARNING,
    template="{transform}: {count} rewritten region(s) appear ({detail})",
    doc="Fires at the transform where a rewritten region first appears: a group of baseline nodes and "
    "candidate nodes with no counterpart in the other run, bounded by the same aligned nodes. A fusion that "
    "stopped matching in one layer shows up as one region (the fused op on one side, its unfused pattern on "
    "the other), not as a list of unrelated adds and removes. The markdown report shows the region's lines "
    "from both dumps.",
)

ONE_SIDED_CHANGE = Rule(
    code="ADG006",
    name="one-sided-transform-changed-graph",
    category=Category.STRUCTURE_CHANGE,
    severity=Severity.INFO,
    template="{transform} ran in the {run} only and changed its graph ({detail})",
    doc="A transform whose dump exists in one run only (added, removed or renamed in the configuration) and "
    "which changed that run's graph (nodes added or removed). One-sided transforms that left the graph as it "
    "was are listed in the report but raise no finding.",
)

LOG_SAYS_NOTHING_BUT_GRAPH_CHANGED = Rule(
    code="ADG007",
    name="unlogged-graph-change",
    category=Category.CONSISTENCY,
    severity=Severity.WARNING,
    template="{run}: {transform} logged {logged} but its dump changed the graph ({detail})",
    doc="Cross-check of one run's log against its own dumps: the transform logged zero matches, `skipped` or "
    "`disabled`, yet nodes were added or removed between the previous dump and its dump. Either the "
    "transform reports its match count wrongly, or its cleanup changed the graph; counts in the log then "
    "understate what happened.",
)

LOG_SAYS_MATCHES_BUT_GRAPH_SAME = Rule(
    code="ADG008",
    name="matches-without-graph-change",
    category=Category.CONSISTENCY,
    severity=Severity.INFO,
    template="{run}: {transform} logged {logged} match(es) but its dump is identical to the previous one",
    doc="Cross-check of one run's log against its own dumps: the transform logged matches but its dump is "
    "byte-identical to the previous dump. Some transforms act outside the graph (weights, caches, "
    "compilation), so this is informational; for a pattern matcher it means the matches did not reach the "
    "graph.",
)

DUMP_UNREADABLE = Rule(
    code="ADG009",
    name="graph-dump-unreadable",
    category=Category.INPUT,
    severity=Severity.ERROR,
    template="{run}: graph dump could not be parsed: {error}; graph checks for this dump did not run "
    "(its match count from the log still stands)",
    doc="A dump file in `graphs/` is unreadable or does not follow any known dump format (FORMATS.md section "
    "2): cut mid-line by a crash, not UTF-8, or garbage. The file is left out of the graph analysis (its "
    "transform is compared on the log only) and the message gives the file, the line and what was expected. "
    "It gates: metadata loss at that transform cannot be ruled out, and missing data must not read as a "
    "pass.",
)

DUMP_GAP = Rule(
    "ADI002", "dump-numbering-gap", Category.INPUT, Severity.ERROR,
    "{run}: graphs/ numbering has gaps (missing {missing}); those dumps were lost (half-copied folder or "
    "crashed job), so graph checks at those transforms did not run (match counts from the log still stand)",
    "AD numbers dump files with a counter that only advances when a file is written, so a missing number "
    "means a dump file was lost (a half-copied artifact folder, a cleanup, a crash while copying). The "
    "transforms around the hole are compared on their logged match counts only. It gates because a "
    "metadata loss in the lost dump cannot be ruled out; copy the whole graphs/ folder again.",
)

DUMP_DUPLICATE = Rule(
    "ADI003", "dump-duplicate-counter", Category.INPUT, Severity.WARNING,
    "{run}: graphs/ holds several files numbered {counter} ({files}); AD writes one file per number, so "
    "the folder mixes two runs or holds copies; dumps are ordered by number, then name",
    "Two dump files share one counter: the folder holds dumps of two runs (AD_DUMP_GRAPHS_DIR reused "
    "without the usual wipe) or a manual copy. The analysis goes on with every file, ordered by number and "
    "name, but its pairing of transforms may be off; re-record into an empty folder.",
)

DUMPS_EMPTY = Rule(
    "ADI004", "dump-folder-empty", Category.INPUT, Severity.ERROR,
    "{run}: graphs/ holds no dump files (NNN_<stage>_<transform>.txt) while the {other} run has {count}; "
    "graph analysis of this pair did not run (match counts from the log still stand)",
    "The graphs/ folder exists but holds no dump file, e.g. the job crashed before the first dump or the "
    "artifact upload was empty. Graph conclusions are missing, so this gates.",
)

DUMP_ENTRY_UNREADABLE = Rule(
    "ADI005", "dump-entry-unreadable", Category.INPUT, Severity.ERROR,
    "{path}: {problem}; expected a readable graph dump file, so it was left out of the graph analysis",
    "An entry of graphs/ named like a dump cannot be read as a file: a broken or looping symbolic link, a "
    "folder, or a file without read permission. The dump is missing from the comparison, so this gates.",
)

FOLDER_RULES: tuple[Rule, ...] = (DUMP_GAP, DUMP_DUPLICATE, DUMPS_EMPTY, DUMP_ENTRY_UNREADABLE)
"""The ``graphs/`` folder's own rules (``ADI``: input findings, listed before the ``ADG`` rules)."""

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
