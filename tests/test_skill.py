"""The agent skill (skills/ad-diff/SKILL.md): the toolkit's front matter, and every command it shows run as
an agent would run it, on bundled run pairs, with the outcome the skill describes."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT

SKILL = ROOT / "skills" / "ad-diff" / "SKILL.md"


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
    assert "## When to use this skill" in body


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    """A PATH whose `ad-diff` is this checkout, and BASE/CAND set to a bundled regression pair."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "ad-diff"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m ad_diff \"$@\"\n")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    pair = FIXTURES / "scenarios/metadata_loss"
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
            "BASE": str(pair / "baseline"), "CAND": str(pair / "candidate")}


def _run(block: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", block], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_compare_block_and_the_json_reading(shell_env: dict[str, str], tmp_path: Path) -> None:
    compare = next(b for b in _blocks() if "--format json" in b)
    res = _run(compare, shell_env, tmp_path)
    assert "exit 1" in res.stdout, res.stderr  # the bundled pair holds a real regression
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["verdict"] == "fail"
    assert (tmp_path / "pr-comment.md").read_text().startswith("## ")
    reader = next(b for b in _blocks() if "json.load" in b)
    out = _run(reader, shell_env, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("fail - FAIL: 1 root cause")
    want = "root cause: metadata lost at match_rope_pattern (metadata_lost) at match_rope_pattern"
    assert want in out.stdout


def test_golden_and_candidates_block(shell_env: dict[str, str], tmp_path: Path) -> None:
    block = next(b for b in _blocks() if "ad-diff snapshot" in b)
    lines = [ln.split("#")[0].strip() for ln in block.strip().splitlines()]
    codes = [_run(ln, shell_env, tmp_path).returncode for ln in lines]
    assert codes == [0, 1, 0]  # snapshot written; the candidate fails against it; candidates lists patterns


def test_every_option_the_skill_shows_exists(shell_env: dict[str, str], tmp_path: Path) -> None:
    for block in _blocks():
        for line in block.splitlines():
            if not line.startswith("ad-diff "):
                continue
            words = line.split("#")[0].split(" -- ")[0].split()  # after --: the AD command's own options
            cmd = words[1] if words[1] in ("record", "snapshot", "candidates") else "compare"
            helptext = _run(f"COLUMNS=200 ad-diff {cmd} --help", shell_env, tmp_path).stdout
            for opt in (w for w in words if w.startswith("--") and w != "--"):
                assert opt.split("=")[0] in helptext, f"{line}: {opt} is not an option of {cmd}"
