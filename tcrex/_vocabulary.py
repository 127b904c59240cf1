"""The shared words of the engine: tasks, feature kinds, explanation statuses, and who needs recourse.

One owner for each: the engine's own modules import them from here, every other module (figures, intake, report,
CLI, dashboard) from the public :mod:`tcrex.vocabulary` (or ``tcrex``), instead of typing the strings again. The values are plain strings, so they compare equal to what
``explain()`` returns in its ``status`` column and to what JSON exports hold.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

# ------------------------------------------------------------------------------------------------ tasks
CLASSIFICATION = "classification"
REGRESSION = "regression"
TASKS = (CLASSIFICATION, REGRESSION)

# ---------------------------------------------------------------------------------------- feature kinds
#: A numeric feature: compared with ``(low, high]`` bounds.
NUMERIC = "numeric"
#: A categorical feature: compared by the set of allowed categories.
CATEGORICAL = "categorical"
FEATURE_KINDS = (NUMERIC, CATEGORICAL)

# --------------------------------------------------------------------------------------------- statuses
#: The row has a rule and must change at least one feature to enter it.
OK = "ok"
#: The model's output on the row is already in the target: it does not need recourse.
ALREADY_IN_TARGET = "already_in_target"
#: The row already lies inside its optimal rule although its output is not in the target (rules are only
#: tau-accurate on average).
ALREADY_IN_RULE = "already_in_rule"
#: No valid rule reaches the row's target at this tau / rho.
NO_RULE = "no_rule"
#: Rules exist, but every one would need a change the actionability constraints forbid.
NO_ACTIONABLE_RULE = "no_actionable_rule"

#: Every status, in the order of ``explain()``'s categorical ``status`` column.
STATUSES = (OK, ALREADY_IN_TARGET, ALREADY_IN_RULE, NO_RULE, NO_ACTIONABLE_RULE)
#: Statuses of rows that need recourse (their output is not in the target).
NEEDS_RECOURSE = (OK, ALREADY_IN_RULE, NO_RULE, NO_ACTIONABLE_RULE)
#: Statuses of rows that need recourse and have a rule to follow.
HAS_RECOURSE = (OK, ALREADY_IN_RULE)

#: Short labels for chart legends (STATUS_TEXT is the longer wording for tables and sentences).
STATUS_LABELS = {
    OK: "needs changes",
    ALREADY_IN_TARGET: "already in the target",
    ALREADY_IN_RULE: "already inside its rule",
    NO_RULE: "no valid rule",
    NO_ACTIONABLE_RULE: "no actionable rule",
}

STATUS_TEXT = {
    OK: "has recourse (a change to make)",
    ALREADY_IN_TARGET: "already has the outcome",
    ALREADY_IN_RULE: "already inside its rule",
    NO_RULE: "no valid rule",
    NO_ACTIONABLE_RULE: "no actionable rule",
}


def _as_status_array(status) -> np.ndarray:
    if isinstance(status, (pd.Series, pd.Index, pd.Categorical)):
        return np.asarray(pd.Series(status).astype(str))
    return np.asarray(status, dtype=object).astype(str)


def needs_recourse(status) -> np.ndarray:
    """Boolean mask: the rows that need recourse, i.e. whose model output is not in the target.

    This is the one definition of the population an audit, a count or an export describes: people who already
    have the target outcome are never counted as needing recourse toward it.
    """
    return np.isin(_as_status_array(status), NEEDS_RECOURSE)


def has_recourse(status) -> np.ndarray:
    """Boolean mask: rows that need recourse and have a rule (status ``ok`` or ``already_in_rule``)."""
    return np.isin(_as_status_array(status), HAS_RECOURSE)

# ------------------------------------------------------------------------------ counterfactual point sources
#: The nearest point of the rule box (the paper's counterfactual point).
BOUNDARY = "boundary"
#: A point found by searching inside the rule box because the model did not agree at the boundary point.
SEARCHED = "searched"
#: The nearest real fit row inside the rule whose output is in the target (the last resort).
EXAMPLE = "example"
#: Every source, in the order of ``counterfactuals(verify=True)``'s categorical ``source`` column.
SOURCES = (BOUNDARY, SEARCHED, EXAMPLE)

SOURCE_TEXT = {
    BOUNDARY: "nearest point of the rule",
    SEARCHED: "point found deeper inside the rule",
    EXAMPLE: "real example inside the rule",
}
