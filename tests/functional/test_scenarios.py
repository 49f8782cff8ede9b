"""Every generated two-run scenario: the verdict, root causes and findings its manifest promises, the root
cause named first in the markdown, and byte-exact snapshots of the markdown and JSON reports (written by
scripts/update_golden.py, reviewed in git diff).

The manifest check is strict both ways: a listed finding or root cause that ad-diff does not report fails, and
so does an error or warning finding, or a gating root cause, that the manifest does not list.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT, run_cli

MANIFEST = yaml.safe_load((FIXTURES / "scenarios/manifest.yaml").read_text())["scenarios"]
NAMES = sorted(n for n in MANIFEST if (FIXTURES / "scenarios" / n / "baseline").is_dir())
ROOT_CAUSE_WITHIN = 1500
"""Characters of the markdown within which every gating root cause is named (issue 13)."""


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, tuple[int, str, str]]:
    out: dict[str, tuple[int, str, str]] = {}
    tmp = tmp_path_factory.mktemp("scen")
    for name in NAMES:
        rel = Path("fixtures/scenarios") / name
        md, js = tmp / f"{name}.md", tmp / f"{name}.json"
        args = [a.replace("{scenario}", str(rel)) for a in MANIFEST[name].get("args") or ()]
        res = run_cli(
            rel / "baseline", rel / "candidate", *args, "--markdown", md, "--json", js, "-f", "json"
        )
        assert res.code in (0, 1), f"{name}: {res.err}"
        assert res.out == js.read_text()
        out[name] = (res.code, md.read_text(), js.read_text())
    return out


def _key(f: dict[str, Any]) -> tuple[str, str | None]:
    return (f["category"], f["transform"])


def unlisted_findings(exp: dict[str, Any], findings: list[dict[str, Any]]) -> list[str]:
    """Error and warning findings that neither the manifest's findings nor its false positives name."""
    listed = {_key(w) for w in exp.get("findings") or []}
    known = {(fp["code"], fp["category"], fp["transform"]) for fp in exp.get("false_positives") or []}
    return [
        f"{f['severity']} {f['code']} {f['category']} at {f['transform']}: {f['message']}"
        for f in findings
        if f["severity"] != "info" and _key(f) not in listed and (f["code"], *_key(f)) not in known
    ]


def gated_causes(data: dict[str, Any]) -> list[tuple[str, str | None, set[str]]]:
    """(cause, transform, error consequences) of every gating group, in report order."""
    out = []
    for g in data["groups"]:
        if not g["gated"]:
            continue
        cons = {
            data["findings"][i]["transform"] or data["findings"][i]["tensor"]
            for i in g["consequences"]
            if data["findings"][i]["severity"] == "error"
        }
        out.append((g["cause"], g["transform"], cons))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_manifest_expectations(outputs, name: str) -> None:
    exp = MANIFEST[name]
    code, _, js = outputs[name]
    data = json.loads(js)
    assert code == exp["exit_code"]
    assert data["verdict"] == exp["verdict"]
    findings = data["findings"]
    got = {_key(f) for f in findings}
    for want in exp["findings"]:
        assert _key(want) in got, f"missing {want}"
        if "collapse" in want:
            hit = [f for f in findings if _key(f) == _key(want)]
            assert any(f["collapse"] == want["collapse"] for f in hit)
    assert unlisted_findings(exp, findings) == [], "findings the manifest does not list (false alarms?)"
    for fp in exp.get("false_positives") or []:
        assert any(
            (f["code"], *_key(f)) == (fp["code"], fp["category"], fp["transform"]) for f in findings
        ), (
            f"{fp['code']} at {fp['transform']} is no longer reported: remove it from the scenario's "
            "false_positives"
        )
    want_causes = [(c["cause"], c["transform"], set(c["consequences"])) for c in exp.get("root_causes") or []]
    assert gated_causes(data) == want_causes
    if exp["verdict"] == "fail":
        assert want_causes, "a failing scenario must list its root causes"


@pytest.mark.parametrize("name", [n for n in NAMES if MANIFEST[n]["verdict"] == "fail"])
def test_root_cause_is_named_first(outputs, name: str) -> None:
    """Each gating root cause is named in the first 1,500 characters, before any of its consequences."""
    _, md, js = outputs[name]
    data = json.loads(js)
    gated = [g for g in data["groups"] if g["gated"]]
    for k, g in enumerate(gated, 1):
        at = md.find(f"\n{k}. \u274c **")  # its item on the first screen
        assert 0 <= at < ROOT_CAUSE_WITHIN, f"root cause {g['title']!r} at {at}"
        line = md[at + 1 : md.index("\n", at + 1)]
        assert g["title"] in line.replace("`", ""), line
        if g["transform"]:
            assert f"`{g['transform']}`" in line
        for i in g["consequences"]:
            f = data["findings"][i]
            name = f["transform"] or f["tensor"]
            named = md.find(f"`{name}`")
            # a drift's title names what drifted: that tensor is the root cause's subject, not named early
            ok = named == -1 or named > at or name in g["title"]
            assert ok, f"consequence {f['transform']} named before its root cause"


@pytest.mark.parametrize("name", NAMES)
def test_snapshots(outputs, name: str) -> None:
    exp = FIXTURES / "scenarios" / name / "expected"
    code, md, js = outputs[name]
    assert (exp / "report.md").read_text() == md, "markdown changed: review and run scripts/update_golden.py"
    assert (exp / "report.json").read_text() == js, "JSON changed: review and run scripts/update_golden.py"
    assert int((exp / "exit_code").read_text()) == code


def test_the_manifest_test_catches_unlisted_findings() -> None:
    """The strict check itself: an unlisted warning is reported, a listed or known one is not."""
    exp = {
        "findings": [{"category": "match_loss", "transform": "a"}],
        "false_positives": [{"code": "ADG003", "category": "metadata_loss", "transform": "b"}],
    }
    found = [
        {"severity": "error", "code": "ADL001", "category": "match_loss", "transform": "a", "message": "m"},
        {
            "severity": "warning",
            "code": "ADG003",
            "category": "metadata_loss",
            "transform": "b",
            "message": "m",
        },
        {
            "severity": "info",
            "code": "ADG004",
            "category": "structure_change",
            "transform": "c",
            "message": "m",
        },
        {
            "severity": "warning",
            "code": "ADG005",
            "category": "structure_change",
            "transform": "d",
            "message": "m",
        },
    ]
    assert unlisted_findings(exp, found) == ["warning ADG005 structure_change at d: m"]


# : The scenarios with the most findings of each kind (graph, config, tensors, hostile names), and batch
# output.
DETERMINISM_CASES = {
    "graph": ("fixtures/scenarios/metadata_loss/baseline", "fixtures/scenarios/metadata_loss/candidate"),
    "graph_fusion": (
        "fixtures/scenarios/fusion_one_layer/baseline",
        "fixtures/scenarios/fusion_one_layer/candidate",
    ),
    "config": (
        "fixtures/scenarios/config_unexplained/baseline",
        "fixtures/scenarios/config_unexplained/candidate",
    ),
    "tensors": ("fixtures/tensors/gpu/baseline", "fixtures/tensors/gpu/beyond"),
    "hostile_names": ("fixtures/hostile/markup_names/baseline", "fixtures/hostile/markup_names/candidate"),
    "batch": ("batch", "fixtures/scenarios"),
}


@pytest.mark.parametrize("case", sorted(DETERMINISM_CASES))
def test_output_is_byte_identical_across_hash_seeds(tmp_path: Path, case: str) -> None:
    base, cand = DETERMINISM_CASES[case]
    args: tuple[str | Path, ...]
    if base == "batch":  # three models per side, compared in parallel: the order must not depend on timing
        for side in ("b", "c"):
            for name in ("metadata_loss", "config_unexplained", "partial_loss"):
                # copies, not links: batch refuses a model folder that links outside its root (issue 14)
                shutil.copytree(ROOT / cand / name / ("baseline" if side == "b" else "candidate"),
                                tmp_path / side / name, symlinks=True)
        args = ("batch", tmp_path / "b", tmp_path / "c", "--jobs", "2")
    else:
        args = (base, cand)
    outs = []
    for seed in ("1", "4242"):
        md, js = tmp_path / f"{seed}.md", tmp_path / f"{seed}.json"
        res = run_cli(*args, "--markdown", md, "--json", js, "-f", "json", env={"PYTHONHASHSEED": seed})
        assert res.code in (0, 1), res.err
        outs.append((res.out, md.read_text(), js.read_text()))
    assert outs[0] == outs[1]
