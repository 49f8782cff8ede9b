"""Graph rules: stable unique codes, valid categories, documented."""

from __future__ import annotations

from ad_diff.core.model import Category
from ad_diff.kinds.graph import GRAPH
from ad_diff.kinds.graph.rules import FOLDER_RULES, RULES


def test_codes_unique_ordered_and_documented() -> None:
    codes = [r.code for r in RULES]
    assert codes == sorted(set(codes))
    assert all(c.startswith("ADG") for c in codes)
    assert [r.code for r in FOLDER_RULES] == ["ADI002", "ADI003", "ADI004", "ADI005"]
    for r in RULES + FOLDER_RULES:
        assert isinstance(r.category, Category)
        assert len(r.doc.split()) >= 25, r.code


def test_the_kind_declares_every_rule_once() -> None:
    assert GRAPH.rules == FOLDER_RULES + RULES
