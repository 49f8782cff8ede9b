"""Every rule of ad-diff in one ordered tuple; docs/rules.md documents each (a test keeps them in sync)."""

from __future__ import annotations

from ad_diff.classify import config_rules, expect_rules, graph_rules, input_rules, log_rules, tensor_rules
from ad_diff.classify.base import Rule

RULES: tuple[Rule, ...] = (
    log_rules.RULES + input_rules.RULES + graph_rules.RULES + tensor_rules.RULES + config_rules.RULES
    + expect_rules.RULES
)

BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}
