"""Recording API: save a run's output tensors where ``ad-diff`` finds them (``<run>/tensors/``).

Call it from the script that runs AutoDeploy, once per run (baseline and candidate, same inputs)::

    from ad_diff.recording import save_tensors, capture_nodes

    save_tensors(run_dir, {"logits": logits}, inputs={"input_ids": input_ids})
    save_tensors(run_dir, capture_nodes(gm, input_ids), file="nodes")   # optional per-node captures
    save_tensors(run_dir, {"logits": logits_fp32}, reference=True)      # optional fp32/fp64 reference

Files written (safetensors, tensors copied to CPU and made contiguous):

* ``tensors/<file>.safetensors``: outputs (default ``file="outputs"``), or per-node captures when the file
  name starts with ``nodes``;
* ``tensors/inputs.safetensors``: the inputs (prompt ids); ad-diff checks both runs used the same ones;
* ``tensors/reference/<file>.safetensors``: higher-precision reference outputs;
* ``tensors/record.json``: per file, the dtype and shape of every tensor and the metadata; the device.

See ``docs/recording-tensors.md``. torch and safetensors are imported inside the functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core import lazy, outfile, safepath
from ad_diff.errors import AdDiffError

if TYPE_CHECKING:
    import safetensors.torch as safetensors_torch
    import torch
    import torch.fx as torch_fx
else:
    torch = lazy.module("torch")
    torch_fx = lazy.module("torch.fx")
    safetensors_torch = lazy.module("safetensors.torch")

_FILE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def save_tensors(
    run_dir: Path | str,
    tensors: Mapping[str, Any],
    *,
    inputs: Mapping[str, Any] | None = None,
    file: str = "outputs",
    reference: bool = False,
    metadata: Mapping[str, str] | None = None,
    rank: int | None = None,
) -> Path:
    """Save ``tensors`` (name -> tensor) into ``run_dir/tensors/`` and return the written file.

    ``inputs`` (name -> tensor, e.g. ``{"input_ids": ids}``) are saved to ``inputs.safetensors`` beside
    them. ``reference=True`` stores the tensors as the higher-precision reference of the outputs with the
    same names. ``metadata`` (str -> str) goes into the safetensors header and ``record.json``.
    Existing files of the same name are replaced. ``rank`` (a tensor-parallel run: each rank's whole
    outputs) saves the outputs and inputs into ``tensors/rank<rank>/``; ad-diff compares each rank's outputs
    with the other run's (an unsharded run's, or the same rank's). A reference is the run's, not a rank's.
    """
    save_file = safetensors_torch.save_file

    if not _FILE_RE.match(file):
        raise ValueError(f"file name {file!r}: use letters, digits, '_', '.', '-'")
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < 1 << 20):
        raise ValueError(f"rank {rank!r}: a rank is a whole number from 0")
    if rank is not None and reference:
        raise ValueError("a reference is the run's, not a rank's: save it without rank=")
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    top = run / "tensors"
    folder = top if rank is None else top / f"rank{rank}"
    target_dir = folder / "reference" if reference else folder
    # the one writer: a tensors/ or reference/ planted as a link, or a file there that is one, is refused
    outfile.folder(target_dir, within=run)
    path = target_dir / f"{file}.safetensors"
    meta = {"torch": torch.__version__, **(metadata or {})}
    cpu = _cpu(tensors)
    outfile.write_via_name(path, lambda name: save_file(cpu, name, metadata=meta))
    entries = {path.relative_to(top).as_posix(): {"metadata": meta, "tensors": _describe(tensors)}}
    if inputs:
        ipath = folder / "inputs.safetensors"
        cpu_inputs = _cpu(inputs)
        outfile.write_via_name(ipath, lambda name: save_file(cpu_inputs, name, metadata=meta))
        entries[ipath.relative_to(top).as_posix()] = {"metadata": meta, "tensors": _describe(inputs)}
    _update_index(top, entries)
    return path


def capture_nodes(gm: Any, *args: Any, nodes: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Run the ``torch.fx.GraphModule`` ``gm`` on ``args`` and return every node's tensor output by name.

    ``nodes`` (an iterable of node names, or a predicate ``node -> bool``) limits what is kept; by
    default all ``call_function`` / ``call_method`` / ``call_module`` nodes with a tensor output.
    Tuple outputs are stored as ``<node>.0``, ``<node>.1``. Outputs are copied to CPU as they are
    produced, so GPU memory does not grow with the number of nodes.
    """
    return NodeCapture(gm, nodes).capture(*args, **kwargs)


class NodeCapture:
    """An ``fx.Interpreter`` that keeps a CPU copy of selected nodes' outputs (see :func:`capture_nodes`)."""

    def __init__(self, gm: Any, nodes: Any = None) -> None:
        keep = nodes
        if keep is not None and not callable(keep):
            names = set(keep)
            keep = lambda n: n.name in names  # noqa: E731
        captured: dict[str, Any] = {}

        class _Interp(torch_fx.Interpreter):
            def run_node(self, n: torch_fx.Node) -> Any:
                out = super().run_node(n)
                if n.op in ("call_function", "call_method", "call_module") and (keep is None or keep(n)):
                    _store(captured, n.name, out)
                return out

        self._interp = _Interp(gm)
        self.captured = captured

    def capture(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Run the graph once and return the captured tensors."""
        with torch.no_grad():
            self._interp.run(*args, **kwargs)
        return dict(self.captured)


def _store(out: dict[str, Any], name: str, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        out[name] = value.detach().to("cpu", copy=True).contiguous()
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            if isinstance(v, torch.Tensor):
                out[f"{name}.{i}"] = v.detach().to("cpu", copy=True).contiguous()


def _cpu(tensors: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name!r}: expected a torch.Tensor, got {type(t).__name__}")
        out[str(name)] = t.detach().to("cpu").contiguous()
    return out


def _describe(tensors: Mapping[str, Any]) -> dict[str, Any]:
    return {
        str(n): {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape)}
        for n, t in tensors.items()
    }


def _update_index(folder: Path, entries: dict[str, Any]) -> None:
    index_path = folder / "record.json"
    try:  # the one opener and the bounded JSON reader; an unreadable index starts over
        index = safepath.read_json(index_path, folder, "the record.json save_tensors writes", 16 << 20)
    except AdDiffError:
        index = {}
    if not isinstance(index, dict) or not isinstance(index.get("files", {}), dict):
        index = {}
    files = index.setdefault("files", {})
    files.update(entries)
    index["device"] = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    text = json.dumps(index, indent=2, sort_keys=True) + "\n"
    outfile.write_file(index_path, text.encode("utf-8"), rewrite=True)  # read above to be updated
