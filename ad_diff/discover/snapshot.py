"""Golden counts: a run's per-transform states and match counts in one small YAML file.

``ad-diff snapshot RUN/ -o counts.yaml`` writes it; ``ad-diff counts.yaml CANDIDATE/`` checks a candidate
against it, so CI needn't re-run the baseline for every pull request. The file is read back into a
synthetic baseline :class:`RunLog`, and the normal comparison runs on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ad_diff import __version__
from ad_diff.core import safepath
from ad_diff.core.model import BASELINE, State, TransformRecord
from ad_diff.discover import RunArtifacts, discover
from ad_diff.errors import InputError
from ad_diff.kinds.log import parse as log_parser
from ad_diff.kinds.log.model import LogEnd, RunLog

# yaml is imported by the functions that read or write a snapshot: a comparison of two run folders never
# needs it, and it costs ~15 ms of start-up.

SNAPSHOT_VERSION = 1
_MARKER = "ad_diff_snapshot"
_HEADER = (
    "# ad-diff snapshot: per-transform states and match counts of one AutoDeploy run.\n"
    "# Check a candidate against it with: ad-diff THIS_FILE.yaml CANDIDATE_RUN/\n"
)


def metadata_coverage(graphs: Path | None) -> dict[str, Any]:
    """Per-transform metadata coverage from a run's graph dumps: ``{"stage/transform[#k]": {...}}``.

    Each value holds ``nodes`` and ``with_meta`` (placeholders and calls) and ``args`` / ``args_with_meta``
    (``%name`` arguments), counted by :func:`ad_diff.graph_metrics.coverage`. Empty without dumps.
    Identical dump bodies (disabled transforms repeat the graph) are parsed once.
    """
    if graphs is None:
        return {}
    from ad_diff.discover.dumps import list_dumps
    from ad_diff.errors import AdDiffError
    from ad_diff.kinds.graph.cache import DumpLoader
    from ad_diff.kinds.graph.measure import coverage

    out: dict[str, Any] = {}
    cache: dict[bytes, dict[str, int]] = {}
    loader = DumpLoader()  # the comparison's reader: vetted files, size cap, each distinct body parsed once
    for ref in list_dumps(graphs)[0]:
        got = loader.load(ref)
        if got.dump is None:
            raise AdDiffError(got.error or f"{ref.path}: unreadable graph dump")
        if got.digest not in cache:
            c = coverage(got.dump)
            cache[got.digest] = {"nodes": c.nodes_total, "with_meta": c.nodes_known,
                                 "args": c.args_total, "args_with_meta": c.args_known}
        out[ref.key] = cache[got.digest]
    return out


def check_coverage(snapshot_path: Path, graphs: Path | None) -> list[tuple[str, int, int]]:
    """Transforms whose candidate dump has more nodes without metadata than the snapshot recorded.

    Returns ``(stage/transform[#k], nodes without metadata in the snapshot, now)`` per such transform;
    empty when the snapshot holds no coverage or nothing was lost.
    """
    data = _load(snapshot_path)
    golden = data.get("metadata_coverage") if isinstance(data, dict) else None
    if not isinstance(golden, dict) or not golden or graphs is None:
        return []
    lost: list[tuple[str, int, int]] = []
    excess = 0  # nodes without metadata beyond the snapshot's, carried along the pipeline
    for key, now in metadata_coverage(graphs).items():
        then = golden.get(key)
        if not isinstance(then, dict):
            continue
        try:
            before = int(then.get("nodes", 0)) - int(then.get("with_meta", 0))
        except (TypeError, ValueError):
            raise InputError(
                snapshot_path, f"metadata_coverage.{key}: expected whole numbers for nodes and with_meta"
            ) from None
        after = now["nodes"] - now["with_meta"]
        # Report where the loss first appears (or grows), not at every later dump that inherits it.
        if after - before > excess:
            lost.append((key, before, after))
        excess = max(after - before, 0)
    return lost


def take(run: Path, rank: int = 0, log: Path | None = None) -> dict[str, Any]:
    """Read run folder ``run`` and return the snapshot as plain data (see :func:`dump`)."""
    art = discover(run, BASELINE, log)
    assert art.log is not None  # discover raises otherwise
    parsed = log_parser.parse(art.logs, rank=rank)
    transforms = []
    for t in parsed.transforms:
        row: dict[str, Any] = {"stage": t.stage, "transform": t.transform, "state": t.state.value,
                               "matches": t.matches}
        if t.occurrence:
            row["occurrence"] = t.occurrence
        transforms.append(row)
    data: dict[str, Any] = {
        _MARKER: SNAPSHOT_VERSION,
        "tool": f"ad-diff {__version__}",
        "source": str(run),
        "log": art.log.name,
        "rank": parsed.rank,
        "log_formats": list(parsed.formats),
        "log_prefixes": list(parsed.prefixes),
        "end": parsed.end.value,
        "end_detail": parsed.end_detail,
        "transforms": transforms,
    }
    if art.graphs is not None:
        _check_dumps(art.graphs, run)
    coverage = metadata_coverage(art.graphs)
    if coverage:
        data["metadata_coverage"] = coverage
    return data


def _check_dumps(graphs: Path, run: Path) -> None:
    """Refuse a dump that cannot be read (a link out of the run folder, a FIFO...): the coverage would leave
    it out without a word, and every candidate checked against the snapshot later would go unchecked
    there."""
    from ad_diff.discover.dumps import scan

    unreadable = scan(graphs, run).unreadable
    if unreadable:
        path, why = unreadable[0]
        raise InputError(path, f"{why}; a snapshot records the metadata coverage of every dump, so each "
                               "must be a readable file of the run")


def dump(data: dict[str, Any]) -> str:
    """The snapshot as YAML text (stable key order, one transform per line)."""
    import yaml

    head = {k: v for k, v in data.items() if k not in ("transforms", "metadata_coverage")}
    text = _HEADER + yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=1000)
    text += "transforms:\n" + "".join(
        "  - " + yaml.safe_dump(t, default_flow_style=True, sort_keys=False, width=1000).strip() + "\n"
        for t in data["transforms"]
    )
    if data.get("metadata_coverage"):
        # one flow mapping per dump, no YAML anchors for the (often identical) repeated counts
        text += "metadata_coverage:\n" + "".join(
            f"  {k}: " + yaml.safe_dump(v, default_flow_style=True, sort_keys=True, width=1000).strip() + "\n"
            for k, v in data["metadata_coverage"].items()
        )
    return text


def _load(path: Path, raw: bytes | None = None) -> Any:
    """A snapshot's YAML through the bounded loader (aliases, depth, integers and keys limited); ``raw``:
    its bytes when the caller read them already (beneath its own root)."""
    what = "a snapshot written by `ad-diff snapshot` (UTF-8 YAML)"
    from ad_diff.core.yamlsafe import load_yaml  # yaml only when a snapshot is read

    if raw is None:
        raw = safepath.read_bytes(path, safepath.given_root(path), what, 16 << 20)
    try:
        return load_yaml(safepath.decode_utf8(raw, path, what), path)
    except InputError as e:
        raise InputError(path, f"not valid YAML; expected a snapshot written by `ad-diff snapshot` "
                               f"({e.detail.removeprefix('invalid YAML: ')})", e.line) from None


def is_snapshot(path: Path) -> bool:
    """Whether ``path`` names a snapshot file rather than a run folder."""
    return path.is_file() and path.suffix in (".yaml", ".yml")


def _record(path: Path, i: int, t: Any) -> TransformRecord:
    where = f"transforms[{i}]"
    if not isinstance(t, dict) or not all(isinstance(t.get(k), str) for k in ("transform", "stage")):
        raise InputError(path, f"{where}: expected a mapping with `stage` and `transform` strings, got {t!r}")
    try:
        state = State(t.get("state"))
    except ValueError:
        raise InputError(path, f"{where}: `state` must be one of {', '.join(s.value for s in State)}, "
                               f"got {t.get('state')!r}") from None
    matches = t.get("matches")
    if matches is not None and (not isinstance(matches, int) or isinstance(matches, bool) or matches < 0):
        raise InputError(path, f"{where}: `matches` must be a count >= 0 or null, got {matches!r}")
    occ = t.get("occurrence", 0)
    if not isinstance(occ, int) or occ < 0:
        raise InputError(path, f"{where}: `occurrence` must be an integer >= 0, got {occ!r}")
    return TransformRecord(t["stage"], t["transform"], occ, state, matches, line=i + 1)


def load_as_run(path: Path, raw: bytes | None = None) -> tuple[RunArtifacts, RunLog]:
    """Read a snapshot file into a synthetic baseline (artifacts without graphs/tensors, and a RunLog);
    ``raw``: its bytes, when the caller read them already."""
    data = _load(path, raw)
    if not isinstance(data, dict) or _MARKER not in data:
        raise InputError(path, f"not an ad-diff snapshot (no `{_MARKER}` key); write one with "
                               "`ad-diff snapshot RUN/ -o FILE.yaml`, or pass a run folder")
    if data[_MARKER] != SNAPSHOT_VERSION:
        raise InputError(path, f"snapshot version {data[_MARKER]!r} is not supported "
                               f"(expected {SNAPSHOT_VERSION})")
    rows = data.get("transforms")
    if not isinstance(rows, list) or not rows:
        raise InputError(path, "`transforms` must be a non-empty list")
    try:
        end = LogEnd(data.get("end", "complete"))
    except ValueError:
        raise InputError(path, f"`end` must be one of {', '.join(e.value for e in LogEnd)}") from None
    records = tuple(_record(path, i, t) for i, t in enumerate(rows))
    rank = data.get("rank")
    log = RunLog(
        path=path, transforms=records, rank=rank if isinstance(rank, int) else None,
        ranks_seen=(rank,) if isinstance(rank, int) else (), rank_disagreement=(),
        formats=tuple(map(str, data.get("log_formats") or ())),
        prefixes=tuple(map(str, data.get("log_prefixes") or ())),
        end=end, end_detail=str(data.get("end_detail", "")), lines=len(records),
    )
    note = f"snapshot of {data.get('source', '?')} ({len(records)} transforms; {data.get('tool', 'ad-diff')})"
    art = RunArtifacts(BASELINE, path, path, None, None, (), (note,))
    return art, log
