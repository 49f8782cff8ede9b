"""Two-run dump folders built from the synthetic builder, one per behaviour the graph analysis must show."""

from __future__ import annotations

from pathlib import Path

from ad_diff.core.model import State, TransformRecord
from ad_diff.kinds.log.model import LogEnd, RunLog
from scripts.synth_dumps import Spec, write_run

UNFUSED = Spec(layers=3, fused_norm=False)
FUSED = Spec(layers=3)


def make_log(path: Path, steps: list[tuple[str, str, State, int | None]]) -> RunLog:
    """A RunLog with one record per step (what the lead's log parser would produce)."""
    seen: dict[tuple[str, str], int] = {}
    recs = []
    for k, (stage, transform, state, matches) in enumerate(steps, start=1):
        occ = seen.get((stage, transform), 0)
        seen[(stage, transform)] = occ + 1
        recs.append(TransformRecord(stage, transform, occ, state, matches, k))
    return RunLog(path, tuple(recs), 0, (0,), (), ("V3",), ("L1",), LogEnd.COMPLETE, "complete")


def rename_only(root: Path) -> tuple[Path, Path]:
    """Candidate has an extra early no-op transform and every later node counter shifted by one."""
    b, c = root / "baseline", root / "candidate"
    write_run(b, [("export", "export_to_gm", UNFUSED), ("post_load_fusion", "fuse_rmsnorm", FUSED)])
    shifted = Spec(layers=3, fused_norm=False, counter_offset=1)
    write_run(c, [("export", "export_to_gm", UNFUSED), ("post_export", "cleanup_noop_slice", shifted),
                  ("post_load_fusion", "fuse_rmsnorm", Spec(layers=3, counter_offset=1))])
    return b, c


def fusion_one_layer(root: Path) -> tuple[Path, Path]:
    """fuse_rmsnorm stops matching in layer 1 of the candidate."""
    b, c = root / "baseline", root / "candidate"
    write_run(b, [("export", "export_to_gm", UNFUSED), ("post_load_fusion", "fuse_rmsnorm", FUSED)])
    write_run(c, [("export", "export_to_gm", UNFUSED),
                  ("post_load_fusion", "fuse_rmsnorm", Spec(layers=3, unfused_layers=(1,)))])
    return b, c


def metadata_loss(root: Path) -> tuple[Path, Path, RunLog, RunLog]:
    """fuse_rmsnorm drops meta['val'] in the candidate; shape-dependent fuse_rmsnorm_quant then matches 0."""
    b, c = root / "baseline", root / "candidate"
    steps = [("export", "export_to_gm"), ("post_load_fusion", "fuse_rmsnorm"),
             ("post_load_fusion", "fuse_rmsnorm_quant")]
    write_run(b, [(*steps[0], UNFUSED), (*steps[1], FUSED), (*steps[2], Spec(layers=3, norm_quant=True))])
    nometa = Spec(layers=3, norm_meta=False)
    write_run(c, [(*steps[0], UNFUSED), (*steps[1], nometa), (*steps[2], nometa)])
    lb = make_log(b / "ad.log", [(*steps[0], State.APPLIED, 1), (*steps[1], State.APPLIED, 7),
                                 (*steps[2], State.APPLIED, 7)])
    lc = make_log(c / "ad.log", [(*steps[0], State.APPLIED, 1), (*steps[1], State.APPLIED, 7),
                                 (*steps[2], State.APPLIED, 0)])
    return b, c, lb, lc


def op_form_change(root: Path) -> tuple[Path, Path, RunLog, RunLog]:
    """A candidate cleanup turns split_with_sizes->getitem into narrow->contiguous->view; rope then fails."""
    b, c = root / "baseline", root / "candidate"
    steps = [("export", "export_to_gm"), ("post_export", "canonicalize_split"),
             ("pattern_matcher", "match_rope_pattern")]
    write_run(b, [(*steps[0], FUSED), (*steps[1], FUSED), (*steps[2], Spec(layers=3, rope_fused=True))])
    narrow = Spec(layers=3, rope_narrow=True)
    write_run(c, [(*steps[0], FUSED), (*steps[1], narrow), (*steps[2], narrow)])
    lb = make_log(b / "ad.log", [(*steps[0], State.APPLIED, 1), (*steps[1], State.APPLIED, 0),
                                 (*steps[2], State.APPLIED, 3)])
    lc = make_log(c / "ad.log", [(*steps[0], State.APPLIED, 1), (*steps[1], State.APPLIED, 3),
                                 (*steps[2], State.APPLIED, 0)])
    return b, c, lb, lc
