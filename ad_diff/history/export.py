"""Files a history writes when asked: the long table (``--table``: CSV or Parquet) and plots (``--plots``).

Parquet needs pyarrow (``pip install 'ad-diff[parquet]'``), plots matplotlib (``pip install
'ad-diff[plots]'``); both are imported only here, and a missing one is a clear error, not a traceback.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core import lazy
from ad_diff.core.outfile import write_via
from ad_diff.core.redact import redact_text
from ad_diff.core.sinks import csv_cell
from ad_diff.errors import AdDiffError, UsageError
from ad_diff.history.model import History

if TYPE_CHECKING:
    import matplotlib
    import matplotlib.pyplot as plt
    import pandas.api.types as pandas_types
else:
    matplotlib = lazy.module("matplotlib")
    plt = lazy.module("matplotlib.pyplot")
    pandas_types = lazy.module("pandas.api.types")

MAX_PLOTS = 200
"""Plots written at most (one per stepped transform, in step order); the report says when more stepped."""


def table_format(path: Path) -> str:
    """``csv`` or ``parquet`` by ``path``'s extension; a clear error for another one or a missing pyarrow."""
    name = path.name.lower()
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if not name.endswith((".parquet", ".pq")):
        raise UsageError(f"--table {path}: the file name must end in .csv, .csv.gz or .parquet")
    if importlib.util.find_spec("pyarrow") is None:
        raise AdDiffError(
            f"--table {path}: writing Parquet needs pyarrow; install it with "
            "`pip install 'ad-diff[parquet]'`, or write a .csv table instead"
        )
    return "parquet"


def check_plots(out_dir: Path) -> None:
    """Raise a clear error when plots cannot be drawn (matplotlib missing)."""
    if importlib.util.find_spec("matplotlib") is None:
        raise AdDiffError(
            f"--plots {out_dir}: plots need matplotlib; install it with `pip install 'ad-diff[plots]'`"
        )


def _text_cells(table: Any, cell: Any) -> Any:
    """``table`` (a DataFrame) with ``cell`` applied to every cell of its text columns; numeric and boolean
    columns are left as they are, so numbers stay numbers."""
    is_bool_dtype, is_numeric_dtype = pandas_types.is_bool_dtype, pandas_types.is_numeric_dtype

    out = table.copy()
    for name in out.columns:
        col = out[name]
        if not (is_numeric_dtype(col) or is_bool_dtype(col)):
            out[name] = col.astype(object).map(cell)
    return out


def _redacted(value: Any) -> Any:
    return redact_text(value) if isinstance(value, str) else value


def csv_safe(table: Any) -> Any:
    """``table`` with every text cell redacted (a credential in a transform or run name never reaches the
    file, as in every other report) and through the sink layer's CSV escaper (:func:`~ad_diff.core.sinks.
    csv_cell`: a name a spreadsheet would run as a formula gets a leading ``'``)."""
    return _text_cells(table, lambda v: csv_cell(_redacted(v)))


def write_table(h: History, path: Path) -> None:
    """Write the long table to ``path``: ``.csv`` (``.csv.gz`` compressed) or ``.parquet``."""
    assert h.table is not None
    fmt = table_format(path)
    table = h.table
    try:
        if fmt == "csv":
            gz = path.name.endswith(".gz")
            safe = csv_safe(table)
            write_via(path, lambda buf: safe.to_csv(buf, index=False, compression="gzip" if gz else None))
        else:
            clean = _text_cells(table, _redacted)
            write_via(path, lambda buf: clean.to_parquet(buf, index=False))
    except OSError as e:
        raise AdDiffError(f"{path}: cannot write the table ({e.strerror or e})") from e


def _plain(text: str) -> str:
    """``text`` shown literally by matplotlib (a ``$`` would start mathtext)."""
    return text.replace("$", r"\$")


def plot_name(model: str, transform: str, occurrence: int) -> str:
    """A safe, unique PNG file name for one (model, transform) series."""
    key = f"{model}/{transform}#{occurrence}"
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{model}-{transform}" if model else transform)[:80] or "transform"
    return f"{safe}-{hashlib.sha1(key.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}.png"


def write_plots(h: History, out_dir: Path) -> dict[tuple[str, str, int], Path]:
    """One PNG per transform that stepped: its count (and state) over the runs, steps marked.

    Returns ``(model, transform, occurrence) -> file`` for the plots written.
    """
    check_plots(out_dir)
    assert h.table is not None
    matplotlib.use("Agg")  # before pyplot is imported (by the first use of plt below)
    keys: dict[tuple[str, str, int], list[int]] = {}
    index = {r.name: r.index for r in h.runs}
    for s in h.steps:
        keys.setdefault((s.model, s.transform, s.occurrence), []).append(index[s.first_after])
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AdDiffError(f"{out_dir}: cannot write plots ({e.strerror or e})") from e
    t = h.table
    ok = t[t["status"] == "ok"]
    written: dict[tuple[str, str, int], Path] = {}
    for (model, transform, occ), at in list(keys.items())[:MAX_PLOTS]:
        rows = ok[(ok["model"] == model) & (ok["transform"] == transform) & (ok["occurrence"] == occ)]
        x = rows["run_index"].to_numpy()
        y = rows["count"].astype("float64").to_numpy()
        fig, ax = plt.subplots(figsize=(8, 3), dpi=100)
        ax.step(x, y, where="post", marker=".", markersize=3, linewidth=1)
        not_applied = rows["state"] != "applied"
        if not_applied.any():
            ax.plot(
                rows["run_index"][not_applied],
                [0] * int(not_applied.sum()),
                "x",
                color="tab:red",
                label="not applied (state)",
            )
            ax.legend(loc="best", fontsize=7)
        for i in at:
            ax.axvline(i - 0.5, color="tab:orange", linestyle="--", linewidth=1)
        title = f"{model + ': ' if model else ''}{transform}" + (f" #{occ}" if occ else "")
        ax.set_title(_plain(title), fontsize=9)
        ax.set_xlabel("run")
        ax.set_ylabel("matches")
        ticks = list(range(0, len(h.runs), max(1, len(h.runs) // 8)))
        ax.set_xticks(ticks, [_plain(h.runs[i].name) for i in ticks], rotation=30, ha="right", fontsize=7)
        fig.tight_layout()
        path = out_dir / plot_name(model, transform, occ)
        try:
            write_via(path, lambda buf: fig.savefig(buf, format=path.suffix.lstrip(".") or "png"))  # noqa: B023
        except OSError as e:
            raise AdDiffError(f"{path}: cannot write the plot ({e.strerror or e})") from e
        finally:
            plt.close(fig)
        written[(model, transform, occ)] = path
    return written
