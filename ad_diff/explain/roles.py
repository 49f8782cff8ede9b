"""Every rule of ad-diff by its code, and what a finding is to the passes over all findings: its rule's role
(:class:`~ad_diff.core.rules.Role`), how well it names a cause (``heads``) and what it yields to
(``yields_to``). The passes (grouping, titles, links, the reports, the history) ask here and never branch on a
rule code: a rule's part is data on the rule, written once in its kind's ``rules.py``.

The pipeline's own rules first, then each kind's in registry order, then the explain passes'.
"""

from __future__ import annotations

from collections.abc import Iterable

from ad_diff.core import rules as core_rules
from ad_diff.core.model import Finding
from ad_diff.core.rules import NAMES_NO_CAUSE, Role, Rule
from ad_diff.explain import rules as explain_rules
from ad_diff.explain.accounting import rules as accounting_rules
from ad_diff.kinds import KINDS

RULES: tuple[Rule, ...] = (
    core_rules.RULES + tuple(r for kind in KINDS for r in kind.rules) + explain_rules.RULES
    + accounting_rules.RULES
)

BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}


def role(f: Finding) -> Role:
    """The role of ``f``'s rule (:attr:`Role.NONE` for a code no rule has)."""
    rule = BY_CODE.get(f.code)
    return rule.role if rule is not None else Role.NONE


def has(f: Finding, *roles: Role) -> bool:
    """Whether ``f``'s rule has one of ``roles``."""
    return role(f) in roles


def heads(f: Finding) -> int:
    """How well ``f`` names its group's cause (:attr:`Rule.heads`: lower first)."""
    rule = BY_CODE.get(f.code)
    return rule.heads if rule is not None else NAMES_NO_CAUSE


def first(findings: Iterable[Finding], *roles: Role) -> Finding | None:
    """The first of ``findings`` whose rule has one of ``roles``."""
    return next((f for f in findings if has(f, *roles)), None)


def yielded(findings: list[Finding]) -> list[Finding]:
    """``findings`` without those whose rule yields to a role another finding at the same transform has
    (:attr:`Rule.yields_to`: one event two kinds saw is reported once, by the kind that saw more of it)."""
    at = {(role(f), f.transform) for f in findings if f.transform}
    return [f for f in findings
            if not ((y := _yields_to(f)) is not Role.NONE and (y, f.transform) in at)]


def _yields_to(f: Finding) -> Role:
    rule = BY_CODE.get(f.code)
    return rule.yields_to if rule is not None else Role.NONE
