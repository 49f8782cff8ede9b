"""The GitHub Action's logic (ad_diff/workflows/github_action.py) run as the action runs it: the compare step
on fixture runs with GitHub's environment, the comment step against a fake event and a fake REST API
served on the loopback interface (test_github_comment.py). action.yml's steps themselves run in
test_action_steps.py; here its wiring is checked against the inputs the module reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from ad_diff.workflows import github_action as ga
from tests.conftest import FIXTURES, ROOT


def _outputs(path: Path) -> dict[str, str]:
    """Parse $GITHUB_OUTPUT's delimiter form as the runner does."""
    out: dict[str, str] = {}
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        key, delim = lines[i].split("<<", 1)
        end = lines.index(delim, i + 1)
        out[key] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return out


def _env(tmp_path: Path, **inputs: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env |= {"PYTHONPATH": str(ROOT), "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "INPUT_OUT-DIR": str(tmp_path / "out")}
    env |= {"INPUT_" + k.upper().replace("_", "-"): v for k, v in inputs.items()}
    return env


@pytest.mark.parametrize(("scenario", "verdict", "code"), [("metadata_loss", "fail", "1"),
                                                           ("identical", "pass", "0")])
def test_compare_step(scenario: str, verdict: str, code: str, tmp_path: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    pair = FIXTURES / "scenarios" / scenario
    env = _env(tmp_path, baseline=str(pair / "baseline"), candidate=str(pair / "candidate"))
    assert ga.main(["compare"], env) == 0  # the step never fails: the Gate step does, after the comment
    out = _outputs(tmp_path / "output")
    assert (out["verdict"], out["exit-code"]) == (verdict, code)
    report = json.loads(Path(out["json"]).read_text())
    assert out["headline"] == report["headline"]
    for key in ("markdown", "junit", "html"):
        assert Path(out[key]).is_file()
    assert (tmp_path / "summary.md").read_text().startswith("## ")


def test_compare_step_against_a_golden_and_with_fail_on(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    pair = FIXTURES / "scenarios/metadata_loss"
    golden = tmp_path / "golden.yaml"
    assert run_cli("snapshot", pair / "baseline", "-o", golden).code == 0
    env = _env(tmp_path, golden=str(golden), candidate=str(pair / "candidate"), fail_on="never")
    assert ga.main(["compare"], env) == 0
    assert _outputs(tmp_path / "output")["exit-code"] == "0"


def test_an_input_error_is_verdict_error_in_the_annotation_summary_and_comment(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = _env(tmp_path, baseline=str(tmp_path / "nope"), candidate=str(tmp_path / "nope2"))
    assert ga.main(["compare"], env) == 0
    out = _outputs(tmp_path / "output")
    assert (out["verdict"], out["exit-code"]) == ("error", "2")
    printed = capsys.readouterr().out
    assert "::error title=ad-diff::" in printed
    assert "ad-diff: ad-diff:" not in printed
    assert out["headline"].startswith("ERROR: ")
    assert "ad-diff" not in out["headline"]
    summary = (tmp_path / "summary.md").read_text()
    assert summary == Path(out["markdown"]).read_text()  # the comment step posts what the summary shows
    assert "nope" in summary
    assert "never a pass" in summary


@pytest.mark.parametrize("inputs", [{"candidate": "x"}, {"baseline": "a"},
                                    {"baseline": "a", "golden": "g", "candidate": "c"},
                                    {"baseline": "a", "candidate": "c", "step_summary": "yes"}])
def test_bad_inputs_are_input_errors_reported_everywhere(inputs: dict[str, str], tmp_path: Path) -> None:
    # the step itself succeeds: the Gate step fails the job with exit code 2, after the comment says why
    assert ga.main(["compare"], _env(tmp_path, **inputs)) == 0
    out = _outputs(tmp_path / "output")
    assert (out["verdict"], out["exit-code"]) == ("error", "2")
    assert out["headline"].startswith("ERROR: action input: ")
    for text in ((tmp_path / "summary.md").read_text(), Path(out["markdown"]).read_text()):
        assert text.startswith("## \u26d4 ad-diff: ERROR (exit 2)")


@pytest.mark.parametrize(("stderr", "message"), [
    ("ad-diff: error: /x: candidate run folder does not exist\n", "/x: candidate run folder does not exist"),
    ("Usage: ad-diff compare [OPTIONS]\nTry 'ad-diff compare -h' for help.\n\n"
     "Error: No such option: --nope\n",
     "No such option: --nope"),
    ("ad-diff: internal error: KeyError: 'x'\nThis is a bug in ad-diff; rerun ...\n", "KeyError: 'x'"),
    ("", "ad-diff exited 2 without a message"),
])
def test_error_message_drops_the_prefix_the_reports_add_again(stderr: str, message: str) -> None:
    assert ga.error_message(stderr, 2) == message


def test_outputs_with_newlines_survive_the_output_file(tmp_path: Path) -> None:
    ga.set_outputs(str(tmp_path / "o"), {"headline": "line one\nline two", "verdict": "fail"})
    assert _outputs(tmp_path / "o") == {"headline": "line one\nline two", "verdict": "fail"}


def test_action_yml_wires_every_input_the_module_reads() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    inputs = set(action["inputs"])
    source = "".join((ROOT / f"ad_diff/workflows/{m}.py").read_text()
                     for m in ("github_action", "github_comment"))
    read = set(re.findall(r'(?:_input|flag)\(env, "([a-z-]+)"', source))
    assert {"candidate", "comment", "out-dir", "step-summary"} <= read
    assert read <= inputs, f"inputs read but not declared: {read - inputs}"
    steps = {s.get("id") or s["name"]: s for s in action["runs"]["steps"]}
    wired = {k[len("INPUT_"):].lower() for s in steps.values() for k in s.get("env", {})
             if k.startswith("INPUT_")}
    assert read <= wired, f"inputs declared but not passed to the script: {read - wired}"
    assert {"verdict", "exit-code", "headline", "json", "html"} <= set(action["outputs"])
