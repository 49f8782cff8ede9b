"""The source tree is read as text within bounds: links, special files, sizes, encodings, counts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ad_diff.candidates import source
from ad_diff.candidates.source import index_source
from ad_diff.errors import InputError
from tests.unit.candidates.conftest import AD, SRC, tree_with

OP = (
    '@torch.library.custom_op("auto_deploy::{name}", mutates_args=())\n'
    "def {name}_impl(x):\n    raise SystemExit\n"
)


def _ops(idx) -> set[str]:
    return {r.symbol for r in idx.registrations if r.kind == "custom_op"}


def test_fixture_tree_registrations_and_decorated_functions() -> None:
    idx = index_source(SRC)
    assert idx.files == 9
    assert idx.complete
    fi = next(r for r in idx.registrations if r.name == "flashinfer_rms_norm")
    assert (fi.path, fi.line, fi.func) == (
        f"{AD}/custom_ops/normalization/rms_norm.py",
        11,
        "flashinfer_rmsnorm",
    )
    assert {m.path.rsplit("/", 1)[-1] for m in idx.modules} == {
        "rms_norm.py",
        "fused_moe.py",
        "fuse_swiglu.py",
        "attention.py",
    }


def test_links_leaving_the_tree_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(OP.format(name="secret"))
    root = tree_with(tmp_path / "src", {"custom_ops/real.py": OP.format(name="real")})
    (root / AD / "custom_ops" / "link.py").symlink_to(outside)
    (root / AD / "custom_ops" / "again.py").symlink_to(
        root / AD / "custom_ops" / "real.py"
    )  # inside: read once
    (root / AD / "custom_ops" / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    (root / AD / "custom_ops" / "loop").symlink_to(root / AD)
    idx = index_source(root)
    assert _ops(idx) == {"auto_deploy::real"}
    assert idx.files == 1
    assert any("link(s) leaving the tree" in n for n in idx.notes)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_special_files_are_never_opened(tmp_path: Path) -> None:
    root = tree_with(tmp_path, {"custom_ops/real.py": OP.format(name="real")})
    os.mkfifo(root / AD / "custom_ops" / "fifo.py")  # opening it would block forever
    idx = index_source(root)
    assert _ops(idx) == {"auto_deploy::real"}
    assert idx.notes == ("1 special file(s) named *.py (FIFO, socket, device) not opened",)  # once "a link"


def test_linked_folders_are_not_walked_and_say_so(tmp_path: Path) -> None:
    elsewhere = tree_with(tmp_path / "elsewhere", {"custom_ops/far.py": OP.format(name="far")})
    root = tree_with(tmp_path / "src", {"custom_ops/real.py": OP.format(name="real")})
    (root / AD / "custom_ops" / "far").symlink_to(elsewhere / AD / "custom_ops")
    (root / AD / "custom_ops" / "near").symlink_to(root / AD / "custom_ops")  # inside, but a loop too
    idx = index_source(root)
    assert _ops(idx) == {"auto_deploy::real"}
    assert not idx.complete  # a not_found then says the tree was only partly read
    assert idx.notes == ("2 link(s) to folders not walked (copy the folder into the tree instead)",)


def test_package_linked_out_of_the_named_tree_is_refused(tmp_path: Path) -> None:
    elsewhere = tree_with(tmp_path / "elsewhere", {"custom_ops/far.py": OP.format(name="far")})
    src = tmp_path / "src"
    src.mkdir()
    (src / "tensorrt_llm").symlink_to(elsewhere / "tensorrt_llm")
    with pytest.raises(InputError, match=r"auto_deploy: resolves to a folder outside --trtllm-src .*/src; "
                                         "refusing to read it"):
        index_source(src)
    vendored = tree_with(src / "vendor", {"custom_ops/near.py": OP.format(name="near")})
    (src / "tensorrt_llm").unlink()
    (src / "tensorrt_llm").symlink_to(vendored / "tensorrt_llm")  # a link that stays inside the tree is fine
    assert _ops(index_source(src)) == {"auto_deploy::near"}


def test_size_limits_cut_and_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "MAX_FILE_BYTES", 200)
    big = OP.format(name="early") + "# padding\n" * 100 + OP.format(name="late")
    root = tree_with(tmp_path / "a", {"custom_ops/big.py": big})
    idx = index_source(root)
    assert _ops(idx) == {"auto_deploy::early"}
    assert not idx.complete
    assert any("only its start was read" in n for n in idx.notes)
    monkeypatch.setattr(source, "MAX_FILE_BYTES", 1 << 20)
    monkeypatch.setattr(source, "MAX_FILES", 3)
    many = {f"custom_ops/op{i:02d}.py": OP.format(name=f"op{i:02d}") for i in range(10)}
    idx = index_source(tree_with(tmp_path / "b", many))
    assert idx.files == 3
    assert _ops(idx) == {"auto_deploy::op00", "auto_deploy::op01", "auto_deploy::op02"}
    assert any("stopped after 3 file(s)" in n for n in idx.notes)


def test_non_utf8_and_binary_bytes_are_tolerated(tmp_path: Path) -> None:
    root = tree_with(tmp_path, {})
    (root / AD / "custom_ops" / "latin1.py").write_bytes(b"# caf\xe9\n" + OP.format(name="kept").encode())
    (root / AD / "custom_ops" / "junk.py").write_bytes(os.urandom(4096) + b"\0\0")
    (root / AD / "transform" / "library").mkdir(parents=True)
    (root / AD / "transform" / "library" / "t.py").write_bytes(
        b"\xff\xfe@TransformRegistry.register('t')\nclass T:\n    pass\n\0"
    )
    idx = index_source(root)
    assert "auto_deploy::kept" in _ops(idx)
    assert any(r.kind == "transform" and r.name == "t" for r in idx.registrations)
    assert any("not parsed as Python" in n for n in idx.notes)
