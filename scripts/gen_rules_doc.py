"""Write docs/rules.md from the rule catalog (ad_diff.catalog.RULES).

    python scripts/gen_rules_doc.py          # rewrite docs/rules.md
    python scripts/gen_rules_doc.py --check  # exit 1 if docs/rules.md is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ad_diff.catalog import RULES  # noqa: E402
from ad_diff.core.rules import CATEGORIES, NAMES_NO_CAUSE, ROLE_DOC, Role  # noqa: E402

CATEGORY_DOC = {
    "match_loss": "The candidate matched fewer times than the baseline, or a transform that matched "
    "stopped running.",
    "metadata_loss": "Shape/dtype metadata the baseline had and the candidate lacks (`? : N/A`, "
    "`? : unknown`, a lost dtype). Nothing else.",
    "shape_change": "A node aligned by structure (not just by name) has another shape or dtype in the "
    "candidate, both known. Not a loss: nothing is missing.",
    "numeric_drift": "Recorded output tensors differ beyond tolerance, or NaN/Inf appeared.",
    "incomplete_run": "A run crashed, stopped early or was cut; what it never reached cannot be compared. "
    "Always gates (except `--fail-on never`).",
    "state_change": "A transform's state changed (disabled, failed, added, removed, moved) without a match "
    "loss of its own.",
    "structure_change": "The graph differs in structure between the runs.",
    "consistency": "A run disagrees with itself (ranks, log vs dumps, restarts).",
    "config": "Differences or inconsistencies in the runs' AutoDeploy configuration.",
    "input": "An input is missing, one-sided or partly unreadable.",
    "improvement": "The candidate matched more; listed for confirmation.",
    "unaccounted": "A difference between the run folders that no finding accounts for and no noise rule "
    "absorbs (docs/accounting.md). Always an error.",
    "expected_changes": "The expected-changes file itself (`--expected`): an entry that acknowledged "
    "nothing (stale). About the file, not the runs: never a root cause, never an input problem; reports list "
    "it apart, after the root causes. A warning: it never gates.",
}


# Markdown source of docs/rules.md, which a test compares with this script's output byte for byte: its
# table rows must stay one line each (a wrapped row is a broken table), hence the noqa on the closing quotes.
POLICY = """## Gating policy

ad-diff is a CI gate: a red result must always be real, and a green one must never hide a broken or incomplete
run. What fails the gate by default (`--fail-on error`), and why:

| Gates by default | Findings | Why |
|---|---|---|
| yes | `match_loss` (ADL001-ADL003) | Match counts are exact and deterministic, so any drop is a real change in what the pipeline optimises: no tolerance. An intended drop goes into the expected-changes file with its reason. |
| yes | `metadata_loss` errors (ADG001, ADG010) | Nodes whose shape/dtype the baseline knew are unknown in the candidate; later matchers silently match less on them. |
| yes | `numeric_drift` errors (ADT001-ADT003, ADT005; ADT007 when only node captures were recorded) | An output beyond its tolerance, new NaN/Inf, a changed shape or a missing output: without a verdict on an output there is no pass. |
| yes | `state_change` error ADL004 | A transform that raises (swallowed by `skip_on_error`) hides a bug even when no match is lost. |
| yes | `input` errors (ADI001-ADI006, ADG009, ADT008, ADT009) | Missing, one-sided or unreadable artifacts: an analysis that could not run must not read as a pass. |
| yes | `input` error ADT012 (a reference the candidate alone supplies, or that differs between the runs) | The run under review may not supply its own standard of truth: a candidate's reference agrees with whatever the candidate computed (logits at `3x + 7` pass against a reference of `3x + 7`). Such a reference is not used, and since the numeric verdict the user asked for cannot be given, the result is red until the reference is the baseline's (or equal in both runs) or given with `--reference DIR`. |
| yes | `consistency` errors (ADG012, ADG014, ADG015) | A run's log and its own dumps tell different stories (a count the dump does not show, a dump of a transform the log never ran, a logged count the known ops the dump adds do not match): the dumps are not the log's, and nothing compared from them can be trusted. |
| yes | `unaccounted` (ADA001) | The accounting pass inventoried both run folders and found a difference that no finding names and no documented noise rule absorbs (docs/accounting.md). A green result must never hide a difference nobody explained, so it is an error; it is not in the `match_loss`/`collapse` levels, which gate on what they name only. Acknowledge an intended one with `--expected`; teach ad-diff a new kind of noise with a noise rule, never by dropping the finding. |
| always (all levels but `never`) | `incomplete_run` (ADL009) | A run whose completeness cannot be established never passes, whatever the gate level. |
| no | `unaccounted` warning ADA002 (lines a transform logged that no reader recognises differ) | ad-diff cannot tell what such a line means; it is listed for review and never gates by itself: a log line is a fact only where no reader claims it, and how a run printed is never one. |
| no | every warning (state changes, unexplained config toggles, rank disagreements, rewritten regions, metadata coverage, dtype changes of outputs, ...) | Worth a look in review; a warning is never a verdict by itself. The headline says how many are left to review. |
| no | every info finding (improvements, first structural divergence, config changes) | Facts for the reader. A fusion switched on that matches everywhere reads as an improvement, not as a warning. |

Exemptions. A finding acknowledged in the expected-changes file (`--expected`) never gates; a stale entry is a
warning (ADX001). A transform whose own config change explains its state (toggled off in the candidate's config)
does not gate through that finding (`config_explained_gates` turns this off); what it causes downstream still
gates, because a downstream loss is what the gate exists for until it is acknowledged.

Facts, not presentation. Every finding is about what the runs did, never how they printed it: the log's
message format (V0-V3), logger prefix (L1-L3), verbosity, capture prefixes, file layout, names and compression,
and a dump's print form are read into the same model of the run, and a re-printed run must keep its verdict and
findings (tests/metamorphic/; docs/accounting.md lists what is a fact and what is presentation). Run-level events
decide what is compared: transforms a run restored from AD's pipeline cache or graph cache are not compared
(one note, never a loss); a world-size change explains the sharding stage's findings and the shapes it slices,
grouped under it as one root cause that does not gate (`world_size_changed`); inputs switched off
(`--no-tensors`, `--no-graphs`, `--ignore-transform`) are no facts.

Root causes. The explain pass groups every finding under the root cause it follows from (the first transform in
pipeline order where the difference appears, linked by graph hints, config explanations or a run that stopped).
A group gates when any of its findings gates, so an explained root cause with a gating consequence still heads a
gating group. The headline counts gating root causes, not findings: `FAIL: 1 root cause (metadata lost at
match_rope_pattern) -> 1 match loss`. Without evidence of a link (a log-only comparison, say) two losses stay two
root causes: ad-diff never merges findings by position alone. On ranks whose dumps are not written (AD dumps rank
0's graph), what follows the first difference confined to the same ranks is its consequence: a rank-1 collapse
and the downstream loss on rank 1 are one root cause.

Drift causes. Every drifting tensor (ADT001, ADT002) carries its ranked likely causes (`evidence.causes`): the
first drifting captured node and its transform; else the structural differences upstream (a transform whose
count rose or fell, with the ops its rewritten regions changed; an op swapped one for one; a dtype change); then
config changes that change numerics (`quant_config`, dtypes, backends, a transform toggled); else "no
structural or config cause found", which points at a kernel. The drift is grouped under its first cause and
titled by what drifted and why. A count that rises together with drift is that drift's cause, never an
improvement: it is grouped under the drift, which gates.

Other levels: `--fail-on match_loss` gates on match losses only, `collapse` on collapses only (to zero or by at
least the collapse fraction), `never` on nothing; `incomplete_run` gates at all of them but `never`. Drop a code
with `--ignore-code CODE` or a transform with `--ignore-transform GLOB` (both globs); the reports count what was
ignored.
"""  # noqa: E501


def render() -> str:
    lines = [
        "# Finding codes",
        "",
        "Generated by `scripts/gen_rules_doc.py` from `ad_diff/catalog.py`; do not edit by hand.",
        "",
        "Every finding has a stable `code`, a `category`, a default `severity` and a message. Only `error`",
        "findings can fail the gate (`--fail-on`); the gating policy below says which, and why.",
        "",
        *POLICY.splitlines(),
        "",
        "## Categories",
        "",
        "| Category | Meaning |",
        "|---|---|",
    ]
    lines += [f"| `{c}` | {CATEGORY_DOC[c]} |" for c in CATEGORIES]
    lines += ["", "## Codes", "", "| Code | Name | Category | Severity | Message |", "|---|---|---|---|---|"]
    for r in RULES:
        lines.append(f"| [{r.code}](#{r.code.lower()}) | {r.name} | `{r.category}` | {r.severity.value} | "
                     f"`{r.template.replace('|', '/')}` |")
    lines += [
        "", "## Roles", "",
        "What a finding is to the passes over all findings (grouping, titles, the reports, the history) is",
        "data on its rule (`Rule.role`), never a branch on its code. Most rules have no role. Among a",
        "group's findings of one severity, the rule with the lowest *heads* names the group's cause.", "",
        "| Role | Rules | Meaning |", "|---|---|---|",
    ]
    for role in Role:
        if role is Role.NONE:
            continue
        codes = ", ".join(f"[{r.code}](#{r.code.lower()})" for r in RULES if r.role is role)
        lines.append(f"| `{role}` | {codes} | {ROLE_DOC[role].replace('``', '`')} |")
    heads = sorted((r for r in RULES if r.heads != NAMES_NO_CAUSE), key=lambda r: r.heads)
    order = ", ".join(r.code for r in heads)
    lines += ["", f"Heads a group, first to last: {order}; then every other rule."]
    yields = [r for r in RULES if r.yields_to is not Role.NONE]
    if yields:
        once = "; ".join(f"{r.code} is dropped where a `{r.yields_to}` finding is at the same transform"
                         for r in yields)
        lines += ["", f"Reported once: {once}."]
    for r in RULES:
        extra = f" Role: `{r.role}`." if r.role is not Role.NONE else ""
        head = f"**{r.name}** ({r.category}, {r.severity.value})."
        lines += ["", f"### {r.code}", "", f"{head} {r.doc}{extra}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    target = ROOT / "docs/rules.md"
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if target.exists() and target.read_text() == text else 1)
    target.write_text(text)
