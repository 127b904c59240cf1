"""The shared words of tcrex, by their public name (``from tcrex.vocabulary import REGRESSION, needs_recourse``).

Tasks, feature kinds, explanation statuses (with their labels), who needs recourse and the counterfactual point
sources. The engine owns them (:mod:`tcrex._vocabulary`); modules outside the engine core (figures, intake,
report, CLI, dashboard) import them from here or from ``tcrex``, never type the strings again.
"""
from ._vocabulary import (ALREADY_IN_RULE, ALREADY_IN_TARGET, BOUNDARY, CATEGORICAL, CLASSIFICATION,  # noqa: F401
                          EXAMPLE, FEATURE_KINDS, HAS_RECOURSE, MINIMAL_CHANGE, NEEDS_RECOURSE, NEXT_RULE,
                          NO_ACTIONABLE_RULE, NO_RULE, NO_VERIFIED_RECOURSE, NUMERIC, OK, RECOURSE_OUTCOMES,
                          RECOURSE_TEXT, REGRESSION, SEARCHED, SIMILAR_CASE, SOURCE_TEXT, SOURCES, STATUS_LABELS,
                          STATUS_TEXT, STATUSES, TASKS, VERIFIED, VERIFIED_SOURCES, has_recourse, is_verified,
                          needs_recourse, recourse_outcome)

__all__ = ["CLASSIFICATION", "REGRESSION", "TASKS", "NUMERIC", "CATEGORICAL", "FEATURE_KINDS", "OK",
           "ALREADY_IN_TARGET", "ALREADY_IN_RULE", "NO_RULE", "NO_ACTIONABLE_RULE", "STATUSES", "NEEDS_RECOURSE",
           "HAS_RECOURSE", "STATUS_LABELS", "STATUS_TEXT", "needs_recourse", "has_recourse", "BOUNDARY", "SEARCHED",
           "EXAMPLE", "SOURCES", "SOURCE_TEXT", "VERIFIED_SOURCES", "NEXT_RULE", "MINIMAL_CHANGE", "VERIFIED", "SIMILAR_CASE",
           "NO_VERIFIED_RECOURSE", "RECOURSE_OUTCOMES", "RECOURSE_TEXT", "recourse_outcome", "is_verified"]
