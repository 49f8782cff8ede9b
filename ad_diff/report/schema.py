"""The JSON Schema of the comparison report (``ad-diff schema``; docs/report-schema.md is generated from it).

One schema describes both things ``ad-diff compare -f json`` can print: the report (exit 0 or 1) and the
error object (exit 2). The enumerations (categories, severities, states, causes, how a log ended) are read
from the code's own enums, so a new value cannot be emitted without the schema knowing it; a report key
that the schema does not describe fails validation (``additionalProperties: false`` on every object whose
keys ad-diff chooses), which the test suite checks against every fixture report. The analyses under
``sections`` are open objects: their keys are described in docs/report-schema.md, not frozen here.

The schema's ``$id`` carries :data:`~ad_diff.report.json.SCHEMA_VERSION`: a report names the schema it
follows by its ``schema_version``.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _enum(cls: Any) -> list[str]:
    return [m.value for m in cls]


def _obj(props: dict[str, Schema], required: list[str] | None = None, desc: str = "",
         closed: bool = True) -> Schema:
    out: Schema = {"type": "object", "properties": props, "required": sorted(required or props)}
    if closed:
        out["additionalProperties"] = False
    if desc:
        out["description"] = desc
    return out


def _t(kind: str | list[str], desc: str = "", **more: Any) -> Schema:
    out: Schema = {"type": kind}
    if desc:
        out["description"] = desc
    out.update(more)
    return out


def _nullable(kind: str, desc: str = "", **more: Any) -> Schema:
    return _t([kind, "null"], desc, **more)


def _list(items: Schema, desc: str = "") -> Schema:
    return _t("array", desc, items=items)


STABLE = "stable. "
"""Opens the description of a key promised to users: not removed or renamed without a schema_version bump."""


STATUS_PATTERN = (r"^(CONFLICT \()?(APPLIED (\d+|\?)|SKIPPED|DISABLED|FAILED|RESTORED|INCOMPLETE|ABSENT)"
                  r"\)?$")
"""``transforms[].*.status``: ad-conf-check's words (report.common.status_text)."""


def _side(states: list[str]) -> Schema:
    return _obj({
        "state": _t("string", "what the transform did in this run; restored: not run, the run restored AD's "
                    "pipeline cache at a later transform (not compared); absent: not in this run",
                    enum=states),
        "status": _t("string", "the state in ad-conf-check's words: APPLIED n, SKIPPED, DISABLED, FAILED, "
                     "RESTORED, INCOMPLETE, ABSENT; CONFLICT (...) when the run's log and its dumps disagree",
                     pattern=STATUS_PATTERN),
        "matches": _nullable("integer", "its match count (null when it did not apply)"),
        "stage": _nullable("string", "its stage in this run"),
        "time_s": _nullable("number", "its logged time in seconds"),
        "failure": _nullable("string", "the failure text when it failed"),
    }, desc="One run's side of a transform row.")


def _finding(categories: list[str], severities: list[str]) -> Schema:
    return _obj({
        "group": _t("integer", STABLE + "the groups[].id it belongs to", minimum=1),
        "role": _nullable("string", "root (evidence at the root cause) or consequence",
                          enum=["root", "consequence", None]),
        "code": _t("string", STABLE + "the rule code (docs/rules.md)", pattern="^AD[A-Z][0-9]{3}$"),
        "category": _t("string", STABLE + "what the finding is about", enum=categories),
        "severity": _t("string", STABLE + "only error findings can gate", enum=severities),
        "stage": _nullable("string", "the transform's stage"),
        "transform": _nullable("string", STABLE + "the transform key, where the finding is about one"),
        "node": _nullable("string", STABLE + "the graph node, where the finding is about one"),
        "tensor": _nullable("string", STABLE + "the tensor, where the finding is about one"),
        "message": _t("string", STABLE + "the finding in one sentence"),
        "collapse": _t("boolean", "a match loss to zero or by at least the collapse fraction"),
        "gated": _t("boolean", "whether it gates at fail_on"),
        "acknowledged": _nullable("string", "the expected-changes reason that acknowledges it"),
        "explained_by": _nullable("string", "the config change that explains it"),
        "evidence": _t("object", "the facts behind it, by name (rule-specific)"),
    }, desc="One finding, in report order (group by group, root findings first).")


def _group(causes: list[str], severities: list[str]) -> Schema:
    return _obj({
        "id": _t("integer", STABLE + "1-based, gating groups first", minimum=1),
        "cause": _t("string", STABLE + "what the root cause is", enum=causes),
        "title": _t("string", STABLE + "the root cause in a few words"),
        "evidence": _t("string", "one line saying what shows it"),
        "stage": _nullable("string", "the root transform's stage"),
        "transform": _nullable("string", "the root transform (null for run-level and tensor-only groups)"),
        "position": _nullable("integer", "the root transform's index in transforms[]"),
        "gated": _t("boolean", STABLE + "any of its findings gates at fail_on"),
        "severity": _t("string", "its worst finding's severity", enum=severities),
        "settled": _t("boolean", "every error or warning in it is acknowledged or explained by config"),
        "root": _list(_t("integer", minimum=0), STABLE + "indexes into findings[]: the evidence at the root"),
        "consequences": _list(_t("integer", minimum=0), STABLE + "indexes into findings[]: what follows"),
        "consequence_counts": _t("object", "error consequences per category",
                                 additionalProperties=_t("integer", minimum=0)),
    }, desc="A causal group: a root cause and what follows from it.")


def _run(ends: list[str]) -> Schema:
    log_keys: dict[str, Schema] = {
        "log_formats": _list(_t("string"), "message formats seen (V0-V3)"),
        "log_prefixes": _list(_t("string"), "line prefixes seen (L1-L3, bare)"),
        "rank": _nullable("integer", "the primary rank (the one transforms[] shows)"),
        "ranks_seen": _list(_t("integer"), "every rank the log holds"),
        "rank_disagreement": _list(_t("string"), "transforms whose ranks disagree within this run"),
        "end": _t("string", "how the run ended (its first rank that stopped early, else the primary rank's); "
                   "anything but complete gates as an incomplete run", enum=ends),
        "end_detail": _t("string"),
        "pipelines": _t("integer", minimum=0),
        "transforms": _t("integer", "transform results read for the primary rank", minimum=0),
        "lines": _t("integer", minimum=0),
        "issues": _list(_obj({"line": _nullable("integer"), "kind": _t("string"), "text": _t("string")})),
    }
    props: dict[str, Schema] = {
        "path": _t("string", "the run folder (or snapshot file)"),
        "log": _nullable("string"),
        "graphs": _nullable("string"),
        "tensors": _nullable("string"),
        "notes": _list(_t("string")),
        **log_keys,
    }
    return _obj(props, required=["path", "log", "graphs", "tensors", "notes"],
                desc="One run: its artifacts, and from its log the facts of the report header.")


def _accounting() -> Schema:
    count = _t("integer", minimum=0)
    side = _obj({"baseline": count, "candidate": count})
    rule = _obj({"rule": _t("string"), "item": _t("string"), "absorbed": count, "description": _t("string")})
    return _nullable("object", "the accounting pass (docs/accounting.md); null for a snapshot baseline",
                     properties={
                         "inventory": _t("object", "item -> how many each run holds",
                                         additionalProperties=side),
                         "differences": _t("integer", "differences found after normalisation", minimum=0),
                         "covered": _t("integer", "accounted for by a finding or another difference",
                                       minimum=0),
                         "unaccounted": _t("integer", "left: each named by an ADA001 finding", minimum=0),
                         "unrecognised_lines": _t("integer", "log lines no reader claims that differ and "
                                                  "nothing accounts for: listed by ADA002 warnings, never "
                                                  "gating", minimum=0),
                         "noise_rules": _list(rule, "every noise rule in order, with how much it absorbed"),
                         "notes": _list(_t("string")),
                         "switched_off": _list(_t("string"), "kinds the user switched off (--no-tensors, "
                                               "--no-graphs): their inputs are no facts of the accounting"),
                     },
                     required=["inventory", "differences", "covered", "unaccounted", "unrecognised_lines",
                               "noise_rules", "notes", "switched_off"],
                     additionalProperties=False)


def report_schema() -> Schema:
    """The JSON Schema (draft 2020-12) of ``ad-diff compare -f json``: the report, or the error object."""
    # lazy: the models load only when the schema is printed
    from ad_diff.core.model import Category, Severity, State
    from ad_diff.explain.model import CauseKind
    from ad_diff.kinds.base import SkipReason
    from ad_diff.kinds.log.model import LogEnd
    from ad_diff.report.json import SCHEMA_VERSION
    from ad_diff.settings import FAIL_ON_CHOICES

    categories, severities = _enum(Category), _enum(Severity)
    side = _side(_enum(State))
    row = _obj({
        "stage": _t("string", STABLE), "transform": _t("string", STABLE),
        "occurrence": _t("integer", "0 for the first run of the transform, 1 for its second, ...", minimum=0),
        "changed": _t("boolean", "the state or count differs on any rank compared (the sides are the "
                                 "primary rank's)"),
        "delta": _nullable("integer", "candidate minus baseline matches"),
        "baseline": side, "candidate": side,
        "elsewhere": _list(_obj({"rank": _nullable("integer"), "baseline": side, "candidate": side}),
                           "the other ranks compared on which the transform's state or count differs"),
    }, desc="One transform, aligned across the runs (the primary rank's rows).")
    count = _t("integer", minimum=0)
    summary = _obj({
        "findings": count, "errors": count, "warnings": count, "info": count,
        "gated": _t("integer", "gating findings", minimum=0),
        "transforms": _t("integer", "transforms compared", minimum=0), "changed_transforms": count,
        "not_compared_transforms": _t("integer", "restored, or never reached by a run that stopped",
                                      minimum=0),
        "root_causes": _t("integer", "gating groups", minimum=0), "groups": count,
        "categories": _t("object", "error and warning findings per analysed category",
                         propertyNames={"enum": categories}, additionalProperties=count),
        "not_analysed": _t("object", "category -> why it was not analysed",
                           propertyNames={"enum": categories}, additionalProperties=_t("string")),
        "ignored_transforms": _list(_t("string")), "ignored_findings": count,
    }, desc="Counts.")
    skipped = _obj({"reason": _t("string", "why, for a program", enum=_enum(SkipReason)),
                    "detail": _t("string"), "run": _nullable("string"),
                    "count": _t("integer", "empty_one: the other run's file count", minimum=0)},
                   required=["reason", "detail", "run"], desc="Why a kind was not compared.")
    report = _obj({
        "schema_version": _t("integer", STABLE, const=SCHEMA_VERSION),
        "headline": _t("string", STABLE + "the one-sentence verdict every report shows"),
        "verdict": _t("string", STABLE, enum=["pass", "fail"]),
        "exit_code": _t("integer", STABLE + "0 or 1", enum=[0, 1]),
        "fail_on": _t("string", "the gate level used", enum=list(FAIL_ON_CHOICES)),
        "tool": _obj({"name": _t("string", const="ad-diff"), "version": _t("string")}, desc="what wrote it"),
        "summary": summary,
        "skipped": _t("object", "each kind not compared -> why", additionalProperties=skipped),
        "groups": _list(_group(_enum(CauseKind), severities), STABLE + "causal groups"),
        "runs": _obj({"baseline": _run(_enum(LogEnd)), "candidate": _run(_enum(LogEnd))},
                     desc="the two runs: artifacts and log facts"),
        "transforms": _list(row, STABLE + "transform rows, pipeline order"),
        "findings": _list(_finding(categories, severities), STABLE + "findings, report order"),
        "sections": _t("object", "analyses by name (log always; graph, tensors, config when run); open "
                       "objects described in docs/report-schema.md",
                       additionalProperties=_t("object")),
        "notes": _list(_t("string"), "what was found, skipped or not run"),
        "accounting": _accounting(),
    }, desc="The comparison report (exit 0 or 1).")
    error = _obj({
        "schema_version": _t("integer", const=SCHEMA_VERSION),
        "verdict": _t("string", const="error"),
        "exit_code": _t("integer", const=2),
        "error": _obj({"message": _t("string", "the full message, as on stderr"),
                       "path": _nullable("string", "the file or folder it is about"),
                       "line": _nullable("integer", "the line, when the error has one")}),
    }, desc="An input or usage error (exit 2) under --format json.")
    return {
        "$schema": DRAFT,
        "$id": f"https://ad-diff.invalid/schema/report-{SCHEMA_VERSION}.json",
        "title": "ad-diff comparison report",
        "description": "What `ad-diff compare --format json` prints: the report, or an error object.",
        "oneOf": [{"$ref": "#/$defs/report"}, {"$ref": "#/$defs/error"}],
        "$defs": {"report": report, "error": error},
    }
