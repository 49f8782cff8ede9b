"""Generate the MoE run pairs of ``fixtures/tensors/moe/`` from real transformers MoE classes (issue 42).

    python scripts/make_moe_fixtures.py [--out fixtures/tensors/moe]     # needs the `gen` extra

Each pair is ``<name>/baseline`` and ``<name>/candidate``: ``ad.log``, ``graphs/`` (the final graph in
every dump: the MoE transforms already applied, :mod:`fixturegen.moe_runs`), ``tensors/`` (bf16 logits,
the input ids and, where said, per-node captures in ``nodes.safetensors``). The two runs of a pair share the
graph and the weights; only a kernel differs (:class:`fixturegen.moe_runs.Kernels`):

* ``near_tie``: ``MixtralForCausalLM`` (8 experts, top-2, router written as transformers writes it:
  ``linear -> softmax -> topk``); the candidate's RMSNorm rounds once instead of twice (at most about one
  bf16 ulp). The seed is the first one whose pair holds a routing flip in layer 0 (flips are rare: most
  seeds hold none). Captures: every router's logits, the routing outputs, the MoE ops' outputs, every
  RMSNorm and the residual adds.
* ``router_broken``: ``Qwen3MoeForCausalLM`` (8 experts, top-2) with the routing fused into
  ``auto_deploy::torch_moe_router(logits, 2)``; the candidate's routing kernel takes the softmax over the
  tokens (dim 0) instead of the experts: about half the tokens change experts, at clear margins, while
  the first layer's router logits are bitwise equal. Captures as ``near_tie``.
* ``no_router_captures``: ``near_tie``'s runs recording the logits only (no per-node captures).

Files are written without metadata, so regeneration is byte-identical.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from fixturegen import moe_runs as M  # noqa: E402
from fixturegen.dump_writer import graph_modules, render_d3  # noqa: E402
from fixturegen.events import Event  # noqa: E402
from fixturegen.log_writer import LogStyle, render_log  # noqa: E402
from safetensors.torch import save_file  # noqa: E402
from torch import fx  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
_KEPT_OPS = ("torch_rmsnorm", "trtllm_moe_fused", "torch_moe_router", "topk")


def _pipeline(fused_router: bool) -> list[Event]:
    """What the log says each transform did (the same in both runs of a pair). The model exports with its
    MoE and norm ops already in place (as AD's own model implementations do), so the matchers find nothing
    more and every dump holds the exported graph."""
    del fused_router
    return [
        Event("factory", "build_model", "applied", 0),
        Event("export", "export_to_gm", "applied", 1),
        Event("pattern_matcher", "match_moe_pattern", "applied", 0),
        Event("pattern_matcher", "match_rmsnorm_pattern", "applied", 0),
        Event("pattern_matcher", "match_moe_routing_pattern", "applied", 0),
        Event("post_load_fusion", "fuse_moe", "applied", 0),
        Event("compile", "compile_model", "applied", 0),
    ]


def keep(n: fx.Node) -> bool:
    """The captured nodes: routers (linears with an experts-wide output), routing, MoE, norms, residuals."""
    target = str(n.target)
    if any(op in target for op in _KEPT_OPS) or target == "aten.add.Tensor":
        return True
    if n.target is torch.ops.aten.linear.default:
        return "gate" in str(n.args[1])  # the router: transformers names its weight mlp.gate.weight
    return target == "<built-in function getitem>" and any(op in str(n.args[0].target) for op in _KEPT_OPS)


def write_run(folder: Path, exp: M.Exported, kernels: M.Kernels, fused_router: bool, nodes: bool,
              seed: int) -> None:
    """One run folder of ``exp`` computed with ``kernels``."""
    logits, captured = M.run(exp, kernels, keep)
    (folder / "graphs").mkdir(parents=True)
    events = _pipeline(fused_router)
    (folder / "ad.log").write_text(render_log(events, LogStyle(seed=seed)), encoding="utf-8", newline="\n")
    sections = graph_modules(exp.gm)
    for i, ev in enumerate(events[1:], start=1):  # build_model yields no GraphModule: no dump
        text = render_d3(ev.stage, ev.key, sections)
        path = folder / "graphs" / f"{i:03d}_{ev.stage}_{ev.key}.txt"
        path.write_text(text, encoding="utf-8", newline="\n")
    tensors = folder / "tensors"
    tensors.mkdir()
    save_file({"logits": logits.contiguous()}, str(tensors / "outputs.safetensors"))
    save_file({"input_ids": exp.ids.contiguous()}, str(tensors / "inputs.safetensors"))
    if nodes:
        kept = {k: v.contiguous() for k, v in sorted(captured.items())}
        save_file(kept, str(tensors / "nodes.safetensors"))


def flips(exp: M.Exported, kernels: M.Kernels) -> list[tuple[str, int]]:
    """``(router node, token)`` of every token whose top-2 experts differ between the default kernels and
    ``kernels`` (to pick a seed that holds a flip)."""
    _, base = M.run(exp, M.Kernels(), keep)
    _, cand = M.run(exp, kernels, keep)
    out = []
    for name, b in base.items():
        if name.startswith("linear") and b.dim() == 2:
            ib = b.float().topk(2, -1).indices.sort(-1).values
            ic = cand[name].float().topk(2, -1).indices.sort(-1).values
            out += [(name, int(t)) for t in (ib != ic).any(-1).nonzero().flatten()]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=ROOT / "fixtures/tensors/moe")
    out = ap.parse_args().out
    shutil.rmtree(out, ignore_errors=True)
    fused = M.Kernels(rmsnorm="fused")
    for seed in range(M.SEED, M.SEED + 50):  # the first seed whose pair flips a token in layer 0
        exp = M.export("mixtral", seed=seed)
        found = flips(exp, fused)
        if found and found[0][0] == "linear_4":
            break
    else:
        raise SystemExit("no seed gave a routing flip in layer 0")
    print(f"near_tie: seed {seed}, flips {found}")
    for name, nodes in (("near_tie", True), ("no_router_captures", False)):
        write_run(out / name / "baseline", exp, M.Kernels(), False, nodes, seed=1)
        write_run(out / name / "candidate", exp, fused, False, nodes, seed=2)
    broken = M.export("qwen3_moe", fused_router=True)
    write_run(out / "router_broken" / "baseline", broken, M.Kernels(), True, True, seed=1)
    write_run(out / "router_broken" / "candidate", broken, M.Kernels(router_dim=0), True, True, seed=2)


if __name__ == "__main__":
    main()
