"""Write the key tables of docs/report-schema.md from the report's JSON Schema (ad_diff.report.schema).

    python scripts/gen_schema_doc.py          # rewrite the generated part of docs/report-schema.md
    python scripts/gen_schema_doc.py --check  # exit 1 if it is out of date

The page's prose (causal groups, sections, errors) is written by hand; the tables between the two
``<!-- generated ... -->`` markers come from the schema, so a key cannot be added to the report without
the page showing it (the schema rejects keys it does not describe).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ad_diff.report.schema import STABLE, report_schema  # noqa: E402

DOC = ROOT / "docs" / "report-schema.md"
BEGIN = "<!-- generated from the schema by scripts/gen_schema_doc.py: do not edit by hand -->"
END = "<!-- end of the generated part -->"


def _type(s: dict[str, Any]) -> str:
    t = s.get("type", "")
    kinds = t if isinstance(t, list) else [t]
    out = " or ".join("null" if k == "null" else k for k in kinds if k)
    if "enum" in s:
        out += ": " + ", ".join(f"`{v}`" if v is not None else "null" for v in s["enum"])
    if "const" in s:
        out += f": `{s['const']}`"
    if t == "array":
        out = f"list of {_type(s['items'])}" if "properties" not in s["items"] else "list of objects"
    return out


def _cell(text: str) -> str:
    if text.startswith(STABLE):  # a key promised to users
        text = "**stable**" + ("; " + text[len(STABLE):] if text[len(STABLE):].strip() else "")
    return text.replace("|", "\\|").replace("\n", " ")


def table(title: str, obj: dict[str, Any]) -> list[str]:
    """One markdown table of an object's keys."""
    lines = [f"### {title}", "", _cell(obj.get("description", "")), "", "| Key | Type | |", "|---|---|---|"]
    for key, s in obj["properties"].items():
        lines.append(f"| `{key}` | {_cell(_type(s))} | {_cell(s.get('description', ''))} |")
    return [*lines, ""]


def generate() -> str:
    """The generated part of the page."""
    sch = report_schema()
    rep, err = sch["$defs"]["report"], sch["$defs"]["error"]
    props = rep["properties"]
    parts = [BEGIN, ""]
    parts += table("The report", rep)
    parts += table("`summary`", props["summary"])
    parts += table("`groups[]`", props["groups"]["items"])
    parts += table("`findings[]`", props["findings"]["items"])
    parts += table("`transforms[]`", props["transforms"]["items"])
    parts += table("`transforms[].baseline`, `transforms[].candidate`", props["transforms"]["items"]
                   ["properties"]["baseline"])
    parts += table("`runs.baseline`, `runs.candidate`", props["runs"]["properties"]["baseline"])
    parts += table("The error object (exit 2)", err)
    parts.append(END)
    return "\n".join(parts)


def render(page: str) -> str:
    """``page`` with its generated part replaced."""
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{DOC}: the markers of the generated part are missing")
    head, rest = page.split(BEGIN, 1)
    return head + generate() + rest.split(END, 1)[1]


def main(argv: list[str]) -> int:
    """Rewrite the page, or with ``--check`` say whether it is current."""
    page = DOC.read_text(encoding="utf-8")
    new = render(page)
    if "--check" in argv:
        return 0 if new == page else 1
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
