"""The config kind's facts for the accounting pass (:class:`ad_diff.core.facts.Facts`): every key of each
run's effective AD config, flattened (``transforms.fuse_gemms.enabled``), with AD's default ``enabled: true``
filled in so that spelling the default out is no difference."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ad_diff.core.facts import Difference, Evidence, Facts, Item, flatten
from ad_diff.core.kindfacts import ConfigFacts, SettingChange
from ad_diff.kinds.config.compare import _normalised
from ad_diff.kinds.config.model import ConfigAnalysis, ConfigChange

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context


def _transform(key: str) -> str | None:
    parts = key.split(".")
    return parts[1] if parts[0] == "transforms" and len(parts) > 2 else None


def facts(a: ConfigAnalysis, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
    """Both runs' config keys; fills the config part of ``ev``. ``ignored``: transforms left out with
    ``--ignore-transform`` (their keys are no facts)."""
    out = Facts()
    # any YAML value (a mapping, a list) may stand where a number belongs: compared as text, never hashed
    sizes = {repr(cfg.data.get("world_size")) for cfg in (a.baseline, a.candidate) if cfg is not None}
    both = a.baseline is not None and a.candidate is not None
    ev.same_world_size = both and len(sizes) == 1 and repr(None) not in sizes
    if (a.baseline is None) != (a.candidate is None):
        ev.config_one_sided = True
        out.sizes.append((Item.CONFIG, int(a.baseline is not None), int(a.candidate is not None)))
        out.differences.append(Difference(Item.CONFIG, "AD config", "present" if a.baseline else None,
                                          "present" if a.candidate else None))
        return out
    b = {k: v for k, v in flatten(_normalised(a.baseline.data)) if _transform(k) not in ignored} \
        if a.baseline else {}
    c = {k: v for k, v in flatten(_normalised(a.candidate.data)) if _transform(k) not in ignored} \
        if a.candidate else {}

    def make(key: str, bv: Any, cv: Any) -> Difference:
        return Difference(Item.CONFIG, f"config key {key}", bv, cv, transform=_transform(key), key=key)

    out.compare(Item.CONFIG, b, c, make)
    ev.config_diffs = {d.transform for d in out.differences if d.transform}
    return out


def for_other_kinds(a: ConfigAnalysis) -> ConfigFacts:
    """The keys that differ, for the other kinds (:class:`ad_diff.core.facts.ConfigFacts`)."""
    if a.diff is None:
        return ConfigFacts()
    pairs: list[tuple[ConfigChange, str | None]] = [(c, None) for c in a.diff.settings]
    pairs += [(c, t.transform) for t in a.diff.transforms for c in t.changes]
    return ConfigFacts(tuple(
        SettingChange(c.key, t, c.kind.value, c.before_text, c.after_text, c.origin() or "")
        for c, t in pairs))


__all__ = ["facts", "for_other_kinds"]
