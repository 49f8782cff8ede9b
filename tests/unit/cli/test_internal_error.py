"""An internal error (a bug in ad-diff) exits 3 from every command, never 2 (an input error) or a
traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff import candidates, history, pipeline
from ad_diff.cli.app import main
from ad_diff.gate import EXIT_INTERNAL_ERROR
from ad_diff.workflows import batch
from tests.ci_runs import BASE_LOG
from tests.conftest import make_run


def _boom(*_args: object, **_kwargs: object) -> object:
    raise RuntimeError("boom: a bug planted by the test")


def _exit_code(args: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(args)
    assert isinstance(done.value.code, int)
    return done.value.code


@pytest.mark.parametrize(
    ("command", "target", "name"),
    [
        ("compare", pipeline, "run"),
        ("batch", batch, "run_batch"),
        ("batch-model", pipeline, "run"),
        ("history", history, "run_history"),
        ("candidates", candidates, "find_candidates"),
    ],
)
def test_an_internal_error_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str], command: str, target: object,
                                   name: str) -> None:
    monkeypatch.chdir(tmp_path)  # no config file of the checkout is read
    monkeypatch.delenv("AD_DIFF_DEBUG", raising=False)
    monkeypatch.setenv("COLUMNS", "200")  # batch's table would wrap the message at a narrow terminal's width
    for side in ("b", "c"):
        make_run(tmp_path / side / "m", BASE_LOG)
    monkeypatch.setattr(target, name, _boom)
    args = {
        "compare": ["compare", "b/m", "c/m", "--no-config"],
        "batch": ["batch", "b", "c", "--no-config", "-j", "1"],
        "batch-model": ["batch", "b", "c", "--no-config", "-j", "1"],  # the bug hits one model's comparison
        "history": ["history", "b", "--no-config"],
        "candidates": ["candidates", "b/m"],
    }[command]
    assert _exit_code(args) == EXIT_INTERNAL_ERROR
    out = capsys.readouterr()
    assert "boom: a bug planted by the test" in out.err + out.out
    assert "Traceback" not in out.err
