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
