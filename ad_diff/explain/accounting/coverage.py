"""The coverage relation: when a finding (or another difference) accounts for a difference. The one place it
is defined; docs/accounting.md states it in words.

A difference is **covered** when:

* ``transform`` (one rank's state and count): a finding names the transform, unless the graphs contradict
  it: the count changed on the primary rank, both runs dumped the graph before and after the transform and
  both dumps are the same in both runs (after noise rules), and no error finding names the transform. A
  count that changed while the graph it rewrites did not is no improvement and no loss: nobody explains it.
* ``dump``: the dump before it differs too (the difference came in with its input), or the same transform's
  result or config differs (the log or the config says why), or an error finding names the transform, or
  it is the first dump (its input is the model) or its transform runs at another place in the pipeline (its
  input is another graph by construction) and any finding names the transform, or a finding quotes the dump
  file in its evidence (ADI003: a copy numbered like another dump), or one run's dump of it could not be
  parsed (ADG009 reports every such dump).
* ``log_line`` (a line naming a transform): the transform's result differs on some rank, or a finding names
  the transform, or the run holding the extra line restarted its pipeline and the restart finding (ADL012)
  is reported (the lines of the abandoned attempt).
* ``tensor``: a finding names the tensor (for a ``reference/`` entry: it is the baseline's only, the designed
  standard of truth, or a finding of category ``input`` names it, since a reference is an input of the
  judgement, not an output).
* ``transform`` absent from one run: also when that run's rank stopped early and the incomplete-run finding
  (ADL009) is reported, or when the rank is absent from that run altogether, the world-size finding (ADL014)
  is reported and the configs do not both declare the same ``world_size`` (then the rank fell silent).
* ``config`` under ``transforms.<t>.``: the transform's result or dump differs (the change had an effect
  that is reported), or an error finding names the transform. A transform key with no visible effect is never
  covered by the config kind's own "changed" note: a change that shows no effect is inert or acts where
  ad-diff does not look, and either way someone has to say so (``--expected``). A run-level setting (no
  single transform to look at) is covered by the config kind's setting-changed finding (ADC002) for its key
  or for a mapping above it.
  A config present in one run only is covered by the config kind's one-sided-config finding.

The evidence (:class:`ad_diff.core.facts.Evidence`) is typed: each kind fills what it knows of its own
input, and findings are read by their fields and evidence, never by their message.
* ``file``, ``run_info``: never by a finding; only noise rules absorb them.
"""

from __future__ import annotations

from ad_diff.core.facts import Difference, Evidence, Item
from ad_diff.core.model import Category
from ad_diff.core.rules import Role


def _count_changed(d: Difference) -> bool:
    b, c = (d.baseline or "").split(), (d.candidate or "").split()
    return len(b) == len(c) == 2 and b[0] == c[0] and b[1] != c[1]


def covered(d: Difference, ev: Evidence) -> bool:
    """Whether a finding or another difference accounts for ``d`` (see the module docstring)."""
    t = d.transform
    if d.item is Item.TRANSFORM:
        if ev.missing_rank(d) or ev.explained(t):
            return True
        contradicted = (
            d.rank in ev.primary and _count_changed(d) and ev.graph_silent(t)
            and not ev.named(t, errors_only=True)
        )
        return ev.named(t) and not contradicted
    if d.item is Item.DUMP:
        up = ev.upstream.get(d.key)
        return (
            (up is not None and up in ev.dump_diffs)
            or t in ev.record_diffs
            or t in ev.config_diffs
            or ev.named(t, errors_only=True)
            or ((up is None or t in ev.moved) and ev.named(t))
            or ev.quoted(d.baseline, d.candidate)
            or d.key in ev.unreadable_dumps
        )
    if d.item is Item.LOG_LINE:
        extra = "baseline" if d.baseline is not None else "candidate"
        retried = extra in ev.restarted and Role.RUN_RESTARTED in ev.roles
        return t is not None and (t in ev.record_diffs or ev.named(t) or retried)
    if d.item is Item.TENSOR:
        fs = ev.by_tensor.get(d.tensor or "", [])
        if d.key.startswith("reference/") and ev.user_reference:
            return True  # the user's --reference judges; the runs' own were not used (the report says so)
        if d.key.startswith("reference/"):  # the baseline's own reference is the designed standard
            return d.candidate is None or any(f.category is Category.INPUT for f in fs)
        capture = d.key.partition(":")[0].rpartition("/")[2].startswith("nodes")
        drift_starts = not ev.roles.isdisjoint({Role.FIRST_DRIFT_NODE, Role.DRIFT_NODES_UNORDERED})
        if capture and drift_starts and d.candidate is not None \
                and d.baseline is not None:
            return True  # captures after the first drifting node drift because it does: its finding says so
        return bool(fs)
    if d.item is Item.CONFIG:
        if d.key == "":
            return ev.config_one_sided
        if t is None:  # a run-level setting: the config kind's setting-changed finding names it
            parts = d.key.split(".")  # the finding may name the key or a mapping above it
            return any(".".join(parts[:i]) in ev.settings_named for i in range(1, len(parts) + 1))
        return t is not None and (
            t in ev.record_diffs or t in ev.dump_transforms or ev.named(t, errors_only=True)
        )
    return False
