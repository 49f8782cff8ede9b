"""Rules of the configuration analysis (``ADC0xx``, category ``config``): what each finding means.
:mod:`.classify` turns the measurements of ``compare.analyze_config`` (config diff, config-vs-log checks)
into their findings.

``ADC008`` (a state change no config change explains) is made by ``explain.explain_findings``, since it
needs the log findings; every finding is built through these rules so codes, severities and wording stay
in one place.
"""

from __future__ import annotations

from ad_diff.core.model import Category, Severity
from ad_diff.core.rules import Role, Rule

TRANSFORM_CONFIG_CHANGED = Rule(
    code="ADC001",
    name="transform-config-changed",
    category=Category.CONFIG,
    severity=Severity.INFO,
    template="{cause}",
    doc="A transform's entry differs between the two runs' effective configs: `enabled` flipped, `stage` "
    "moved, another option changed, or the key exists in one config only. Informational: it documents an "
    "intended change and is what ad-diff uses to explain state and match-count changes of that transform "
    "and of the transforms after it.",
    role=Role.OWN_CONFIG_CHANGED,
)
SETTING_CHANGED = Rule(
    code="ADC002",
    name="setting-changed",
    category=Category.CONFIG,
    severity=Severity.INFO,
    template="setting {key}: {change}",
    doc="A top-level setting (runtime, compile backend, attention backend, world size, max batch size, max "
    "sequence length, ...) differs between the two runs' configs. Such settings change what several "
    "transforms find (sharding with world size, cache insertion with the attention backend), so they are "
    "listed as possible causes of changes that no transform entry explains.",
)
ENABLED_BUT_DISABLED = Rule(
    code="ADC003",
    name="config-enabled-log-disabled",
    category=Category.CONFIG,
    severity=Severity.WARNING,
    template="{transform}: enabled in the {run} config ({origin}) but the {run} log says disabled "
    "(line {line})",
    doc="Within one run, the config enables a transform but the log reports it `disabled`. The config in "
    "the run folder is probably not the one the run used (stale dump, an overlay or CLI override not "
    "saved), so explanations drawn from it are doubtful. Save the effective config of the run again.",
)
ENABLED_BUT_ABSENT = Rule(
    code="ADC004",
    name="config-enabled-log-absent",
    category=Category.CONFIG,
    severity=Severity.WARNING,
    template="{transform}: enabled in the {run} config ({origin}) but absent from the {run} log, which ended "
    "normally",
    doc="Within one run, the config enables a transform that never appears in a log that ended normally. "
    "The AD version that ran may not know the key, or the config is not the one used. Only checked when "
    "the log is complete, since a crashed run legitimately misses later transforms.",
)
DISABLED_BUT_RAN = Rule(
    code="ADC005",
    name="config-disabled-log-ran",
    category=Category.CONFIG,
    severity=Severity.WARNING,
    template="{transform}: disabled in the {run} config ({origin}) but the {run} log shows it {state} "
    "(line {line})",
    doc="Within one run, the config disables a transform but the log shows it applied, skipped or failed, "
    "i.e. it ran. Some layer or command-line override that the run used is missing from the run folder.",
)
STAGE_MISMATCH = Rule(
    code="ADC006",
    name="config-stage-mismatch",
    category=Category.CONFIG,
    severity=Severity.WARNING,
    template="{transform}: config puts it in stage {config_stage} ({origin}) but the {run} log ran it in "
    "{log_stage}",
    doc="Within one run, the stage the config gives a transform differs from the stage the log shows it "
    "running in. The config is not the one the run used, or the AD version ignores the `stage` override.",
)
NOT_IN_CONFIG = Rule(
    code="ADC007",
    name="log-transform-not-in-config",
    category=Category.CONFIG,
    severity=Severity.INFO,
    template="{transform}: logged in the {run} run (stage {stage}) but no config file of that run "
    "mentions it",
    doc="A transform appears in the log but in none of the run's config files although the config is "
    "complete (an effective dump or layers including `default.yaml`). Typically the saved default.yaml "
    "comes from another AD version than the one that ran.",
)
UNEXPLAINED_STATE_CHANGE = Rule(
    code="ADC008",
    name="unexplained-state-change",
    category=Category.CONFIG,
    severity=Severity.WARNING,
    template="{transform}: {before} -> {after} with no config change behind it ({detail})",
    doc="A transform's state changed between the runs in a way configuration normally causes (it became "
    "or stopped being `disabled`, or appeared or vanished from a complete log), yet neither its entry in "
    "the two configs nor any other config key explains it. This is the change a reviewer must look at: "
    "an unintended toggle, a config that was not saved, or a code change in AD.",
    role=Role.STATE_CHANGE_UNEXPLAINED,
)
CONFIG_MISSING = Rule(
    code="ADC009",
    name="config-missing",
    category=Category.CONFIG,
    severity=Severity.INFO,
    template="the {run} run has no config; state and count changes cannot be checked against configuration",
    doc="Only one of the two runs holds an AD config (in `config/`, a top-level YAML, or through "
    "`--baseline-config`/`--candidate-config`), so no change can be explained or called unexplained. "
    "Save the effective config of both runs (see docs/config-in-runs.md).",
)

KEY_MISSPELLED = Rule(
    code="ADC010",
    name="config-key-misspelled",
    category=Category.CONFIG,
    severity=Severity.ERROR,
    template="{transform}: enabled in the {run} config ({origin}) but no transform of that name ran; did you "
    "mean {suggestion}?",
    doc="Within one run, the config enables a transform key that no line of that run's complete log shows, "
    "and the key is one typo away (an edit distance of 1, or 2 for keys of 12 characters and more: a "
    "character added, dropped, changed or two swapped) from a transform the runs do show or the "
    "known-transform catalogue names. AD ignored the key, so what the change meant to switch on (or tune) "
    "never ran, and the run under review is not the run its config describes. It gates when the key is in "
    "the candidate's config, whatever the baseline's says: the candidate is broken, and only a fix of its "
    "config can show whether the change works. A baseline-only misspelling warns (the candidate fixed it). "
    "A key far from every known key stays ADC004, which warns: it is more likely a transform this AD "
    "version does not have than a slip of the keyboard, and nothing says which transform was meant.",
)

#: All configuration rules, in code order.
RULES: tuple[Rule, ...] = (
    TRANSFORM_CONFIG_CHANGED,
    SETTING_CHANGED,
    ENABLED_BUT_DISABLED,
    ENABLED_BUT_ABSENT,
    DISABLED_BUT_RAN,
    STAGE_MISMATCH,
    NOT_IN_CONFIG,
    UNEXPLAINED_STATE_CHANGE,
    CONFIG_MISSING,
    KEY_MISSPELLED,
)
