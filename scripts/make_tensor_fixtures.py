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
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "fixtures/tensors/synthetic")
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


if __name__ == "__main__":
    main()
