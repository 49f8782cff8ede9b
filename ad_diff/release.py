"""Where ad-diff lives and how its releases are named: the one place docs, the skill and messages take them
from (tests keep README.md, docs/, skills/ and pyproject.toml in agreement with it).

A release ``X.Y.Z`` (``ad-diff --version`` prints it) is the git tag ``vX.Y.Z``, and the moving tag
``vX`` points at the newest release of major version ``X`` (docs/github-actions.md, "Versions").
"""

from __future__ import annotations

from ad_diff import __version__

REPOSITORY = "https://github.com/YOUR-ORG/ad-diff"
"""The repository's web address (also ``[project.urls]`` in pyproject.toml)."""


def tag(version: str = __version__) -> str:
    """The release tag of ``version``: ``0.1.0`` -> ``v0.1.0``."""
    return f"v{version}"


def major_tag(version: str = __version__) -> str:
    """The moving major tag that follows the newest release of ``version``'s major: ``0.1.0`` -> ``v0``."""
    return f"v{version.split('.', 1)[0]}"


def doc_url(page: str, anchor: str = "") -> str:
    """A docs page of this release on the repository's web site (a link that works wherever it is read)."""
    return f"{REPOSITORY}/blob/{tag()}/docs/{page}" + (f"#{anchor}" if anchor else "")


__all__ = ["REPOSITORY", "doc_url", "major_tag", "tag"]
