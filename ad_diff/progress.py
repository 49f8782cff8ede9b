"""Progress reporting for long work (parsing many dump files, large tensors, batch runs).

The library reports progress through a plain callback, ``progress(description, completed, total)``, and
never decides how it is shown. The CLI passes :func:`progress_bar`'s callback: a rich progress bar on
stderr when stderr is a terminal and ``CI`` is not set, a no-op otherwise, so CI logs and pipes stay quiet.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

from ad_diff.core import lazy

if TYPE_CHECKING:
    import rich.progress as rich_progress
else:
    rich_progress = lazy.module("rich.progress")

ProgressFn = Callable[[str, int, "int | None"], None]
"""``progress(description, completed, total)``; ``total`` is ``None`` when unknown. Calls with the same
description update the same bar."""


def no_progress(description: str, completed: int, total: int | None) -> None:
    """The default callback: does nothing."""


def progress_enabled(explicit: bool | None, stream: object = None) -> bool:
    """Whether to show bars: ``explicit`` when given, else only on a TTY outside CI."""
    if explicit is not None:
        return explicit
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("CI")


@contextmanager
def progress_bar(enabled: bool, stream: IO[str] | None = None) -> Iterator[ProgressFn]:
    """Yield a progress callback: rich bars on ``stream`` (stderr) when ``enabled``, :func:`no_progress`
    otherwise."""
    if not enabled:
        yield no_progress
        return
    rp = rich_progress
    BarColumn, MofNCompleteColumn, Progress = rp.BarColumn, rp.MofNCompleteColumn, rp.Progress
    TextColumn, TimeElapsedColumn = rp.TextColumn, rp.TimeElapsedColumn

    from ad_diff.core.terminal import SafeConsole  # the terminal sink: descriptions may name input files

    bar = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=SafeConsole(stderr=True) if stream is None else SafeConsole(file=stream, force_terminal=True),
        transient=True,
    )
    tasks: dict[str, object] = {}

    def update(description: str, completed: int, total: int | None) -> None:
        if description not in tasks:
            tasks[description] = bar.add_task(description, total=total)
        bar.update(tasks[description], completed=completed, total=total)  # type: ignore[arg-type]

    with bar:
        yield update
