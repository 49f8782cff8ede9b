"""Every rule of ad-diff in one ordered tuple; docs/rules.md documents each (a test keeps them in sync)."""

from __future__ import annotations

from ad_diff.core.rules import Rule
from ad_diff.explain import rules as expect_rules
from ad_diff.kinds.config import rules as config_rules
from ad_diff.kinds.graph import folder as input_rules
from ad_diff.kinds.graph import rules as graph_rules
from ad_diff.kinds.log import rules as log_rules
from ad_diff.kinds.tensors import rules as tensor_rules

RULES: tuple[Rule, ...] = (
    log_rules.RULES + input_rules.RULES + graph_rules.RULES + tensor_rules.RULES + config_rules.RULES
    + expect_rules.RULES
)

BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}
