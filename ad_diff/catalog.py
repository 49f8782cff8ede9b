"""Every rule of ad-diff in one ordered tuple; docs/rules.md documents each (a test keeps them in sync).

The pipeline's own rules first, then each kind's in registry order, then the explain passes'.
"""

from __future__ import annotations

from ad_diff.core import rules as core_rules
from ad_diff.core.rules import Rule
from ad_diff.explain import rules as explain_rules
from ad_diff.explain.accounting import rules as accounting_rules
from ad_diff.kinds import KINDS

RULES: tuple[Rule, ...] = (
    core_rules.RULES + tuple(r for kind in KINDS for r in kind.rules) + explain_rules.RULES
    + accounting_rules.RULES
)

BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}
