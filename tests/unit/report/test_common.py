"""report/common.py: every category can be counted in the headline."""

from __future__ import annotations

import pytest

from ad_diff.core.model import Category
from ad_diff.report.common import NOUNS, Count


@pytest.mark.parametrize("category", list(Category))
def test_every_category_reads_in_the_counts_line(category: Category) -> None:
    # a category without a noun crashed every report that counted one (found by fuzzing: shape_change)
    assert category in NOUNS
    assert Count(category, 2).text().startswith("2 ")
