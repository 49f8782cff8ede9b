"""Containment at open time (ad_diff.core.openat): a file or folder swapped for a link to outside the run
between any look at it and the read is refused, and nothing outside is read.

The swap is made deterministically: a hook runs at the last moment before the open (the ``lstat`` of
each component inside the walk, or ``refusal`` before the read), replaces the entry with a link to a
file that holds a marker, and the test checks that the marker never comes back and that the error names
the path."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ad_diff.core import openat, safepath
from ad_diff.errors import InputError

MARKER = b"OUTSIDE-MARKER-ghp_" + b"y" * 36


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """A run folder with ad.log and graphs/001_a.txt, and an outside folder with the same names holding
    the marker."""
    run, out = tmp_path / "run", tmp_path / "outside"
    for base, body in ((run, b"# Transform: a\n# Stage: s\ninside\n"), (out, MARKER + b"\n")):
        (base / "graphs").mkdir(parents=True)
        (base / "ad.log").write_bytes(body)
        (base / "graphs" / "001_a.txt").write_bytes(body)
    return run, out


def _swap_file(run: Path, out: Path, rel: str) -> Callable[[], None]:
    def swap() -> None:
        (run / rel).unlink()
        (run / rel).symlink_to(out / rel)
    return swap


def _swap_folder(run: Path, out: Path, rel: str) -> Callable[[], None]:
    def swap() -> None:
        shutil.rmtree(run / rel)
        (run / rel).symlink_to(out / rel)
    return swap


def _hook_after_check(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    """Swap right after the walk's ``lstat`` of a component said it was a plain file or folder, before its
    ``open``: the narrowest window there is."""
    real_stat = os.stat
    done: list[bool] = []

    def stat_then_swap(name: object, *args: object, **kwargs: object) -> os.stat_result:
        st = real_stat(name, *args, **kwargs)  # type: ignore[arg-type]
        if kwargs.get("dir_fd") is not None and not done:
            done.append(True)
            swap()
        return st

    monkeypatch.setattr(openat.os, "stat", stat_then_swap)


@pytest.mark.parametrize(("rel", "swapper"), [
    ("ad.log", _swap_file),
    ("graphs/001_a.txt", _swap_file),
    ("graphs/001_a.txt", _swap_folder),
])
def test_a_swap_between_the_check_and_the_open_is_refused(
    world: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, rel: str,
    swapper: Callable[..., Callable[[], None]],
) -> None:
    run, out = world
    target = rel if swapper is _swap_file else rel.split("/")[0]
    assert safepath.refusal(run / rel, run) is None  # the check says fine
    _hook_after_check(monkeypatch, swapper(run, out, target))
    with pytest.raises(InputError) as e:
        safepath.read_bytes(run / rel, run, "a file of the run")
    assert e.value.path == run / rel
    assert "outside the run folder" in e.value.detail
    assert "MARKER" not in str(e.value)


@pytest.mark.parametrize("rel", ["ad.log", "graphs/001_a.txt"])
def test_a_swap_after_the_listing_is_refused_by_every_reader(world: tuple[Path, Path], rel: str) -> None:
    """The listing (refusal) vetted the entry; the swap comes before the read, whichever reader reads."""
    from ad_diff.discover.capture import open_text
    from ad_diff.kinds.graph.cache import DumpLoader
    from ad_diff.kinds.graph.pair import DumpRef

    run, out = world
    assert safepath.refusal(run / rel, run) is None
    _swap_file(run, out, rel)()
    got: list[bytes] = []
    with pytest.raises(InputError, match="is a symbolic link to a file outside the run folder"), \
            open_text(run / rel, "the AutoDeploy log", run) as (f, _):
        got.append(f.read())
    loaded = DumpLoader().load(DumpRef(run / rel, "s", "a", 0, 1, run))
    assert loaded.dump is None
    assert "outside the run folder" in (loaded.error or "")
    assert got == []


def test_a_swapped_graphs_folder_is_refused_by_the_dump_reader(world: tuple[Path, Path]) -> None:
    from ad_diff.kinds.graph.cache import DumpLoader
    from ad_diff.kinds.graph.pair import DumpRef

    run, out = world
    _swap_folder(run, out, "graphs")()
    loaded = DumpLoader().load(DumpRef(run / "graphs" / "001_a.txt", "s", "a", 0, 1, run))
    assert loaded.dump is None
    assert "resolves to a file outside the run folder" in (loaded.error or "")
    assert "MARKER" not in (loaded.error or "")


def test_a_fifo_swapped_in_does_not_block(world: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    run, _ = world

    def swap() -> None:
        (run / "ad.log").unlink()
        os.mkfifo(run / "ad.log")

    _hook_after_check(monkeypatch, swap)
    with pytest.raises(InputError, match="is not a regular file"):
        safepath.read_bytes(run / "ad.log", run, "the log")


@pytest.mark.parametrize(("link", "ok"), [
    ("ad.log", True),  # relative, same folder
    ("graphs/../ad.log", True),
    ("../run/ad.log", True),  # climbs out and back in: inside
    ("../outside/ad.log", False),
    ("ABS_OUT", False),
    ("ABS_IN", True),
])
def test_links_are_resolved_by_the_walk_inside_only(world: tuple[Path, Path], link: str, ok: bool) -> None:
    run, out = world
    target = {"ABS_OUT": str(out / "ad.log"), "ABS_IN": str(run / "ad.log")}.get(link, link)
    (run / "alias.log").symlink_to(target)
    if ok:
        assert safepath.read_bytes(run / "alias.log", run, "a log").startswith(b"# Transform")
    else:
        with pytest.raises(InputError, match="alias.log: is a symbolic link to a file outside the run"):
            safepath.read_bytes(run / "alias.log", run, "a log")


def test_a_listing_of_a_folder_linked_out_is_refused(world: tuple[Path, Path]) -> None:
    run, out = world
    _swap_folder(run, out, "graphs")()
    with pytest.raises(InputError, match="graphs: is a symbolic link to a folder outside the run folder"):
        safepath.list_names(run / "graphs", run)


def test_a_file_named_through_a_link_is_read_from_where_it_resolves(tmp_path: Path) -> None:
    """A file the user names (``--expected link.yaml``) is contained in the folder it resolves to."""
    (tmp_path / "else").mkdir()
    (tmp_path / "else" / "exp.yaml").write_text("a: 1\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "else" / "exp.yaml")
    link = tmp_path / "link.yaml"
    assert safepath.read_bytes(link, safepath.given_root(link), "an expected-changes file") == b"a: 1\n"


_PART = st.sampled_from(["a", "b", "ab", "..", ".x", "a.b", "run", "dumps", " ", "é"])


@given(root=st.lists(_PART, max_size=4), rest=st.lists(_PART, max_size=4), other=st.booleans())
def test_the_lexical_components_are_pathlibs(root: list[str], rest: list[str], other: bool) -> None:
    """``_below`` (string work) gives what ``Path.relative_to(...).parts`` gives, for paths below the root,
    the root itself, and paths beside it (a sibling sharing the root's name as a prefix among them)."""
    from ad_diff.core.openat import _below

    r = Path("/", *root)
    p = Path(str(r) + "x", *rest) if other else r.joinpath(*rest)
    try:
        want: list[str] | None = list(p.relative_to(r).parts)
    except ValueError:
        want = None
    assert _below(str(p), str(r)) == want
