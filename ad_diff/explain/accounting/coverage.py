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
  file (ADI003: a copy numbered like another dump).
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
* ``file``, ``run_info``: never by a finding; only noise rules absorb them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ad_diff.core.model import Category, Finding, Severity
from ad_diff.explain.accounting.model import Difference, Item


@dataclass
class Evidence:
    """What the coverage relation and the absorbing noise rules read, gathered once per comparison."""

    by_transform: dict[str, list[Finding]] = field(default_factory=dict)
    by_tensor: dict[str, list[Finding]] = field(default_factory=dict)
    codes: set[str] = field(default_factory=set)
    record_diffs: set[str] = field(default_factory=set)
    """Transforms whose result differs on some rank."""
    dump_diffs: set[str] = field(default_factory=set)
    """Dump keys (``stage/transform#n``) whose dumps differ after normalisation, or exist in one run only."""
    dump_transforms: set[str] = field(default_factory=set)
    """Transforms of :attr:`dump_diffs`."""
    config_diffs: set[str] = field(default_factory=set)
    """Transforms with a key under ``transforms.<t>.`` that differs."""
    upstream: dict[str, str | None] = field(default_factory=dict)
    """Dump key -> the dump key before it in pipeline order (``None`` for the first dump)."""
    dump_of: dict[str, str] = field(default_factory=dict)
    """Transform -> its (first) dump key, for transforms both runs dumped."""
    renamed_only: set[str] = field(default_factory=set)
    """Dump keys the graph kind aligned node for node with nothing unmatched, rewired, split or changed: the
    dumps differ in node names alone."""
    split_only: set[str] = field(default_factory=set)
    """Dump keys whose graphs differ only in how compile_model split them into pieces (the graph kind
    compared them inlined and found them equal)."""
    restored_dumps: set[str] = field(default_factory=set)
    moved: set[str] = field(default_factory=set)
    """Transforms the runs ran at another place in the pipeline (the graph kind's ``moved``)."""
    tensors_within: set[str] = field(default_factory=set)
    """Tensor keys (``file:name``) the tensor kind judged identical or within tolerance."""
    primary: set[int | None] = field(default_factory=set)
    ranks: set[tuple[str, int | None]] = field(default_factory=set)
    """``(run, rank)`` of every rank with transform lines."""
    stopped: set[tuple[str, int | None]] = field(default_factory=set)
    """``(run, rank)`` of the ranks whose pipeline did not end complete (crashed, cut, stopped, empty)."""
    restored_transforms: set[str] = field(default_factory=set)
    restarted: set[str] = field(default_factory=set)
    """Runs whose log started the pipeline more than once (the last attempt is compared)."""
    same_world_size: bool = False
    """Both runs' configs declare the same ``world_size``: a rank logged by one run only is then missing."""
    config_one_sided_code: str = ""
    setting_code: str = ""
    incomplete_code: str = "ADL009"
    world_size_code: str = "ADL014"
    silent_rank_code: str = "ADL016"
    node_drift_codes: frozenset[str] = frozenset({"ADT007", "ADT011"})
    """The node-capture drift findings: the first drifting node, or the count of drifting captures when no
    graph order names a first one; every later drifting capture follows from them."""
    user_reference: bool = False
    """``--reference DIR`` judges the candidate: the runs' own references are not used (a note says so)."""
    restart_code: str = "ADL012"
    findings: list[Finding] = field(default_factory=list)

    def add_findings(self, findings: list[Finding]) -> None:
        """Index ``findings`` by what they name."""
        self.findings += findings
        for f in findings:
            self.codes.add(f.code)
            if f.transform:
                self.by_transform.setdefault(f.transform, []).append(f)
            if f.tensor:
                self.by_tensor.setdefault(f.tensor, []).append(f)
            for row in dict(f.evidence).get("nodes") or ():  # one finding naming several captures (ADT013)
                name = row[0] if isinstance(row, list | tuple) and row else row
                if isinstance(name, str) and name != f.tensor:
                    self.by_tensor.setdefault(name, []).append(f)

    def named(self, transform: str | None, errors_only: bool = False, warnings: bool = False) -> bool:
        """A finding names ``transform`` (of severity error, or error or warning, when asked)."""
        fs = self.by_transform.get(transform or "", [])
        if errors_only:
            ok = {Severity.ERROR, Severity.WARNING} if warnings else {Severity.ERROR}
            return any(f.severity in ok for f in fs)
        return bool(fs)

    def quoted(self, *names: str | None) -> bool:
        """A finding's message quotes one of the file ``names`` (``.txt`` dump file names)."""
        files = [n for n in names if n and n.endswith(".txt")]
        return any(n in f.message for n in files for f in self.findings)

    def graph_silent(self, transform: str | None) -> bool:
        """Both runs dumped the graph before and after ``transform`` and neither dump differs."""
        key = self.dump_of.get(transform or "")
        if key is None or key in self.dump_diffs:
            return False
        up = self.upstream.get(key)
        return up is not None and up not in self.dump_diffs

    def graph_differs_at(self, transform: str | None) -> bool:
        """A dump of ``transform`` differs between the runs, or the next dump after it does."""
        key = self.dump_of.get(transform or "")
        if key is None:
            return False
        after = next((k for k, up in self.upstream.items() if up == key), None)
        return key in self.dump_diffs or (after is not None and after in self.dump_diffs)

    def missing_rank(self, d: Difference) -> bool:
        """``d`` is a result absent from a run that stopped early (its incomplete-run finding accounts for
        it) or from a rank the other run does not have while the world size may have changed."""
        side = "baseline" if d.baseline is None else "candidate" if d.candidate is None else None
        if side is None:
            return False
        if (side, d.rank) in self.stopped and self.incomplete_code in self.codes:
            return True
        rank_absent = (side, d.rank) not in self.ranks
        if rank_absent and self.silent_rank_code in self.codes:  # the config's world size names the rank
            return True
        return rank_absent and not self.same_world_size and self.world_size_code in self.codes


def _count_changed(d: Difference) -> bool:
    b, c = (d.baseline or "").split(), (d.candidate or "").split()
    return len(b) == len(c) == 2 and b[0] == c[0] and b[1] != c[1]


def covered(d: Difference, ev: Evidence) -> bool:
    """Whether a finding or another difference accounts for ``d`` (see the module docstring)."""
    t = d.transform
    if d.item is Item.TRANSFORM:
        if ev.missing_rank(d):
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
        )
    if d.item is Item.LOG_LINE:
        extra = "baseline" if d.baseline is not None else "candidate"
        retried = extra in ev.restarted and ev.restart_code in ev.codes
        return t is not None and (t in ev.record_diffs or ev.named(t) or retried)
    if d.item is Item.TENSOR:
        fs = ev.by_tensor.get(d.tensor or "", [])
        if d.key.startswith("reference/") and ev.user_reference:
            return True  # the user's --reference judges; the runs' own were not used (the report says so)
        if d.key.startswith("reference/"):  # the baseline's own reference is the designed standard
            return d.candidate is None or any(f.category is Category.INPUT for f in fs)
        capture = d.key.partition(":")[0].rpartition("/")[2].startswith("nodes")
        if capture and not ev.node_drift_codes.isdisjoint(ev.codes) and d.candidate is not None \
                and d.baseline is not None:
            return True  # captures after the first drifting node drift because it does: its finding says so
        return bool(fs)
    if d.item is Item.CONFIG:
        if d.key == "":
            return ev.config_one_sided_code in ev.codes
        if t is None:  # a run-level setting: the config kind's setting-changed finding names it
            parts = d.key.split(".")  # the finding may name the key or a mapping above it
            said = tuple(f"setting {'.'.join(parts[:i])}:" for i in range(1, len(parts) + 1))
            return any(f.code == ev.setting_code and f.message.startswith(said) for f in ev.findings)
        return t is not None and (
            t in ev.record_diffs or t in ev.dump_transforms or ev.named(t, errors_only=True)
        )
    return False
