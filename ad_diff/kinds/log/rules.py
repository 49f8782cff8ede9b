"""The log kind's rules (codes ``ADL0xx``): what each finding of the per-transform comparison means.

This module only describes the findings; :mod:`.classify` draws them (through :mod:`.health` and
:mod:`.rows`) from the rank-by-rank comparison that :mod:`.compare` measured.
"""

from __future__ import annotations

from ad_diff.core.model import Category, Severity
from ad_diff.core.rules import RANK_SILENT, Role, Rule

ERR, WARN, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

_RANKS_DOC = (" In a multi-rank run every rank both runs have is compared with the same rank of the other "
              "run, and a loss on any rank gates as one on rank 0 does; the finding names its ranks once, "
              "e.g. "
              "`5 -> 0 on rank 1 of 2 (rank 0: 5 -> 5)`, or `on all ranks`.")

COLLAPSE = Rule(
    "ADL001", "match-collapse", Category.MATCH_LOSS, ERR,
    "{transform}: matches collapsed {before} -> {after}",
    "A transform that matched in the baseline matches nothing in the candidate, or lost at least the "
    "collapse fraction (default 50%) of its matches. Usually a pattern that no longer recognises the "
    "graph (an upstream rewrite changed the op form, or metadata it needs was dropped). Look at the graph "
    "section for the first divergence and root-cause hints." + _RANKS_DOC,
    role=Role.MATCH_LOST, heads=5,
)
PARTIAL = Rule(
    "ADL002", "partial-match-loss", Category.MATCH_LOSS, ERR,
    "{transform}: matches dropped {before} -> {after} ({pct}% lost)",
    "The candidate matched fewer times than the baseline, by less than the collapse fraction. Counts "
    "are exact, so any drop is real: typically one layer or one branch no longer fits the pattern."
    + _RANKS_DOC,
    role=Role.MATCH_LOST, heads=6,
)
STOPPED = Rule(
    "ADL003", "transform-stopped", Category.MATCH_LOSS, ERR,
    "{transform}: matched {before} in baseline but is {state} in candidate{detail}",
    "A transform that made matches in the baseline did not run to completion in the candidate (disabled, "
    "skipped, failed or missing from the log of a candidate that finished its pipeline), so every one of its "
    "matches is lost. When it was disabled on purpose, record that in the expected-changes file. Transforms "
    "a pipeline-cache restore skipped are `restored`, not compared, and never reported here.",
    role=Role.TRANSFORM_STOPPED, heads=2,
)
FAILED = Rule(
    "ADL004", "transform-failed", Category.STATE_CHANGE, ERR,
    "{transform}: failed in candidate: {failure}",
    "The candidate logged `Transform <t> failed: ...` (swallowed by skip_on_error) where the baseline did "
    "not fail. Even without lost matches this hides a bug.",
    role=Role.TRANSFORM_FAILED, heads=1,
)
STATE = Rule(
    "ADL005", "state-change", Category.STATE_CHANGE, WARN,
    "{transform}: {bstate} -> {cstate}",
    "The transform's state changed (e.g. applied with 0 matches -> disabled, skipped -> applied) without "
    "losing matches. Worth a look in review; it does not gate.",
)
ADDED = Rule(
    "ADL006", "transform-added", Category.STATE_CHANGE, INFO,
    "{transform}: new in candidate ({cstate}, {after} matches)",
    "A transform ran in the candidate only and made matches. Informational.",
    role=Role.TRANSFORM_ADDED, heads=10,
)
REMOVED = Rule(
    "ADL007", "transform-removed", Category.STATE_CHANGE, INFO,
    "{transform}: ran in baseline only ({bstate})",
    "A transform that made no matches in the baseline does not appear in the log of a candidate that "
    "finished its pipeline.",
)
GAIN = Rule(
    "ADL008", "match-gain", Category.IMPROVEMENT, INFO,
    "{transform}: matches rose {before} -> {after}",
    "The candidate matched more often than the baseline, including a transform that was disabled or "
    "skipped in the baseline and now runs and matches (a fusion switched on). Usually the point of the "
    "change; listed so a reviewer can confirm it.",
    role=Role.MATCH_GAINED, heads=9,
)
INCOMPLETE = Rule(
    "ADL009", "run-incomplete", Category.INCOMPLETE_RUN, ERR,
    "{run} run is incomplete: {detail}",
    "A run whose transform sequence stops cannot be compared past that point, so this always gates (at every "
    "`--fail-on` level but `never`): an incomplete run must never read as 'no regressions'. A rank's "
    "sequence stops when (a) it ends inside a transform (started, no result) or mid-line; (b) a traceback "
    "or fatal error follows its last result before the pipeline's final transform (`compile_model`, or an "
    "`export_onnx` transform) ran; or (c) the other run, or another rank of the same run, ran transforms "
    "after its last result and it never logged the final transform: a killed job leaves a clean log that "
    "just stops, even one transform short. Not a stop: a traceback printed after the final transform, or "
    "one Python reports as `Exception ignored in: ...` (a `__del__` failing at shutdown); those are notes. "
    "A candidate that finished its pipeline but lacks a later transform the baseline ran has that transform "
    "reported as removed (ADL003/ADL007). Every rank counts: rank 1 dying while rank 0 completes makes the "
    "run incomplete, and the finding names the rank. When both runs stop at the same place, it says so.",
    role=Role.RUN_STOPPED, heads=0,
)
RANKS = Rule(
    "ADL010", "rank-disagreement", Category.CONSISTENCY, WARN,
    "{run}: ranks disagree on {what}",
    "Ranks of one run logged different states or match counts for the same transform. When the baseline "
    "already disagrees, the disagreement existed before the change: a warning (sharding-dependent patterns "
    "can legitimately differ). A disagreement that is new in the candidate is not reported here but as the "
    "loss (or gain) on the rank that changed (ADL001-ADL008 `on rank N`), which gates like any loss; this "
    "warning covers it only for ranks that cannot be compared (present in the candidate only, or left out "
    "by `--rank`).",
)
UNRECOGNISED = Rule(
    "ADL011", "unrecognised-lines", Category.INPUT, WARN,
    "{run} log: {count} AutoDeploy line(s) in no known format (first at line {line}: {text})",
    "Lines that carry an AutoDeploy transform prefix and look like results ([SUMMARY], enabled=...) but "
    "match none of the formats in docs/formats.md. Their transforms may be missing from the comparison; "
    "a new AD log format needs a parser update.",
)
RETRY = Rule(
    "ADL012", "pipeline-restarted", Category.CONSISTENCY, WARN,
    "{run} log: the pipeline started {count} times (restart at line {line}); the last one is compared",
    "A transform key appeared twice in one log, which means the pipeline ran again in the same process or "
    "log (a retry). Only the last pipeline is compared.",
    role=Role.RUN_RESTARTED,
)
STAGE_MOVED = Rule(
    "ADL013", "stage-moved", Category.STATE_CHANGE, INFO,
    "{transform}: moved from stage {bstage} to {cstage}",
    "The same transform ran in a different stage in the candidate (a config moved it).",
)
WORLD_SIZE = Rule(
    "ADL014", "world-size-changed", Category.CONFIG, WARN,
    "world size changed: baseline logged {bcount} rank(s) ({branks}), candidate {ccount} ({cranks}); "
    "{compared}",
    "The runs' logs hold different sets of ranks (a world size change, e.g. `world_size_2.yaml` added). The "
    "ranks both runs have are compared; the others are not. A deliberate change reads as a warning; if the "
    "candidate was meant to run on as many ranks as the baseline, a rank that logged nothing may have died "
    "at start: check its output.",
    role=Role.WORLD_SIZE_CHANGED,
)
REORDERED = Rule(
    "ADL015", "pipeline-reordered", Category.STATE_CHANGE, WARN,
    "{transform}: runs at another place in the candidate's pipeline (after {cafter}; in the baseline after "
    "{bafter})",
    "Both runs ran the same transform, but in a different order (a config changed the stage order or the "
    "overlay key order): the pipeline is not the same even when every count is. It does not gate by itself; "
    "when the new order loses matches, those losses gate. A transform whose stage changed is reported as "
    "ADL013 instead, and one whose graph dumps show the same move as ADG013 only (reported once).",
    yields_to=Role.TRANSFORM_MOVED,
)

RULES: tuple[Rule, ...] = (
    COLLAPSE, PARTIAL, STOPPED, FAILED, STATE, ADDED, REMOVED, GAIN, INCOMPLETE, RANKS, UNRECOGNISED,
    RETRY, STAGE_MOVED, WORLD_SIZE, REORDERED, RANK_SILENT,
)
