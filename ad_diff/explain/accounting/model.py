"""The accounting pass's vocabulary: an inventoried difference, a noise rule, and what the pass reports.

See docs/accounting.md for the inventory, the coverage relation and every noise rule.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ad_diff.core.facts import Difference, Evidence, Item
from ad_diff.core.jsonable import json_omit

Normaliser = Callable[[str, Path], str]
"""Rewrites one text (a log line, a dump line) of the run rooted at the path into its noise-free form."""
Predicate = Callable[[Difference, Evidence], bool]
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
    unrecognised: int = 0
    """Unclaimed log lines left that differ: listed as warnings, never gating."""
    notes: tuple[str, ...] = ()
    switched_off: tuple[str, ...] = ()
    """Kinds the user switched off (``--no-tensors``, ``--no-graphs``): their inputs are no facts here."""
    examples: tuple[Difference, ...] = field(default=(), metadata=json_omit())

    def as_json(self) -> dict[str, Any]:
        """The ``accounting`` object of the JSON report."""
        return {
            "inventory": {k: {"baseline": b, "candidate": c} for k, b, c in self.inventory},
            "differences": self.differences,
            "covered": self.covered,
            "unaccounted": self.unaccounted,
            "unrecognised_lines": self.unrecognised,
            "noise_rules": [
                {"rule": r.rule, "item": r.item.value, "absorbed": r.absorbed, "description": r.description}
                for r in self.noise
            ],
            "notes": list(self.notes),
            "switched_off": list(self.switched_off),
        }


__all__ = ["Accounting", "Difference", "Item", "NoiseRule", "RuleCount", "substitute"]
