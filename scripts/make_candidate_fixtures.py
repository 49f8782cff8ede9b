"""Regenerate the generated run folders of ``fixtures/candidates/`` with the fixture pipeline (deterministic).

    python scripts/make_candidate_fixtures.py            # -> fixtures/candidates/{sqrt_div,moe}
    python scripts/make_candidate_fixtures.py --out /tmp/c
    python scripts/make_candidate_fixtures.py --hf       # also hf_{mixtral,gpt_oss} (needs transformers)
    python scripts/make_candidate_fixtures.py --goldens  # only rewrite the goldens (review the git diff)

- ``sqrt_div/``: the tiny Llama of ``scripts/fixturegen`` with every decoder norm written
  ``w * (x / sqrt(mean(x^2) + eps))``: match_rmsnorm_pattern leaves those four unfused. Kept: the log, the
  dump after match_rmsnorm_pattern and the final dump.
- ``moe/``: a tiny Mixtral-style decoder (4 layers, each an HF-style MoE block: a router ``linear ->
  softmax -> topk`` and a per-expert loop ``index -> linear/silu/linear/mul -> linear -> mul ->
  index_add_``), exported with ``torch.export`` and run through the same pipeline with
  match_swiglu_pattern disabled (so the experts' ``silu * mul`` stays visible) and match_moe_pattern /
  fuse_moe present but matching nothing (the fixture pipeline has no MoE rewrite). Kept: the log and the
  final dump.
- ``hf_mixtral/``, ``hf_gpt_oss/`` (``--hf``, needs the ``gen`` extra): tiny ``MixtralForCausalLM`` and
  ``GptOssForCausalLM`` built from config objects and exported as transformers 5 exports them
  (:mod:`fixturegen.hf_models`); one final dump each. ``expected/candidates.txt`` beside each is its golden:
  the text report with the lookup against ``trtllm_src/`` (``--goldens`` rewrites it).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from fixturegen import pipeline  # noqa: E402
from fixturegen.log_writer import LogStyle, render_log  # noqa: E402
from fixturegen.model import Attention, ModelSpec, RMSNorm, export_model  # noqa: E402
from torch import nn  # noqa: E402

EXPERTS = 3
TOP_K = 2
EXPERT_DIM = 32


class Expert(nn.Module):
    """One expert MLP: ``w2(silu(w1(x)) * w3(x))`` (Mixtral naming)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(hidden, EXPERT_DIM, bias=False)
        self.w2 = nn.Linear(EXPERT_DIM, hidden, bias=False)
        self.w3 = nn.Linear(hidden, EXPERT_DIM, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoe(nn.Module):
    """HF Mixtral's sparse MoE block: softmax router, top-k, a loop over the experts."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.gate = nn.Linear(hidden, EXPERTS, bias=False)
        self.experts = nn.ModuleList([Expert(hidden) for _ in range(EXPERTS)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        x = x.view(-1, h)
        weights = F.softmax(self.gate(x), dim=1, dtype=torch.float)
        weights, chosen = torch.topk(weights, TOP_K, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        out = torch.zeros((b * s, h), dtype=x.dtype, device=x.device)
        mask = F.one_hot(chosen, num_classes=EXPERTS).permute(2, 1, 0)
        for e in range(EXPERTS):
            idx, top = torch.where(mask[e])
            y = self.experts[e](x[None, top].reshape(-1, h)) * weights[top, idx, None]
            out.index_add_(0, top, y.to(x.dtype))
        return out.reshape(b, s, h)


class MoeLayer(nn.Module):
    """Pre-norm decoder layer with the MoE block in place of the MLP."""

    def __init__(self, spec: ModelSpec, layer: int) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(spec.hidden, spec.eps)
        self.self_attn = Attention(spec, layer)
        self.post_attention_layernorm = RMSNorm(spec.hidden, spec.eps)
        self.block_sparse_moe = SparseMoe(spec.hidden)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.block_sparse_moe(self.post_attention_layernorm(x))


class Inner(nn.Module):
    """The ``model`` submodule: embedding, layers, final norm."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(spec.vocab, spec.hidden)
        self.layers = nn.ModuleList([MoeLayer(spec, i) for i in range(spec.layers)])
        self.norm = RMSNorm(spec.hidden, spec.eps)


class TinyMixtral(nn.Module):
    """``forward(input_ids, position_ids) -> logits``, the same interface as the fixture generator's Llama."""

    cos_cached: torch.Tensor
    sin_cached: torch.Tensor

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.spec = spec
        self.model = Inner(spec)
        self.lm_head = nn.Linear(spec.hidden, spec.vocab, bias=False)
        d = spec.head_dim
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        emb = torch.cat([torch.outer(torch.arange(spec.max_pos, dtype=torch.float32), inv)] * 2, dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        s = input_ids.shape[1]
        x = self.model.embed_tokens(input_ids)
        cos, sin = self.cos_cached[position_ids], self.sin_cached[position_ids]
        mask = torch.full((s, s), float("-inf"), device=input_ids.device).triu(1)
        for layer in self.model.layers:
            x = layer(x, cos, sin, mask)
        return self.lm_head(self.model.norm(x))


def _write(out: pipeline.RunOutput, folder: Path, keep: set[str], seed: int) -> None:
    """The run's log and the dumps after the transforms in ``keep``, numbered as the full run numbers them."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "graphs").mkdir(parents=True)
    (folder / "ad.log").write_text(
        render_log(out.events, LogStyle(seed=seed)), encoding="utf-8", newline="\n"
    )
    counter = 0
    for stage, key, texts in out.dumps:
        if texts["D3"] is None:
            continue
        counter += 1
        if key in keep:
            path = folder / "graphs" / f"{counter:03d}_{stage}_{key}.txt"
            path.write_text(texts["D3"], encoding="utf-8", newline="\n")


def make_sqrt_div(folder: Path) -> None:
    """The Llama whose decoder norms are all written with sqrt and div."""
    model = ModelSpec(layers=2, norm_variant=((0, "sqrt_div"), (1, "sqrt_div")))
    out = pipeline.run(pipeline.RunSpec(model=model))
    _write(out, folder, {"match_rmsnorm_pattern", "compile_model"}, seed=11)


def make_moe(folder: Path) -> None:
    """The Mixtral-style decoder, its MoE blocks left unfused."""
    spec = ModelSpec(layers=4)
    torch.manual_seed(spec.seed)
    exported = export_model(TinyMixtral(spec).eval())  # type: ignore[arg-type]
    original = pipeline._exported
    pipeline._exported = lambda _model: exported  # type: ignore[assignment]
    try:
        run = pipeline.RunSpec(
            model=spec,
            disabled=frozenset({"match_swiglu_pattern"}),
            extra=(
                ("pattern_matcher", "match_moe_pattern", "match_rope_layout"),
                ("post_load_fusion", "fuse_moe", "fuse_rmsnorm"),
            ),
        )
        out = pipeline.run.__wrapped__(run)  # uncached: the patched export must be used
    finally:
        pipeline._exported = original  # type: ignore[assignment]
    _write(out, folder, {"compile_model"}, seed=12)


HF = ("mixtral", "gpt_oss")
"""Models of :mod:`fixturegen.hf_models`, written to ``hf_<name>/``."""


def make_hf(folder: Path, name: str) -> None:
    """The final dump of a tiny transformers model (needs ``transformers``)."""
    from fixturegen import hf_models

    if folder.exists():
        shutil.rmtree(folder)
    (folder / "graphs").mkdir(parents=True)
    text = hf_models.render(name)
    (folder / "graphs" / "001_compile_compile_model.txt").write_text(text, encoding="utf-8", newline="\n")


def golden(folder: Path) -> str:
    """The golden of a run folder: the text report, looked up against the fixture source tree."""
    from ad_diff.candidates import find_candidates
    from ad_diff.candidates.render import render_text

    return render_text(find_candidates(folder, trtllm_src=folder.parent / "trtllm_src"))


def write_goldens(out: Path) -> None:
    """Rewrite ``hf_*/expected/candidates.txt`` from the committed dumps."""
    for name in HF:
        folder = out / f"hf_{name}"
        (folder / "expected").mkdir(exist_ok=True)
        (folder / "expected" / "candidates.txt").write_text(golden(folder), encoding="utf-8", newline="\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "fixtures" / "candidates"
    )
    ap.add_argument("--hf", action="store_true", help="also export the transformers models (gen extra)")
    ap.add_argument("--goldens", action="store_true", help="only rewrite the goldens of the hf_* fixtures")
    args = ap.parse_args(argv)
    if not args.goldens:
        make_sqrt_div(args.out / "sqrt_div")
        make_moe(args.out / "moe")
        print(f"wrote {args.out}/sqrt_div and {args.out}/moe")  # noqa: T201
        if args.hf:
            for name in HF:
                make_hf(args.out / f"hf_{name}", name)
    write_goldens(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
