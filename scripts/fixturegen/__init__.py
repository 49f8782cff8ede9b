"""Deterministic generator of AutoDeploy-like run folders (logs + graph dumps) for ad-diff fixtures.

Entry points: :func:`fixturegen.generate.generate` (scenario tree) and
:func:`fixturegen.large.make_large_pair` (benchmark-size pair).
"""
