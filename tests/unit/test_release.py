"""Where ad-diff lives and how its releases are named (ad_diff/release.py) agree with everything a reader
copies: ``--version``, pyproject.toml, and every tag or address in README.md, docs/, the skill, the examples
and the actions."""

from __future__ import annotations

import re

import pytest

from ad_diff import __version__, release
from tests.conftest import ROOT, run_cli

READ = [ROOT / "README.md", ROOT / "action.yml", ROOT / "comment" / "action.yml",
        *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "skills").rglob("*.md")),
        *sorted((ROOT / "examples").glob("*"))]
PLACEHOLDERS = {"<tag>", "<tag-or-commit>"}


def test_version_tag_and_pyproject_agree() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == __version__
    assert project["urls"]["Repository"] == release.REPOSITORY
    printed = run_cli("--version").out.strip()
    assert printed == f"ad-diff {__version__}"
    assert release.tag() == "v" + printed.split()[-1]
    assert release.major_tag() == "v" + printed.split()[-1].split(".")[0]
    assert (release.tag("1.2.3"), release.major_tag("1.2.3")) == ("v1.2.3", "v1")


def test_every_pinned_ref_is_this_releases_tag() -> None:
    refs: list[tuple[str, str]] = []
    for path in READ:
        text = path.read_text(encoding="utf-8")
        # `uses: OWNER/ad-diff@REF`, `OWNER/ad-diff/comment@REF`, `git+https://.../ad-diff.git@REF`
        refs += [(path.name, m) for m in re.findall(r"/ad-diff(?:/comment|\.git)?@([^\s\"'`)]+)", text)]
    assert len(refs) >= 6, refs
    wrong = [(name, ref) for name, ref in refs
             if ref not in {release.tag(), release.major_tag(), *PLACEHOLDERS}]
    assert not wrong, f"refs that are not {release.tag()} or {release.major_tag()}: {wrong}"


def test_every_address_of_the_repository_is_the_same() -> None:
    owner_repo = release.REPOSITORY.removeprefix("https://github.com/")
    for path in READ:
        for found in re.findall(r"github\.com/([\w.-]+/ad-diff)\b", path.read_text(encoding="utf-8")):
            assert found == owner_repo, f"{path.name} names {found}, not {owner_repo}"


def test_the_documented_tag_commands_tag_this_release() -> None:
    doc = (ROOT / "docs/github-actions.md").read_text()
    line = next(ln for ln in doc.splitlines() if ln.startswith("git tag -a "))
    assert f"git tag -a {release.tag()} " in line
    assert f"git tag -f {release.major_tag()} {release.tag()}" in line
    assert release.doc_url("github-actions.md", "pull-requests-from-forks").endswith(
        f"/blob/{release.tag()}/docs/github-actions.md#pull-requests-from-forks")
    assert "## Pull requests from forks" in doc
