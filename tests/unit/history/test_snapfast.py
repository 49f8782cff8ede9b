"""The fast snapshot reader reads exactly what the YAML reader reads, or declines (returns None)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ad_diff.core.model import State
from ad_diff.discover import snapshot
from ad_diff.errors import InputError
from ad_diff.history import snapfast
from ad_diff.history.columns import NO_COUNT, ROW, STATES, Columns

IDENT = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)
TRICKY = st.sampled_from(
    [
        "yes",
        "No",
        "null",
        "NULL",
        "on",
        "~",
        "1",
        "007",
        "1.5",
        "2024-01-01",
        "a b",
        "x:y",
        "#x",
        "'q'",
        "-",
        "ünï",
        "",
        " lead",
        "a\nb",
        ".inf",
        "y",
        "n",
        "Off",
        "_",
        "e1",
    ]
)
NAME = st.one_of(IDENT, IDENT, IDENT, TRICKY, st.text(max_size=8))
SCALAR = st.one_of(IDENT, TRICKY, st.text(max_size=12), st.integers(0, 99), st.none())


@st.composite
def snapshot_data(draw: Any, names: Any = NAME, scalars: Any = SCALAR) -> dict[str, Any]:
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        row: dict[str, Any] = {
            "stage": draw(names),
            "transform": draw(names),
            "state": draw(st.sampled_from([s.value for s in State])),
            "matches": draw(st.one_of(st.none(), st.integers(0, 10**6))),
        }
        occ = draw(st.integers(0, 3))
        if occ:
            row["occurrence"] = occ
        rows.append(row)
    data: dict[str, Any] = {
        "ad_diff_snapshot": 1,
        "tool": draw(scalars),
        "source": draw(scalars),
        "log": draw(scalars),
        "rank": draw(st.one_of(st.none(), st.integers(0, 7))),
        "log_formats": draw(st.lists(st.sampled_from(["V0", "V3"]), max_size=2)),
        "log_prefixes": draw(st.lists(scalars, max_size=2)),
        "end": draw(st.sampled_from(["complete", "crashed", "truncated"])),
        "end_detail": draw(scalars),
        "transforms": rows,
    }
    if draw(st.booleans()):
        data["metadata_coverage"] = {
            f"{r['stage']}/{r['transform']}": {"nodes": 3, "with_meta": 2, "args": 1, "args_with_meta": 0}
            for r in rows
        }
    return data


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("snapfast")


def _fast(text: str) -> tuple[Any, ...] | None:
    cols = Columns()
    got = snapfast.read(text, cols)
    if got is None:
        return None
    rows = tuple(
        (cols.stages.names[s], cols.transforms.names[t], o, STATES[x], None if c == NO_COUNT else c)
        for s, t, o, x, c in ROW.iter_unpack(got.rows)
    )
    return got.end, got.end_detail, rows


def _slow(path: Path) -> tuple[Any, ...] | None:
    try:
        _, log = snapshot.load_as_run(path)
    except InputError:
        return None
    return (
        log.end.value,
        log.end_detail,
        tuple((r.stage, r.transform, r.occurrence, r.state.value, r.matches) for r in log.transforms),
    )


def _check(workdir: Path, text: str) -> tuple[Any, ...] | None:
    path = workdir / "s.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    fast = _fast(text)
    if fast is not None:
        assert fast == _slow(path)
    return fast


@settings(
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
)
@given(data=snapshot_data())
def test_fast_reader_agrees_with_yaml(workdir: Path, data: dict[str, Any]) -> None:
    _check(workdir, snapshot.dump(data))


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(data=snapshot_data(names=IDENT.filter(lambda s: s not in snapfast.RESERVED), scalars=IDENT))
def test_canonical_snapshots_take_the_fast_path(workdir: Path, data: dict[str, Any]) -> None:
    data["tool"] = "ad-diff 0.1.0"
    data["source"] = "nightly/llama-3-8b/2025-05-01"
    data["end_detail"] = "27 transforms, last compile/compile_model"
    assert _check(workdir, snapshot.dump(data)) is not None


MUTATIONS = st.sampled_from(
    [
        ":",
        "#",
        "'",
        '"',
        "{",
        "}",
        ",",
        " ",
        "\n",
        "-",
        "[",
        "]",
        "&",
        "*",
        "!",
        "|",
        ">",
        "%",
        "@",
        "`",
        "\t",
        "\r",
        "0",
        "y",
        "\u2028",
        "\x85",
        "",
    ]
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    data=snapshot_data(names=IDENT, scalars=IDENT),
    where=st.floats(0, 1),
    char=MUTATIONS,
    insert=st.booleans(),
)
def test_hand_edited_snapshots_never_read_differently(
    workdir: Path, data: dict[str, Any], where: float, char: str, insert: bool
) -> None:
    text = snapshot.dump(data)
    i = int(where * (len(text) - 1))
    _check(workdir, text[:i] + char + text[i + (0 if insert else 1) :])


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("matches: 4}", "matches: 04}"),  # YAML 1.1 reads 04 as octal
        lambda t: t.replace("transform: fuse_moe", "transform: 'yes'"),
        lambda t: t.replace("\n", "\r\n"),
        lambda t: t.replace("end: complete", "end: 'complete' # edited"),
        lambda t: t.replace("transforms:\n", "transforms: []\nx:\n"),
    ],
)
def test_edits_that_need_the_yaml_reader(workdir: Path, edit: Any) -> None:
    data = {
        "ad_diff_snapshot": 1,
        "tool": "ad-diff 0.1.0",
        "source": "r",
        "log": "ad.log",
        "rank": 0,
        "log_formats": ["V3"],
        "log_prefixes": ["L3"],
        "end": "complete",
        "end_detail": "",
        "transforms": [
            {"stage": "pattern_matcher", "transform": "fuse_moe", "state": "applied", "matches": 4}
        ],
    }
    text = snapshot.dump(data)
    assert _fast(text) is not None
    assert _check(workdir, edit(text)) is None
