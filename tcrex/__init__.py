"""tcrex: counterfactual rules and metarules (T-CREx, Bewley et al., ICML 2024) for any black-box model.

>>> from tcrex import TCREx
>>> ex = TCREx(rho=0.02, tau=0.9).fit(X, model)      # doctest: +SKIP
>>> ex.explain(X_test)                               # doctest: +SKIP

One import path per public name. A name defined in a public module is imported from that module:
:mod:`tcrex.vocabulary` (tasks, feature kinds, statuses, who needs recourse, point sources), :mod:`tcrex.errors`,
:mod:`tcrex.constraints`, :mod:`tcrex.compare` (``rule_stability`` too), :mod:`tcrex.audit`, :mod:`tcrex.text`,
:mod:`tcrex.metrics`, ... This package re-exports only what the engine's private modules (``tcrex/_engine/``)
define: the estimator and its helpers below. It imports no outer layer (the population layer, the audit and the
comparison import it), so the import graph has no circle through it. The layers: ``docs/architecture.md``.

The names are loaded on first use (PEP 562): ``import tcrex`` alone, or ``import tcrex.cli`` for ``tcrex --help``,
loads neither scikit-learn nor pandas; ``from tcrex import TCREx`` works exactly as an eager import would.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

#: public name -> the private module that defines it (imported on first access)
_LAZY = {
    "as_frame": "._engine.base._data", "categorical_columns": "._engine.base._data",
    "conform_dtypes": "._engine.base._data", "conform_frame": "._engine.base._data",
    "is_categorical_column": "._engine.base._data", "sentinel_codes": "._engine.base._data",
    "LocalExplanation": "._engine._explainer", "TCREx": "._engine._explainer",
    "FitFinding": "._engine.fitting._findings", "FINDING_KINDS": "._engine.fitting._findings",
    "GridSize": "._engine.fitting._grid", "SECONDS_PER_CELL": "._engine.fitting._grid",
    "MAX_CLASSES": "._engine.base._outputs", "MAX_TARGET_CLASSES": "._engine.base._outputs",
    "check_rows_for_rho": "._engine.base._outputs", "detect_task": "._engine.base._outputs",
    "min_rule_rows": "._engine.base._outputs", "model_feature_names": "._engine.base._outputs",
    "check_fitted": "._engine.base._params", "check_parameter": "._engine.base._params",
    "Solution": "._engine.fitting._solution", "Target": "._engine.fitting._targets",
    "FavourableSuggestion": "._engine.fitting._targets", "favourable_class": "._engine.fitting._targets",
    "ordered_labels": "._engine.fitting._targets", "suggest_favourable": "._engine.fitting._targets",
    "targets_from_spec": "._engine.fitting._targets",
}

if TYPE_CHECKING:  # the same names for type checkers and for the import graph of tests/test_structure.py
    from ._engine.base._data import (as_frame, categorical_columns, conform_dtypes, conform_frame,
                                     is_categorical_column, sentinel_codes)
    from ._engine._explainer import LocalExplanation, TCREx
    from ._engine.fitting._findings import FINDING_KINDS, FitFinding
    from ._engine.fitting._grid import SECONDS_PER_CELL, GridSize
    from ._engine.base._outputs import (MAX_CLASSES, MAX_TARGET_CLASSES, check_rows_for_rho, detect_task,
                                        min_rule_rows, model_feature_names)
    from ._engine.base._params import check_fitted, check_parameter
    from ._engine.fitting._solution import Solution
    from ._engine.fitting._targets import (FavourableSuggestion, Target, favourable_class, ordered_labels,
                                           suggest_favourable, targets_from_spec)

__all__ = ["TCREx", "LocalExplanation",
           # one owner each: what counts as a table, column typing, task detection, the rho-versus-rows check and
           # the fewest rows of a rule
           "as_frame", "categorical_columns", "is_categorical_column", "detect_task", "MAX_CLASSES", "MAX_TARGET_CLASSES",
           "check_rows_for_rho", "min_rule_rows", "favourable_class",
           # the input columns a model declares, in its order (None: it takes columns by position)
           "model_feature_names",
           # the one rule giving a frame the dtypes a model was trained on (a cast never changes a value)
           "conform_dtypes", "conform_frame",
           # the metarule grid a fit would build, counted before it is built (TCREx.grid_sizes), and its cost
           "GridSize", "SECONDS_PER_CELL",
           # what a fit says too little about, with a checked suggestion (TCREx.fit_findings)
           "FitFinding", "FINDING_KINDS",
           # which values of a numeric column are codes ("no such record"), not numbers: the intake reports them,
           # the explainer keeps them apart (special_codes)
           "sentinel_codes",
           # the favourable outcome to start from and why (the dashboard asks the user to confirm it)
           "suggest_favourable", "FavourableSuggestion", "ordered_labels",
           # what a target spec means (None, a class, {"at_least": c}, a threshold, an interval): the engine's
           # targets, which the audit and the comparison count against (tcrex.population.favourable_outcome)
           "targets_from_spec",
           # the fitted shapes: one target's rules, grid and metarules (``TCREx.targets_[t]``) and the outcome it leads to
           "Solution", "Target",
           # scikit-learn conventions: the fitted check
           "check_fitted", "check_parameter", "__version__"]


def __getattr__(name: str):
    """Import the module defining ``name`` on first access and keep the name here (later lookups are plain)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
