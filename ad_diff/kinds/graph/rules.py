"""Graph-dump rules: what the two runs' graph dumps say beyond the match counts (``ADG0xx``), and what their
``graphs/`` folders say about themselves (``ADI002``-``ADI005``).

This module only describes the findings; :mod:`ad_diff.kinds.graph.classify` draws them from the measured
:class:`~ad_diff.kinds.graph.diff.GraphAnalysis` and :class:`~ad_diff.discover.dumps.FolderScan`.
Root-cause hints for a match loss, and the rewritten regions where a match count changed, are not rules of
their own: they attach to the log's findings as evidence (``root_cause``, ``graph_regions``) in the explain
stage. Every ``doc`` says whether and why the rule gates.
"""

from __future__ import annotations

from ad_diff.core.model import Category, Severity
from ad_diff.core.rules import Role, Rule

ERR, WARN, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

METADATA_LOST = Rule(
    "ADG001", "metadata-lost", Category.METADATA_LOSS, ERR,
    "{transform}: {count} node(s) lost shape/dtype metadata in the candidate (e.g. {examples}); candidate "
    "node coverage {before} -> {after}, baseline {baseline}",
    "Fires at the first transform after which nodes that carry shape and dtype metadata (`meta[\"val\"]`) in "
    "the baseline dump are written as `? : N/A` / `? : unknown` in the candidate dump, the two nodes having "
    "been aligned across the runs. It is reported once, where the loss first appears, with the nodes "
    "involved and the candidate's metadata coverage before and after that transform. Later pattern matchers "
    "that read shapes or dtypes (most fusions and quantization passes) silently match less on such nodes, so "
    "a match loss further down the pipeline often traces back here. It gates: metadata the baseline had is "
    "gone. Fix the transform so that it copies or re-propagates `meta[\"val\"]` on the nodes it creates (or "
    "request shape propagation in its post-cleanup).",
    heads=3,
)

COVERAGE_DROPPED = Rule(
    "ADG002", "op-metadata-lost", Category.METADATA_LOSS, WARN,
    "{transform}: the candidate writes {count} more node(s) without shape/dtype metadata, of ops the "
    "baseline writes with metadata on every node: {ops}",
    "Metadata lost on nodes that have no counterpart in the baseline (so ADG001 cannot name them): at this "
    "transform the candidate has more nodes of some op without `meta[\"val\"]` than before, while the "
    "baseline's dump of the same transform writes every node of that op with metadata. Ops are counted, the "
    "nodes are not aligned, so it warns and does not gate. A share of covered nodes is not used: a rewrite "
    "that creates extra nodes of an op without metadata in either run (AD's `split_output` after a GEMM "
    "fusion, for one) is no loss, and a counter-shifted fusion must not read as one.",
)

SHAPE_CHANGED = Rule(
    "ADG003", "shape-changed", Category.SHAPE_CHANGE, WARN,
    "{transform}: {count} aligned node(s) have another dtype or shape in the candidate (e.g. {examples})",
    "Fires at the first transform after which nodes aligned by structure have a different dtype, or a "
    "different concrete shape, in the candidate, both known (symbolic dimension names such as `s44` vs `s70` "
    "are not compared). It is not metadata loss: nothing is missing. Only confident pairs count: a same-name "
    "pair whose shape disagrees is not taken for the same node (FX counter names such as `fused_weight_1` or "
    "`getitem_12` shift when an upstream rewrite adds a node), and nodes paired by position only never pair "
    "across a shape difference. A dtype change usually means a cast was added or dropped, a shape change "
    "another sharding or fusion; both can change numerics and stop shape-dependent patterns, so it warns. It "
    "does not gate by itself: match counts and tensors decide.",
)

FIRST_DIVERGENCE = Rule(
    "ADG004", "first-structural-divergence", Category.STRUCTURE_CHANGE, INFO,
    "graphs first differ in structure after {transform}: {detail}",
    "Names the first transform, in pipeline order, after which the two runs' graphs differ in structure (a "
    "node with no counterpart, or an aligned node reading different inputs or literals), with the regions "
    "that appear there as evidence (`graph_regions`). Everything before it is the same graph up to node "
    "names. It is informational: whether the difference is a regression is decided by the match counts and "
    "the other rules.",
    role=Role.FIRST_DIVERGENCE,
)

REGION_REWRITTEN = Rule(
    "ADG005", "unexplained-region", Category.STRUCTURE_CHANGE, WARN,
    "{transform}: {count} rewritten region(s) appear although its match count is the same in both runs "
    "({detail})",
    "A rewritten region is a group of baseline nodes and candidate nodes with no counterpart in the other "
    "run, bounded by the same aligned nodes (a fusion that stopped matching in one layer is one region: the "
    "fused op on one side, its unfused pattern on the other). Each region is reported once, where it first "
    "appears: a region that continues an earlier one (it holds a node that already had no counterpart, or "
    "the same ops after a rename) is a consequence, not news. Where the transform's match count or state "
    "changed, the regions are the expected effect of that change and attach to its log finding as evidence; "
    "at the first divergence they are ADG004's evidence. This rule fires only for the rest: the graph was "
    "rewritten differently although the log reports the same result, which deserves a look; it warns and "
    "does not gate.",
    role=Role.REGION_REWRITTEN,
)

ONE_SIDED_CHANGE = Rule(
    "ADG006", "one-sided-transform-changed-graph", Category.STRUCTURE_CHANGE, INFO,
    "{transform} ran in the {run} only and changed its graph ({detail})",
    "A transform that ran in one run only (the other run's log has no record of it: added, removed or "
    "renamed in the configuration) and changed that run's graph (nodes added or removed). Dumps missing for "
    "another reason are never described so: a restored pipeline cache (restored, not compared), a dump "
    "folder cut short (ADG011), a run that stopped (the log's incomplete-run finding). Informational.",
)

LOG_SAYS_NOTHING_BUT_GRAPH_CHANGED = Rule(
    "ADG007", "unlogged-graph-change", Category.CONSISTENCY, WARN,
    "{run}: {transform} logged {logged} but its dump changed the graph ({detail})",
    "Cross-check of one run's log against its own dumps: the transform logged zero matches, `skipped` or "
    "`disabled`, yet nodes were added or removed between the previous dump and its dump. Either the "
    "transform reports its match count wrongly, or its cleanup changed the graph; counts in the log then "
    "understate what happened. A post-cleanup may legitimately rewrite the graph, so it warns.",
    role=Role.LOG_DUMP_CONFLICT,
)

LOG_SAYS_MATCHES_BUT_GRAPH_SAME = Rule(
    "ADG008", "matches-without-graph-change", Category.CONSISTENCY, INFO,
    "{run}: {transform} logged {logged} match(es) but its dump is identical to the previous one",
    "Cross-check of one run's log against its own dumps: the transform logged matches but its dump is "
    "byte-identical to the previous dump, for a transform that acts outside the graph (sharding detection, "
    "weights, caches, compilation: any stage but post_export, pattern_matcher and post_load_fusion, and "
    "`detect_*` passes), so this is informational. It is reported only when one run shows it: when both "
    "runs log matches and leave the dump unchanged, that is how the transform works (a cache or weight "
    "transform writes no node), and a note in every report would be noise. In the graph stages it is ADG012.",
)

LOG_DUMP_COUNT_MISMATCH = Rule(
    "ADG015", "log-dump-count-mismatch", Category.CONSISTENCY, ERR,
    "{run}: {transform} logged {logged} match(es) but its dump adds {added} {ops} node(s): the run's log "
    "and its graph dumps do not tell the same story",
    "Cross-check of one run's log against its own dumps, for a transform that writes exactly one known op "
    "per match (upstream's pattern matchers count one match per replacement; docs/rules.md lists the "
    "transforms and ops): the instances of that op its dump adds must equal its logged count. When they "
    "differ, the dumps are not this run's (left over from another run or model in a reused "
    "AD_DUMP_GRAPHS_DIR, copied from elsewhere) or the log is not: nothing compared from them can be "
    "trusted, so it gates. A dump that "
    "adds none of the op is not judged (the op may be named otherwise in another AD version).",
)

DUMP_MODEL_MISMATCH = Rule(
    "ADG016", "dump-model-mismatch", Category.CONSISTENCY, ERR,
    "{run}: its graph dumps hold {found} but its config builds {declared} ({key}): the dumps are not this "
    "run's",
    "Cross-check of one run's dumps against its own AD config: the layer numbers in the dumps' weight names "
    "(`model_layers_3_...`) must reach the number of layers the config builds the model with "
    "(`model_kwargs.num_hidden_layers`), and the embedding's weight in a dump before sharding "
    "(`vocab x hidden`) must have the config's `model_kwargs.vocab_size` and `model_kwargs.hidden_size`. "
    "When one differs, the dumps are left over from another model's run (a reused AD_DUMP_GRAPHS_DIR) and "
    "nothing compared from them can be trusted, so it gates. A config that says nothing, or dumps that show "
    "no layer or embedding, are not judged.",
)

DUMP_UNREADABLE = Rule(
    "ADG009", "graph-dump-unreadable", Category.INPUT, ERR,
    "{run}: {what} could not be parsed: {error}; graph checks for it did not run (match counts from the log "
    "still stand)",
    "A dump file in `graphs/` is unreadable or does not follow any known dump format (docs/formats.md): "
    "cut mid-line by a crash, not UTF-8, or garbage. The file is left out of the graph analysis (its "
    "transform is compared on the log only) and the message gives the file, the line and what was expected. "
    "It gates: metadata loss at that transform cannot be ruled out, and missing data must not read as a "
    "pass. Dumps of one run that fail the same way (a print form the reader does not know) are one finding "
    "naming the first file and line and counting the others: one input problem, not one per dump.",
)

SNAPSHOT_COVERAGE = Rule(
    "ADG010", "metadata-lost-vs-snapshot", Category.METADATA_LOSS, ERR,
    "{transform}: {after} node(s) without shape/dtype metadata after this transform; the golden snapshot "
    "recorded {before}",
    "When the baseline is a snapshot (`ad-diff snapshot`, written from a run that had graph dumps) the "
    "candidate's dumps are counted the same way: a transform after which more nodes lack `meta[\"val\"]` "
    "than the snapshot recorded has lost metadata. Without the baseline's dumps no node-level alignment is "
    "possible, so the finding names the transform and the counts; compare against a run folder for the "
    "nodes involved.",
    heads=4,
)

DUMPS_TRUNCATED = Rule(
    "ADG011", "dumps-cut-short", Category.INCOMPLETE_RUN, ERR,
    "{run}: its graph dumps {where} while its log shows {count} more transform(s) ran (first: {first}); "
    "their graphs were never compared",
    "The run's log has result lines for transforms whose dumps its `graphs/` folder lacks, after its last "
    "dump (or before its first, with the numbering starting above 001), while the other run has those "
    "dumps: the folder was half-copied or the job was killed while dumping. The numbering shows no hole at "
    "the end, so only the log tells. It gates (incomplete run): metadata loss or a rewrite in the missing "
    "dumps cannot be ruled out, and those transforms did not run in one run only. Dumps legitimately absent "
    "are not counted: a restored pipeline cache, the factory stage, and the compile stages of root-only "
    "(D1/D2) dumps. Copy the whole folder again or re-run.",
)

LOG_DUMP_CONFLICT = Rule(
    "ADG012", "log-dump-conflict", Category.CONSISTENCY, ERR,
    "{run}: {transform} logged {logged} match(es) but its dump is byte-identical to the previous one; the "
    "log and the dumps come from different runs",
    "What upstream's `ad-conf-check` calls CONFLICT: a transform of a graph stage (post_export, "
    "pattern_matcher, post_load_fusion; `detect_*` passes excepted) logged matches, yet the graph it dumped "
    "is byte-identical to the dump before it. In those stages a match is a rewrite of the graph, so the log "
    "and the dumps cannot describe the same run (artifacts copied from different jobs, a stale dump folder). "
    "It gates: the comparison would rest on inputs that contradict each other. Transforms that act outside "
    "the graph (weights, caches, compilation) are ADG008 and do not gate.",
    role=Role.LOG_DUMP_CONFLICT,
)

TRANSFORM_MOVED = Rule(
    "ADG013", "transform-moved", Category.STATE_CHANGE, WARN,
    "{transform} ran at another place in the pipeline: after {before} in the baseline, after {after} in the "
    "candidate",
    "The runs ran the same transform in a different order (a config moved it or changed the pipeline). Its "
    "dumps are still paired by transform key, so every graph after it is compared, but the graphs between "
    "its two positions differ because of the move, not because of a transform there. Reported once per "
    "moved transform; it warns (an order change is rarely meant to be silent) and does not gate by itself.",
    role=Role.TRANSFORM_MOVED,
)

DUMP_NOT_LOGGED = Rule(
    "ADG014", "dump-without-log-record", Category.CONSISTENCY, ERR,
    "{run}: graphs/ holds a dump of {transform} ({file}) but the {run} log never ran it; the dumps and the "
    "log do not describe the same run",
    "Cross-check of one run's dumps against its own log: AD writes a dump after each transform it runs, so a "
    "dump of a transform (or of one more occurrence of it) that the run's log has no result line for means "
    "the dumps come from another run (a reused or mixed AD_DUMP_GRAPHS_DIR, artifacts copied from two jobs) "
    "or the log is not the whole log. It gates: the run is not what its log says, so neither the match "
    "counts nor the graph comparison can be trusted to describe it, and such a dump must not read as a "
    "transform that 'ran in one run only' (ADG006 is not reported for it). Checked for both runs; copy the "
    "log and the dumps of one job.",
)

DUMP_GAP = Rule(
    "ADI002", "dump-numbering-gap", Category.INPUT, ERR,
    "{run}: graphs/ numbering has gaps (missing {missing}); those dumps were lost (half-copied folder or "
    "crashed job), so graph checks at those transforms did not run (match counts from the log still stand)",
    "AD numbers dump files with a counter that only advances when a file is written, so a missing number "
    "means a dump file was lost (a half-copied artifact folder, a cleanup, a crash while copying). The "
    "transforms around the hole are compared on their logged match counts only. It gates because a "
    "metadata loss in the lost dump cannot be ruled out; copy the whole graphs/ folder again. A run that "
    "restored AD's pipeline cache starts its numbering at 001 again with the first transform it ran: no gap.",
)

DUMP_DUPLICATE = Rule(
    "ADI003", "dump-duplicate-counter", Category.INPUT, WARN,
    "{run}: graphs/ holds several files numbered {counter} ({files}); AD writes one file per number, so the "
    "folder mixes two runs or holds copies; dumps are ordered by number, then name",
    "Two dump files share one counter: the folder holds dumps of two runs (AD_DUMP_GRAPHS_DIR reused without "
    "the usual wipe) or a manual copy. The analysis goes on with every file, ordered by number and name, but "
    "its pairing of transforms may be off; re-record into an empty folder.",
)

DUMPS_EMPTY = Rule(
    "ADI004", "dump-folder-empty", Category.INPUT, ERR,
    "{run}: graphs/ holds no dump files (NNN_<stage>_<transform>.txt) while the {other} run has {count}; "
    "graph analysis of this pair did not run (match counts from the log still stand)",
    "The graphs/ folder exists but holds no dump file, e.g. the job crashed before the first dump or the "
    "artifact upload was empty. Graph conclusions are missing, so this gates.",
)

DUMP_ENTRY_UNREADABLE = Rule(
    "ADI005", "dump-entry-unreadable", Category.INPUT, ERR,
    "{path}: {problem}; expected a readable graph dump file, so it was left out of the graph analysis",
    "An entry of graphs/ named like a dump cannot be read as a file: a broken or looping symbolic link, a "
    "folder, or a file without read permission. The dump is missing from the comparison, so this gates.",
)

FOLDER_RULES: tuple[Rule, ...] = (DUMP_GAP, DUMP_DUPLICATE, DUMPS_EMPTY, DUMP_ENTRY_UNREADABLE)
"""The ``graphs/`` folder's own rules (``ADI``: input findings, listed before the ``ADG`` rules)."""

FOREIGN_DUMPS: tuple[Rule, ...] = (LOG_DUMP_CONFLICT, DUMP_NOT_LOGGED, LOG_DUMP_COUNT_MISMATCH,
                                   DUMP_MODEL_MISMATCH)
"""The findings that say one run's dumps are not its log's or config's: one event (dumps left over from
another run or model), reported as one root cause per run."""

RULES: tuple[Rule, ...] = (
    METADATA_LOST,
    COVERAGE_DROPPED,
    SHAPE_CHANGED,
    FIRST_DIVERGENCE,
    REGION_REWRITTEN,
    ONE_SIDED_CHANGE,
    LOG_SAYS_NOTHING_BUT_GRAPH_CHANGED,
    LOG_SAYS_MATCHES_BUT_GRAPH_SAME,
    DUMP_UNREADABLE,
    SNAPSHOT_COVERAGE,
    DUMPS_TRUNCATED,
    LOG_DUMP_CONFLICT,
    TRANSFORM_MOVED,
    DUMP_NOT_LOGGED,
    LOG_DUMP_COUNT_MISMATCH,
    DUMP_MODEL_MISMATCH,
)
