"""The facts each kind contributes to the accounting pass (docs/accounting.md), and the typed evidence the
coverage relation reads.

The accounting compares what the runs *did*, never how they printed it: every kind inventories the facts of
its own input (the log kind each rank's transform results and the lines no reader claims; the graph kind the
canonical dumps; the tensor kind the recorded tensors; the config kind the effective config keys) and hands
them over as :class:`Facts`. A kind the user switched off (``--no-tensors``, ``--no-graphs``) or that found
no input contributes nothing. Kinds fill the part of :class:`Evidence` that is about their own input; the
coverage relation (``ad_diff.explain.accounting.coverage``) reads it, and nothing reads another kind's
section or parses a finding's message.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ad_diff.core.model import Finding, Severity
from ad_diff.core.rules import Role
from ad_diff.core.words import WordEnum


class Item(WordEnum):
    """What sort of inventoried fact differs. The value is the JSON ``accounting.*.item``."""

    FILE = "file"
    """A file (by path relative to the run folder) that no kind reads, or that is in one run only."""
    LOG_LINE = "log_line"
    """A line a transform logged that no reader claims (level and message, no logger prefix), after the
    line normalisers, present in one run more often than in the other."""
    TRANSFORM = "transform"
    """One rank's result of one transform (key ``rank/transform#occurrence``): state and match count."""
    DUMP = "dump"
    """One graph dump (by transform key), compared after the dump normaliser."""
    TENSOR = "tensor"
    """One recorded tensor or reference entry (``file:name``): dtype, shape and a hash of its bytes."""
    CONFIG = "config"
    """One key of the effective AD config, flattened (``transforms.fuse_gemms.enabled``)."""
    RUN_INFO = "run_info"
    """One key of ``run.json`` (written by ``ad-diff record``), flattened."""


@dataclass(frozen=True, slots=True)
class Difference:
    """One inventoried fact that is not the same in both runs (``None`` on a side: absent there)."""

    item: Item
    subject: str
    """What differs, as a reader names it (``rank 0 match_rope_pattern result``)."""
    baseline: str | None
    candidate: str | None
    transform: str | None = None
    stage: str | None = None
    node: str | None = None
    tensor: str | None = None
    rank: int | None = None
    key: str = ""
    """The raw key (a config path, a file path, a dump key): what noise rules match on."""

    def values(self) -> str:
        """``a -> b`` with absent sides spelled out."""
        b = "absent" if self.baseline is None else self.baseline
        c = "absent" if self.candidate is None else self.candidate
        return f"{b} -> {c}"


CANONICAL_DUMPS = "fx-counter-renames"
"""The noise rule a kind's dump normalisation implements: every node named by its FX base and rank, so a
consistent renaming is no difference (the graph kind counts what it absorbs under this name)."""

SaidKey = tuple["int | None", str, str, int]
"""``(rank, stage, transform, occurrence)``: whose unclaimed log lines a :attr:`Facts.said` entry holds."""


@dataclass
class Facts:
    """What one kind contributes to the accounting of one comparison."""

    differences: list[Difference] = field(default_factory=list)
    """The facts of its input that differ between the runs (after the normalisation the kind owns, such as
    a dump's canonical form)."""
    sizes: list[tuple[Item, int, int]] = field(default_factory=list)
    """``(item, baseline count, candidate count)`` for each item kind it inventoried."""
    absorbed: Counter[str] = field(default_factory=Counter)
    """Noise rule name -> differences the kind's own normalisation absorbed (``fx-counter-renames``)."""
    notes: list[str] = field(default_factory=list)
    said: tuple[dict[SaidKey, Counter[str]], dict[SaidKey, Counter[str]]] | None = None
    """Baseline's and candidate's log lines no reader claims, raw: the accounting's line normalisers run
    over them before they are compared (the log kind's contribution)."""

    def compare(self, item: Item, b: dict[str, Any], c: dict[str, Any],
                make: Callable[[str, Any, Any], Difference]) -> None:
        """Compare two ``{key: value}`` inventories of ``item``; ``make(key, bvalue, cvalue)`` builds each
        difference (in key order)."""
        self.sizes.append((item, len(b), len(c)))
        for key in sorted(b.keys() | c.keys()):
            bv, cv = b.get(key), c.get(key)
            if bv != cv:
                self.differences.append(make(key, bv, cv))


def flatten(data: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(dotted.path, value as JSON)`` for every leaf of a mapping (lists are one value)."""
    if isinstance(data, dict) and data:
        for k in sorted(data, key=str):
            yield from flatten(data[k], f"{prefix}.{k}" if prefix else str(k))
    elif prefix:
        yield prefix, json.dumps(data, sort_keys=True, default=str)


@dataclass
class Evidence:
    """What the coverage relation and the absorbing noise rules read, gathered once per comparison: the
    findings, indexed, and each kind's typed facts about its own input."""

    findings: list[Finding] = field(default_factory=list)
    by_transform: dict[str, list[Finding]] = field(default_factory=dict)
    by_tensor: dict[str, list[Finding]] = field(default_factory=dict)
    roles: set[Role] = field(default_factory=set)
    """The roles of the findings' rules (filled by the accounting, which looks them up): what coverage
    reads of a rule, never its code."""
    files_named: set[str] = field(default_factory=set)
    """Dump file names findings carry in their evidence (``files``): ADI003, a copy numbered like another."""
    settings_named: set[str] = field(default_factory=set)
    """Config keys the config kind's setting-changed findings carry (``setting``)."""
    # -- the log kind's facts --
    record_diffs: set[str] = field(default_factory=set)
    """Transforms whose result differs on some rank."""
    primary: set[int | None] = field(default_factory=set)
    ranks: set[tuple[str, int | None]] = field(default_factory=set)
    """``(run, rank)`` of every rank with transform lines."""
    stopped: set[tuple[str, int | None]] = field(default_factory=set)
    """``(run, rank)`` of the ranks whose pipeline did not end complete (crashed, cut, stopped, empty)."""
    restored_transforms: set[str] = field(default_factory=set)
    """Transforms a run did not execute because it restored a cached graph past them."""
    restarted: set[str] = field(default_factory=set)
    """Runs whose log started the pipeline more than once (the last attempt is compared)."""
    # -- the graph kind's facts --
    dump_diffs: set[str] = field(default_factory=set)
    """Dump keys (``stage/transform#n``) whose dumps differ after normalisation, or exist in one run only."""
    dump_transforms: set[str] = field(default_factory=set)
    """Transforms of :attr:`dump_diffs`."""
    upstream: dict[str, str | None] = field(default_factory=dict)
    """Dump key -> the dump key before it in pipeline order (``None`` for the first dump)."""
    dump_of: dict[str, str] = field(default_factory=dict)
    """Transform -> its (first) dump key, for transforms both runs dumped."""
    renamed_only: set[str] = field(default_factory=set)
    """Dump keys the graph kind aligned node for node with nothing unmatched, rewired, split or changed: the
    dumps differ in node names alone."""
    split_only: set[str] = field(default_factory=set)
    """Dump keys whose graphs differ only in how compile_model split them into pieces."""
    restored_dumps: set[str] = field(default_factory=set)
    unreadable_dumps: set[str] = field(default_factory=set)
    """Dump keys one run's dump of could not be parsed (the graph kind reports each: ADG009)."""
    moved: set[str] = field(default_factory=set)
    """Transforms the runs ran at another place in the pipeline (the graph kind's ``moved``)."""
    # -- the tensor kind's facts --
    tensors_within: set[str] = field(default_factory=set)
    """Tensor keys (``file:name``) the tensor kind judged identical or within tolerance."""
    user_reference: bool = False
    """``--reference DIR`` judges the candidate: the runs' own references are not used (a note says so)."""
    # -- the config kind's facts --
    config_diffs: set[str] = field(default_factory=set)
    """Transforms with a key under ``transforms.<t>.`` that differs."""
    same_world_size: bool = False
    """Both runs' configs declare the same ``world_size``: a rank logged by one run only is then missing."""
    config_one_sided: bool = False
    """One run has an AD config and the other none, and the config kind reported it."""

    def add_findings(self, findings: list[Finding]) -> None:
        """Index ``findings`` by what they name."""
        self.findings += findings
        for f in findings:
            if f.transform:
                self.by_transform.setdefault(f.transform, []).append(f)
            if f.tensor:
                self.by_tensor.setdefault(f.tensor, []).append(f)
            ev = dict(f.evidence)
            for row in ev.get("nodes") or ():  # one finding naming several captures (ADT013)
                name = row[0] if isinstance(row, list | tuple) and row else row
                if isinstance(name, str) and name != f.tensor:
                    self.by_tensor.setdefault(name, []).append(f)
            for name in _strings(ev.get("tensors")):  # one finding about several tensors (ADT009)
                self.by_tensor.setdefault(name, []).append(f)
            for name in _strings(ev.get("files")):
                self.files_named.add(name)
            for key in _strings(ev.get("setting")):
                self.settings_named.add(key)

    def named(self, transform: str | None, errors_only: bool = False, warnings: bool = False) -> bool:
        """A finding names ``transform`` (of severity error, or error or warning, when asked)."""
        fs = self.by_transform.get(transform or "", [])
        if errors_only:
            ok = {Severity.ERROR, Severity.WARNING} if warnings else {Severity.ERROR}
            return any(f.severity in ok for f in fs)
        return bool(fs)

    def explained(self, transform: str | None) -> bool:
        """A finding names ``transform`` and something explained it (a config change, a run-level event)."""
        return any(f.explained_by for f in self.by_transform.get(transform or "", []))

    def quoted(self, *names: str | None) -> bool:
        """A finding's evidence names one of the dump files ``names``."""
        return any(n in self.files_named for n in names if n)

    def graph_silent(self, transform: str | None) -> bool:
        """Both runs dumped the graph before and after ``transform`` and neither dump differs."""
        key = self.dump_of.get(transform or "")
        if key is None or key in self.dump_diffs:
            return False
        up = self.upstream.get(key)
        return up is not None and up not in self.dump_diffs

    def graph_differs_at(self, transform: str | None) -> bool:
        """A dump of ``transform`` differs between the runs, or the next dump after it does."""
        key = self.dump_of.get(transform or "")
        if key is None:
            return False
        after = next((k for k, up in self.upstream.items() if up == key), None)
        return key in self.dump_diffs or (after is not None and after in self.dump_diffs)

    def missing_rank(self, d: Difference) -> bool:
        """``d`` is a result absent from a run that stopped early (its incomplete-run finding accounts for
        it) or from a rank the other run does not have while the world size may have changed."""
        side = "baseline" if d.baseline is None else "candidate" if d.candidate is None else None
        if side is None:
            return False
        if (side, d.rank) in self.stopped and Role.RUN_STOPPED in self.roles:
            return True
        rank_absent = (side, d.rank) not in self.ranks
        if rank_absent and Role.RANK_SILENT in self.roles:  # the config's world size names the rank
            return True
        return rank_absent and not self.same_world_size and Role.WORLD_SIZE_CHANGED in self.roles


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


__all__ = ["CANONICAL_DUMPS", "Difference", "Evidence", "Facts", "Item", "SaidKey", "flatten"]
