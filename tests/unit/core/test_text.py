"""The text sniff every log passes (``core.text.check_text``): binary is refused by the documented rule,
whichever way the rule is computed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ad_diff.core.text import SNIFF, check_text
from ad_diff.errors import InputError


def _is_text_by_definition(head: bytes) -> bool:
    """The rule as the docstring states it: no NUL in the sniffed head, and at least 85% of its bytes
    printable, high (UTF-8), tab, newline, carriage return or ESC."""
    head = head[:SNIFF]
    if b"\x00" in head:
        return False
    ok = sum(1 for b in head if b >= 32 or b in (9, 10, 13, 27))
    return not head or ok / len(head) >= 0.85


@given(st.binary(max_size=SNIFF + 64) | st.text(max_size=2000).map(lambda s: s.encode("utf-8")))
def test_check_text_follows_its_rule(head: bytes) -> None:
    path = Path("run/ad.log")
    if _is_text_by_definition(head):
        check_text(head, path, "an AutoDeploy log")
    else:
        with pytest.raises(InputError, match=r"looks binary .*expected an AutoDeploy log"):
            check_text(head, path, "an AutoDeploy log")


def test_the_boundary_of_the_share() -> None:
    path = Path("x.log")
    check_text(b"a" * 85 + b"\x01" * 15, path, "a log")  # exactly 85% text
    with pytest.raises(InputError):
        check_text(b"a" * 84 + b"\x01" * 16, path, "a log")
