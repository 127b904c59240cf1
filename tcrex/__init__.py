"""tcrex: counterfactual rules and metarules (T-CREx, Bewley et al., ICML 2024) for any black-box model.

>>> from tcrex import TCREx
>>> ex = TCREx(rho=0.02, tau=0.9).fit(X, model)      # doctest: +SKIP
>>> ex.explain(X_test)                               # doctest: +SKIP

One import path per public name. A name defined in a public module is imported from that module:
:mod:`tcrex.vocabulary` (tasks, feature kinds, statuses, who needs recourse, point sources), :mod:`tcrex.errors`,
:mod:`tcrex.constraints`, :mod:`tcrex.compare`, :mod:`tcrex.audit`, :mod:`tcrex.text`, :mod:`tcrex.metrics`, ...
This package re-exports only what the engine's private modules define: the estimator and its helpers below.
"""
from ._data import as_frame, categorical_columns, is_categorical_column, sentinel_codes
from ._explainer import LocalExplanation, TCREx
from ._outputs import MAX_CLASSES, MAX_TARGET_CLASSES, check_rows_for_rho, detect_task, min_rule_rows
from ._params import check_fitted, check_parameter
from ._stability import RuleStability, rule_stability
from ._targets import FavourableSuggestion, favourable_class, ordered_labels, suggest_favourable

__version__ = "0.1.0"

__all__ = ["TCREx", "LocalExplanation",
           # one owner each: what counts as a table, column typing, task detection, the rho-versus-rows check and
           # the fewest rows of a rule
           "as_frame", "categorical_columns", "is_categorical_column", "detect_task", "MAX_CLASSES", "MAX_TARGET_CLASSES",
           "check_rows_for_rho", "min_rule_rows", "favourable_class",
           # which values of a numeric column are special codes (-7/-8/-9, 999): the intake reports them, the
           # explainer keeps them as codes (issue #35)
           "sentinel_codes",
           # the favourable outcome to start from and why (the dashboard asks the user to confirm it)
           "suggest_favourable", "FavourableSuggestion", "ordered_labels",
           # how stable each rule and piece of advice is across retrained models (issue #26; see tcrex.compare)
           "rule_stability", "RuleStability",
           # scikit-learn conventions: the fitted check (issue #10)
           "check_fitted", "check_parameter", "__version__"]
