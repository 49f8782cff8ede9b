"""Findings about a run's ``graphs/`` folder itself (codes ``ADI002``-``ADI005``): holes in the numbering,
duplicate counters, empty folders and unreadable entries.

``check_dump_folder`` reads file *names* only (no content), so it is cheap and runs before the graph
analysis; a hole in the numbering means a dump was lost (AD's counter only advances when a file is written).
"""

from __future__ import annotations

import os
from pathlib import Path

from ad_diff.core.model import Finding, Severity
from ad_diff.core.rules import ANALYSIS_FAILED, Rule
from ad_diff.discover import dump_counter, dump_entries

DUMP_GAP = Rule(
    "ADI002", "dump-numbering-gap", "input", Severity.ERROR,
    "{run}: graphs/ numbering has gaps (missing {missing}); those dumps were lost (half-copied folder or "
    "crashed job), so graph checks at those transforms did not run (match counts from the log still stand)",
    "AD numbers dump files with a counter that only advances when a file is written, so a missing number "
    "means a dump file was lost (a half-copied artifact folder, a cleanup, a crash while copying). The "
    "transforms around the hole are compared on their logged match counts only. It gates because a "
    "metadata loss in the lost dump cannot be ruled out; copy the whole graphs/ folder again.",
)

DUMP_DUPLICATE = Rule(
    "ADI003", "dump-duplicate-counter", "input", Severity.WARNING,
    "{run}: graphs/ holds several files numbered {counter} ({files}); AD writes one file per number, so "
    "the folder mixes two runs or holds copies; dumps are ordered by number, then name",
    "Two dump files share one counter: the folder holds dumps of two runs (AD_DUMP_GRAPHS_DIR reused "
    "without the usual wipe) or a manual copy. The analysis goes on with every file, ordered by number and "
    "name, but its pairing of transforms may be off; re-record into an empty folder.",
)

DUMPS_EMPTY = Rule(
    "ADI004", "dump-folder-empty", "input", Severity.ERROR,
    "{run}: graphs/ holds no dump files (NNN_<stage>_<transform>.txt) while the {other} run has {count}; "
    "graph analysis of this pair did not run (match counts from the log still stand)",
    "The graphs/ folder exists but holds no dump file, e.g. the job crashed before the first dump or the "
    "artifact upload was empty. Graph conclusions are missing, so this gates.",
)

DUMP_ENTRY_UNREADABLE = Rule(
    "ADI005", "dump-entry-unreadable", "input", Severity.ERROR,
    "{path}: {problem}; expected a readable graph dump file, so it was left out of the graph analysis",
    "An entry of graphs/ named like a dump cannot be read as a file: a broken or looping symbolic link, a "
    "folder, or a file without read permission. The dump is missing from the comparison, so this gates.",
)

RULES: tuple[Rule, ...] = (DUMP_GAP, DUMP_DUPLICATE, DUMPS_EMPTY, DUMP_ENTRY_UNREADABLE)



def _gaps(nums: list[int]) -> list[tuple[int, int]]:
    """The missing ``(first, last)`` ranges between the sorted counters ``nums``: work bounded by the number
    of files, never by the numbers written in their names (``999999999999_x.txt``)."""
    return [(a + 1, b - 1) for a, b in zip(nums, nums[1:], strict=False) if b > a + 1]


def _ranges(gaps: list[tuple[int, int]]) -> str:
    """``[(2, 4), (7, 7)]`` -> ``'002-004, 007'`` (at most 5 ranges, then a count)."""
    out = [f"{a:03d}" if a == b else f"{a:03d}-{b:03d}" for a, b in gaps[:5]]
    return ", ".join(out) + (f" and {len(gaps) - 5} more range(s)" if len(gaps) > 5 else "")


def dump_count(graphs: Path) -> int:
    """Number of entries named like a dump file."""
    try:
        return len(dump_entries(graphs))
    except OSError:
        return 0


def check_dump_folder(graphs: Path, run: str) -> list[Finding]:
    """Findings about one run's ``graphs/`` listing: unreadable entries, numbering gaps and duplicates.

    Reads names and ``stat`` only. Never follows a link twice: ``os.stat`` fails on a loop (ELOOP) and
    that entry is reported, not recursed into.
    """
    findings: list[Finding] = []
    by_counter: dict[int, list[str]] = {}
    try:
        entries = sorted(os.scandir(graphs), key=lambda e: e.name)
    except OSError as e:
        return [ANALYSIS_FAILED.make(analysis="graph analysis", error=f"{graphs}: cannot list ({e.strerror or e})",
                                     stands="the per-transform match counts from the logs still stand")]
    for e in entries:
        counter = dump_counter(e.name)
        if counter is None:
            continue
        path = Path(graphs, e.name)
        problem = None
        try:
            os.stat(path)  # follows links; raises on a loop or a dangling link
            if not os.path.isfile(path):  # before opening: a FIFO named like a dump would block open()
                problem = "is not a regular file"
            else:
                path.open("rb").close()  # an actual open, not os.access: as root, access() always says yes
        except PermissionError:
            problem = "cannot be read (permission denied)"
        except OSError as err:
            problem = "is a symbolic link that loops or points nowhere" if e.is_symlink() else \
                f"cannot be read ({err.strerror or err})"
        if problem is not None:
            findings.append(DUMP_ENTRY_UNREADABLE.make(path=path, problem=problem, run=run))
            continue
        by_counter.setdefault(counter, []).append(e.name)
    if by_counter:
        nums = sorted(by_counter)
        missing = _gaps(nums)
        if missing:
            findings.append(DUMP_GAP.make(run=run, missing=_ranges(missing)))
        for counter in nums:
            names = by_counter[counter]
            if len(names) > 1:
                findings.append(DUMP_DUPLICATE.make(run=run, counter=f"{counter:03d}", files=", ".join(names)))
    return findings
