"""The JSON report of a history (``schema_version`` 1; every key is described in docs/history.md)."""

from __future__ import annotations

from typing import Any

from ad_diff import __version__
from ad_diff.core.jsonable import dumps
from ad_diff.core.sinks import values
from ad_diff.gate import word
from ad_diff.history.model import Change, History, Value
from ad_diff.history.render import headline
from ad_diff.settings import FailOn

SCHEMA_VERSION = 1


def _value(v: Value) -> dict[str, Any]:
    return {"state": v.state.value, "matches": v.matches}


def _change(c: Change) -> dict[str, Any]:
    return {
        "kind": c.kind,
        "model": c.model,
        "stage": c.stage,
        "transform": c.transform,
        "occurrence": c.occurrence,
        "before": _value(c.before),
        "after": _value(c.after),
        "change": c.change,
        "last_before": c.last_before,
        "first_after": c.first_after,
        "confirmed": c.confirmed,
        "held": c.held,
        "via": [{"run": v.run, **_value(v.value)} for v in c.via],
        "category": c.category,
        "codes": list(c.codes),
        "message": c.message,
        "gating": c.gating,
        "in_window": c.in_window,
        "gates": c.gates,
        "commit_before": c.commit_before,
        "commit_after": c.commit_after,
    }


def to_json(h: History) -> dict[str, Any]:
    """The history as plain data (docs/history.md describes every key)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": f"ad-diff {__version__}",
        "report": "history",
        "root": str(h.root),
        "layout": h.layout,
        "order": h.order,
        "order_note": h.order_note,
        "min_run": h.min_run,
        "collapse_fraction": h.collapse_fraction,
        "fail_on": FailOn(h.fail_on).value,
        "since": h.since,
        "verdict": word(h.exit_code).value,
        "exit_code": h.exit_code,
        "headline": headline(h),
        "stats": dict(h.stats),
        "runs": [
            {"name": r.name, "index": r.index, "started": r.started, "commit": r.commit, "models": r.models}
            for r in h.runs
        ],
        "models": [
            {
                "name": m.name,
                "first_run": m.first_run,
                "last_run": m.last_run,
                "runs": m.runs,
                "stale": m.stale,
            }
            for m in h.models
        ],
        "problems": [
            {
                "run": p.run,
                "model": p.model,
                "path": str(p.path),
                "status": p.status,
                "detail": p.detail,
                "in_window": p.in_window,
            }
            for p in h.problems
        ],
        "steps": [_change(c) for c in h.steps],
        "pending": [_change(c) for c in h.pending],
        "flaky": [
            {
                "model": f.model,
                "stage": f.stage,
                "transform": f.transform,
                "occurrence": f.occurrence,
                "settled": _value(f.value),
                "deviations": [{"run": v.run, **_value(v.value)} for v in f.deviations],
            }
            for f in h.flaky
        ],
        "current": {
            m: [
                {"stage": k[0], "transform": k[1], "occurrence": k[2], **_value(c.value), "mark": c.mark}
                for k, c in cells.items()
            ]
            for m, cells in h.current.items()
        },
        "notes": list(h.notes),
    }


def render_json(h: History) -> str:
    """The JSON report."""
    h = values(h, lines=False)  # every value bounded (core/sinks.py)
    return dumps(to_json(h), ensure_ascii=True) + "\n"
