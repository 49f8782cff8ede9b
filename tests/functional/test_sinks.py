"""The sink layer, end to end: one hostile string (scripts/hostile_sinks.HOSTILE: screen clear and a forged
green PASS, OSC 52 and OSC 0, DCS/APC strings, C1 controls, BEL, bidi and zero-width characters, markup
metacharacters, a leading ``=``) in every input field -- transform, node, op target, tensor names, log
messages, config keys and values, file and folder names, run and model names -- pushed through every
renderer of every command (terminal, markdown, HTML, JSON, JUnit, step summary, batch, history and its CSV
table, candidates, note), each output checked with its medium's own parser: a terminal emulator (pyte),
cmark-gfm, html.parser, an XML schema, a strict JSON parser, the csv module."""

from __future__ import annotations

import csv
import html.parser
import io
import json
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import cmarkgfm
import pyte
import pytest
import xmlschema
from cmarkgfm.cmark import Options

from ad_diff.core.sinks import unsafe
from tests.conftest import ROOT, run_cli

sys.path.insert(0, str(ROOT / "scripts"))
import make_hostile_fixtures  # noqa: E402,F401  (sets hostile_sinks.h and .r2)
from hostile_sinks import BIDI, HOSTILE, every_field, file_name  # noqa: E402

XSD = xmlschema.XMLSchema(ROOT / "tests" / "data" / "junit-10.xsd")
SGR = re.compile(r"\x1b\[[0-9;]*m")
WIDTH = 200
VISIBLE = ("\\x1b[2J", "\\u202e")
"""The escaped forms a reader sees where the input held ESC[2J and U+202E."""


@dataclass
class Outputs:
    """Every text written, by medium: (what wrote it, text)."""

    terminal: list[tuple[str, str]] = field(default_factory=list)
    markdown: list[tuple[str, str]] = field(default_factory=list)
    html: list[tuple[str, str]] = field(default_factory=list)
    json: list[tuple[str, str]] = field(default_factory=list)
    junit: list[tuple[str, str]] = field(default_factory=list)
    csv: list[tuple[str, str]] = field(default_factory=list)


def _cli(out: Outputs, label: str, *args: str | Path, cwd: Path, medium: str = "terminal") -> None:
    r = run_cli(*args, cwd=cwd, env={"COLUMNS": str(WIDTH)})
    assert "Traceback" not in r.err, r.err
    assert r.code in (0, 1), f"{label}: exit {r.code}\n{r.err}"
    getattr(out, medium).append((f"{label} stdout", r.out))
    out.terminal.append((f"{label} stderr", r.err))


def _read(out: Outputs, medium: str, *paths: Path) -> None:
    for p in paths:
        getattr(out, medium).append((p.name, p.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Outputs:
    """Run every command on runs holding :data:`HOSTILE` everywhere (their folders named after it too)."""
    tmp = tmp_path_factory.mktemp("sinks")
    name = file_name(HOSTILE)
    base, cand = every_field(tmp / name)
    res, out = tmp / "reports", Outputs()
    res.mkdir()
    _cli(out, "compare", base, cand, "--color", "--markdown", res / "r.md", "--json", res / "r.json",
         "--junit", res / "r.xml", "--html", res / "r.html", "--step-summary", res / "summary.md", cwd=tmp)
    _read(out, "markdown", res / "r.md", res / "summary.md")
    _read(out, "json", res / "r.json")
    _read(out, "junit", res / "r.xml")
    _read(out, "html", res / "r.html")
    _cli(out, "compare -f markdown", base, cand, "-f", "markdown", cwd=tmp, medium="markdown")
    for side, run in (("b", base), ("c", cand)):  # batch: the model folder is named after HOSTILE
        shutil.copytree(run, tmp / side / name)
    _cli(out, "batch", "batch", tmp / "b", tmp / "c", "--markdown", res / "batch.md", "--json",
         res / "batch.json", "--junit", res / "batch.xml", "--html", res / "batch_html", cwd=tmp)
    _read(out, "markdown", res / "batch.md")
    _read(out, "json", res / "batch.json")
    _read(out, "junit", res / "batch.xml")
    _read(out, "html", *sorted((res / "batch_html").iterdir()))
    hist = tmp / "history"
    for i, run in enumerate((base, base, cand, cand)):  # run names begin with '=' (a formula)
        shutil.copytree(run, hist / f"{name[:60]}{BIDI}_{i}")
    _cli(out, "history", "history", hist, "--order", "name", "--markdown", res / "h.md", "--json",
         res / "h.json", "--table", res / "h.csv", cwd=tmp)
    _read(out, "markdown", res / "h.md")
    _read(out, "json", res / "h.json")
    _read(out, "csv", res / "h.csv")
    for fmt, medium in (("terminal", "terminal"), ("markdown", "markdown"), ("json", "json")):
        _cli(out, f"candidates -f {fmt}", "candidates", cand, "-f", fmt, "--min-count", "1", cwd=tmp,
             medium=medium)
    tests = tmp / "tests.txt"
    tests.write_text(f"PASSED test_{HOSTILE}\n", encoding="utf-8")
    for fmt, given in (("markdown", ("--tests", HOSTILE)), ("json", ("--tests-file", tests))):
        _cli(out, f"note -f {fmt}", "note", base, cand, "--candidate", "rmsnorm", *given, "-f", fmt, cwd=tmp,
             medium=fmt)
    return out


def _raw(text: str) -> list[str]:
    """The characters of ``text`` that act on the reader or hide (rich's colour sequences aside)."""
    return sorted({repr(ch) for ch in SGR.sub("", text) if unsafe(ch) and ch not in "\t\n"})


def test_every_output_is_free_of_raw_controls_bidi_and_zero_width(outputs: Outputs) -> None:
    for medium, texts in vars(outputs).items():
        assert texts, medium
        for label, text in texts:
            assert not _raw(text), f"{medium} {label}: {_raw(text)}"


def test_terminal_screen_shows_exactly_the_text(outputs: Outputs) -> None:
    """A real terminal emulator: nothing clears, moves the cursor, retitles; every line is where it was
    written, and the escaped forms are on screen."""
    shown = ""
    for label, text in outputs.terminal:
        lines = SGR.sub("", text).split("\n")
        screen = pyte.Screen(WIDTH, len(lines) + 1)
        screen.set_mode(pyte.modes.LNM)  # LF is CR LF, as a tty's output processing makes it
        pyte.Stream(screen).feed(text)
        assert screen.title == "", label
        assert screen.icon_name == "", label
        assert screen.cursor.y == len(lines) - 1, f"{label}: the cursor was moved"
        for i, line in enumerate(lines):
            assert screen.display[i].rstrip() == line.rstrip(), f"{label} line {i + 1}"
        shown += "\n".join(screen.display)
    for form in VISIBLE:
        assert form in shown
    assert "PASS (no findings)" not in shown.replace("\\x1b[1;32mad-diff: PASS (no findings)", "")


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self.text.extend(v or "" for _, v in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _html_checked(label: str, page: str) -> str:
    p = _Tags()
    p.feed(page)
    p.close()
    assert not [t for t, _ in p.tags if t in {"img", "script", "iframe"} and "src" in dict(_)], label
    assert not [a for _, attrs in p.tags for a, _v in attrs if a.startswith("on")], f"{label}: event handler"
    text = "".join(p.text)
    assert not _raw(text), f"{label}: {_raw(text)}"  # entities decoded: no raw character hides behind one
    return text


def test_markdown_renders_inert(outputs: Outputs) -> None:
    """cmark-gfm with raw HTML let through (GitHub then sanitises; we must not rely on it)."""
    seen = ""
    for label, md in outputs.markdown:
        page = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
        seen += _html_checked(label, page)
    for form in VISIBLE:
        assert form in seen


def test_html_reports_parse_without_injected_elements(outputs: Outputs) -> None:
    seen = "".join(_html_checked(label, page) for label, page in outputs.html)
    for form in VISIBLE:
        assert form in seen


def test_junit_is_valid_xml_and_schema_valid(outputs: Outputs) -> None:
    for label, text in outputs.junit:
        XSD.validate(text)
        root = ET.fromstring(text.encode("utf-8"))
        values = [v for e in root.iter() for v in (e.text or "", e.tail or "", *e.attrib.values())]
        assert not _raw("".join(values)), label
        assert any(VISIBLE[1] in v for v in values), label


def _no_constant(name: str) -> None:
    raise ValueError(f"non-standard JSON constant {name}")


def test_json_is_strict_and_keeps_the_string(outputs: Outputs) -> None:
    for _label, text in outputs.json:
        data = json.loads(text, parse_constant=_no_constant)
        json.dumps(data, allow_nan=False)
    report = json.loads(outputs.json[0][1])
    assert HOSTILE in {f["tensor"] for f in report["findings"]}  # escaped for the reader, the same data


def test_csv_cells_cannot_start_a_formula(outputs: Outputs) -> None:
    (label, text), = outputs.csv
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows
    runs = {r["run"] for r in rows}
    assert all(r.startswith("'=") for r in runs), runs  # the run names began with '='
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (label, cell)
    assert {r["count"] for r in rows} - {""} <= {str(n) for n in range(100)}  # numbers stay numbers


def test_hostile_string_holds_every_class() -> None:
    """The generic string really holds what the test claims (a guard against editing it away)."""
    for piece in ("\x1b[2J", "\x1b]52;", "\x1b]0;", "\x1bP", "\x1b_", "\x9b", "\x85", "\x07", "\u202e",
                  "\u200b", "<img", "]]>", "`", "|"):
        assert piece in HOSTILE
    assert HOSTILE.startswith("=")
    assert "\x00" not in HOSTILE
    assert BIDI in HOSTILE


def test_every_renderer_escapes_its_fields_without_the_last_pass(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The last pass (sinks.output) is a safety net: the renderers themselves leave nothing raw."""
    from ad_diff import pipeline
    from ad_diff.core import sinks
    from ad_diff.formats import BATCH, COMPARISON, Comparison, Options
    from ad_diff.gate import judge
    from ad_diff.result import BatchResult
    from ad_diff.settings import Settings
    from ad_diff.workflows.batch import run_batch

    monkeypatch.setattr(sinks, "output", lambda text: text)
    base, cand = every_field(tmp_path / file_name(HOSTILE))
    result = pipeline.run(Settings(baseline=base, candidate=cand))
    verdict = judge(result.findings, result.groups, "error")
    for fmt in COMPARISON.formats:
        text = COMPARISON.render(fmt, Comparison(result, verdict), Options(color=True))
        assert not _raw(text), f"{fmt.value}: {_raw(text)}"
    for side, run in (("b", base), ("c", cand)):
        shutil.copytree(run, tmp_path / side / file_name(HOSTILE))
    batch = run_batch(tmp_path / "b", tmp_path / "c", lambda _n, b, c: Settings(baseline=b, candidate=c),
                      jobs=1)
    assert isinstance(batch, BatchResult)
    assert batch.models[0].result is not None
    for fmt in BATCH.formats:
        text = BATCH.render(fmt, batch, Options(color=True))
        assert not _raw(text), f"batch {fmt.value}: {_raw(text)}"
    for label, text in _workflow_reports(tmp_path, base, cand):
        assert not _raw(text), f"{label}: {_raw(text)}"
        if label != "candidates text":  # the templates only: no name of the run in it
            assert "u202e" in text, f"{label} does not show the hostile names"


def _workflow_reports(tmp: Path, base: Path, cand: Path) -> list[tuple[str, str]]:
    """Every report of history, candidates and note on the hostile runs, rendered in-process: every format
    of their registry tables (ad_diff.formats), and the history's long table."""
    from ad_diff.candidates import find_candidates
    from ad_diff.formats import CANDIDATES, HISTORY, NOTE, Options
    from ad_diff.history import HistoryOptions, run_history
    from ad_diff.history.export import csv_safe
    from ad_diff.workflows import note

    hist = tmp / "history"
    for i, run in enumerate((base, base, cand, cand)):
        shutil.copytree(run, hist / f"{file_name(HOSTILE)[:60]}{BIDI}_{i}")
    h = run_history(hist, HistoryOptions(order="name"))
    assert h.table is not None
    found = find_candidates(cand, min_count=1)
    n = note.build_note(base, cand, "rmsnorm", tests=HOSTILE)
    out = [("history csv", csv_safe(h.table).to_csv(index=False))]
    subjects = (("history", HISTORY, h), ("candidates", CANDIDATES, found), ("note", NOTE, n))
    for name, table, subject in subjects:
        out += [(f"{name} {fmt.value}", table.render(fmt, subject, Options(color=True, width=120)))
                for fmt in table.formats]
    return out
