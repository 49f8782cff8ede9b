"""Hostile input (issue 28): strings that act on the reader's terminal or hide what a report shows.

A tensor name holding ``ESC[2J ESC[H`` and a green "PASS" line cleared the screen and drew a forged verdict
while the run exited 1; log text with OSC 52 wrote the clipboard and OSC 0 set the window title; bidi
overrides and zero-width characters made one name look like another in markdown, HTML and the terminal.
:data:`HOSTILE` holds all of them at once (plus markup metacharacters and a leading ``=``), and
:func:`every_field` writes a run pair with it in every field an input has: the generic sink test
(tests/functional/test_sinks.py) pushes it through every renderer.

Imported by make_hostile_fixtures.py, which sets :data:`h` (its helpers) and :data:`r2` (hostile_round2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

h: Any = None
"""make_hostile_fixtures itself, set by it when it imports this module."""
r2: Any = None
"""hostile_round2 (``_failed``, ``_pair_with_config``), set by make_hostile_fixtures."""

CLEAR = "\x1b[2J\x1b[H"
"""Erase the screen, cursor home."""
FORGED = "\x1b[1;32mad-diff: PASS (no findings)\x1b[0m"
"""A green verdict line drawn by a name."""
OSC52 = "\x1b]52;c;cHduZWQ=\x07"
"""Write ``pwned`` to the clipboard (OSC 52, BEL-terminated)."""
OSC0 = "\x1b]0;pwned-title\x1b\\"
"""Set the window title (OSC 0, ST-terminated)."""
BIDI = "\u202eevil\u202c\u200b\u2066x\u2069\ufeff\u2028"
"""A right-to-left override, a zero-width space, an isolate, a BOM and a line separator."""
HOSTILE = (
    "=cmd|' /C calc'!A0 " + CLEAR + FORGED + OSC52 + OSC0
    + "\x1bP+q\x1b\\\x1b_apc\x1b\\\x9b2J\x85\x07\x08\x0b\x0c\x0e\x7f" + BIDI
    + "<img src=x onerror=alert(1)>&amp;]]><!--`*_[l](http://e.example)"
)
"""Every class at once: controls (C0, C1, ESC, whole CSI/OSC/DCS/APC strings), bidi and zero-width
characters, markdown/HTML/XML metacharacters and a leading ``=`` (a spreadsheet formula)."""


def file_name(text: str) -> str:
    """``text`` as one path component (no ``/``), short enough for any file system."""
    return text.replace("/", "_")[:120]


def _tensor_pair(d: Path, name: str) -> None:
    b, c = h._pair(d)
    h.write_tensors(b, {name: ("F32", (4, 4), h.f32(h.LOGITS))})
    h.write_tensors(c, {name: ("F32", (4, 4), h.f32([x + 5 for x in h.LOGITS]))})


def terminal_forged_pass(d: Path) -> None:
    """A drifting tensor whose name clears the screen and draws a green "PASS" line (the run fails)."""
    _tensor_pair(d, "logits" + CLEAR + FORGED)


def log_osc_sequences(d: Path) -> None:
    """A failure line quoting OSC 52 (clipboard), OSC 0 (window title) and C1 controls."""
    h._pair(d, r2._failed("RuntimeError: " + OSC52 + OSC0 + "\x9b2J\x85 done"))


def bidi_names(d: Path) -> None:
    """Bidi overrides and zero-width characters in a transform (dump header), an op target and a tensor."""
    b, c = h._pair(d)
    evil = "fuse\u202eesor\u202c\u200b"
    for run in (b, c):
        (run / "graphs" / "005_compile_evil.txt").write_text(
            h.dump_text("compile", evil).replace("auto_deploy.rope", "auto_deploy.r\u200bope\u2066"))
    (c / "graphs" / "005_compile_evil.txt").write_text(h.dump_text("compile", evil, rope=False))
    _tensor_pair_into(b, c, "logits\u202e\u2067")


def _tensor_pair_into(b: Path, c: Path, name: str) -> None:
    h.write_tensors(b, {name: ("F32", (4, 4), h.f32(h.LOGITS))})
    h.write_tensors(c, {name: ("F32", (4, 4), h.f32([x + 5 for x in h.LOGITS]))})


def every_field(d: Path, text: str = HOSTILE) -> tuple[Path, Path]:
    """A run pair with ``text`` in every field an input has: the transform of a dump (header and file name),
    node names and op targets, tensor names, a log failure line and a log error line, config keys and
    values, an extra file name; returns (baseline, candidate). The caller picks the folder names (which
    may hold ``text`` too)."""
    name = file_name(text)
    b, c = h.write_run(d / "baseline"), h.write_run(d / "candidate", r2._failed("RuntimeError: " + text)
                                                    + f"[AUTO-DEPLOY] [ERROR] [RANK 0] {text}\n{text}\n")
    dump = h.dump_text("compile", text).replace("auto_deploy.rope", f"auto_deploy.{text}")
    for run in (b, c):
        (run / "graphs" / f"005_compile_{name}.txt").write_text(dump.replace("%rope", f"%{text}"))
        (run / "graphs" / f"{name}.txt").write_text(text + "\n")
        (run / "config").mkdir()
        layer = {"transforms": {text: {"enabled": run is c, text: text}}, text: [text, 1.5]}
        (run / "config" / "default.yaml").write_text(yaml.safe_dump(layer))
    (c / "graphs" / f"005_compile_{name}.txt").write_text(h.dump_text("compile", text, rope=False))
    _tensor_pair_into(b, c, text)
    # zeros against ones: an infinite normalised error, which the JSON report once wrote as bare Infinity
    h.write_tensors(b, {text + "0": ("F32", (4,), h.f32([0.0] * 4))}, name="zeros")
    h.write_tensors(c, {text + "0": ("F32", (4,), h.f32([1.0] * 4))}, name="zeros")
    return b, c


def sink_every_field(d: Path) -> None:
    """:data:`HOSTILE` in every field (built at test time: its file names hold control characters)."""
    every_field(d)


CASES: dict[str, Callable[[Path], None]] = {f.__name__: f for f in (
    terminal_forged_pass, log_osc_sequences, bidi_names, sink_every_field,
)}
RUNTIME_ONLY = frozenset({"sink_every_field"})
