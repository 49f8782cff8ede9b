"""Names as the alignment compares them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.kinds.graph.names import STRIPPED, strip_counter

_COUNTER = re.compile(r"_\d+$")


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab_0179") + ["\u0663", "\u00b2", "\u0661"]), max_size=10))
def test_strip_counter_is_the_pattern(name: str) -> None:
    """The memo's string form is what the ``_<digits>$`` pattern removes, for ASCII and other digits alike."""
    want = _COUNTER.sub("", name) if name[-1:].isdigit() else name
    assert strip_counter(name) == want
    assert STRIPPED[name] == want


def test_strip_counter_examples() -> None:
    assert strip_counter("linear_13") == "linear"
    assert strip_counter("a_1_2") == "a_1"
    assert strip_counter("x12") == "x12"
    assert strip_counter("model_layers_0_q_weight") == "model_layers_0_q_weight"
