"""Two small public helpers of :class:`tcrex.TCREx` for comparing models (issue #26): whether outputs lie in a
target, and the fit rows as a table.

They let code outside the engine (``tcrex.compare_models``, ``tcrex.rule_stability``) ask another model about the
explainer's own targets and rows without re-deriving either: the target containment is the engine's
(``Target.contains``: the classes of Y*, or the regression interval ``(low, high]``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._errors import NotFittedError, ParameterError


def in_target(ex, outputs, targets) -> np.ndarray:
    """Per row, whether ``outputs[i]`` lies in target ``targets[i]`` (a target id as in ``explain()['target']``);
    False where the target id is missing (the row did not need recourse)."""
    ex._require_fitted()
    y = np.asarray(outputs.to_numpy() if isinstance(outputs, (pd.Series, pd.Index)) else outputs)
    t = pd.array(targets, dtype="Int64") if not isinstance(targets, pd.arrays.IntegerArray) else targets
    if len(y) != len(t):
        raise ParameterError(f"got {len(y)} outputs for {len(t)} target ids; give one target id per output")
    ids = np.asarray(t.fillna(-1), dtype=np.int64)
    n_targets = len(ex._all_targets)
    if (ids >= n_targets).any():
        raise ParameterError(f"target ids run from 0 to {n_targets - 1}, got {int(ids.max())}")
    inside = np.zeros(len(y), dtype=bool)
    for k in np.unique(ids[ids >= 0]):
        rows = np.flatnonzero(ids == k)
        inside[rows] = ex._all_targets[int(k)].target.contains(y[rows])
    return inside


def fit_rows(ex) -> pd.DataFrame:
    """The rows the explainer was fitted on (features only, with the fit index and, where they round-trip, the
    fit data's column types), e.g. to fit another model's explainer on the same rows."""
    ex._require_fitted()
    if not ex.has_fit_data:
        raise NotFittedError("this explainer was restored from JSON and holds no fit rows; pass the rows yourself")
    from ._explainer import _restore_dtypes
    return _restore_dtypes(ex._decode(ex._fit_enc, ex._fit_index), getattr(ex, "_fit_dtypes", None))
