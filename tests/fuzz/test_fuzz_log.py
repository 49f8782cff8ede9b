"""Property-based tests: mutated real logs never crash the parser with anything but InputError, and the
markdown renderer never lets a hostile name break out of its table cell or inject HTML."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ad_diff.core.escape import md_code, md_escape
from ad_diff.errors import InputError
from ad_diff.kinds.log import parse as log_parser
from tests.conftest import FIXTURES
from tests.fuzz import mutate

SEEDS = [p.read_bytes() for p in sorted((FIXTURES / "parsers/log").glob("*.log"))]
N = mutate.examples(150)


def mutated():  # noqa: ANN201
    """Mutations of this module's seed files (tests/fuzz/mutate.py)."""
    return mutate.mutated(
        SEEDS,
        [
            b"[SUMMARY] ",
            b"matches=",
            b"\x1b[31m",
            b"\r",
            b"\n",
            b"[RANK 1] ",
            b"Traceback (most recent call last):\n",
        ],
        max_ops=8,
        max_insert=40,
    )


@settings(
    max_examples=N,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=mutated())
def test_mutated_logs_parse_or_raise_input_error(tmp_path_factory, data: bytes) -> None:
    p: Path = tmp_path_factory.mktemp("fuzz") / "ad.log"
    p.write_bytes(data)
    try:
        log = log_parser.parse(p)
    except InputError as e:
        error: InputError | None = e
    else:
        error = None
    if error is not None:
        assert str(error).startswith(str(p))  # a refusal names the file
        return
    # Whatever was parsed is internally consistent.
    assert log.transforms
    for r in log.transforms:
        assert r.matches is None or r.matches >= 0
        assert r.line >= 1


@settings(max_examples=N, deadline=None)
@given(text=st.text())
def test_md_escape_keeps_cells_and_html_closed(text: str) -> None:
    out = md_escape(text)
    assert "<" not in out
    assert "\n" not in out
    # every '|' is escaped, so a table cell cannot be split
    assert all(out[i - 1] == "\\" for i, ch in enumerate(out) if ch == "|")


@settings(max_examples=N, deadline=None)
@given(text=st.text())
def test_md_code_span_cannot_be_closed_early(text: str) -> None:
    out = md_code(text)
    fence_len = len(out) - len(out.lstrip("`"))
    inner = out[fence_len:-fence_len]
    assert "`" * fence_len not in inner
    assert "\n" not in out
