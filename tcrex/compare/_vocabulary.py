"""What a comparison speaks of: the change of each person's recourse, the compared metrics, the rows each
explainer's rules are measured on and the people frame's columns."""
from __future__ import annotations





FORMAT = "tcrex-comparison"
VERSION = 1

# ------------------------------------------------------------------------------------------------ vocabulary
#: Needs recourse under both models; verified under both.
KEPT = "kept"
#: Needs recourse under both; verified under A, not under B.
LOST = "lost"
#: Needs recourse under both; not verified under A, verified under B.
GAINED = "gained"
#: Needs recourse under both; verified under neither.
STILL_NONE = "still none"
#: Has the favourable outcome under A, needs recourse under B (``verified_b`` says whether B's explainer helps).
NEWLY_NEEDED = "newly needed"
#: Needs recourse under A, has the favourable outcome under B.
NO_LONGER_NEEDED = "no longer needed"
#: Has the favourable outcome under both models.
NOT_NEEDED = "not needed"
#: Every change, in display order (the categories of ``people['change']``); each person has exactly one.
CHANGES = (LOST, KEPT, GAINED, STILL_NONE, NEWLY_NEEDED, NO_LONGER_NEEDED, NOT_NEEDED)
CHANGE_TEXT = {
    LOST: "needs recourse under both models; verified under A, not under B",
    KEPT: "needs recourse under both models; verified under both",
    GAINED: "needs recourse under both models; verified under B only",
    STILL_NONE: "needs recourse under both models; verified under neither",
    NEWLY_NEEDED: "favourable outcome under A, needs recourse under B",
    NO_LONGER_NEEDED: "needs recourse under A, favourable outcome under B",
    NOT_NEEDED: "favourable outcome under both models",
}

#: Metrics compared between groups: name -> (short label, description, numerator, denominator) over count columns.
COMPARE_METRICS = {
    "lost_share": ("share losing recourse",
                   "share of the individuals needing recourse under model A who lose verified recourse under model "
                   "B (they still need it and model B's explainer has no verified point for them)", "n_lost",
                   "n_need_a"),
    "gained_share": ("share gaining recourse",
                     "share of the individuals needing recourse under model A who had no verified recourse under A "
                     "and have it under B", "n_gained", "n_need_a"),
    "invalidation_rate": ("A's advice invalidated by B",
                          "share of model A's verified points that model B does not send to the favourable outcome",
                          "n_invalidated", "n_verified_a"),
    "verified_share_a": ("verified recourse under A",
                         "share of the individuals needing recourse under A with verified recourse under A",
                         "n_verified_a", "n_need_a"),
    "verified_share_b": ("verified recourse under B",
                         "share of the individuals needing recourse under B with verified recourse under B",
                         "n_verified_b", "n_need_b"),
}
#: Count columns every metric is a ratio of (also the per-group table's counts).
_COUNT_COLS = ["n", "n_need_a", "n_need_b", "n_verified_a", "n_verified_b", "n_lost", "n_gained", "n_invalidated",
               "n_holds"]
_CELL_KEYS = ["group", "change", "needs_a", "needs_b", "verified_a", "verified_b", "holds"]
_CELL_SUMS = ["sum_changes_a", "sum_changes_b", "sum_cost_a", "sum_cost_b"]
_RULE_KEYS = ["target", "rule"]
_RULE_SUMS = ["n_rows", "n_rows_in_target_b", "n_points", "n_points_hold"]

FIT_ROWS_A = "the fit rows of explainer A"
COMPARED_ROWS = "the compared rows X"
#: The rows given as ``reference_rows=`` (``--reference-rows``): A's fit rows for an explainer restored from JSON.
REFERENCE_ROWS = "the reference rows (reference_rows=)"
#: Rows every partition measures A's rules on in full (their counts are not added across partitions).
_WHOLE_ROWS = (FIT_ROWS_A, REFERENCE_ROWS)
GIVEN = "given (explainer_b=)"

#: Columns of :attr:`ComparisonResult.people` and their dtypes (the JSON round trip restores them).
PEOPLE_COLUMNS = {
    "output_a": object, "output_b": object, "status_a": "string", "status_b": "string",
    "needs_recourse_a": bool, "needs_recourse_b": bool, "recourse_a": "string", "recourse_b": "string",
    "verified_a": bool, "verified_b": bool, "advice_a_holds_under_b": "boolean", "change": "string",
    "n_changes_a": "Int64", "n_changes_b": "Int64", "cost_a": float, "cost_b": float,
    "rule_a": "string", "rule_b": "string", "recommended_rule_a": "string", "recommended_rule_b": "string",
}
