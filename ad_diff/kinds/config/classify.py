"""Config findings (``ADC0xx``) drawn from the measurements of ``compare.analyze_config``, with the rules
of :mod:`.rules`. Imported where a run has a config: the config model comes with it.
"""

from __future__ import annotations

from typing_extensions import assert_never

from ad_diff.core.model import BASELINE, CANDIDATE, Finding, Severity
from ad_diff.core.rules import RANK_SILENT
from ad_diff.kinds.config.model import CheckKind, ConfigAnalysis, ConfigCheck
from ad_diff.kinds.config.rules import (
    CONFIG_MISSING,
    DISABLED_BUT_RAN,
    ENABLED_BUT_ABSENT,
    ENABLED_BUT_DISABLED,
    KEY_MISSPELLED,
    NOT_IN_CONFIG,
    SETTING_CHANGED,
    STAGE_MISMATCH,
    TRANSFORM_CONFIG_CHANGED,
)


def classify(analysis: ConfigAnalysis) -> list[Finding]:
    """The ADC findings of one analysis: config changes, a one-sided config, then each run's checks."""
    findings: list[Finding] = []
    if analysis.diff is not None:
        for t in analysis.diff.transforms:
            findings.append(TRANSFORM_CONFIG_CHANGED.make(
                transform=t.transform, stage=t.stage, cause=t.describe(),
                evidence={"config_changes": tuple(c.key for c in t.changes),
                          "config_source": ", ".join(t.sources())},
            ))
        for s in analysis.diff.settings:
            findings.append(SETTING_CHANGED.make(key=s.key, change=f"{s.before_text} -> {s.after_text}",
                                                 evidence={"config_source": s.origin() or "",
                                                           "setting": s.key}))
    elif (analysis.baseline is None) != (analysis.candidate is None):
        findings.append(CONFIG_MISSING.make(run=BASELINE if analysis.baseline is None else CANDIDATE))
    findings.extend(_check_finding(ch) for ch in analysis.checks)
    return findings


def _check_finding(ch: ConfigCheck) -> Finding:
    origin = ch.origin or "config"
    source = {"config_source": ch.origin or ""}
    if ch.kind is CheckKind.NOT_IN_CONFIG:
        return NOT_IN_CONFIG.make(transform=ch.transform, stage=ch.stage, run=ch.run,
                                  evidence={"log_line": ch.log_line})
    if ch.kind is CheckKind.ENABLED_BUT_DISABLED:
        return ENABLED_BUT_DISABLED.make(transform=ch.transform, stage=ch.stage, run=ch.run, origin=origin,
                                         line=ch.log_line, evidence={**source, "log_line": ch.log_line})
    if ch.kind is CheckKind.RANKS_MISSING:
        return RANK_SILENT.make(run=ch.run, config=ch.config_value, origin=origin, log=ch.log_value,
                                evidence=source)
    if ch.kind is CheckKind.ENABLED_BUT_ABSENT and ch.suggestions:
        return KEY_MISSPELLED.make(transform=ch.transform, stage=ch.stage, run=ch.run, origin=origin,
                                   suggestion=" or ".join(ch.suggestions),
                                   severity=None if ch.run == CANDIDATE else Severity.WARNING,
                                   evidence={**source, "did_you_mean": list(ch.suggestions)})
    if ch.kind is CheckKind.ENABLED_BUT_ABSENT:
        return ENABLED_BUT_ABSENT.make(transform=ch.transform, stage=ch.stage, run=ch.run, origin=origin,
                                       evidence=source)
    if ch.kind is CheckKind.DISABLED_BUT_RAN:
        return DISABLED_BUT_RAN.make(transform=ch.transform, stage=ch.stage, run=ch.run, origin=origin,
                                     state=ch.log_value, line=ch.log_line,
                                     evidence={**source, "log_line": ch.log_line})
    if ch.kind is CheckKind.STAGE_MISMATCH:
        return STAGE_MISMATCH.make(transform=ch.transform, stage=ch.stage, run=ch.run,
                                   config_stage=ch.config_stage, log_stage=ch.stage, origin=origin,
                                   evidence={**source, "log_line": ch.log_line})
    assert_never(ch.kind)
