"""Containment (ad_diff.core.safepath): links that leave the run folder, special files, size limits and
bad UTF-8 are refused with the path named and nothing of the content echoed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ad_diff.core.safepath import check_file, read_bytes, read_text, walk_files
from ad_diff.errors import InputError

SECRET = "oauth_token: ghp_" + "x" * 36


@pytest.fixture
def run(tmp_path: Path) -> Path:
    outside = tmp_path / "home" / "hosts.yml"
    outside.parent.mkdir()
    outside.write_text(SECRET + "\n")
    run = tmp_path / "run"
    (run / "config").mkdir(parents=True)
    (run / "config" / "default.yaml").write_text("a: 1\n")
    (run / "config" / "zz_extra.yaml").symlink_to(outside)
    (run / "config" / "alias.yaml").symlink_to("default.yaml")  # a link that stays inside: fine
    os.mkfifo(run / "config" / "fifo.yaml")
    (run / "config" / "broken.yaml").symlink_to(run / "config" / "missing.yaml")
    (run / "config" / "loop.yaml").symlink_to("loop.yaml")
    return run


def test_inside_files_and_inside_links_are_read(run: Path) -> None:
    assert read_text(run / "config" / "default.yaml", run, "a config") == "a: 1\n"
    assert read_text(run / "config" / "alias.yaml", run, "a config") == "a: 1\n"


@pytest.mark.parametrize(("name", "why"), [
    ("zz_extra.yaml", "is a symbolic link to a file outside the run folder"),
    ("fifo.yaml", "is not a regular file (a FIFO, socket or device)"),
    ("broken.yaml", "is a broken symbolic link"),
    ("loop.yaml", "is a symbolic link that loops"),
    ("nope.yaml", "does not exist"),
])
def test_refused_entries_name_the_path_and_never_the_content(run: Path, name: str, why: str) -> None:
    with pytest.raises(InputError) as e:
        read_bytes(run / "config" / name, run, "an AD config")
    assert str(e.value).startswith(f"{run / 'config' / name}: {why}")
    assert "ghp_" not in str(e.value)
    assert "oauth" not in str(e.value)


def test_a_parent_folder_linked_outside_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.yaml").write_text("a: 1\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "config").symlink_to(elsewhere)
    with pytest.raises(InputError, match="resolves to a file outside the run folder"):
        check_file(run / "config" / "x.yaml", run, "an AD config")


def test_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a" * 2000)
    with pytest.raises(InputError, match="is 2,000 bytes, more than the 1,000 bytes accepted for a config"):
        read_bytes(big, tmp_path, "a config", limit=1000)


@pytest.mark.parametrize("seen", [0, 10, 999, 1000])
def test_a_file_that_grew_since_its_size_was_taken_is_read_whole_or_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seen: int
) -> None:
    """The read asks for the size ``fstat`` gave: a file that grew after it is read on up to the limit."""
    import ad_diff.core.safepath as sp

    real_fstat = os.fstat

    def shrunk(fd: int) -> os.stat_result:  # fstat taken while the file was smaller
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, *st[1:6], seen, *st[7:10]))

    p = tmp_path / "grows.txt"
    p.write_bytes(b"b" * 1000)
    monkeypatch.setattr(sp.os, "fstat", shrunk)
    assert read_bytes(p, tmp_path, "a dump", limit=1000) == b"b" * 1000
    p.write_bytes(b"b" * 1001)
    with pytest.raises(InputError, match="is more than the 1,000 bytes accepted for a dump"):
        read_bytes(p, tmp_path, "a dump", limit=1000)


def test_bad_utf8_names_the_line_of_the_byte(tmp_path: Path) -> None:
    p = tmp_path / "cli_args.txt"
    p.write_bytes(b"--args.a=1\n--args.b=caf\xe9\n")
    with pytest.raises(InputError) as e:
        read_text(p, tmp_path, "the overrides")
    assert e.value.line == 2
    assert "found byte 0xe9" in e.value.detail


def test_walk_lists_files_and_says_what_it_refused(run: Path) -> None:
    found, refused = walk_files(run / "config", run, (".yaml",))
    assert [p.name for p in found] == ["alias.yaml", "default.yaml"]
    assert {p.name for p, _ in refused} == {"zz_extra.yaml", "fifo.yaml", "broken.yaml", "loop.yaml"}


@pytest.mark.parametrize("inside", [False, True])
def test_walk_refuses_every_link_to_a_folder_whatever_its_name(
    run: Path, tmp_path: Path, inside: bool
) -> None:
    """os.walk does not enter a linked folder: a ``config/overlays`` link (no YAML suffix) lost its layers
    without a word; only links named like ``*.yaml`` were refused."""
    target = run / "kept" if inside else tmp_path / "home" / "layers"
    target.mkdir()
    (target / "zz_layer.yaml").write_text("a: 2\n")
    (run / "config" / "overlays").symlink_to(target)
    found, refused = walk_files(run / "config", run, (".yaml",))
    why = dict(refused)[run / "config" / "overlays"]
    if inside:
        assert (
            why == "is a symbolic link to a folder; folders are not followed through links (copy it instead)"
        )
    else:
        assert why == (
            f"is a symbolic link to a folder outside the run folder {run}; refusing to read it (copy "
            "the folder into the run folder instead of linking it)"
        )
    assert "zz_layer.yaml" not in {p.name for p in found}
