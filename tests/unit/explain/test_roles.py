"""A rule's part is data on the rule (issue 41): every role is some rule's, the heads order is total among the
rules that have one, and a finding that yields is dropped only where the role it yields to is at its
transform."""

from __future__ import annotations

from ad_diff.core.model import Category, Finding, Severity
from ad_diff.core.rules import NAMES_NO_CAUSE, ROLE_DOC, Role
from ad_diff.explain import roles
from ad_diff.kinds.graph.rules import TRANSFORM_MOVED
from ad_diff.kinds.log.rules import COLLAPSE, INCOMPLETE, REORDERED


def test_every_role_is_a_rules_and_says_what_it_means() -> None:
    used = {r.role for r in roles.RULES}
    assert set(Role) - {Role.NONE} <= used
    assert set(ROLE_DOC) == set(Role) - {Role.NONE}
    yielded_to = {r.yields_to for r in roles.RULES} - {Role.NONE}
    assert yielded_to <= used


def test_the_heads_order_has_no_ties() -> None:
    ranked = [r.heads for r in roles.RULES if r.heads != NAMES_NO_CAUSE]
    assert len(ranked) == len(set(ranked)) > 0


def test_a_finding_is_what_its_rule_says() -> None:
    stop = INCOMPLETE.make(transform="t", run="candidate", detail="crash")
    assert roles.role(stop) is Role.RUN_STOPPED
    assert roles.has(stop, Role.RUN_STOPPED, Role.MATCH_LOST)
    unknown = Finding(code="ZZZ999", category=Category.INPUT, severity=Severity.ERROR, message="m")
    assert roles.role(unknown) is Role.NONE
    assert roles.heads(unknown) == NAMES_NO_CAUSE
    assert roles.heads(stop) < roles.heads(COLLAPSE.make(transform="t", before=5, after=0, lost=5)) \
        < NAMES_NO_CAUSE


def _moved(rule_fields: dict[str, object], transform: str) -> Finding:
    return TRANSFORM_MOVED.make(transform=transform, **rule_fields)


def test_a_finding_yields_only_where_its_role_is_at_its_transform() -> None:
    fields = {"before": "a", "after": "b"}
    log_a = REORDERED.make(transform="a", cafter="x", bafter="y")
    log_b = REORDERED.make(transform="b", cafter="x", bafter="y")
    dumps_a = _moved(fields, "a")
    assert roles.yielded([log_a, log_b, dumps_a]) == [log_b, dumps_a]
    assert roles.yielded([log_a, log_b]) == [log_a, log_b]
