"""The accounting pass's vocabulary: an inventoried difference, a noise rule, and what the pass reports.

See docs/accounting.md for the inventory, the coverage relation and every noise rule.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core.jsonable import json_omit
from ad_diff.core.words import WordEnum

if TYPE_CHECKING:
    from ad_diff.explain.accounting.coverage import Evidence


class Item(WordEnum):
    """What sort of inventoried thing differs. The value is the JSON ``accounting.*.item``."""

    FILE = "file"
    """A file (by path relative to the run folder) that no kind reads, or that is in one run only."""
    LOG_LINE = "log_line"
    """A line of the log, after the line normalisers, present in one run more often than in the other."""
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
    """One inventoried thing that is not the same in both runs (``None`` on a side: absent there)."""

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


Normaliser = Callable[[str, Path], str]
"""Rewrites one text (a log line, a dump line) of the run rooted at the path into its noise-free form."""
Predicate = Callable[[Difference, "Evidence"], bool]
"""Whether a difference left after normalisation is noise, given what the kinds measured."""


@dataclass(frozen=True)
class NoiseRule:
    """One named, documented reason a difference is not a difference. Rules are data: the pass applies them
    in order and counts what each absorbs; docs/accounting.md lists them (a test keeps the two in sync).

    A rule either *normalises* text before comparing (``normalise``: log lines, dump lines) or *absorbs* a
    difference left after normalisation (``absorbs``)."""

    name: str
    description: str
    item: Item
    normalise: Normaliser | None = field(default=None, compare=False)
    absorbs: Predicate | None = field(default=None, compare=False)


def substitute(pattern: str, repl: str, needs: tuple[str, ...] = (), guard: str | None = None) -> Normaliser:
    """A normaliser replacing every match of ``pattern`` with ``repl`` (run-independent).

    ``needs``: substrings of which every match holds at least one; a text holding none is returned as it is
    without running the pattern (every log line passes every normaliser, and most match none). ``guard``: a
    pattern every match holds a match of, for a rule with no such substring, cheaper to search for than the
    rule's own (it begins with a rare character class).
    """
    sub = functools.partial(re.compile(pattern).sub, repl)
    if guard is not None:
        look = re.compile(guard).search
        return lambda text, _root: sub(text) if look(text) else text
    if not needs:
        return lambda text, _root: sub(text)
    if len(needs) == 1:  # the common case, without a generator per line
        need = needs[0]
        return lambda text, _root: sub(text) if need in text else text
    return lambda text, _root: sub(text) if any(n in text for n in needs) else text


@dataclass(frozen=True, slots=True)
class RuleCount:
    """How many differences one noise rule absorbed in one comparison."""

    rule: str
    item: Item
    absorbed: int
    description: str


@dataclass(frozen=True, slots=True)
class Accounting:
    """What the accounting pass found: inventory sizes, noise absorbed per rule, and what no one explains.

    Serialised as the JSON report's ``accounting`` object (docs/report-schema.md)."""

    inventory: tuple[tuple[str, int, int], ...]
    """``(item, baseline count, candidate count)`` for every inventoried item kind."""
    differences: int
    """Differences found after normalisation (before coverage and the absorbing rules)."""
    covered: int
    """Differences a finding accounts for (docs/accounting.md, coverage relation)."""
    noise: tuple[RuleCount, ...]
    """Every noise rule, in rule order, with how much it absorbed (zero included)."""
    unaccounted: int
    """Differences left: each is named by an ``unaccounted difference`` finding (grouped per subject)."""
    notes: tuple[str, ...] = ()
    examples: tuple[Difference, ...] = field(default=(), metadata=json_omit())

    def as_json(self) -> dict[str, Any]:
        """The ``accounting`` object of the JSON report."""
        return {
            "inventory": {k: {"baseline": b, "candidate": c} for k, b, c in self.inventory},
            "differences": self.differences,
            "covered": self.covered,
            "unaccounted": self.unaccounted,
            "noise_rules": [
                {"rule": r.rule, "item": r.item.value, "absorbed": r.absorbed, "description": r.description}
                for r in self.noise
            ],
            "notes": list(self.notes),
        }
