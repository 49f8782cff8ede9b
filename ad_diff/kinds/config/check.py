"""Config applied? Cross-check one run's effective config against the same run's log."""

from __future__ import annotations

from ad_diff.core.model import Finding, State, TransformRecord
from ad_diff.kinds.config import rules as R
from ad_diff.kinds.config.model import ConfigCheck, EffectiveConfig
from ad_diff.kinds.log.model import LogEnd, RunLog

_RAN = (State.APPLIED, State.SKIPPED, State.FAILED)


def log_order(log: RunLog) -> list[str]:
    """Transform keys in the order the log first shows them."""
    seen: dict[str, None] = {}
    for r in log.transforms:
        seen.setdefault(r.transform, None)
    return list(seen)


def _describe(r: TransformRecord) -> str:
    if r.state == State.APPLIED and r.matches is not None:
        return f"applied ({r.matches} matches)"
    return r.state.value


def check_run(
    run: str, cfg: EffectiveConfig, log: RunLog, order: list[str]
) -> tuple[list[ConfigCheck], list[Finding]]:
    """Return the disagreements between ``cfg`` and ``log`` (in pipeline order) and their findings."""
    records: dict[str, list[TransformRecord]] = {}
    for r in log.transforms:
        records.setdefault(r.transform, []).append(r)
    rank = {k: i for i, k in enumerate(order)}
    keys = sorted(set(cfg.transforms) | set(records), key=lambda k: (rank.get(k, len(rank)), k))
    checks: list[ConfigCheck] = []
    findings: list[Finding] = []
    log_complete = log.end == LogEnd.COMPLETE and bool(log.transforms)
    for key in keys:
        enabled = cfg.enabled(key)
        recs = records.get(key, [])
        origin = cfg.origin(("transforms", key, "enabled")) if key in cfg.transforms else None
        stage = cfg.stage(key) or (recs[0].stage if recs else None)
        if enabled is None:
            if recs and cfg.source.complete:
                r = recs[0]
                checks.append(ConfigCheck(run, key, "not_in_config", "(not mentioned)", _describe(r),
                                          None, r.line, r.stage))
                findings.append(R.NOT_IN_CONFIG.make(transform=key, stage=r.stage, run=run,
                                                     evidence={"log_line": r.line}))
            continue
        ran = [r for r in recs if r.state in _RAN]
        disabled = [r for r in recs if r.state == State.DISABLED]
        if enabled and recs and not ran and disabled:
            r = disabled[0]
            checks.append(ConfigCheck(run, key, "enabled_but_disabled", "enabled", "disabled", origin, r.line,
                                      r.stage))
            findings.append(R.ENABLED_BUT_DISABLED.make(
                transform=key, stage=r.stage, run=run, origin=origin or "config", line=r.line,
                evidence={"config_source": origin or "", "log_line": r.line}))
        elif enabled and not recs and log_complete:
            checks.append(ConfigCheck(run, key, "enabled_but_absent", "enabled", "absent", origin, None, stage))
            findings.append(R.ENABLED_BUT_ABSENT.make(transform=key, stage=stage, run=run, origin=origin or "config",
                                                      evidence={"config_source": origin or ""}))
        elif not enabled and ran:
            r = ran[0]
            checks.append(ConfigCheck(run, key, "disabled_but_ran", "disabled", _describe(r), origin, r.line,
                                      r.stage))
            findings.append(R.DISABLED_BUT_RAN.make(
                transform=key, stage=r.stage, run=run, origin=origin or "config", state=_describe(r), line=r.line,
                evidence={"config_source": origin or "", "log_line": r.line}))
        config_stage = cfg.stage(key)
        if config_stage and recs and all(r.stage != config_stage for r in recs):
            r = recs[0]
            stage_origin = cfg.origin(("transforms", key, "stage"))
            checks.append(ConfigCheck(run, key, "stage_mismatch", f"stage {config_stage}", f"stage {r.stage}",
                                      stage_origin, r.line, r.stage))
            findings.append(R.STAGE_MISMATCH.make(
                transform=key, stage=r.stage, run=run, config_stage=config_stage, log_stage=r.stage,
                origin=stage_origin or "config", evidence={"config_source": stage_origin or "", "log_line": r.line}))
    return checks, findings
