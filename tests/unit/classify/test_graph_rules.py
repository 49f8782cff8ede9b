"""Graph rules: stable unique codes, valid categories, documented."""

from __future__ import annotations

from ad_diff.core.rules import CATEGORIES
from ad_diff.kinds.graph.rules import RULES


def test_codes_unique_ordered_and_documented() -> None:
    codes = [r.code for r in RULES]
    assert codes == sorted(set(codes)) and all(c.startswith("ADG") for c in codes)
    for r in RULES:
        assert r.category in CATEGORIES
        assert len(r.doc.split()) >= 25, r.code
