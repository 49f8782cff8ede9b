"""Frozen dataclasses for the configuration analysis: which AD config each run used, how the two differ,
and whether each run's log agrees with its own config.

Flow: ``parse`` builds one :class:`EffectiveConfig` per run (from an effective dump or by merging layers,
:class:`ConfigSource` says which); ``compare.analyze_config`` turns two of them plus the logs into a
:class:`ConfigAnalysis` (measurements only); ``classify.classify`` turns that into ADC findings and
``explain.explain_findings`` marks log findings as explained (or not) by config. The JSON form of every
model comes from :mod:`ad_diff.core.jsonable` through the field metadata below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ad_diff.core.jsonable import json_as, json_omit, json_with
from ad_diff.core.model import Finding, RunId
from ad_diff.core.words import WordEnum

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


class SourceKind(WordEnum):
    """How a run's effective config was obtained."""

    EFFECTIVE = "effective"
    """One file taken as the whole merged config (an effective dump or an explicit file)."""
    LAYERED = "layered"
    """Layer files deep-merged here, in AD's order."""


class ChangeKind(WordEnum):
    """What kind of difference one :class:`ConfigChange` is."""

    ENABLED = "enabled"
    """A transform's ``enabled`` flipped."""
    STAGE = "stage"
    """A transform's ``stage`` moved."""
    OPTION = "option"
    """Another field of a transform entry changed."""
    ADDED = "added"
    """The key exists in the candidate config only."""
    REMOVED = "removed"
    """The key exists in the baseline config only."""
    SETTING = "setting"
    """A top-level (non-``transforms``) setting changed value."""


class CheckKind(WordEnum):
    """How one run's config disagrees with the same run's log."""

    ENABLED_BUT_DISABLED = "enabled_but_disabled"
    """The config enables the transform, the log says ``disabled``."""
    ENABLED_BUT_ABSENT = "enabled_but_absent"
    """The config enables the transform, a log that ended normally never shows it."""
    DISABLED_BUT_RAN = "disabled_but_ran"
    """The config disables the transform, the log shows it applied, skipped or failed."""
    STAGE_MISMATCH = "stage_mismatch"
    """The config's ``stage`` differs from the stage the log ran it in."""
    NOT_IN_CONFIG = "not_in_config"
    """The log shows the transform, no file of a complete config mentions it."""
    RANKS_MISSING = "ranks_missing"
    """The config's ``world_size`` names ranks of which the log (recording several ranks) has no result."""


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """Which files made one run's configuration, in the order they were applied."""

    kind: SourceKind
    files: tuple[str, ...]
    """Display names (relative to the run folder when inside it), in merge order; later wins."""
    order_rule: str
    """Sentence saying how the order was decided (order file, registry, default rule, explicit path)."""
    complete: bool
    """True when the config covers the whole pipeline (an effective dump, or layers including
    ``default.yaml``); only then can a transform missing from the config be reported."""
    notes: tuple[str, ...] = ()
    """Sentences about files ignored or order decisions (shown in every report)."""


@dataclass(frozen=True, slots=True)
class EffectiveConfig:
    """One run's effective AD configuration (after merging), with where each value came from."""

    source: ConfigSource
    data: dict[str, Any]
    """The merged config as loaded by ``yaml.safe_load`` (treat as read-only)."""
    origins: dict[KeyPath, str] = field(default_factory=dict)
    """For every leaf path a layer set: ``file`` or ``file:line`` of the last layer that set it."""
    _index: tuple[dict[KeyPath, KeyPath], dict[KeyPath, KeyPath]] = field(
        init=False, repr=False, compare=False, metadata=json_omit())

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", _origin_index(self.origins))

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
        last_below, first_below = self._index
        if path in last_below:
            # Several leaves under a key (a whole transform entry): the one set last is the best blame.
            return self.origins[last_below[path]]
        for n in range(len(path) - 1, 0, -1):
            if path[:n] in self.origins:
                return self.origins[path[:n]]
            if n >= 2 and path[:n] in first_below:
                return f"{self.origins[first_below[path[:n]]]} (implicit default)"
        return None


def _origin_index(origins: dict[KeyPath, str]) -> tuple[dict[KeyPath, KeyPath], dict[KeyPath, KeyPath]]:
    """Per key path: the greatest origin path below it, and the first (``stage`` first, then by name).
    Built once, so each :meth:`EffectiveConfig.origin` lookup is bounded by the path's length."""
    last: dict[KeyPath, KeyPath] = {}
    first: dict[KeyPath, KeyPath] = {}
    for p in origins:
        rank = (p[-1] != "stage", p)
        for n in range(1, len(p)):
            prefix = p[:n]
            if prefix not in last or p > last[prefix]:
                last[prefix] = p
            if prefix not in first or rank < (first[prefix][-1] != "stage", first[prefix]):
                first[prefix] = p
    return last, first


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """One difference between the two effective configs."""

    path: KeyPath = field(metadata=json_with(dotted))
    kind: ChangeKind
    before: Any
    after: Any
    baseline_origin: str | None = None
    """File (``file:line``) in the baseline that set the value, when known."""
    candidate_origin: str | None = None

    @property
    def key(self) -> str:
        """Dotted path."""
        return dotted(self.path)

    @property
    def before_text(self) -> str:
        """The baseline value as written in YAML; ``(absent)`` for a key only the candidate has."""
        return "(absent)" if self.kind is ChangeKind.ADDED else show_value(self.before)

    @property
    def after_text(self) -> str:
        """The candidate value as written in YAML; ``(absent)`` for a key only the baseline has."""
        return "(absent)" if self.kind is ChangeKind.REMOVED else show_value(self.after)

    def describe(self) -> str:
        """``transforms.fuse_gemms.enabled: true -> false`` (``(absent)`` for a missing side)."""
        return f"{self.key}: {self.before_text} -> {self.after_text}"

    def origin(self) -> str | None:
        """The file that most likely introduced the change (candidate side first, it is the new one)."""
        return self.candidate_origin or self.baseline_origin


@dataclass(frozen=True, slots=True)
class TransformConfigChange:
    """All config differences of one transform key."""

    __json_extra__ = ("summary",)

    transform: str
    stage: str | None
    """Candidate's stage (baseline's if the key was removed)."""
    changes: tuple[ConfigChange, ...]

    def change(self, kind: ChangeKind) -> ConfigChange | None:
        """The change of ``kind``, if any."""
        return next((c for c in self.changes if c.kind is kind), None)

    @property
    def summary(self) -> str:
        """Short phrase: ``disabled in candidate config``, ``moved post_load_fusion -> cache_init`` ..."""
        parts = []
        for c in self.changes:
            if c.kind is ChangeKind.ENABLED:
                parts.append("enabled in candidate config" if c.after else "disabled in candidate config")
            elif c.kind is ChangeKind.STAGE:
                parts.append(f"moved from stage {c.before} to {c.after} in candidate config")
            elif c.kind is ChangeKind.ADDED:
                parts.append("added in candidate config")
            elif c.kind is ChangeKind.REMOVED:
                parts.append("removed from candidate config")
        n_opts = sum(c.kind is ChangeKind.OPTION for c in self.changes)
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
        return f"{self.transform}: {self.summary} ({'; '.join(details)})"

    def sources(self) -> tuple[str, ...]:
        """Files behind the changes, sorted."""
        return tuple(sorted({c.origin() or "" for c in self.changes} - {""}))


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

    @property
    def identical(self) -> bool:
        """True when the two effective configs do not differ at all."""
        return not self.transforms and not self.settings


@dataclass(frozen=True, slots=True)
class ConfigCheck:
    """A disagreement between one run's config and the same run's log."""

    run: RunId
    transform: str
    kind: CheckKind
    config_value: str = field(metadata=json_as("config"))
    """What the config says (``enabled``, ``disabled``, ``stage post_load_fusion``, ``(not mentioned)``)."""
    log_value: str = field(metadata=json_as("log"))
    """What the log says (``disabled``, ``applied (12 matches)``, ``absent``, ``stage cache_init``)."""
    origin: str | None = None
    """File (``file:line``) behind the config value."""
    log_line: int | None = None
    stage: str | None = None
    """The stage the log ran the transform in (the config's, when the log does not show it)."""
    config_stage: str | None = field(default=None, metadata=json_omit())
    """The stage the config gives the transform (for ``stage_mismatch``)."""
    suggestions: tuple[str, ...] = field(default=(), metadata=json_omit())
    """For ``enabled_but_absent``: the transform keys the runs know that this key is one typo away from
    (the finding's ``did_you_mean`` evidence)."""


def _side_summary(cfg: EffectiveConfig | None) -> dict[str, Any] | None:
    """A run's config in the JSON report: where it came from and how many transform entries it has."""
    if cfg is None:
        return None
    s = cfg.source
    return {"kind": s.kind, "files": s.files, "order_rule": s.order_rule, "complete": s.complete,
            "notes": s.notes, "transforms": len(cfg.transforms)}


def _finding_summaries(findings: tuple[Finding, ...]) -> list[dict[str, Any]]:
    """Findings as the config section's JSON lists them (the full form is in the report's ``findings``)."""
    return [{"code": f.code, "category": f.category, "severity": f.severity, "message": f.message,
             "transform": f.transform, "stage": f.stage, "gating": f.gating, "explained_by": f.explained_by,
             "evidence": dict(f.evidence)} for f in findings]


@dataclass(frozen=True, slots=True)
class ConfigAnalysis:
    """Everything the configuration step measured; carried in ``DiffResult.sections["config"]``."""

    baseline: EffectiveConfig | None = field(metadata=json_with(_side_summary))
    candidate: EffectiveConfig | None = field(metadata=json_with(_side_summary))
    diff: ConfigDiff | None
    """``None`` when either run has no config."""
    checks: tuple[ConfigCheck, ...]
    """Config-vs-log disagreements of both runs (baseline first, then pipeline order)."""
    notes: tuple[str, ...] = ()
    complete_logs: tuple[RunId, ...] = field(default=(), metadata=json_omit())
    """Runs whose log ended normally, so a transform absent there really did not run."""
    pipeline: tuple[str, ...] = field(default=(), metadata=json_omit())
    """Transform keys in pipeline order (logs first, then config-only keys by stage)."""
    findings: tuple[Finding, ...] = field(default=(), metadata=json_with(_finding_summaries))
    """After the explain stage: the findings of the config rules (ADC0xx) about the configs and the checks."""
    explained: tuple[Finding, ...] = field(default=(), metadata=json_with(_finding_summaries))
    """After the explain stage: the findings a config change explains (sorted)."""
    unexplained: tuple[Finding, ...] = field(default=(), metadata=json_with(_finding_summaries))
    """After the explain stage: the ``ADC008`` findings, state changes no config change explains."""


__all__ = [
    "ChangeKind",
    "CheckKind",
    "ConfigAnalysis",
    "ConfigChange",
    "ConfigCheck",
    "ConfigDiff",
    "ConfigSource",
    "EffectiveConfig",
    "KeyPath",
    "SourceKind",
    "TransformConfigChange",
    "dotted",
    "show_value",
]
