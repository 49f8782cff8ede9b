"""The accounting pass's findings (codes ``ADA0xx``)."""

from __future__ import annotations

from ad_diff.core.model import Category, Severity
from ad_diff.core.rules import Rule

UNACCOUNTED = Rule(
    "ADA001", "unaccounted-difference", Category.UNACCOUNTED, Severity.ERROR,
    "unaccounted difference: {what} ({values}){more}; no finding and no noise rule accounts for it",
    "The accounting pass (docs/accounting.md) inventoried both run folders (files, each rank's transform "
    "results, dumps, tensors and references, config keys, run.json) and found a difference that no finding "
    "names and no documented noise rule absorbs: a count that changed while the graph did not, a graph "
    "rewritten at a transform whose input, result and config are the same, a config key whose change shows "
    "no effect, a rank whose transform lines are gone, a tensor or reference that differs where no "
    "comparison looked. It gates: a green result must never hide a difference nobody explained. If the "
    "difference is intended or harmless, say so in the expected-changes file (`--expected`, code `ADA001` "
    "and the transform or a message glob); if it is noise ad-diff should know, it belongs in a noise rule.",
)

UNRECOGNISED_LINES = Rule(
    "ADA002", "unrecognised-transform-lines", Category.UNACCOUNTED, Severity.WARNING,
    "log lines no reader recognises differ at {transform}{where}: {lines}{more}",
    "A transform logged lines (at info level or above) that no reader of ad-diff claims, and the runs "
    "differ in them: `Applied 4 TP shards` in one run, `Applied 2 TP shards` in the other, while the "
    "transform's result, dump and config are the same. ad-diff cannot tell what such a line means, so it "
    "lists them for review and never gates on them alone: a log line is a fact only where no reader "
    "claims it, and how a run printed (log format, logger prefix, verbosity) is never one. Lines of a "
    "transform whose result differs, or that a finding names, are accounted for by that finding.",
)

RULES: tuple[Rule, ...] = (UNACCOUNTED, UNRECOGNISED_LINES)
