"""Config applied? Cross-check one run's effective config against the same run's log (measurements only)."""

from __future__ import annotations

from itertools import islice

from ad_diff.core.model import RunId, State, TransformRecord
from ad_diff.core.runlog import LogEnd, RunLog
from ad_diff.kinds.config.model import CheckKind, ConfigCheck, EffectiveConfig

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


def known_transforms(*logs: RunLog | None) -> frozenset[str]:
    """Every transform key a run shows (any rank of either log): the names a config key is spelled against
    (the known-transform catalogue is added where a key is checked, :func:`_suggest`)."""
    return frozenset(r.transform for log in logs if log is not None for rl in log.rank_logs()
                     for r in rl.transforms)


def _suggest(key: str, known: frozenset[str]) -> tuple[str, ...]:
    """The known transform keys ``key`` is one typo away from (:func:`ad_diff.core.spelling.near`), the
    logs' and the catalogue's (imported only here: most runs have no key that never ran)."""
    from ad_diff.core.known import KNOWN
    from ad_diff.core.spelling import near

    catalogue = {k for _, keys in KNOWN.values() for k in keys}
    return near(key, known | catalogue)


def check_run(run: RunId, cfg: EffectiveConfig, log: RunLog, order: list[str],
              known: frozenset[str] = frozenset()) -> list[ConfigCheck]:
    """The disagreements between ``cfg`` and ``log``, in pipeline order (``rules.classify`` reports them).
    ``known``: transform keys the runs show (:func:`known_transforms`), which a key enabled here but never
    logged may be a misspelling of."""
    records: dict[str, list[TransformRecord]] = {}
    for r in log.transforms:
        records.setdefault(r.transform, []).append(r)
    rank = {k: i for i, k in enumerate(order)}
    keys = sorted(set(cfg.transforms) | set(records), key=lambda k: (rank.get(k, len(rank)), k))
    checks: list[ConfigCheck] = []
    log_complete = log.end == LogEnd.COMPLETE and bool(log.transforms)
    for key in keys:
        enabled = cfg.enabled(key)
        recs = records.get(key, [])
        origin = cfg.origin(("transforms", key, "enabled")) if key in cfg.transforms else None
        stage = cfg.stage(key) or (recs[0].stage if recs else None)
        if enabled is None:
            if recs and cfg.source.complete:
                r = recs[0]
                checks.append(ConfigCheck(run, key, CheckKind.NOT_IN_CONFIG, "(not mentioned)", _describe(r),
                                          None, r.line, r.stage))
            continue
        ran = [r for r in recs if r.state in _RAN]
        disabled = [r for r in recs if r.state == State.DISABLED]
        if enabled and recs and not ran and disabled:
            r = disabled[0]
            checks.append(ConfigCheck(run, key, CheckKind.ENABLED_BUT_DISABLED, "enabled", "disabled", origin,
                                      r.line, r.stage))
        elif enabled and not recs and log_complete:
            checks.append(ConfigCheck(run, key, CheckKind.ENABLED_BUT_ABSENT, "enabled", "absent", origin,
                                      None, stage, suggestions=_suggest(key, known | set(records))))
        elif not enabled and ran:
            r = ran[0]
            checks.append(ConfigCheck(run, key, CheckKind.DISABLED_BUT_RAN, "disabled", _describe(r), origin,
                                      r.line, r.stage))
        config_stage = cfg.stage(key)
        if config_stage and recs and all(r.stage != config_stage for r in recs):
            r = recs[0]
            checks.append(ConfigCheck(run, key, CheckKind.STAGE_MISMATCH, f"stage {config_stage}",
                                      f"stage {r.stage}", cfg.origin(("transforms", key, "stage")), r.line,
                                      r.stage, config_stage))
    return checks


def _ranks(log: RunLog) -> set[int]:
    """The tagged ranks of ``log`` that logged a transform result (or stopped inside one)."""
    return {rl.rank for rl in log.rank_logs() if rl.rank is not None and rl.transforms}


def missing_ranks(run: RunId, cfg: EffectiveConfig, log: RunLog, other: RunLog | None) -> list[ConfigCheck]:
    """A check naming the ranks below the config's ``world_size`` that logged no result, when the capture
    records every rank: this log shows more than one rank, or the other run's log shows the whole world.
    A log of rank 0 alone in both runs is how some jobs are captured (no finding); untagged lines say
    nothing about ranks."""
    world = cfg.data.get("world_size")
    if not isinstance(world, int) or isinstance(world, bool) or world < 2 or not log.ranks_seen:
        return []
    # the work follows the logs, never the number the config writes (world_size: 10**9 is a string of digits)
    seen = {r for r in _ranks(log) if 0 <= r < world}
    n_missing = world - len(seen)
    others = _ranks(other) if other is not None else set()
    every_rank = len(_ranks(log)) > 1 or sum(1 for r in others if 0 <= r < world) == world
    if not n_missing or not seen or not every_rank:
        return []
    missing = list(islice((r for r in range(world) if r not in seen), 8))
    absent = ", ".join(map(str, missing)) + (f" and {n_missing - len(missing)} more" if n_missing > 8 else "")
    shown = ", ".join(map(str, sorted(seen)))
    have = "rank" if len(seen) == 1 else "ranks"
    lack = "rank" if n_missing == 1 else "ranks"
    return [ConfigCheck(run, "world_size", CheckKind.RANKS_MISSING, f"world_size {world}",
                        f"results from {have} {shown} only; {lack} {absent} logged none",
                        cfg.origin(("world_size",)))]
