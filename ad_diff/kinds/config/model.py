"""Frozen dataclasses for the configuration analysis: which AD config each run used, how the two differ,
and whether each run's log agrees with its own config.

Flow: ``parsers.run_config`` builds one :class:`EffectiveConfig` per run (from an effective dump or by
merging layers, :class:`ConfigSource` says which); ``config_diff.analyze_config`` turns two of them plus the
logs into a :class:`ConfigAnalysis`; ``classify.config_explain.explain_findings`` uses that analysis to mark
log findings as explained (or not) by config.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ad_diff.core.model import Finding

KeyPath = tuple[str, ...]
"""A path into the nested config, e.g. ``("transforms", "fuse_gemms", "enabled")``."""


def dotted(path: KeyPath) -> str:
    """``("transforms", "fuse_gemms", "enabled")`` -> ``"transforms.fuse_gemms.enabled"``."""
    return ".".join(path)


def show_value(value: Any) -> str:
    """Render a config value the way it is written in YAML (``true``, ``null``, ``[1, 2]``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    return str(value)


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """Which files made one run's configuration, in the order they were applied."""

    kind: str
    """``effective`` (one file taken as the whole merged config) or ``layered`` (files deep-merged here)."""
    files: tuple[str, ...]
    """Display names (relative to the run folder when inside it), in merge order; later wins."""
    order_rule: str
    """Sentence saying how the order was decided (order file, registry, default rule, explicit path)."""
    complete: bool
    """True when the config covers the whole pipeline (an effective dump, or layers including
    ``default.yaml``); only then can a transform missing from the config be reported."""
    notes: tuple[str, ...] = ()
    """Sentences about files ignored or order decisions (shown in every report)."""

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "kind": self.kind,
            "files": list(self.files),
            "order_rule": self.order_rule,
            "complete": self.complete,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class EffectiveConfig:
    """One run's effective AD configuration (after merging), with where each value came from."""

    source: ConfigSource
    data: dict[str, Any]
    """The merged config as loaded by ``yaml.safe_load`` (treat as read-only)."""
    origins: dict[KeyPath, str] = field(default_factory=dict)
    """For every leaf path a layer set: ``file`` or ``file:line`` of the last layer that set it."""

    @property
    def transforms(self) -> dict[str, dict[str, Any]]:
        """The ``transforms:`` map (empty if the config has none)."""
        t = self.data.get("transforms")
        return t if isinstance(t, dict) else {}

    def enabled(self, transform: str) -> bool | None:
        """Whether the config enables ``transform`` (AD's default is enabled); ``None`` if not mentioned."""
        entry = self.transforms.get(transform)
        if entry is None:
            return None
        return bool(entry.get("enabled", True))

    def stage(self, transform: str) -> str | None:
        """The stage the config puts ``transform`` in, if it says."""
        entry = self.transforms.get(transform)
        stage = entry.get("stage") if isinstance(entry, dict) else None
        return stage if isinstance(stage, str) else None

    def origin(self, path: KeyPath) -> str | None:
        """The file (``file:line``) that set ``path``, or set the deepest value under/above it. A key no
        layer spelled out (``enabled`` left at AD's default) is blamed on the file defining its entry,
        marked ``(implicit default)``."""
        if path in self.origins:
            return self.origins[path]
        below = [p for p in self.origins if p[: len(path)] == path]
        if below:
            # Several leaves under a key (a whole transform entry): the one set last is the best blame.
            return self.origins[max(below)]
        for n in range(len(path) - 1, 0, -1):
            if path[:n] in self.origins:
                return self.origins[path[:n]]
            siblings = sorted(p for p in self.origins if p[:n] == path[:n])
            if siblings and n >= 2:
                first = min(siblings, key=lambda p: (p[-1] != "stage", p))
                return f"{self.origins[first]} (implicit default)"
        return None


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """One difference between the two effective configs."""

    path: KeyPath
    kind: str
    """``enabled`` (flip), ``stage`` (move), ``option`` (other field changed), ``added`` / ``removed``
    (key present in one run only), or ``setting`` (top-level, non-transform)."""
    before: Any
    after: Any
    baseline_origin: str | None = None
    """File (``file:line``) in the baseline that set the value, when known."""
    candidate_origin: str | None = None

    @property
    def key(self) -> str:
        """Dotted path."""
        return dotted(self.path)

    def describe(self) -> str:
        """``transforms.fuse_gemms.enabled: true -> false`` (``(absent)`` for a missing side)."""
        before = "(absent)" if self.kind == "added" else show_value(self.before)
        after = "(absent)" if self.kind == "removed" else show_value(self.after)
        return f"{self.key}: {before} -> {after}"

    def origin(self) -> str | None:
        """The file that most likely introduced the change (candidate side first, it is the new one)."""
        return self.candidate_origin or self.baseline_origin

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form (values as loaded, which are JSON types for YAML/JSON inputs)."""
        return {
            "path": self.key,
            "kind": self.kind,
            "before": self.before,
            "after": self.after,
            "baseline_origin": self.baseline_origin,
            "candidate_origin": self.candidate_origin,
        }


@dataclass(frozen=True, slots=True)
class TransformConfigChange:
    """All config differences of one transform key."""

    transform: str
    stage: str | None
    """Candidate's stage (baseline's if the key was removed)."""
    changes: tuple[ConfigChange, ...]

    def change(self, kind: str) -> ConfigChange | None:
        """The change of ``kind`` (``enabled``, ``stage``, ``added``, ``removed``), if any."""
        return next((c for c in self.changes if c.kind == kind), None)

    def summary(self) -> str:
        """Short phrase: ``disabled in candidate config``, ``moved post_load_fusion -> cache_init`` ..."""
        parts = []
        for c in self.changes:
            if c.kind == "enabled":
                parts.append("enabled in candidate config" if c.after else "disabled in candidate config")
            elif c.kind == "stage":
                parts.append(f"moved from stage {c.before} to {c.after} in candidate config")
            elif c.kind == "added":
                parts.append("added in candidate config")
            elif c.kind == "removed":
                parts.append("removed from candidate config")
        n_opts = sum(c.kind == "option" for c in self.changes)
        if n_opts:
            parts.append(f"{n_opts} option{'s' if n_opts > 1 else ''} changed in candidate config")
        return "; ".join(parts)

    def describe(self) -> str:
        """``fuse_gemms: disabled in candidate config (transforms.fuse_gemms.enabled: true -> false, from
        config/model_x.yaml:3)``: the sentence reports use to explain a finding."""
        details = []
        for c in self.changes:
            origin = c.origin()
            details.append(f"{c.describe()}, from {origin}" if origin else c.describe())
        return f"{self.transform}: {self.summary()} ({'; '.join(details)})"

    def sources(self) -> tuple[str, ...]:
        """Files behind the changes, sorted."""
        return tuple(sorted({c.origin() or "" for c in self.changes} - {""}))

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "transform": self.transform,
            "stage": self.stage,
            "summary": self.summary(),
            "changes": [c.to_json() for c in self.changes],
        }


@dataclass(frozen=True, slots=True)
class ConfigDiff:
    """Differences between the baseline and candidate effective configs."""

    transforms: tuple[TransformConfigChange, ...]
    """Per transform key, in pipeline order."""
    settings: tuple[ConfigChange, ...]
    """Top-level (non-``transforms``) settings; the well-known ones (runtime, backend, sizes) first."""

    def for_transform(self, transform: str) -> TransformConfigChange | None:
        """The changes of one transform key, if any."""
        return next((t for t in self.transforms if t.transform == transform), None)

    def __bool__(self) -> bool:
        return bool(self.transforms or self.settings)

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "transforms": [t.to_json() for t in self.transforms],
            "settings": [s.to_json() for s in self.settings],
        }


@dataclass(frozen=True, slots=True)
class ConfigCheck:
    """A disagreement between one run's config and the same run's log."""

    run: str
    """``baseline`` or ``candidate``."""
    transform: str
    kind: str
    """``enabled_but_disabled`` (config on, log ``disabled``), ``enabled_but_absent`` (config on, not in a
    complete log), ``disabled_but_ran`` (config off, log applied/skipped/failed), ``stage_mismatch``,
    ``not_in_config`` (logged but no config mentions it)."""
    config_value: str
    """What the config says (``enabled``, ``disabled``, ``stage post_load_fusion``, ``(not mentioned)``)."""
    log_value: str
    """What the log says (``disabled``, ``applied (12 matches)``, ``absent``, ``stage cache_init``)."""
    origin: str | None = None
    """File (``file:line``) behind the config value."""
    log_line: int | None = None
    stage: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "run": self.run,
            "transform": self.transform,
            "stage": self.stage,
            "kind": self.kind,
            "config": self.config_value,
            "log": self.log_value,
            "origin": self.origin,
            "log_line": self.log_line,
        }


@dataclass(frozen=True, slots=True)
class ConfigAnalysis:
    """Everything the configuration step found; carried in ``DiffResult.sections["config"]``."""

    baseline: EffectiveConfig | None
    candidate: EffectiveConfig | None
    diff: ConfigDiff | None
    """``None`` when either run has no config."""
    checks: tuple[ConfigCheck, ...]
    """Config-vs-log disagreements of both runs (baseline first, then pipeline order)."""
    findings: tuple[Finding, ...]
    """Findings of the config rules (ADC0xx) about the configs themselves and the checks."""
    notes: tuple[str, ...] = ()
    complete_logs: tuple[str, ...] = ()
    """Runs (``baseline``/``candidate``) whose log ended normally, so a transform absent there really
    did not run."""
    pipeline: tuple[str, ...] = ()
    """Transform keys in pipeline order (logs first, then config-only keys by stage)."""
    explained: tuple[Finding, ...] = ()
    """After ``explain_findings``: the findings explained by config and the unexplained (``ADC008``) ones,
    attached with ``classify.config_explain.with_explanations`` for the report section."""

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form of the section (stable key order)."""
        return {
            "baseline": _side_json(self.baseline),
            "candidate": _side_json(self.candidate),
            "diff": self.diff.to_json() if self.diff is not None else None,
            "checks": [c.to_json() for c in self.checks],
            "findings": [_finding_json(f) for f in self.findings],
            "explained": [_finding_json(f) for f in self.explained if f.code != "ADC008"],
            "unexplained": [_finding_json(f) for f in self.explained if f.code == "ADC008"],
            "notes": list(self.notes),
        }


def _side_json(cfg: EffectiveConfig | None) -> dict[str, Any] | None:
    if cfg is None:
        return None
    return {**cfg.source.to_json(), "transforms": len(cfg.transforms)}


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "category": f.category,
        "severity": f.severity.value,
        "message": f.message,
        "transform": f.transform,
        "stage": f.stage,
        "gating": f.gating,
        "explained_by": f.explained_by,
        "evidence": {k: v for k, v in f.evidence},
    }


__all__ = [
    "ConfigAnalysis",
    "ConfigChange",
    "ConfigCheck",
    "ConfigDiff",
    "ConfigSource",
    "EffectiveConfig",
    "KeyPath",
    "TransformConfigChange",
    "dotted",
    "show_value",
]
