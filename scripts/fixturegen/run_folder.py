"""Write one run folder: ``ad.log``, ``graphs/NNN_<stage>_<key>.txt`` and optional ``config/`` files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .log_writer import LogStyle, render_log
from .pipeline import DEFAULT_PIPELINE, RunSpec, run


@dataclass(frozen=True)
class Side:
    """One run of a scenario: what the pipeline does, how the log and dumps are written, config files."""

    spec: RunSpec = field(default_factory=RunSpec)
    style: LogStyle = field(default_factory=LogStyle)
    dump: str = "D3"
    ranks: tuple[int, ...] = (0,)
    rank1_counts: tuple[tuple[str, int], ...] = ()
    config: tuple[tuple[str, str], ...] = ()
    """``(relative path, text)`` files written under the run folder (e.g. ``config/model_x.yaml``)."""
    dumps_from: RunSpec | None = None
    """Write ``graphs/`` from this other run (artifacts of two jobs mixed); the log stays ``spec``'s."""
    dump_keep: int | None = None
    """Keep only the first N dump files (a half-copied folder, a job killed while dumping); the log is
    whole."""


def default_yaml() -> str:
    """``config/default.yaml``: the AD default.yaml subset of the transforms this pipeline runs."""
    body = {"transforms": {k: {"stage": s, "enabled": e} for s, k, e in DEFAULT_PIPELINE}}
    return ("# Subset of tensorrt_llm/_torch/auto_deploy/config/default.yaml (transforms the fixture pipeline runs)\n"
            + yaml.safe_dump(body, sort_keys=False))


def overlay_yaml(transforms: dict[str, dict[str, object]], **extra: object) -> str:
    """An overlay (``model_x.yaml``-style) file with LLM-args keys and a ``transforms:`` map."""
    return yaml.safe_dump({**extra, "transforms": transforms}, sort_keys=False)


def write_run(side: Side, folder: Path) -> None:
    """Run the pipeline for ``side`` and write its run folder (``folder`` must not exist yet)."""
    out = run(side.spec)
    folder.mkdir(parents=True)
    log = render_log(out.events, side.style, ranks=side.ranks, rank1_counts=dict(side.rank1_counts) or None)
    (folder / "ad.log").write_text(log, encoding="utf-8", newline="\n")
    graphs = folder / "graphs"
    graphs.mkdir()
    counter = 0
    for stage, key, texts in (run(side.dumps_from) if side.dumps_from is not None else out).dumps:
        text = texts[side.dump]
        if text is None:
            continue  # D3: no GraphModule; D1/D2: root is not a GraphModule -> no file, no counter
        if side.dump_keep is not None and counter >= side.dump_keep:
            break
        counter += 1
        (graphs / f"{counter:03d}_{stage}_{key}.txt").write_text(text, encoding="utf-8", newline="\n")
    for rel, text in side.config:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
