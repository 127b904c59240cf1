"""What the audit compares: its metrics, which way each is better for a group, and the frame of its gaps.

The comparison of recourse across models (:mod:`tcrex.compare`) reports its gaps in the same frame.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: Metrics compared between groups: name -> (short label, plain description, "share" or "mean").
METRICS = {
    "recourse_share": ("share with recourse",
                       "share of the individuals needing recourse who have it (status ok or already_in_rule)",
                       "share"),
    "mean_changes": ("mean changes",
                     "average number of features to change, among individuals with recourse", "mean"),
    "mean_distance": ("mean distance",
                      "average total percentile shift to the nearest point of the assigned rule (a categorical "
                      "change counts 1), among individuals with recourse", "mean"),
    "mean_feasibility": ("mean feasibility",
                         "average feasibility (share of the fit data inside) of the assigned rule, among "
                         "individuals with recourse", "share"),
    "mean_accuracy": ("mean accuracy",
                      "average accuracy (share of the rule's fit rows whose output is in the target) of the "
                      "assigned rule, among individuals with recourse", "share"),
    "effectiveness": ("verified by a point that follows the advice",
                      "share of the individuals needing recourse with verified recourse: a point that changes "
                      "exactly what their advice names and that the model confirms (tcrex.vocabulary.is_verified; a "
                      "similar real case does not count; needs the model)", "share"),
}

#: Which way each metric is better for the individuals of a group: "higher" (more of them have recourse, more
#: feasible and accurate rules, more verified points) or "lower" (fewer changes, a shorter distance). A gap is
#: then *worse* or *better* for the group than for the reference (:func:`gap_direction`).
BETTER_WHEN = {"recourse_share": "higher", "mean_changes": "lower", "mean_distance": "lower",
               "mean_feasibility": "higher", "mean_accuracy": "higher", "effectiveness": "higher"}

GAP_COLUMNS = ["metric", "group", "reference", "value", "reference_value", "difference", "ci_low", "ci_high",
                "significant", "n_group", "n_reference", "small_group"]

GAP_TYPES = {"metric": object, "group": object, "reference": object, "value": float, "reference_value": float,
              "difference": float, "ci_low": float, "ci_high": float, "significant": bool, "n_group": np.int64,
              "n_reference": np.int64, "small_group": bool}


def gap_direction(gaps: pd.DataFrame) -> np.ndarray:
    """Per row of :meth:`AuditResult.gaps`: "worse" when the group fares worse than the reference on the metric
    (less recourse, more changes, a longer distance, less feasible / accurate rules, fewer verified points),
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
