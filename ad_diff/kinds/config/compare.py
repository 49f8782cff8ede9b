"""Compare two effective AD configs (with deepdiff) and build the :class:`ConfigAnalysis`.

Measurement only: this module lists differences and config-vs-log disagreements; ``classify.classify`` turns
them into ADC findings, and ``explain.explain_findings`` later uses them to explain log findings.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ad_diff.core import lazy
from ad_diff.core.model import BASELINE, CANDIDATE, RUNS, STAGES
from ad_diff.core.runlog import LogEnd, RunLog
from ad_diff.kinds.config.check import check_run, known_transforms, log_order, missing_ranks
from ad_diff.kinds.config.model import (
    ChangeKind,
    ConfigAnalysis,
    ConfigChange,
    ConfigCheck,
    ConfigDiff,
    EffectiveConfig,
    KeyPath,
    TransformConfigChange,
)

if TYPE_CHECKING:
    import deepdiff
else:
    deepdiff = lazy.module("deepdiff")

#: Top-level settings shown first, in this order (FORMATS.md 4.2); the rest follow by name.
KEY_SETTINGS: tuple[str, ...] = (
    "runtime",
    "compile_backend",
    "attn_backend",
    "world_size",
    "max_batch_size",
    "max_seq_len",
    "max_num_tokens",
    "cuda_graph_config",
)
_MISSING = object()


def analyze_config(
    baseline: EffectiveConfig | None,
    candidate: EffectiveConfig | None,
    baseline_log: RunLog | None,
    candidate_log: RunLog | None,
) -> ConfigAnalysis:
    """Diff the two configs and check each against its own log (measurements only; see :mod:`.classify`)."""
    notes: list[str] = []
    order = pipeline_order(baseline, candidate, baseline_log, candidate_log)
    diff: ConfigDiff | None = None
    if baseline is not None and candidate is not None:
        diff = diff_configs(baseline, candidate, order)
        if baseline.source.complete != candidate.source.complete:
            partial = BASELINE if not baseline.source.complete else CANDIDATE
            notes.append(f"the {partial} config has no default.yaml or effective dump: keys only the other "
                         "run defines show up as added/removed")
    elif baseline is None and candidate is None:
        notes.append("neither run holds an AD config; no change can be explained by configuration")
    checks: list[ConfigCheck] = []
    known = known_transforms(baseline_log, candidate_log)
    for run, cfg, log in zip(RUNS, (baseline, candidate), (baseline_log, candidate_log), strict=True):
        if cfg is not None and log is not None:
            checks.extend(check_run(run, cfg, log, order, known))
            checks.extend(missing_ranks(run, cfg, log, candidate_log if run == BASELINE else baseline_log))
        elif cfg is not None:
            notes.append(f"the {run} run has a config but no log: config applied? not checked")
    complete = tuple(run for run, log in zip(RUNS, (baseline_log, candidate_log), strict=True)
                     if log is not None and log.end == LogEnd.COMPLETE)
    return ConfigAnalysis(baseline, candidate, diff, tuple(checks), tuple(notes), complete, tuple(order))


def pipeline_order(
    baseline: EffectiveConfig | None,
    candidate: EffectiveConfig | None,
    baseline_log: RunLog | None,
    candidate_log: RunLog | None,
) -> list[str]:
    """Transform keys in pipeline order: the baseline log, then what only the candidate log shows, then
    config-only keys placed by stage (config file order within a stage, as AD's stable sort does)."""
    order: list[str] = []
    stage_of: dict[str, str] = {}
    for log in (baseline_log, candidate_log):
        if log is not None:
            _merge_sequence(order, log_order(log))
            for r in log.transforms:
                stage_of.setdefault(r.transform, r.stage)
    rank = {s: i for i, s in enumerate(STAGES)}
    for cfg in (candidate, baseline):
        if cfg is None:
            continue
        for key in cfg.transforms:
            stage_of.setdefault(key, cfg.stage(key) or "")
        for key in cfg.transforms:
            if key in order:
                continue
            # After the last key of the same or an earlier stage: AD's stable sort by stage.
            own = rank.get(stage_of[key], len(STAGES))
            at = 0
            for i, k in enumerate(order):
                if rank.get(stage_of.get(k, ""), len(STAGES)) <= own:
                    at = i + 1
            order.insert(at, key)
    return order


def _merge_sequence(order: list[str], seq: list[str]) -> None:
    """Insert the items of ``seq`` missing from ``order`` right after their predecessor in ``seq``."""
    pos = {k: i for i, k in enumerate(order)}
    prev: str | None = None
    for k in seq:
        if k not in pos:
            at = order.index(prev) + 1 if prev is not None else 0
            order.insert(at, k)
            pos = {x: i for i, x in enumerate(order)}
        prev = k


def diff_configs(baseline: EffectiveConfig, candidate: EffectiveConfig, order: list[str]) -> ConfigDiff:
    """Every difference between the two configs, grouped by transform (pipeline order) and setting."""
    t1, t2 = _normalised(baseline.data), _normalised(candidate.data)
    # deepdiff imports pandas (about 1 s) when it is installed: pay it only when two configs are diffed
    DeepDiff = deepdiff.DeepDiff

    try:  # deepdiff >= 8 reports two mappings sharing few keys as one changed value unless told not to
        tree = DeepDiff(t1, t2, view="tree", threshold_to_diff_deeper=0)
    except ValueError:  # deepdiff 7 has no such option and always goes deeper
        tree = DeepDiff(t1, t2, view="tree")
    paths: dict[KeyPath, None] = {}
    for report_type in sorted(tree):
        for level in tree[report_type]:
            raw = level.path(output_format="list")
            # Lists are compared as a whole value: cut the path at the first index.
            cut = next((i for i, p in enumerate(raw) if not isinstance(p, str)), len(raw))
            for path in _leaves(t1, t2, tuple(str(p) for p in raw[:cut])):
                paths[path] = None
    changes = []
    for path in paths:
        before, after = _get(t1, path), _get(t2, path)
        if path and path[0] == "transforms" and len(path) == 1:
            # A whole transforms section on one side only: report per key.
            for key in sorted(set(_as_dict(before)) | set(_as_dict(after))):
                sub = ("transforms", key)
                changes.append(_change(sub, _get(t1, sub), _get(t2, sub), baseline, candidate))
            continue
        changes.append(_change(path, before, after, baseline, candidate))

    per_transform: dict[str, list[ConfigChange]] = {}
    settings: list[ConfigChange] = []
    for c in changes:
        if c.path[0] == "transforms" and len(c.path) >= 2:
            per_transform.setdefault(c.path[1], []).append(c)
        else:
            one_sided = c.kind in (ChangeKind.ADDED, ChangeKind.REMOVED)
            settings.append(c if one_sided else replace(c, kind=ChangeKind.SETTING))
    rank = {k: i for i, k in enumerate(order)}
    kind_rank = {ChangeKind.REMOVED: 0, ChangeKind.ADDED: 1, ChangeKind.ENABLED: 2, ChangeKind.STAGE: 3,
                 ChangeKind.OPTION: 4}
    groups = []
    for key in sorted(per_transform, key=lambda k: (rank.get(k, len(rank)), k)):
        stage = candidate.stage(key) or baseline.stage(key)
        items = sorted(per_transform[key], key=lambda c: (kind_rank[c.kind], c.key))
        groups.append(TransformConfigChange(key, stage, tuple(items)))
    top_rank = {k: i for i, k in enumerate(KEY_SETTINGS)}
    settings.sort(key=lambda c: (top_rank.get(c.path[0], len(top_rank)), c.key))
    return ConfigDiff(tuple(groups), tuple(settings))


def _change(path: KeyPath, before: Any, after: Any, b: EffectiveConfig, c: EffectiveConfig) -> ConfigChange:
    if before is _MISSING:
        kind = ChangeKind.ADDED
    elif after is _MISSING:
        kind = ChangeKind.REMOVED
    elif path[0] == "transforms" and len(path) == 3 and path[2] in ("enabled", "stage"):
        kind = ChangeKind(path[2])
    else:
        kind = ChangeKind.OPTION
    return ConfigChange(
        path,
        kind,
        None if before is _MISSING else before,
        None if after is _MISSING else after,
        None if before is _MISSING else b.origin(path),
        None if after is _MISSING else c.origin(path),
    )


def _normalised(data: dict[str, Any]) -> dict[str, Any]:
    """Copy of the config with AD's default ``enabled: true`` filled in, so that spelling the default out
    in one run is not reported as a change."""
    out = dict(data)
    transforms = data.get("transforms")
    if isinstance(transforms, dict):
        out["transforms"] = {
            k: {"enabled": True, **v} if isinstance(v, dict) else {"enabled": True}
            for k, v in transforms.items()
        }
    return out


def _leaves(t1: Any, t2: Any, path: KeyPath) -> list[KeyPath]:
    """``path``, or where it holds a mapping on both sides, the paths below it that differ: a change is
    always reported at the deepest key, whatever granularity the diff library chose (never at the root)."""
    out: list[KeyPath] = []
    stack = [path]
    while stack:
        p = stack.pop()
        before, after = _get(t1, p), _get(t2, p)
        if isinstance(before, dict) and isinstance(after, dict):
            stack.extend((*p, k) for k in sorted(set(before) | set(after), reverse=True)
                         if before.get(k, _MISSING) != after.get(k, _MISSING))
        elif p:
            out.append(p)
    return out


def _get(data: Any, path: KeyPath) -> Any:
    for k in path:
        if not isinstance(data, dict) or k not in data:
            return _MISSING
        data = data[k]
    return data


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


__all__ = ["KEY_SETTINGS", "analyze_config", "diff_configs", "pipeline_order"]
