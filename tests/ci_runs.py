"""Tiny run folders for the CI-feature tests (config, expectations, snapshot, batch, JUnit)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import make_run, v3

BASE_LOG = (
    v3("pattern_matcher", "match_rope_pattern", "matches=16")
    + v3("pattern_matcher", "fuse_gemms", "matches=4")
    + v3("post_load_fusion", "fuse_rmsnorm", "matches=8")
)
"""Baseline: three transforms that all match."""

REGRESSED_LOG = (
    v3("pattern_matcher", "match_rope_pattern", "matches=0")
    + v3("pattern_matcher", "fuse_gemms", "disabled")
    + v3("post_load_fusion", "fuse_rmsnorm", "matches=8")
)
"""Candidate: rope collapses 16 -> 0 (ADL001) and fuse_gemms is disabled (ADL003)."""

PARTIAL_LOG = BASE_LOG.replace("matches=16", "matches=3")
"""Candidate: rope drops 16 -> 3 (a collapse by fraction, not to zero)."""


def pair(tmp: Path, cand_log: str = REGRESSED_LOG) -> tuple[Path, Path]:
    """Create ``tmp/base`` and ``tmp/cand`` run folders."""
    return make_run(tmp / "base", BASE_LOG), make_run(tmp / "cand", cand_log)
