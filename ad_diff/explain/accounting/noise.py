"""Every noise rule of the accounting pass, in the order it applies them (docs/accounting.md lists each).

A noise rule is data: a name, a sentence saying what it absorbs and why that is not a difference, the item
kind it applies to, and either a *normaliser* (text rewritten before the runs are compared) or an *absorbing*
predicate (a difference left after normalisation that is no difference). The pass applies them in this
order and reports how much each absorbed; nothing else in ad-diff decides what is noise.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ad_diff.core.facts import CANONICAL_DUMPS, Difference, Evidence, Item
from ad_diff.core.model import State
from ad_diff.explain.accounting.model import NoiseRule, substitute

_TIMESTAMP = (
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"  # ISO 8601 (CI, mpirun)
    r"|\d{2}/\d{2}/\d{4}-\d{2}:\d{2}:\d{2}"  # TRT-LLM logger: [02/10/2026-11:02:15]
    r"|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"  # a bare time of day
)
_TIMING = r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\s?(?:ms|s|sec|seconds)\b"
# The two patterns above as the normalisers run them: the same matches, written to begin with one digit, so
# the regex engine skips every other character at the speed of a character-set scan instead of trying each
# branch at each position (timestamps 4.5 -> 1.0 us a line, timings 2.9 -> 2.1). A word boundary before
# that digit is a look-behind after it: `\b\d` is `\d(?<!\w\d)`. tests/unit/explain/test_noise_guards.py
# checks each against the pattern it stands for.
_TIMESTAMP_FAST = (
    r"\d(?:\d{3}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\d/\d{2}/\d{4}-\d{2}:\d{2}:\d{2}"
    r"|(?<=\b\d)\d:\d{2}:\d{2}(?:[.,]\d+)?\b)"
)
_TIMING_FAST = r"\d(?<!\w\d)\d*(?:\.\d+)?(?:e[+-]?\d+)?\s?(?:ms|s|sec|seconds)\b"
_TIMING_GUARD = r"[ms](?:(?<=\d[ms])|(?<=\d\s[ms]))"
"""What every timing holds: its unit's first letter right after a digit, or after a digit and one space;
searched from the letters m and s, which few characters of a line are (0.9 us a line against 2.0)."""
_MEMORY = r"[+-]?\d+(?:\.\d+)?\s?[KMGT]i?B\b"
_DUMP_DIR = r"^.*?(Graph dumping enabled to:|AD_DUMP_GRAPHS_DIR\s*[=:]\s*)\s*\S+.*$"
_DUMP_DIR_NEEDS = ("Graph dumping enabled to:", "AD_DUMP_GRAPHS_DIR")
# A normaliser's ``needs`` (see ``substitute``): every timestamp holds ':', every memory figure 'B';
# tests/unit/explain/test_noise_guards.py checks each guarded rule against its bare pattern.


@lru_cache(maxsize=16)
def _spellings(root: Path) -> tuple[str, ...]:
    """The ways a text may spell the run folder: resolved and as given, longest first (one may contain the
    other). Cached: this runs for every log line, and resolving walks the file system each time."""
    return tuple(sorted({str(root.resolve()), str(root)} - {"", "."}, key=len, reverse=True))


def run_folder(text: str, root: Path) -> str:
    """The run folder's own path (absolute or as given) in a text reads ``<run>``."""
    for spelling in _spellings(root):
        text = text.replace(spelling, "<run>")
    return text


def _restored(d: Difference, ev: Evidence) -> bool:
    if d.item is Item.DUMP:
        return d.key in ev.restored_dumps
    return d.transform in ev.restored_transforms


_INERT = {State.SKIPPED.value, State.DISABLED.value, f"{State.APPLIED.value} 0"}


def _inert(d: Difference, ev: Evidence) -> bool:
    one = d.candidate if d.baseline is None else d.baseline if d.candidate is None else None
    return one in _INERT and not ev.graph_differs_at(d.transform)


def _within_tolerance(d: Difference, ev: Evidence) -> bool:
    return d.key in ev.tensors_within


def _one_sided_capture(d: Difference, ev: Evidence) -> bool:
    file = d.key.partition(":")[0].rpartition("/")[2]
    return (d.baseline is None or d.candidate is None) and file.startswith("nodes")


def _renamed_only(d: Difference, ev: Evidence) -> bool:
    return d.key in ev.renamed_only


def _split_only(d: Difference, ev: Evidence) -> bool:
    return d.key in ev.split_only


_RUN_RECORD_VOLATILE = re.compile(
    r"^(started|ended|duration_s|cwd|git(\..*)?|python_executable|tool|signals_forwarded|host(name)?|"
    r"env\.AD_DUMP_GRAPHS_DIR)$"
)


def _run_record(d: Difference, ev: Evidence) -> bool:
    return bool(_RUN_RECORD_VOLATILE.match(d.key))


def _unread_file(d: Difference, ev: Evidence) -> bool:
    return True


NOISE_RULES: tuple[NoiseRule, ...] = (
    NoiseRule(
        "timestamps",
        "Dates and times of day in the lines a transform logged are when it was written, not what the run "
        "did (logger and capture prefixes, with their time stamps, are taken off by the log reader).",
        Item.LOG_LINE, normalise=substitute(_TIMESTAMP_FAST, "<ts>", needs=(":",)),
    ),
    NoiseRule(
        "timings", "Elapsed times in the lines a transform logged (`compiled in 3.2s`) vary from run to run "
        "(the reader claims AD's own timing lines, `[SUMMARY] ... time:` and `elapsed time:`, outright).",
        Item.LOG_LINE,
        normalise=substitute(_TIMING_FAST, "<t>", guard=_TIMING_GUARD),
    ),
    NoiseRule(
        "memory-figures",
        "Memory figures in the lines a transform logged (`allocated 12.40GB`) depend on the device and the "
        "allocator, not on the graph (the reader claims AD's `[CUDA MEM ...]` lines outright).",
        Item.LOG_LINE, normalise=substitute(_MEMORY, "<mem>", needs=("B",)),
    ),
    NoiseRule(
        "dump-folder-path",
        "Where the graph dumps were written (`AD_DUMP_GRAPHS_DIR=DIR` in a line a transform logged) is a "
        "choice of the job, not of the pipeline (the reader claims AD's own `Graph dumping enabled to:` "
        "line outright).",
        Item.LOG_LINE,
        normalise=substitute(_DUMP_DIR, r"\1 <dir>", needs=_DUMP_DIR_NEEDS),
    ),
    NoiseRule(
        "run-folder-path", "The run folder's own path, wherever a line names it, reads `<run>`: the two runs "
        "live in two folders by construction.", Item.LOG_LINE, normalise=run_folder,
    ),
    NoiseRule(
        CANONICAL_DUMPS,
        "FX numbers nodes by creation order (`view_2`) and some torch versions keep the "
        "overload (`view_default_2`): a dump is compared in its canonical form, every node named by its name "
        "without those suffixes and its rank among the nodes of that name (`view#3`), references included, "
        "and every print form of a line read as one (`output(%a)` is `output %a`), so a consistent renaming "
        "or re-printing is no difference while a changed op, argument, edge or shape still is.", Item.DUMP,
    ),
    NoiseRule(
        "node-renames",
        "Names are no identity: when the graph kind aligned a dump pair node for node (graph inputs paired "
        "by position, every node by its op, wiring, literals and shape) and found nothing unmatched, rewired "
        "or changed, the dumps differ in names alone, as after a torch upgrade that renames nodes and graph "
        "inputs (`input_ids` -> `l_input_ids_`).",
        Item.DUMP, absorbs=_renamed_only,
    ),
    NoiseRule(
        "piecewise-split",
        "How compile_model cuts a graph into pieces for piecewise CUDA graphs (`submod_N`) is a compile "
        "setting: when the graph kind, comparing the split graphs with their pieces put back inline, finds "
        "every node paired and unchanged, the dumps differ in the cut alone (docs/graph-dumps.md); the graph "
        "section's note says how the split differs.",
        Item.DUMP, absorbs=_split_only,
    ),
    NoiseRule(
        "restored-not-compared",
        "A transform that a run did not execute because it restored a cached graph past it (AD's pipeline "
        "cache or graph cache): its result line and dump are the cache's, restored and never compared (the "
        "log kind says so once).",
        Item.TRANSFORM, absorbs=_restored,
    ),
    NoiseRule(
        "inert-one-sided-transform",
        "A transform in one run's pipeline only that did nothing there (applied with 0 matches, skipped or "
        "disabled) while the graph after it is the same in both runs: the pipelines differ by a pass that "
        "changed nothing (a transform that should have matched is the config and log kinds' to report).",
        Item.TRANSFORM, absorbs=_inert,
    ),
    NoiseRule(
        "restored-dumps", "Dumps missing because the run restored a cached graph past them (see "
        "`restored-not-compared`).", Item.DUMP, absorbs=_restored,
    ),
    NoiseRule(
        "tensor-within-tolerance", "Recorded tensors whose bytes differ but which the tensor kind compared "
        "and judged identical or within tolerance: its measurement accounts for them.", Item.TENSOR,
        absorbs=_within_tolerance,
    ),
    NoiseRule(
        "one-sided-node-captures",
        "Per-node captures (files named `nodes*`, written by `capture_nodes`) that one run recorded and the "
        "other did not: captures only locate where drift starts; the outputs are what is judged.",
        Item.TENSOR, absorbs=_one_sided_capture,
    ),
    NoiseRule(
        "run-record-fields", "Fields of `run.json` that describe the job, not the run's behaviour: start and "
        "end times, duration, working folder, git commit, interpreter path, host "
        "and the dump folder.", Item.RUN_INFO, absorbs=_run_record,
    ),
    NoiseRule(
        "unread-files", "Files no kind of ad-diff reads (notes, scripts, `tensors/record.json`, stray "
        "outputs): listed in the inventory, never judged.", Item.FILE, absorbs=_unread_file,
    ),
)
"""Every noise rule, in the order the pass applies them."""

LINE_NORMALISERS: tuple[NoiseRule, ...] = tuple(
    r for r in NOISE_RULES if r.item is Item.LOG_LINE and r.normalise is not None
)
ABSORBING: tuple[NoiseRule, ...] = tuple(r for r in NOISE_RULES if r.absorbs is not None)
