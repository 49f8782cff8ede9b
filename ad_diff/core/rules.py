"""Rule: a finding kind with a stable code, a category, a default severity and a message template.

Every rule lives in one ordered tuple (``ad_diff.catalog.RULES``) and is documented in
``docs/rules.md``; a test keeps the two in sync. Rules only *describe* findings; the code that detects them
lives beside the data it reads (log, graph, tensor or config classification) and calls :meth:`Rule.make`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ad_diff.core.escape import excerpt
from ad_diff.core.model import Category, Finding, Severity
from ad_diff.core.redact import redact_text
from ad_diff.core.words import WordEnum

MESSAGE_LIMIT = 500
"""Longest finding message (characters): a longer one (a 100,000-character failure line) becomes an
excerpt."""

#: Fixed category names that reports, configs and users rely on.
CATEGORIES: tuple[str, ...] = tuple(c.value for c in Category)


class Role(WordEnum):
    """What a finding is to the passes that read findings of every kind (explain's grouping and titles, the
    reports, the history): written once, on the rule (:attr:`Rule.role`), so that no pass branches on a rule
    code. Most rules have none: their category and severity say all a pass needs. :data:`ROLE_DOC` says
    what each means (docs/rules.md lists them with their rules)."""

    NONE = "none"
    RUN_STOPPED = "run_stopped"
    TRANSFORM_FAILED = "transform_failed"
    TRANSFORM_STOPPED = "transform_stopped"
    MATCH_LOST = "match_lost"
    MATCH_GAINED = "match_gained"
    TRANSFORM_ADDED = "transform_added"
    OWN_CONFIG_CHANGED = "own_config_changed"
    STATE_CHANGE_UNEXPLAINED = "state_change_unexplained"
    FIRST_DIVERGENCE = "first_divergence"
    REGION_REWRITTEN = "region_rewritten"
    LOG_DUMP_CONFLICT = "log_dump_conflict"
    TRANSFORM_MOVED = "transform_moved"
    DRIFT = "drift"
    FIRST_DRIFT_NODE = "first_drift_node"
    INPUTS_DIFFER = "inputs_differ"
    DRIFT_NODES_UNORDERED = "drift_nodes_unordered"
    RUN_RESTARTED = "run_restarted"
    WORLD_SIZE_CHANGED = "world_size_changed"
    RANK_SILENT = "rank_silent"


ROLE_DOC: dict[Role, str] = {
    Role.RUN_STOPPED: (
        "A run stopped at this transform; the evidence lists the transforms it never reached "
        "(``not_reached``)."
    ),
    Role.TRANSFORM_FAILED: "The transform raised in the candidate.",
    Role.TRANSFORM_STOPPED: (
        "The transform applied in the baseline and did not in the candidate (skipped, "
        "disabled)."
    ),
    Role.MATCH_LOST: "The transform matched fewer times in the candidate (all or some of its matches).",
    Role.MATCH_GAINED: "The transform matched more times in the candidate.",
    Role.TRANSFORM_ADDED: "A transform only the candidate ran.",
    Role.OWN_CONFIG_CHANGED: "The transform's own config entry changed between the runs.",
    Role.STATE_CHANGE_UNEXPLAINED: "A transform's state changed with no config change behind it.",
    Role.FIRST_DIVERGENCE: "The first transform after which the two runs' graphs differ structurally.",
    Role.REGION_REWRITTEN: (
        "A region of the graph the candidate rewrote otherwise (its evidence lists the "
        "regions)."
    ),
    Role.LOG_DUMP_CONFLICT: "A run's log and its own graph dumps disagree about what a transform did.",
    Role.TRANSFORM_MOVED: "A transform ran at another place of the pipeline, seen in the graph dumps.",
    Role.DRIFT: "A recorded tensor drifts or is not finite (its evidence ranks the likely causes).",
    Role.FIRST_DRIFT_NODE: "The first captured node whose values drift, and the transform that produced it.",
    Role.INPUTS_DIFFER: "The runs recorded different inputs: what drifts after them is explained by them.",
    Role.DRIFT_NODES_UNORDERED: (
        "Node captures drift but without graph order the first cannot be named: every later drifting "
        "capture follows from the drift it reports."
    ),
    Role.RUN_RESTARTED: "A run's log started the pipeline more than once; the last attempt is compared.",
    Role.WORLD_SIZE_CHANGED: "The runs logged different sets of ranks: a rank one run lacks is no loss.",
    Role.RANK_SILENT: "A rank the run's config names logged nothing: its absence is this finding.",
}
"""What a finding of each role is (docs/rules.md)."""


NAMES_NO_CAUSE = 1 << 30
""":attr:`Rule.heads` of a rule that does not name a cause better than any other."""


@dataclass(frozen=True)
class Rule:
    """One finding kind. ``template`` is formatted with the keyword arguments given to :meth:`make`."""

    code: str
    name: str
    category: Category
    severity: Severity
    template: str
    doc: str
    """One paragraph for docs/rules.md: when it fires and what to do about it."""
    role: Role = Role.NONE
    """What a finding of this rule is to the passes over all findings (:class:`Role`)."""
    heads: int = NAMES_NO_CAUSE
    """How well a finding of this rule names the cause of its group: among a group's findings of one
    severity, the lowest heads the group (its title and evidence)."""
    yields_to: Role = Role.NONE
    """A finding of this rule is dropped where another finding at the same transform has this role (the
    same event seen by another kind is reported once, there)."""

    def __post_init__(self) -> None:
        # Rules are declared with the category's name; store the enum so a typo fails at import.
        object.__setattr__(self, "category", Category(self.category))

    def make(
        self,
        *,
        transform: str | None = None,
        stage: str | None = None,
        node: str | None = None,
        tensor: str | None = None,
        collapse: bool = False,
        severity: Severity | None = None,
        evidence: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Finding:
        """Build a :class:`Finding` of this rule; ``fields`` fill the message template. The message is cut to
        :data:`MESSAGE_LIMIT` characters and credential-shaped text in it is redacted."""
        message = self.template.format(transform=transform, stage=stage, node=node, tensor=tensor, **fields)
        return Finding(
            code=self.code,
            category=self.category,
            severity=severity or self.severity,
            message=excerpt(redact_text(message), MESSAGE_LIMIT),
            transform=transform,
            stage=stage,
            node=node,
            tensor=tensor,
            collapse=collapse,
            evidence=tuple(sorted((evidence or {}).items())),
        )


# Rules of the pipeline itself (every kind may end in them), ADI001 and ADI006.

ONE_SIDED = Rule(
    "ADI001", "artifact-one-sided", Category.INPUT, Severity.ERROR,
    "{what} present in the {present} run only; the {missing} run has none, so {analysis} was not done",
    "One run folder holds graph dumps (or recorded tensors) and the other does not. The analysis that "
    "needs both was skipped, so its conclusions are missing: this gates, because a verdict without the "
    "data must not read as a pass. Re-run the other side with AD_DUMP_GRAPHS_DIR set (or record tensors).",
)

STANDS = "the per-transform match counts from the logs still stand"
"""What still holds when an analysis beside the logs cannot run (the ``stands`` of :data:`ANALYSIS_FAILED`
that the graph and tensors kinds draw)."""

ANALYSIS_FAILED = Rule(
    "ADI006", "analysis-unreadable-input", Category.INPUT, Severity.ERROR,
    "{analysis} could not run: {error}; {stands}",
    "Part of a run could not be read (an unreadable dump header, a tensor folder that cannot be listed, "
    "...). The analysis that needs it did not run; the message says which conclusions still stand (the "
    "per-transform comparison of the logs always does). It gates: a missing analysis must not read as a "
    "pass. Fix or re-copy the file named in the message.",
)

SHARED_WITH_BASELINE = Rule(
    "ADI007", "candidate-shares-baseline-files", Category.INPUT, Severity.ERROR,
    "{count} candidate file(s) are the baseline's own: {examples}; equal by construction, they say nothing "
    "about the candidate",
    "A file (or folder) of the candidate run is a file of the baseline run: a symbolic link that leads into "
    "the baseline folder, a hard link (the same inode), or a log or config given on the command line that "
    "lies in the baseline folder. Whatever it holds is equal in both runs by construction, so an equal "
    "result there says nothing about the candidate. It gates: a run compared with itself, even in part, "
    "must never read as a pass. Copy the candidate's own artifacts into its folder. The higher-precision "
    "reference (`tensors/reference/`) is exempt: both runs are judged against it, and the tensor kind "
    "decides whether it is trusted. Two arguments naming the same folder are a usage error (exit 2).",
)

COPIED_BASELINE = Rule(
    "ADI008", "candidate-looks-like-a-copy", Category.INPUT, Severity.ERROR,
    "the candidate's log is byte-identical to the baseline's although it records {values}: it looks like a "
    "copy of the baseline, not a second run",
    "The candidate's log files are byte for byte the baseline's, and they hold values that two runs never "
    "share (timestamps, timings, memory figures). A comparison of a run with a copy of itself shows no "
    "difference, so it must not read as a pass: it gates. Record the candidate run itself (two honest "
    "runs differ at least in their timings, so this never fires on them). Logs with no such value cannot "
    "be told apart by content: the report says so in a note and nothing gates.",
)

RANK_LOG_MISSING = Rule(
    "ADI009", "rank-log-missing", Category.INPUT, Severity.ERROR,
    "{entry}: {why}; rank {rank} of the per-rank log layout has no log to compare",
    "In a per-rank log layout (torchrun `--log-dir`, mpirun `--output-filename`), an entry named like a "
    "rank is not a folder of readable logs (a FIFO, a file, an empty folder) or its logs are empty. "
    "Dropped without a word, the run would look smaller than it was and could pass; it gates. Copy the "
    "rank's logs into the run folder.",
)

CONFUSABLE_NAMES = Rule(
    "ADI010", "confusable-names", Category.INPUT, Severity.ERROR,
    "the baseline's transform `{a}` and the candidate's `{b}` differ only by look-alike characters "
    "({where}): one name made to read as the other",
    "Two transforms, one in each run, whose names look the same but are not (a Cyrillic `а` for a Latin "
    "`a`, a zero-width space): compared by code point, the transform reads as absent in one run and new in "
    "the other, and a reader sees one name. It gates; the names are shown with their escapes.",
)

RULES: tuple[Rule, ...] = (ONE_SIDED, ANALYSIS_FAILED, SHARED_WITH_BASELINE, COPIED_BASELINE,
                           RANK_LOG_MISSING, CONFUSABLE_NAMES)

# A log rule that the config kind draws (it holds the world size): defined here so that neither kind imports
# the other. It is listed with the log rules (ad_diff.kinds.log.rules.RULES), not in RULES above.

RANK_SILENT = Rule(
    "ADL016", "rank-logged-nothing", Category.INCOMPLETE_RUN, Severity.ERROR,
    "the {run} config sets {config} ({origin}) but the {run} log has {log}",
    "Within one run, the config's `world_size` says N ranks ran, yet the log, which does record several "
    "ranks (it shows more than one, or the other run's log shows all N), has no transform result from some "
    "of them: the rank died before its first transform, hung, or its output was never saved. Its pipeline "
    "cannot be compared, so this is an incomplete run and gates at every `--fail-on` level but `never`, "
    "like a rank that stopped (ADL009); the world-size change (ADL014) the rank counts show is a "
    "consequence, not the cause. A log of rank 0 alone in both runs is how some jobs are captured and gives "
    "no finding; untagged lines say nothing about ranks. The config kind checks it, as it holds the world "
    "size.",
    role=Role.RANK_SILENT,
)

