"""Golden counts: a run's per-transform states and match counts in one small YAML file.

``ad-diff snapshot RUN/ -o counts.yaml`` writes it (:func:`ad_diff.pipeline.snapshot` takes the counts,
:func:`dump` writes the text); ``ad-diff counts.yaml CANDIDATE/`` checks a candidate against it, so CI
needn't re-run the baseline for every pull request. The file is read back here into a synthetic baseline
:class:`RunLog` (it stands in for a run folder, hence ``discover``), and the normal comparison runs on it;
the graph kind checks the recorded metadata coverage (:mod:`ad_diff.kinds.graph.snapshot`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core import lazy, safepath
from ad_diff.core.model import BASELINE, State, TransformRecord
from ad_diff.core.runlog import LogEnd, RunLog
from ad_diff.discover import RunArtifacts
from ad_diff.discover import is_snapshot as is_snapshot  # where the pipeline asks
from ad_diff.errors import InputError

if TYPE_CHECKING:
    import yaml
else:
    yaml = lazy.module("yaml")

# yaml is imported by the functions that read or write a snapshot: a comparison of two run folders never
# needs it, and it costs ~15 ms of start-up.

SNAPSHOT_VERSION = 1
MARKER = "ad_diff_snapshot"
_HEADER = (
    "# ad-diff snapshot: per-transform states and match counts of one AutoDeploy run.\n"
    "# Check a candidate against it with: ad-diff THIS_FILE.yaml CANDIDATE_RUN/\n"
)


def recorded_coverage(path: Path) -> dict[str, Any]:
    """The ``metadata_coverage`` a snapshot recorded (``{}`` when it holds none): what the graph kind checks a
    candidate's dumps against (:func:`ad_diff.kinds.graph.snapshot.check_coverage`)."""
    data = _load(path)
    golden = data.get("metadata_coverage") if isinstance(data, dict) else None
    return golden if isinstance(golden, dict) else {}


def dump(data: dict[str, Any]) -> str:
    """The snapshot as YAML text (stable key order, one transform per line)."""
    head = {k: v for k, v in data.items() if k not in ("transforms", "metadata_coverage")}
    text = _HEADER + yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=1000)
    text += "transforms:\n" + "".join(
        "  - " + yaml.safe_dump(t, default_flow_style=True, sort_keys=False, width=1000).strip() + "\n"
        for t in data["transforms"]
    )
    if data.get("metadata_coverage"):
        # one flow mapping per dump, no YAML anchors for the (often identical) repeated counts
        text += "metadata_coverage:\n" + "".join(
            f"  {_key(k)}: " + yaml.safe_dump(v, default_flow_style=True, sort_keys=True, width=1000).strip()
            + "\n" for k, v in data["metadata_coverage"].items()
        )
    return text


def _key(key: str) -> str:
    """A mapping key as YAML (the YAML sink): as written when it is a plain scalar of one line, else a
    double-quoted one with every special character escaped (the key is ``stage/transform`` from a dump's
    header, which a hostile dump can fill with ``: ``, ``#``, quotes or a line break)."""
    plain = yaml.safe_dump([key], default_flow_style=True, width=1 << 20)[1:-2]
    return key if plain == key and key.isprintable() else json.dumps(key)


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
    if not isinstance(data, dict) or MARKER not in data:
        raise InputError(path, f"not an ad-diff snapshot (no `{MARKER}` key); write one with "
                               "`ad-diff snapshot RUN/ -o FILE.yaml`, or pass a run folder")
    if data[MARKER] != SNAPSHOT_VERSION:
        raise InputError(path, f"snapshot version {data[MARKER]!r} is not supported "
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
