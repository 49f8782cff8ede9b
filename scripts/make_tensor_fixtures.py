"""Generate the CPU-made tensor fixtures under fixtures/tensors/synthetic/ (never hand-edit them).

    python scripts/make_tensor_fixtures.py [--out fixtures/tensors/synthetic]

One folder per scenario, each with ``baseline/tensors`` and ``candidate/tensors``:

* ``within``: bf16 logits plus noise of about one bf16 ulp at their scale (acceptable drift, no finding);
* ``beyond``: a term dropped from part of the logits (drift beyond tolerance);
* ``nan``: the candidate's logits hold NaN;
* ``shape``: the candidate's logits have another shape;
* ``missing``: the candidate did not record ``hidden``;
* ``pt_dict``: both runs as ``.pt`` dicts of tensors (loaded with ``weights_only=True``);
* ``malicious``: the candidate's ``outputs.pt`` is a pickle whose loading would run
  ``os.system("touch /tmp/ad_diff_pwned")``; it must be refused, never executed;
* ``garbage``: the candidate's safetensors file is truncated, plus a junk ``.pt``.

Row scenarios (issue 19; logits ``[4, 128, 256]``, i.e. 512 rows, with an fp32 reference in the baseline):

* ``one_row`` / ``one_row_noref``: one row of 512 (request 2, last position) off by 16x its rounding error
  (as when its position id is wrong), everything else bitwise equal: whole-tensor figures pass (1.2x), the row
  gates (with and without a reference);
* ``spread_noise``: rounding noise spread evenly over every row (passes, with and without a reference);
* ``gathered``: the candidate ran ``gather_logits_before_lm_head`` (its ``ad.log`` says so) and recorded
  ``[4, 1, 256]``: its last position equals the baseline's (passes, with a note).
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

import torch
from safetensors.torch import save_file


class _Evil:
    """Pickles to a call of os.system (torch.save writes it; only unpickling would run it)."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch /tmp/ad_diff_pwned",))


def _logits(seed: int, shape: tuple[int, ...] = (4, 16, 64)) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (3 * torch.randn(shape, generator=g)).bfloat16()


def _save(run: Path, tensors: dict[str, torch.Tensor], name: str = "outputs") -> None:
    (run / "tensors").mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(run / "tensors" / f"{name}.safetensors"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "fixtures/tensors/synthetic"
    )
    out = ap.parse_args().out
    shutil.rmtree(out, ignore_errors=True)
    g = torch.Generator().manual_seed(7)
    base = _logits(0)
    hidden = torch.randn(4, 16, 32, generator=g).bfloat16()
    ids = torch.randint(0, 64, (4, 16), generator=g)

    def pair(name: str, cand: dict[str, torch.Tensor]) -> None:
        _save(out / name / "baseline", {"logits": base, "hidden": hidden})
        _save(out / name / "baseline", {"input_ids": ids}, "inputs")
        _save(out / name / "candidate", cand)
        _save(out / name / "candidate", {"input_ids": ids}, "inputs")

    noise = (base.float() + 0.02 * torch.randn(base.shape, generator=g)).bfloat16()  # ~bf16 ulp at |x|~3
    pair("within", {"logits": noise, "hidden": hidden})
    wrong = base.float().clone()
    wrong[..., :16] += 1.5 * torch.randn(4, 16, 16, generator=g)
    pair("beyond", {"logits": wrong.bfloat16(), "hidden": hidden})
    nan = base.clone()
    nan[0, 3, :5] = float("nan")
    nan[1, 0, 0] = float("inf")
    pair("nan", {"logits": nan, "hidden": hidden})
    pair("shape", {"logits": base[:, :8].contiguous(), "hidden": hidden})
    pair("missing", {"logits": base})

    for side, t in (("baseline", base), ("candidate", noise)):
        d = out / "pt_dict" / side / "tensors"
        d.mkdir(parents=True)
        torch.save({"logits": t, "extra": {"hidden": hidden}}, d / "outputs.pt")

    _save(out / "malicious" / "baseline", {"logits": base})
    evil = out / "malicious" / "candidate" / "tensors"
    evil.mkdir(parents=True)
    torch.save({"logits": base, "payload": _Evil()}, evil / "outputs.pt")

    _save(out / "garbage" / "baseline", {"logits": base, "hidden": hidden})
    _save(out / "garbage" / "baseline", {"extra": hidden}, "more")
    gdir = out / "garbage" / "candidate" / "tensors"
    _save(out / "garbage" / "candidate", {"logits": base, "hidden": hidden})
    full = (gdir / "outputs.safetensors").read_bytes()
    (gdir / "outputs.safetensors").write_bytes(full[: len(full) - 100])
    (gdir / "more.pt").write_bytes(b"this is not a torch file\n")
    _row_scenarios(out)


def _gather_log(applied: bool) -> str:
    """A small V3 log whose post_load_fusion stage runs (or skips) gather_logits_before_lm_head."""
    line = (
        "[AUTO-DEPLOY] [INFO] [RANK 0] [stage={}, transform={}] [SUMMARY] {} "
        "| time: 0.100s (pre=0.000s, apply=0.100s, post=0.000s)\n"
    )
    rows = [("export", "export_to_gm", "matches=1"),
            ("post_load_fusion", "gather_logits_before_lm_head", "matches=1" if applied else "disabled"),
            ("compile", "compile_model", "matches=1")]
    return "".join(
        line.format(*r) if r[2] != "disabled" else line.format(*r).split(" | time")[0] + "\n" for r in rows
    )


def _row_scenarios(out: Path) -> None:
    g = torch.Generator().manual_seed(19)
    batch, seq, vocab = 4, 128, 256
    ref = 3 * torch.randn(batch, seq, vocab, generator=g)  # the fp32 "truth"
    base = (ref + 0.01 * torch.randn(ref.shape, generator=g)).bfloat16()  # bf16 model: rounding-level error
    wrong = base.clone()
    # the last token of request 2 computed slightly wrong (as for a wrong position id): 16x the row's rounding
    # error
    wrong[2, 127] = (base[2, 127].float() + 0.16 * torch.randn(vocab, generator=g)).bfloat16()
    spread = (ref + 0.01 * torch.randn(ref.shape, generator=g)).bfloat16()  # other rounding, every row

    def pair(name: str, cand: torch.Tensor, reference: bool = True) -> None:
        _save(out / name / "baseline", {"logits": base})
        _save(out / name / "candidate", {"logits": cand})
        if reference:
            (out / name / "baseline" / "tensors" / "reference").mkdir(parents=True)
            save_file({"logits": ref.contiguous()}, str(out / name / "baseline" / "tensors" / "reference" /
                                                         "outputs.safetensors"))

    pair("one_row", wrong)
    pair("one_row_noref", wrong, reference=False)
    pair("spread_noise", spread)
    pair("spread_noise_noref", spread, reference=False)
    pair("gathered", base[:, -1:, :].contiguous())
    for side, applied in (("baseline", False), ("candidate", True)):
        (out / "gathered" / side / "ad.log").write_text(_gather_log(applied))


if __name__ == "__main__":
    main()
