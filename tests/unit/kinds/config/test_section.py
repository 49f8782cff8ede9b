"""Tests of the configuration report section (ad_diff.kinds.config.section) in markdown and the terminal, and
its JSON form, on the three scenarios."""

from __future__ import annotations

import io
import json

from rich.console import Console

from ad_diff.core.jsonable import to_jsonable
from ad_diff.kinds.config.explain import with_explanations
from ad_diff.kinds.config.model import (
    ChangeKind,
    ConfigAnalysis,
    ConfigChange,
    ConfigDiff,
    ConfigSource,
    EffectiveConfig,
    SourceKind,
    TransformConfigChange,
)
from ad_diff.kinds.config.section import view
from tests.unit.kinds.config.scenarios import run_scenario
from tests.views import NO_CONTEXT, markdown, terminal


def section(name: str) -> ConfigAnalysis:
    analysis, findings = run_scenario(name)
    return with_explanations(analysis, findings)


def test_markdown_explained() -> None:
    md = markdown(view(section("explained"), NO_CONTEXT))
    assert md.startswith("### Configuration\n")
    assert ("- candidate: layered, `config/default.yaml` → `config/dashboard_default.yaml` → "
            "`config/model_x.yaml` (merge order, later wins; default rule: default.yaml first, then by name, "
            "cli\\*.yaml last)") in md
    assert ("| <code>fuse_gemms</code> | enabled | <code>true</code> | <code>false</code> | "
            "<code>config/model_x.yaml:4</code> |") in md
    assert ("- *explained by config* (ADL003, does not gate): fuse_gemms: matched 12 in baseline but is "
            "disabled in candidate — fuse_gemms: disabled in candidate config") in md
    assert ("(ADL002, gates): fuse_rmsnorm: matches dropped 33 -> 17 (48% lost) — likely cause: "
            "fuse_gemms") in md
    assert "Unexplained" not in md


def test_markdown_unexplained_and_not_applied() -> None:
    md = markdown(view(section("unexplained"), NO_CONTEXT))
    assert "The two effective configs are identical." in md
    assert ("- **unexplained**: fuse_rmsnorm: applied -> disabled with no config change behind it "
            "(transforms.fuse_rmsnorm.enabled is true in both configs)") in md
    assert "- candidate: `fuse_rmsnorm` enabled in config, logged disabled: config `enabled` (" in md
    md2 = markdown(view(section("not_applied"), NO_CONTEXT))
    assert ("- candidate: `fuse_gemms` enabled in config, logged disabled: config `enabled` "
            "(`config/dashboard_default.yaml:4`), log `disabled`, line 7") in md2


def test_json_section() -> None:
    js = to_jsonable(section("explained"))
    json.dumps(js)  # plain JSON
    assert [f["code"] for f in js["explained"]] == ["ADL002", "ADL003"]
    assert js["explained"][1]["gating"] is False
    assert js["explained"][1]["evidence"]["config_explanation"] == "explained"
    assert js["unexplained"] == []
    un = to_jsonable(section("unexplained"))
    assert un["unexplained"][0]["transform"] == "fuse_rmsnorm"
    assert un["checks"][0]["kind"] == "enabled_but_disabled"


def test_terminal_renders() -> None:
    buf = io.StringIO()
    Console(file=buf, width=200, no_color=True).print(terminal(view(section("unexplained"), NO_CONTEXT)))
    out = buf.getvalue()
    assert "Config applied?" in out
    assert "unexplained: fuse_rmsnorm: applied -> disabled" in out


def test_names_escaped() -> None:
    evil = "x|y`<b>"
    src = ConfigSource(SourceKind.EFFECTIVE, ("a|b.yaml",), "explicit", True)
    cfg = EffectiveConfig(src, {}, {})
    change = ConfigChange(("transforms", evil, "enabled"), ChangeKind.ENABLED, True, False, None,
                          "a|b.yaml:1")
    diff = ConfigDiff((TransformConfigChange(evil, "compile", (change,)),), ())
    md = markdown(view(ConfigAnalysis(cfg, cfg, diff, ()), NO_CONTEXT))
    row = next(line for line in md.splitlines() if line.startswith("| <code>x"))
    assert "<code>x&#124;y&#96;&#60;b&#62;</code>" in row  # inert inside the cell, and rendered as code
    assert row.count("|") == 6  # the row still has exactly 5 cells
    assert "- baseline: effective, `a\\|b.yaml`" in md
