"""tcrex: counterfactual rules and metarules (T-CREx, Bewley et al., ICML 2024) for any black-box model.

>>> from tcrex import TCREx
>>> ex = TCREx(rho=0.02, tau=0.9).fit(X, model)      # doctest: +SKIP
>>> ex.explain(X_test)                               # doctest: +SKIP
"""
from ._errors import (CellLimitError, DataError, ModelError, NoValidRuleError, NotFittedError, ParameterError,
                      SchemaError, TCRExError)
from ._data import as_frame, categorical_columns, is_categorical_column
from ._explainer import LocalExplanation, TCREx
from ._outputs import MAX_CLASSES, MAX_TARGET_CLASSES, check_rows_for_rho, detect_task, min_rule_rows
from ._targets import FavourableSuggestion, favourable_class, ordered_labels, suggest_favourable
from ._vocabulary import (ALREADY_IN_RULE, ALREADY_IN_TARGET, CATEGORICAL, CLASSIFICATION, FEATURE_KINDS,
                          HAS_RECOURSE, NEEDS_RECOURSE, NO_ACTIONABLE_RULE, NO_RULE, NUMERIC, OK, REGRESSION,
                          STATUS_LABELS, STATUS_TEXT, STATUSES, TASKS, has_recourse, needs_recourse)
from ._vocabulary import (BOUNDARY, EXAMPLE, MINIMAL_CHANGE, NEXT_RULE, NO_VERIFIED_RECOURSE, RECOURSE_OUTCOMES,
                          RECOURSE_TEXT, SEARCHED, SIMILAR_CASE, SOURCE_TEXT, SOURCES, VERIFIED, VERIFIED_SOURCES,
                          is_verified, recourse_outcome)

__version__ = "0.1.0"

__all__ = ["TCREx", "LocalExplanation",
           # shared vocabulary (also tcrex.vocabulary): tasks, feature kinds, statuses, who needs recourse
           "CLASSIFICATION", "REGRESSION", "TASKS", "NUMERIC", "CATEGORICAL", "FEATURE_KINDS", "STATUSES", "OK", "ALREADY_IN_TARGET", "ALREADY_IN_RULE",
           "NO_RULE", "NO_ACTIONABLE_RULE", "NEEDS_RECOURSE", "HAS_RECOURSE", "STATUS_LABELS", "STATUS_TEXT", "needs_recourse",
           "has_recourse",
           "BOUNDARY", "SEARCHED", "EXAMPLE", "SOURCES", "SOURCE_TEXT", "VERIFIED_SOURCES", "NEXT_RULE", "MINIMAL_CHANGE", "VERIFIED", "SIMILAR_CASE",
           "NO_VERIFIED_RECOURSE", "RECOURSE_OUTCOMES", "RECOURSE_TEXT", "recourse_outcome", "is_verified",
           # one owner each: what counts as a table, column typing, task detection, the rho-versus-rows check and
           # the fewest rows of a rule
           "as_frame", "categorical_columns", "is_categorical_column", "detect_task", "MAX_CLASSES", "MAX_TARGET_CLASSES",
           "check_rows_for_rho", "min_rule_rows", "favourable_class",
           # the favourable outcome to start from and why (the dashboard asks the user to confirm it)
           "suggest_favourable", "FavourableSuggestion", "ordered_labels",
           # errors
           "TCRExError", "DataError", "ModelError", "ParameterError",
           "NoValidRuleError", "CellLimitError", "NotFittedError", "SchemaError", "__version__"]

# actionability by default: constraints to suggest, each with its reason (also tcrex.constraints)
from ._constraints import constraints_from_suggestions, suggest_constraints  # noqa: E402
__all__ += ["suggest_constraints", "constraints_from_suggestions"]
# recourse across models (issue #26): who keeps, loses or gains recourse when a model is retrained or replaced
from ._compare import (CHANGES, CHANGE_TEXT, COMPARE_METRICS, ComparisonCounts, ComparisonResult,  # noqa: E402
                       compare_counts, compare_from_counts, compare_models)
from ._stability import RuleStability, rule_stability  # noqa: E402
__all__ += ["compare_models", "compare_counts", "compare_from_counts", "ComparisonResult", "ComparisonCounts",
            "CHANGES", "CHANGE_TEXT", "COMPARE_METRICS", "rule_stability", "RuleStability"]

# scikit-learn conventions: the fitted check (issue #10)
from ._params import check_fitted, check_parameter  # noqa: E402
__all__ += ["check_fitted", "check_parameter"]
