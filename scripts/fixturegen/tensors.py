"""Recorded tensors of a scenario run (``tensors/``): the tiny model's logits, computed for real.

A :class:`TensorSpec` says which model computes the logits and what the run does to them (FP8 weights, a
kernel that rounds differently, a broken affine output), and which reference (``tensors/reference/``) the
run records. Files are written without metadata, so regeneration is byte-identical.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import save_file

from .model import ModelSpec, build_model

BATCH, SEQ = 2, 16


@dataclass(frozen=True)
class TensorSpec:
    """How one run's ``tensors/`` is made."""

    model: ModelSpec
    """The model whose float32 forward gives the logits (same seed: same weights)."""
    fp8_linears: bool = False
    """Decoder linears run in FP8: weights and inputs through float8_e4m3fn (per-tensor scales), as an FP8
    checkpoint is served."""
    kernel_noise: float = 0.0
    """Relative Gaussian noise on the logits (a kernel or backend that computes differently)."""
    affine: tuple[float, float] | None = None
    """``(a, b)``: the run's logits are ``a * x + b`` (a broken output)."""
    reference: str = ""
    """``""``: none; ``"true"``: the baseline model's float32 logits; ``"own"``: this run's own logits in
    float32 (a reference that agrees with whatever the run computed)."""
    true_model: ModelSpec | None = None
    """The model of the ``"true"`` reference (default: ``model``)."""


def inputs() -> torch.Tensor:
    """The prompt both runs use: ``[BATCH, SEQ]`` token ids (seed 1)."""
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, ModelSpec().vocab, (BATCH, SEQ), generator=g)


def _fp8(w: torch.Tensor) -> torch.Tensor:
    scale = w.abs().max().clamp(min=1e-12) / 448.0
    return (w / scale).to(torch.float8_e4m3fn).to(w.dtype) * scale


@functools.cache
def logits(model: ModelSpec, fp8: bool = False) -> torch.Tensor:
    """Float32 logits of ``model`` on :func:`inputs` (weights through FP8 when ``fp8``)."""
    m = build_model(model)
    if fp8:
        with torch.no_grad():
            for name, mod in m.named_modules():
                if name.startswith("model.layers.") and isinstance(mod, torch.nn.Linear):
                    mod.weight.copy_(_fp8(mod.weight))
                    mod.register_forward_pre_hook(lambda _m, args: (_fp8(args[0]),))
    ids = inputs()
    pos = torch.arange(SEQ).unsqueeze(0).expand(BATCH, SEQ)
    with torch.no_grad():
        return m(ids, pos).float()


def run_logits(spec: TensorSpec) -> torch.Tensor:
    """The logits the run records (float32, before the bf16 cast)."""
    x = logits(spec.model, spec.fp8_linears)
    if spec.kernel_noise:
        g = torch.Generator().manual_seed(7)
        x = x + spec.kernel_noise * x.std() * torch.randn(x.shape, generator=g)
    if spec.affine is not None:
        a, b = spec.affine
        x = a * x + b
    return x


def write_reference(spec: TensorSpec, folder: Path) -> None:
    """``folder/outputs.safetensors`` holding the reference ``spec.reference`` names."""
    if spec.reference == "true":
        ref = logits(spec.true_model or spec.model)
    elif spec.reference == "own":
        ref = run_logits(spec)
    else:
        raise ValueError(f"unknown reference {spec.reference!r}")
    folder.mkdir(parents=True, exist_ok=True)
    save_file({"logits": ref.contiguous()}, str(folder / "outputs.safetensors"))


def write_tensors(spec: TensorSpec, run: Path) -> None:
    """``run/tensors/``: bf16 logits, the inputs and, when asked, the reference."""
    folder = run / "tensors"
    folder.mkdir(parents=True)
    save_file({"logits": run_logits(spec).bfloat16().contiguous()}, str(folder / "outputs.safetensors"))
    save_file({"input_ids": inputs()}, str(folder / "inputs.safetensors"))
    if spec.reference:
        write_reference(spec, folder / "reference")
