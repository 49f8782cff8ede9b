"""core/lazy: an optional module that is missing is a clear error naming the extra that brings it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ad_diff.core import lazy
from ad_diff.errors import AdDiffError
from tests.conftest import FIXTURES


def test_require_imports_a_present_module() -> None:
    assert lazy.require("json", "a test").dumps([]) == "[]"


@pytest.mark.parametrize(("module", "extra"), [("torch", "ad-diff[pt]"), ("matplotlib", "ad-diff[plots]"),
                                               ("no_such_module_xyz", "pip install no_such_module_xyz")])
def test_missing_module_names_purpose_and_extra(module: str, extra: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lazy, "available", lambda name: False)
    with pytest.raises(lazy.MissingDependency, match=r"reading x\.pt needs") as err:
        lazy.require(module, "reading x.pt")
    assert extra in str(err.value)
    assert isinstance(err.value, AdDiffError)  # exit 2, not an internal error


def test_pt_pair_without_torch_is_exit_2_naming_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    """A .pt input on an install without the pt extra: exit 2 and the install command, never a traceback."""
    from typer.testing import CliRunner

    from ad_diff.cli import app, load_commands

    real = lazy.available
    monkeypatch.setattr(lazy, "available", lambda name: name != "torch" and real(name))
    load_commands()
    for side in ("baseline", "candidate"):  # a scenario run with the .pt tensors of a synthetic pair
        shutil.copytree(FIXTURES / "scenarios/identical" / side, tmp_path / side)
        tensors = FIXTURES / "tensors/synthetic/pt_dict" / side / "tensors"
        shutil.copytree(tensors, tmp_path / side / "tensors")
    pair = tmp_path
    res = CliRunner().invoke(app, ["compare", str(pair / "baseline"), str(pair / "candidate"), "--no-color"])
    assert res.exit_code == 2, res.output
    assert "outputs.pt" in res.output
    assert "pip install 'ad-diff[pt]'" in res.output
    assert "Traceback" not in res.output


@pytest.fixture
def heavy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module on the path that records each time it is imported, counted as a heavy module."""
    import sys

    (tmp_path / "adlazyprobe.py").write_text("import sys\nsys.adlazyprobe_loads = "
                                             "getattr(sys, 'adlazyprobe_loads', 0) + 1\nVALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(lazy, "HEAVY", lazy.HEAVY | {"adlazyprobe"})
    monkeypatch.delitem(sys.modules, "adlazyprobe", raising=False)
    monkeypatch.setattr(sys, "adlazyprobe_loads", 0, raising=False)
    return "adlazyprobe"


def test_module_imports_on_first_attribute_read_and_once(heavy: str) -> None:
    import sys

    proxy = lazy.module(heavy)
    assert heavy not in sys.modules
    assert sys.adlazyprobe_loads == 0  # type: ignore[attr-defined]
    assert proxy.VALUE == 42
    assert proxy.VALUE == 42
    assert sys.adlazyprobe_loads == 1  # type: ignore[attr-defined]
    assert "VALUE" in vars(proxy)  # read from then on as a module attribute, with no hook
    assert lazy.module(heavy) is sys.modules[heavy]  # once imported, the module itself


def test_module_that_is_missing_fails_at_its_first_use_not_at_import(monkeypatch: pytest.MonkeyPatch) -> None:
    """Binding costs nothing and checks nothing: an optional module is checked by :func:`lazy.require` where
    a feature needs it, and a use without that check fails as an import would."""
    monkeypatch.setattr(lazy, "HEAVY", lazy.HEAVY | {"adlazymissing"})
    proxy = lazy.module("adlazymissing")
    with pytest.raises(ModuleNotFoundError, match="adlazymissing"):
        _ = proxy.Table


def test_module_refuses_a_module_that_is_not_heavy() -> None:
    """It is for heavy third-party modules only: never for ad-diff's own (no lazy import may hide a cycle)."""
    with pytest.raises(ValueError, match="not one of the heavy modules"):
        lazy.module("ad_diff.gate")


def test_pattern_compiles_on_first_use_and_answers_as_the_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    compiled: list[str] = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda p, f=0: compiled.append(p) or real(p, f))
    pat = lazy.pattern(r"(?P<w>ab+)c", re.IGNORECASE)
    assert pat.pattern == r"(?P<w>ab+)c"  # read without compiling
    assert compiled == []
    assert pat.search("xABBC")["w"] == "ABB"
    assert pat.sub("-", "abc abbc") == "- -"
    assert pat.flags == real(r"(?P<w>ab+)c", re.IGNORECASE).flags
    assert compiled == [r"(?P<w>ab+)c"]  # once, whatever is read after
    assert "search" in vars(pat)  # read from then on as an instance attribute, with no hook
    assert lazy.pattern(rb"a+").fullmatch(b"aaa") is not None


def test_a_pattern_that_cannot_compile_fails_at_its_first_use() -> None:
    import re

    pat = lazy.pattern(r"(unclosed")
    with pytest.raises(re.error):
        pat.match("x")


def test_every_pattern_of_the_package_compiles() -> None:
    """A pattern compiled where it is first used would show a mistake only on the run that first uses it: the
    suite compiles every one of them (a module-level pattern, a class attribute, one inside a table)."""
    import gc
    import importlib
    import pkgutil

    import ad_diff

    for m in pkgutil.walk_packages(ad_diff.__path__, "ad_diff."):
        if m.name != "ad_diff.__main__":  # the program: it sets the process's collector policy
            importlib.import_module(m.name)
    patterns = [o for o in gc.get_objects() if type(o) is lazy.LazyPattern]  # isinstance reads __class__
    assert len(patterns) >= 40
    for p in patterns:
        assert p.groups >= 0, p.pattern  # compiled by the read
