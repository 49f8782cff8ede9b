"""The agent skill (skills/ad-diff/SKILL.md) works from zero in a TensorRT-LLM checkout: the suite follows it
literally, every fenced command in order, in one shell, as an agent would.

The checkout is a stand-in: a git repository whose ``examples/auto_deploy/build_and_run_ad.py`` prints a
bundled run's AD log and writes its graph dumps into ``AD_DUMP_GRAPHS_DIR``, the run depending on the
checkout's code (an uncommitted change disables a pattern matcher: the baseline is what ``git stash``
leaves). ``ad-diff`` is not on ``PATH`` until the skill installs it; there is no network here, so the
machine's ``python3 -m venv`` makes a stand-in environment whose ``pip`` records what the skill asks for
and whose ``ad-diff`` is this checkout (tests/composite.py); the machine's own ``python3`` refuses to
install anything. The skill's text stands alone: its links point at the repository, at this release.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ad_diff import __version__, release
from tests.composite import python3_shim
from tests.conftest import FIXTURES, ROOT

SKILL = ROOT / "skills" / "ad-diff" / "SKILL.md"
CHANGE = "tensorrt_llm/_torch/auto_deploy/transform/library/fused_mlp.py"
"""The checkout's file that the "change" edits."""
AD_SCRIPT = '''"""Stand-in for AutoDeploy's build_and_run_ad.py: the AD log and graph dumps of a bundled run,
chosen by the checkout's code as it is now."""
import argparse
import os
import shutil
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--model", required=True)
parser.add_argument("--use-registry", action="store_true")
parser.parse_args()
code = open("{change}").read()
run = {candidate!r} if "SWIGLU_MATCHER = False" in code else {baseline!r}
dumps = os.environ["AD_DUMP_GRAPHS_DIR"]
os.makedirs(dumps, exist_ok=True)
for name in sorted(os.listdir(os.path.join(run, "graphs"))):
    shutil.copy(os.path.join(run, "graphs", name), dumps)
sys.stdout.write(open(os.path.join(run, "ad.log")).read())
'''


def _parts() -> tuple[dict[str, object], str]:
    text = SKILL.read_text(encoding="utf-8")
    m = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
    assert m is not None, "SKILL.md starts with YAML front matter between --- lines"
    return yaml.safe_load(m.group(1)), m.group(2)


def _blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", _parts()[1], re.S)


def test_front_matter_in_the_toolkit_format() -> None:
    meta, body = _parts()
    assert meta["name"] == "ad-diff"
    assert len(str(meta["description"])) > 100
    assert {"license", "tags", "metadata"} <= set(meta)
    assert meta["metadata"]["version"] == __version__  # type: ignore[index]
    assert meta["metadata"]["repository"] == release.REPOSITORY  # type: ignore[index]
    assert "## When to use this skill" in body


def test_the_text_stands_alone() -> None:
    """Installed elsewhere (an agent toolkit), the skill has no repository around it: every link is the
    repository's address at this release, and names a file that exists."""
    _, body = _parts()
    targets = re.findall(r"\]\(([^)\s]+)\)", body)
    assert targets, "the skill links its reference pages"
    for t in targets:
        assert t.startswith(f"{release.REPOSITORY}/blob/{release.tag()}/"), t
        assert (ROOT / t.split(f"/blob/{release.tag()}/", 1)[1].split("#")[0]).is_file(), t
    prose = re.sub(r"```.*?```", "", body, flags=re.S)
    bare = [m for m in re.findall(r"(?<![\w/.])(?:docs|examples|skills)/[\w./-]+", prose)]
    assert not bare, f"paths that only resolve inside the repository: {bare}"
    assert f"ad-diff {__version__}" in body


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """A TensorRT-LLM checkout with an uncommitted change, and a shell environment without ad-diff."""
    repo = tmp_path / "TensorRT-LLM"
    (repo / "examples/auto_deploy").mkdir(parents=True)
    (repo / CHANGE).parent.mkdir(parents=True)
    pair = FIXTURES / "scenarios/disabled_transform"
    (repo / "examples/auto_deploy/build_and_run_ad.py").write_text(
        AD_SCRIPT.format(change=CHANGE, baseline=str(pair / "baseline"), candidate=str(pair / "candidate")))
    (repo / CHANGE).write_text("SWIGLU_MATCHER = True\n")
    home = tmp_path / "home"
    home.mkdir()
    log = tmp_path / "python3.log"
    path = [d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "ad-diff").exists()]
    env = {"HOME": str(home), "LANG": "C.UTF-8", "CI": "1", "PATH": os.pathsep.join(path),
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.invalid", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@example.invalid"}
    env["PATH"] = python3_shim(tmp_path / "bin", log, sys.executable, ROOT)["PATH"].replace(
        os.environ.get("PATH", ""), env["PATH"])
    assert shutil.which("git", path=env["PATH"]) is not None
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *cmd], cwd=repo, env=env, check=True)
    (repo / CHANGE).write_text("SWIGLU_MATCHER = False  # the change: the new fused MLP op replaces it\n")
    return repo, env, log


def test_an_agent_follows_the_skill_from_zero(checkout: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, log = checkout
    blocks = _blocks()
    script = 'command -v ad-diff >/dev/null && echo "::ad-diff already installed"\n'
    for i, block in enumerate(blocks):  # one shell, every block as written, its status after it
        script += f'echo "::block {i}"\n{block}\necho "::status {i} $?"\n'
    proc = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout
    assert "::ad-diff already installed" not in out, "the test must start without ad-diff"
    parts = dict(re.findall(r"::block (\d+)\n(.*?)::status \1 ", out, re.S))
    status = dict(re.findall(r"::status (\d+) (\d+)", out))
    assert len(status) == len(blocks), proc.stderr
    # 0: installed from the repository at this release, in its own environment; nothing else installed
    assert status["0"] == "0", proc.stderr
    assert f"ad-diff {__version__}" in parts["0"]
    installs = [ln for ln in log.read_text().splitlines() if "pip" in ln]
    assert installs == [f"venv-pip install -q ad-diff @ git+{release.REPOSITORY}.git@{release.tag()}"]
    # 1: both runs recorded, the change set aside for the baseline and back for the candidate
    assert status["1"] == "0", proc.stderr
    for run in ("base", "cand"):
        assert (repo / "runs" / run / "ad.log").stat().st_size > 0
        assert any((repo / "runs" / run / "graphs").iterdir())
    assert "SWIGLU_MATCHER = False" in (repo / CHANGE).read_text()
    # 2, 3: the comparison fails on the change, and the JSON reads as the skill says
    assert "exit 1" in parts["2"]
    assert (repo / "pr-comment.md").read_text().startswith("## ")
    assert parts["3"].startswith("fail - FAIL: 1 root cause (match_swiglu_pattern disabled in the candidate)")
    assert "root cause: match_swiglu_pattern disabled in the candidate (transform_disabled)" in parts["3"]
    # 4: the expected-changes example acknowledges the intended change: a pass
    assert "exit 0" in parts["4"]
    assert "PASS: every finding acknowledged" in parts["4"]
    # 5: a golden snapshot the candidate fails against, and the next fusions
    assert (repo / "golden.yaml").is_file()
    assert "ad-diff: FAIL" in parts["5"]
    assert status["5"] == "0"
    assert len(blocks) == 6


def test_every_option_the_skill_shows_exists() -> None:
    from tests.conftest import run_cli

    commands = {"record", "snapshot", "candidates", "history", "batch", "note", "schema"}
    for block in _blocks():
        for line in block.splitlines():
            if not line.startswith("ad-diff "):
                continue
            words = line.split("#")[0].split(" -- ")[0].split()  # after --: the AD command's own options
            cmd = words[1] if words[1] in commands else "compare"
            helptext = run_cli(cmd, "--help", env={"COLUMNS": "200"}).out if not words[1].startswith("--") \
                else run_cli("--help").out
            for opt in (w for w in words if w.startswith("--") and w != "--"):
                assert opt.split("=")[0] in helptext, f"{line}: {opt} is not an option of {cmd}"
