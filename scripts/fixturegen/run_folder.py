"""Write one run folder: ``ad.log``, ``graphs/NNN_<stage>_<key>.txt`` and optional ``config/`` files."""

from __future__ import annotations

import shutil
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from . import captures, dump_writer, rename
from .log_writer import LogStyle, Story, render_lines
from .pipeline import DEFAULT_PIPELINE, RunSpec, run
from .tensors import TensorSpec, write_tensors


@dataclass(frozen=True)
class Side:
    """One run of a scenario: what the pipeline does, how the log and dumps are written, config files."""

    spec: RunSpec = field(default_factory=RunSpec)
    style: LogStyle = field(default_factory=LogStyle)
    dump: str = "D3"
    dump_output: str = "bare"
    """How the dumps print their output line: a form of :data:`dump_writer.OUTPUT_FORMS` (``bare``: ``output
    %a, %b`` as AD writes it; ``parens``: ``output(%a, %b)``; ``spaced``: ``output (%a, %b)``)."""
    ranks: tuple[int, ...] = (0,)
    rank1_counts: tuple[tuple[str, int], ...] = ()
    config: tuple[tuple[str, str], ...] = ()
    """``(relative path, text)`` files written under the run folder (e.g. ``config/model_x.yaml``)."""
    counts: tuple[tuple[str, int], ...] = ()
    """Match counts every rank logs instead of the pipeline's (the graphs stay the pipeline's)."""
    rank_dies: tuple[int, str, str] | None = None
    """``(rank, key, error)``: that rank dies inside transform ``key`` (an uncaught error: traceback)."""
    restored_at: str | None = None
    """The run restored a cache at this transform: nothing up to it is logged or dumped, the dump counter
    starts at 001 after it."""
    restore_cache: str = "pipeline"
    """The cache ``restored_at`` restored: ``pipeline`` (AD's pipeline snapshot, ``Restored AutoDeploy pipeline
    snapshot for '<t>' from <dir>``) or ``graph`` (``AD_ENABLE_CACHING``'s graph cache of the graph before weight
    loading, ``[cache] Loaded graph from <dir>/graph.pt``)."""
    killed_before: str | None = None
    """The job was killed just before this transform: its log and dumps end there, with no error."""
    shutdown_error: bool = False
    """Python prints an ignored exception at shutdown, after the run finished."""
    rank_tags: bool = True
    capture: str = ""
    """A line-prefix form of :data:`captures.FORMS` the log is saved through."""
    log_name: str = "ad.log"
    compress: str = ""
    """``.gz``, ``.bz2`` or ``.xz``: the log is written compressed (the suffix is added to its name)."""
    layout: str = ""
    """``torchrun`` or ``mpirun``: one log file per rank and stream instead of one log."""
    dumps_from: RunSpec | None = None
    """Write ``graphs/`` from this other run (artifacts of two jobs mixed); the log stays ``spec``'s."""
    rank_counts: tuple[tuple[int, str, int], ...] = ()
    """``(rank, key, n)``: that rank reports ``n`` matches for ``key`` (the graphs stay the pipeline's)."""
    renamed: bool = False
    node_captures: int | None = None
    """Write ``tensors/``: the logits and per-node captures of the first N call nodes of the last dump (the
    same values in every run for the same node); ``None``: no tensors."""
    """Every dump names its nodes the way another torch version does (:func:`rename.torch_upgrade`)."""
    dump_keep: int | None = None
    """Keep only the first N dump files (a half-copied folder, a job killed while dumping); the log is
    whole."""
    dump_all: bool = False
    """Write every dump of ``dumps_from``, also of transforms this run's log never ran."""
    tensor_files: tuple[tuple[str, str, str], ...] = ()
    """``(file, name, fill)`` tensors written to ``tensors/<file>.safetensors``: ``fill`` ``seeded`` (values
    drawn from a generator seeded by the name: equal in both runs) or ``nan``."""
    links: tuple[tuple[str, str], ...] = ()
    """``(relative path, target)``: replace that entry of the run folder by a symbolic link to ``target``."""
    tensors: TensorSpec | None = None
    """Recorded ``tensors/`` (logits, inputs, reference), when the run records any."""


def default_yaml(**top: object) -> str:
    """``config/default.yaml``: the AD default.yaml subset of the transforms this pipeline runs, after the
    top-level keys ``top`` (e.g. ``world_size=2``) when given."""
    body = {**top, "transforms": {k: {"stage": s, "enabled": e} for s, k, e in DEFAULT_PIPELINE}}
    return ("# Subset of tensorrt_llm/_torch/auto_deploy/config/default.yaml (transforms the fixture pipeline runs)\n"
            + yaml.safe_dump(body, sort_keys=False))


def overlay_yaml(transforms: dict[str, dict[str, object]], **extra: object) -> str:
    """An overlay (``model_x.yaml``-style) file with LLM-args keys and a ``transforms:`` map."""
    return yaml.safe_dump({**extra, "transforms": transforms}, sort_keys=False)


def write_run(side: Side, folder: Path) -> None:
    """Run the pipeline for ``side`` and write its run folder (``folder`` must not exist yet)."""
    out = run(side.spec)
    folder.mkdir(parents=True)
    events = list(out.events)
    keys = [ev.key for ev in events]
    if side.restored_at is not None:
        events = events[keys.index(side.restored_at) + 1:]
    if side.killed_before is not None:
        events = events[: [ev.key for ev in events].index(side.killed_before)]
    counts = dict(side.counts)
    events = [replace(ev, matches=counts[ev.key]) if ev.key in counts else ev for ev in events]
    story = Story(side.ranks, dict(side.rank1_counts) or None, side.rank_dies, side.restored_at,
                  side.killed_before is not None, side.shutdown_error, side.rank_tags,
                  {(r, k): n for r, k, n in side.rank_counts} or None, world_size=side.spec.knobs.world_size,
                  restore_cache=side.restore_cache)
    pairs = render_lines(events, side.style, story)
    if side.capture:
        pairs = captures.FORMS[side.capture](pairs)
    files = (captures.per_rank(pairs, side.layout) if side.layout
             else {side.log_name: captures.text_of(pairs)})
    for rel, text in files.items():
        path = folder / (rel + side.compress)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(captures.COMPRESSORS[side.compress](data) if side.compress else data)
    logged = {ev.key for ev in events}
    graphs = folder / "graphs"
    graphs.mkdir()
    counter = 0
    last = ""
    for stage, key, texts in (run(side.dumps_from) if side.dumps_from is not None else out).dumps:
        if key not in logged and not side.dump_all:
            continue  # restored (not run) or after the kill
        text = texts[side.dump]
        if text is None:
            continue  # D3: no GraphModule; D1/D2: root is not a GraphModule -> no file, no counter
        if side.dump_keep is not None and counter >= side.dump_keep:
            break
        counter += 1
        if side.renamed:
            text = rename.torch_upgrade(text)
        text = dump_writer.print_output(text, side.dump_output)
        (graphs / f"{counter:03d}_{stage}_{key}.txt").write_text(text, encoding="utf-8", newline="\n")
        last = text
    if side.node_captures is not None:
        _write_captures(folder / "tensors", last, side.node_captures)
    for rel, text in side.config:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    if side.tensors is not None:
        write_tensors(side.tensors, folder)
    _write_tensors(folder, side.tensor_files)
    for rel, target in side.links:
        path = folder / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        path.symlink_to(target)


def _write_tensors(folder: Path, specs: tuple[tuple[str, str, str], ...]) -> None:
    """``tensors/<file>.safetensors`` from ``(file, name, fill)`` specs (deterministic bytes)."""
    if not specs:
        return
    import torch
    from safetensors.torch import save_file

    files: dict[str, dict[str, torch.Tensor]] = {}
    for file, name, fill in specs:
        gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
        t = torch.randn(1, 8, 64, generator=gen)
        files.setdefault(file, {})[name] = t.fill_(float("nan")) if fill == "nan" else t
    (folder / "tensors").mkdir(exist_ok=True)
    for file, tensors in files.items():
        save_file(tensors, str(folder / "tensors" / f"{file}.safetensors"), metadata={"writer": "fixturegen"})


def _write_captures(folder: Path, dump: str, nodes: int) -> None:
    """``outputs.safetensors`` (logits) and ``nodes.safetensors`` (the first ``nodes`` call nodes of ``dump``),
    values fixed by the name alone."""
    import re
    import zlib

    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True)
    names = re.findall(r"^%(\w+) = ", dump, re.M)[:nodes]
    save_file({"logits": torch.arange(64, dtype=torch.float32).reshape(2, 32) / 7},
              str(folder / "outputs.safetensors"))
    save_file({n: torch.full((4,), float(zlib.crc32(n.encode()) % 97)) for n in names},
              str(folder / "nodes.safetensors"))
