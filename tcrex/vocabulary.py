"""The shared words of the engine: tasks, feature kinds, explanation statuses, and who needs recourse.

One owner for each, and one import path (``from tcrex.vocabulary import REGRESSION, needs_recourse``): every module
of the engine, the figures, the intake, the report, the CLI and the dashboard imports them from here instead of
typing the strings again. The values are plain strings, so they compare equal to what ``explain()`` returns in its
``status`` column and to what JSON exports hold.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["CLASSIFICATION", "REGRESSION", "TASKS", "NUMERIC", "CATEGORICAL", "FEATURE_KINDS", "OK",
           "ALREADY_IN_TARGET", "ALREADY_IN_RULE", "NO_RULE", "NO_ACTIONABLE_RULE", "STATUSES", "NEEDS_RECOURSE",
           "HAS_RECOURSE", "STATUS_LABELS", "STATUS_TEXT", "STATUS_PLAIN", "RECOURSE_PLAIN", "plain_words", "needs_recourse", "has_recourse", "BOUNDARY", "SEARCHED",
           "EXAMPLE", "SOURCES", "SOURCE_TEXT", "VERIFIED_SOURCES", "NEXT_RULE", "MINIMAL_CHANGE", "VERIFIED",
           "SIMILAR_CASE", "NO_VERIFIED_RECOURSE", "RECOURSE_OUTCOMES", "RECOURSE_TEXT", "recourse_outcome",
           "is_verified"]

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

#: The one mapping of statuses to the words files for people carry (the CSV and Excel exports, the report's tables):
#: a machine code stays in JSON, a person reads these. ``already_in_rule`` is never "0 changes": the person sits
#: inside a rule, yet the model does not give them the outcome.
STATUS_PLAIN = {
    OK: "outside the rule: a change to make",
    ALREADY_IN_TARGET: "already has the outcome",
    ALREADY_IN_RULE: "inside a rule the model does not confirm",
    NO_RULE: "no rule at these settings",
    NO_ACTIONABLE_RULE: "no rule the constraints allow",
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
#: A point of the paper's optimal rule at the nearest values the data holds: it changes exactly the features where
#: the row lies outside that rule.
BOUNDARY = "boundary"
#: A point deeper inside the paper's optimal rule (the same features change, to values further inside) because
#: the model did not agree at the nearest one.
SEARCHED = "searched"
#: A point of another rule of the same target (the cheapest one, in cost order, whose point the model confirms):
#: the paper's optimal rule had no point the model confirms.
NEXT_RULE = "next_rule"
#: No rule had a point the model confirms: a real case with the favourable outcome, with every feature the model
#: lets go given back to the person's own value (a minimal change beyond the rules).
MINIMAL_CHANGE = "minimal_change"
#: The plain nearest real example with the favourable outcome: a similar case, never counted as verified recourse.
EXAMPLE = "example"
#: Every source, in the order of ``counterfactuals(verify=True)``'s categorical ``source`` column.
SOURCES = (BOUNDARY, SEARCHED, NEXT_RULE, MINIMAL_CHANGE, EXAMPLE)
#: Sources of a verified point (a point that follows the advice and that the model confirms).
VERIFIED_SOURCES = (BOUNDARY, SEARCHED, NEXT_RULE, MINIMAL_CHANGE)

SOURCE_TEXT = {
    BOUNDARY: "nearest point of the rule",
    SEARCHED: "point found deeper inside the rule",
    NEXT_RULE: "point of the next rule in cost order",
    MINIMAL_CHANGE: "minimal change beyond the rules",
    EXAMPLE: "similar real case (not verified recourse)",
}

# ------------------------------------------------------------------- what a person's recourse is, checked on the model
#: A model-confirmed point that changes exactly the features its sentence names, to the values it states.
VERIFIED = "verified"
#: No verified point; the nearest real case with the favourable outcome is offered as a similar case.
SIMILAR_CASE = "similar_case"
#: Neither a verified point nor a similar case.
NO_VERIFIED_RECOURSE = "none"
#: Every outcome, in the order of ``counterfactuals(verify=True)``'s categorical ``recourse`` column (missing for
#: rows that do not need recourse).
RECOURSE_OUTCOMES = (VERIFIED, SIMILAR_CASE, NO_VERIFIED_RECOURSE)

RECOURSE_TEXT = {
    VERIFIED: "verified by a point that follows the advice",
    SIMILAR_CASE: "a similar real case only",
    NO_VERIFIED_RECOURSE: "none",
}

#: What a person's recourse is, in the words files for people carry (see :data:`STATUS_PLAIN`).
RECOURSE_PLAIN = {
    VERIFIED: "a change the model confirms",
    SIMILAR_CASE: "a similar real case only (not advice)",
    NO_VERIFIED_RECOURSE: "no change the model confirms",
}


def plain_words(values, mapping: dict):
    """``values`` (a Series of machine codes: statuses, recourse outcomes, point sources) in the words of
    ``mapping`` (:data:`STATUS_PLAIN`, :data:`RECOURSE_PLAIN`, :data:`SOURCE_TEXT`); missing stays missing, an
    unknown code stays as it is."""
    codes = pd.Series(values).astype(object)
    return codes.map(lambda v: v if v is None or v is pd.NA or v != v else mapping.get(str(v), v))


def recourse_outcome(counterfactuals: pd.DataFrame) -> pd.Series:
    """The one definition of "works": per row of a ``counterfactuals(verify=True)`` frame, ``verified``,
    ``similar_case`` or ``none``; missing for rows that do not need recourse. Every count of verified recourse
    (effectiveness, audits, the CLI, the report, the dashboard) reads it from here."""
    if "recourse" not in counterfactuals.columns:
        raise KeyError("recourse: pass a frame from counterfactuals(verify=True)")
    return counterfactuals["recourse"]


def is_verified(counterfactuals: pd.DataFrame) -> np.ndarray:
    """Boolean mask: the rows whose recourse is verified (see :func:`recourse_outcome`)."""
    return np.asarray(recourse_outcome(counterfactuals).astype(object) == VERIFIED, dtype=bool)
