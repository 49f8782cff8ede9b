"""Re-printing a run's graph dumps in another form the dump reader accepts: the output line printed as the
graph writer does (``output %a, %b``), as an upstream skill documents it (``output(%a, %b)``) or with a
space (``output (%a, %b)``), and CRLF line ends (a dump copied through Windows tools). The graph each dump
holds does not change; only how it is printed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

OUTPUTS = ("plain", "parens", "spaced")


@dataclass(frozen=True)
class DumpForm:
    """How a run's dumps are printed."""

    output: str = "plain"
    crlf: bool = False

    def __str__(self) -> str:
        return f"dumps-{self.output}" + ("-crlf" if self.crlf else "")


def dump_forms() -> list[DumpForm]:
    """Every print form (the identity included)."""
    return [DumpForm(o, c) for o in OUTPUTS for c in (False, True)]


def _output(line: str, style: str) -> str:
    body = line[len("output"):].strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1].strip()
    if style == "parens":
        return f"output({body})"
    if style == "spaced":
        return f"output ({body})"
    return f"output {body}" if body else "output"


def reprint(graphs: Path, form: DumpForm) -> int:
    """Re-print every dump under ``graphs`` in ``form``; returns how many files were rewritten."""
    n = 0
    for path in sorted(graphs.glob("*.txt")):
        if path.is_symlink():
            continue  # a link is a fact of the folder (where the dump lives), not a print form
        text = path.read_text(encoding="utf-8", errors="surrogateescape").replace("\r\n", "\n")
        lines = [_output(ln, form.output) if ln.startswith("output") else ln for ln in text.split("\n")]
        out = "\n".join(lines)
        if form.crlf:
            out = out.replace("\n", "\r\n")
        path.write_bytes(out.encode("utf-8", "surrogateescape"))
        n += 1
    return n


__all__ = ["DumpForm", "OUTPUTS", "dump_forms", "reprint"]
