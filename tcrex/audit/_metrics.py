"""What the audit compares: its metrics, which way each is better for a group, and the frame of its gaps.

An audit has one of two bases. With a model (**verified**), "has recourse" is verified recourse and every cost
metric describes the verified advice (:meth:`tcrex.TCREx.counterfactuals`: its ``changed`` features, its point,
its ``recommended_rule``). Without a model (**rules only**), it is the paper's rule-based audit: a rule applies,
and the costs are the rule's own, never checked on a model. :func:`metric_labels` gives each metric's words for
a basis. The comparison of recourse across models (:mod:`tcrex.compare`) reports its gaps in the same frame.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: How an audit without a model is labelled wherever it is shown (tables, charts, findings, the report).
RULES_ONLY = "rules only — not checked on a model"
#: How an audit with a model is labelled.
VERIFIED_ON_MODEL = "verified on the model"

#: Metrics compared between groups: name -> (short label, plain description, "share" or "mean"), in the words of
#: an audit with a model (verified recourse). :func:`metric_labels` gives the words of either basis.
METRICS = {
    "recourse_share": ("share with verified recourse",
                       "share of the individuals needing recourse with verified recourse: a point that changes "
                       "exactly the features their advice names, to the values it states, and that the model "
                       "confirms (tcrex.vocabulary.is_verified; a similar real case does not count)", "share"),
    "mean_changes": ("mean changes",
                     "average number of features the verified advice changes, among individuals with verified "
                     "recourse", "mean"),
    "mean_distance": ("mean distance",
                      "average total percentile shift to the verified point (a categorical change counts 1), among "
                      "individuals with verified recourse", "mean"),
    "mean_feasibility": ("mean feasibility",
                         "average feasibility (share of the fit data inside) of the rule the verified advice follows, "
                         "among individuals verified through a rule", "share"),
    "mean_accuracy": ("mean accuracy",
                      "average accuracy (share of the rule's fit rows whose output is in the target) of the rule the "
                      "verified advice follows, among individuals verified through a rule", "share"),
}

#: The same metrics in the words of an audit without a model (the paper's rule-based audit).
RULE_METRICS = {
    "recourse_share": ("share with a rule",
                       f"share of the individuals needing recourse to whom a rule applies (status ok or "
                       f"already_in_rule; {RULES_ONLY})", "share"),
    "mean_changes": ("mean changes (rules)",
                     f"average number of features the rule asks to change (0 for someone already inside the rule), "
                     f"among individuals with a rule ({RULES_ONLY})", "mean"),
    "mean_distance": ("mean distance (rules)",
                      f"average total percentile shift to the nearest point of the assigned rule (a categorical "
                      f"change counts 1), among individuals with a rule ({RULES_ONLY})", "mean"),
    "mean_feasibility": ("mean feasibility",
                         "average feasibility (share of the fit data inside) of the assigned rule, among "
                         "individuals with a rule", "share"),
    "mean_accuracy": ("mean accuracy",
                      "average accuracy (share of the rule's fit rows whose output is in the target) of the "
                      "assigned rule, among individuals with a rule", "share"),
}


def metric_labels(verified: bool) -> dict:
    """The metrics' (label, description, kind) in the words of an audit with a model (``verified``) or without."""
    return METRICS if verified else RULE_METRICS


#: Which way each metric is better for the individuals of a group: "higher" (more of them have recourse, more
#: feasible and accurate rules) or "lower" (fewer changes, a shorter distance). A gap is then *worse* or *better*
#: for the group than for the reference (:func:`gap_direction`).
BETTER_WHEN = {"recourse_share": "higher", "mean_changes": "lower", "mean_distance": "lower",
               "mean_feasibility": "higher", "mean_accuracy": "higher"}

def gap_direction(gaps: pd.DataFrame) -> np.ndarray:
    """Per row of :meth:`AuditResult.gaps`: "worse" when the group fares worse than the reference on the metric
    (less recourse, more changes, a longer distance, less feasible / accurate rules),
    "better" when it fares better, "" for no difference or an unknown one (:data:`BETTER_WHEN`)."""
    if not len(gaps):
        return np.zeros(0, dtype=object)
    d = gaps["difference"].to_numpy(dtype=np.float64)
    higher = gaps["metric"].map(lambda m: BETTER_WHEN.get(m, "higher") == "higher").to_numpy(dtype=bool)
    good = np.where(higher, d > 0, d < 0)
    bad = np.where(higher, d < 0, d > 0)
    out = np.full(len(gaps), "", dtype=object)
    out[good & np.isfinite(d)] = "better"
    out[bad & np.isfinite(d)] = "worse"
    return out
