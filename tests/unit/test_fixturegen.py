"""The fixture generator is deterministic: regenerating a scenario reproduces the committed bytes."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
sys.path.insert(0, str(ROOT / "scripts"))

pytest.importorskip("torch")


def _tree(root: Path) -> dict[str, bytes]:
    # expected/ holds ad-diff's report snapshots (scripts/update_golden.py), not generator output
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != "expected"
    }


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fixturegen.generate import generate

    out = tmp_path_factory.mktemp("fixtures")
    # both use the same 2-layer export, so this costs one torch.export
    generate(out, ["identical", "metadata_loss"])
    return out


@pytest.mark.parametrize("name", ["identical", "metadata_loss"])
def test_regenerated_scenario_matches_committed_bytes(regenerated: Path, name: str) -> None:
    fresh = _tree(regenerated / "scenarios" / name)
    committed = _tree(FIXTURES / "scenarios" / name)
    assert sorted(fresh) == sorted(committed)
    changed = [k for k in fresh if fresh[k] != committed[k]]
    assert changed == [], f"regenerated files differ from the committed ones: {changed[:5]}"


def test_manifest_matches_committed(regenerated: Path) -> None:
    assert (regenerated / "scenarios" / "manifest.yaml").read_bytes() == (
        FIXTURES / "scenarios" / "manifest.yaml"
    ).read_bytes()


def test_dump_files_follow_ad_numbering(regenerated: Path) -> None:
    names = sorted(
        p.name for p in (regenerated / "scenarios" / "identical" / "baseline" / "graphs").iterdir()
    )
    # build_model yields no GraphModule, so the first file is the export; disabled transforms still dump
    assert names[0] == "001_export_export_to_gm.txt"
    gemms = next(i for i, n in enumerate(names) if n.endswith("_post_load_fusion_fuse_gemms.txt"))
    graphs = regenerated / "scenarios" / "identical" / "baseline" / "graphs"
    body = lambda n: (graphs / n).read_text().split("\n", 2)[2]  # noqa: E731
    assert body(names[gemms]) == body(names[gemms - 1])  # fuse_gemms is disabled: repeats the graph
    assert [int(n[:3]) for n in names] == list(range(1, len(names) + 1))
    text = (regenerated / "scenarios" / "identical" / "baseline" / "graphs" / names[-1]).read_text()
    assert text.startswith(
        "# Transform: compile_model\n# Stage: compile\n# GraphModules found: 1\n\n\n" + "=" * 80
    )
    assert "# GraphModule: model\n" in text  # compile_model wraps the GraphModule: root is not one


def test_metadata_loss_candidate_has_nodes_without_val(regenerated: Path) -> None:
    graphs = regenerated / "scenarios" / "metadata_loss"
    rope = next((graphs / "candidate" / "graphs").glob("*_match_rope_pattern.txt")).read_text()
    assert "= auto_deploy.torch_rope.default(" in rope
    assert ") : ? : N/A\n" in rope
    assert ": ? : unknown, 1, 2)" in rope
    base = next((graphs / "baseline" / "graphs").glob("*_match_rope_pattern.txt")).read_text()
    assert "? : N/A" not in base


def test_no_machine_paths_or_addresses(regenerated: Path) -> None:
    files = [p for p in (regenerated / "scenarios").rglob("*") if p.is_file()]
    assert len(files) > 20, "the generator wrote (almost) nothing: the scan below would pass on nothing"
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert str(ROOT) not in text, path
        assert "/tmp/pytest" not in text, path
        assert " at 0x" not in text, path


_SKIP = "Skipping sharding for single device"
_CTX = "[stage=sharding, transform=detect_sharding] "


@pytest.mark.parametrize(
    ("fmt", "prefix", "line"),
    [
        # V0 and V1 do not patch the logger: a transform's own line has no context
        ("V0", "L1", f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {_SKIP}"),
        ("V1", "L1", f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {_SKIP}"),
        # V2's decorator prefixes every line logged during the call
        ("V2", "L1", f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {_CTX}{_SKIP}"),
        ("V3", "L1", f"[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] {_CTX}[APPLY] {_SKIP}"),
        # L2's info() bypasses log(): no rank, no context
        ("V3", "L2", f"[AUTO-DEPLOY] [INFO] {_SKIP}"),
        ("V3", "L3", f"[AUTO-DEPLOY] [INFO] [RANK 0] {_CTX}[APPLY] {_SKIP}"),
        ("V2", "L3", f"[AUTO-DEPLOY] [INFO] [RANK 0] {_CTX}{_SKIP}"),
    ],
)
def test_a_transforms_own_line_is_written_in_every_format(fmt: str, prefix: str, line: str) -> None:
    from fixturegen.events import Event
    from fixturegen.log_writer import LogStyle, render_log

    ev = Event("sharding", "detect_sharding", "applied", 0, said=(("info", _SKIP),))
    lines = render_log([ev], LogStyle(fmt=fmt, prefix=prefix, noise=0)).splitlines()
    own = [i for i, text in enumerate(lines) if text.endswith(_SKIP)]
    assert len(own) == 1
    assert re.sub(r"^\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] ", "", lines[own[0]]) == line  # L1's timestamp
    result = next(i for i, text in enumerate(lines) if "num_matches=0" in text or "[SUMMARY]" in text)
    assert own[0] < result, "a transform logs its own lines while it applies, before its result line"


def test_the_pipeline_records_what_a_transform_logs() -> None:
    from fixturegen.pipeline import RunSpec, run

    said = {ev.key: ev.said for ev in run(RunSpec()).events if ev.said}
    assert said == {"detect_sharding": (("info", _SKIP),)}
