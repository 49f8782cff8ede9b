"""Every rule of ad-diff in one ordered tuple; docs/rules.md documents each (a test keeps them in sync).

The tuple and the lookup by code live in :mod:`ad_diff.explain.roles`, where the passes over all findings
read a rule's role; this module names them for the docs generator and the tests.
"""

from __future__ import annotations

from ad_diff.explain.roles import BY_CODE, RULES

__all__ = ["BY_CODE", "RULES"]
