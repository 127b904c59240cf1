"""Subgroup recourse audit: does recourse under a fitted T-CREx explainer differ between groups of people?

>>> from tcrex.audit import audit
>>> result = audit(explainer, X, groups=df["sex"], y_pred=model.predict(X), target=1)   # doctest: +SKIP
>>> result.findings()                                                                     # doctest: +SKIP

Only individuals that *need* recourse (model output not in the target, i.e. status != ``already_in_target``) are
audited. With a model, every figure is an aggregate of the per-person verified frame of
``TCREx.counterfactuals(verify=True)``: per group, who has verified recourse and, for those who do, how costly the
verified advice is (the features it changes, the total percentile shift to its point, the feasibility and accuracy
of the rule it follows). Without a model it is the paper's rule-based audit (a rule applies; the rule's own
changes), and every table, chart and finding says "rules only — not checked on a model". Each group is compared with a reference (by default
the largest group, or ``reference="rest"`` for everyone else) with percentile-bootstrap confidence intervals.
See ``docs/audit.md`` for what every number means and its caveats.

Every number comes from mergeable per-group counts (:class:`AuditCounts`): :func:`audit` counts its rows, and
:func:`audit_counts` of partitions, added, give the same counts to :func:`audit_from_counts` (files, a process
pool, Dask; see ``tcrex.distributed``). A gap is *clear* when its interval excludes zero and it reaches the
practical threshold (:func:`clear_gaps`).

The package by concern: ``_counting`` (what the explainer says about every row, the per-group counts and the
result), ``_bootstrap`` (a group's counts and their bootstrap), ``_metrics`` (what is compared), ``_wording`` (the
findings in English) and ``_threshold`` (when a gap is clear). Who is compared with whom (the groups, named
"label (code)" by the codebook), who needs recourse, intervals from counts and the gaps frame are the population
layer's, shared with the comparison of models: import them from :mod:`tcrex.population`. Import every audit name
from ``tcrex.audit``.
"""
from ._counting import AuditCounts, AuditResult, audit, audit_counts, audit_from_counts
from ._metrics import BETTER_WHEN, METRICS, RULE_METRICS, RULES_ONLY, VERIFIED_ON_MODEL, gap_direction, metric_labels
from ._threshold import AuditFindings, below_threshold_gaps, clear_gaps, practical_gaps, split_findings
from ._wording import basis_sentence

__all__ = ["audit", "audit_counts", "audit_from_counts", "AuditCounts", "AuditResult", "METRICS",
           # the audit's basis: verified on the model, or the paper's rules only
           "RULE_METRICS", "RULES_ONLY", "VERIFIED_ON_MODEL", "metric_labels", "basis_sentence",
           "BETTER_WHEN", "gap_direction",
           # when a gap is clear: the one rule the dashboard, the figures and the report apply
           "practical_gaps", "clear_gaps", "below_threshold_gaps", "AuditFindings",
           "split_findings"]
