"""Whether outputs lie in an explainer's targets (:meth:`tcrex.TCREx.in_target`).

It lets code outside the engine (``tcrex.compare.compare_models``, ``tcrex.compare.rule_stability``) ask another model about the
explainer's own targets without re-deriving them: the containment is the engine's (``Target.contains``: the classes
of Y*, or the regression interval ``(low, high]``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import ParameterError


def in_target(solutions, outputs, targets) -> np.ndarray:
    """Per row, whether ``outputs[i]`` lies in target ``targets[i]`` (a target id as in ``explain()['target']``,
    an index into ``solutions``: the fitted targets, then any solved on demand); False where the target id is
    missing (the row did not need recourse)."""
    y = np.asarray(outputs.to_numpy() if isinstance(outputs, (pd.Series, pd.Index)) else outputs)
    t = pd.array(targets, dtype="Int64") if not isinstance(targets, pd.arrays.IntegerArray) else targets
    if len(y) != len(t):
        raise ParameterError(f"got {len(y)} outputs for {len(t)} target ids; give one target id per output")
    ids = np.asarray(t.fillna(-1), dtype=np.int64)
    n_targets = len(solutions)
    if (ids >= n_targets).any():
        raise ParameterError(f"target ids run from 0 to {n_targets - 1}, got {int(ids.max())}")
    return contained(solutions, y, ids)


def contained(solutions, outputs: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Per row, whether ``outputs[i]`` lies in the target of ``solutions[ids[i]]`` (False where ``ids[i]`` < 0):
    the one loop behind :meth:`tcrex.TCREx.in_target` and the recourse search's checks."""
    inside = np.zeros(len(outputs), dtype=bool)
    for k in np.unique(ids[ids >= 0]):
        rows = np.flatnonzero(ids == k)
        inside[rows] = solutions[int(k)].target.contains(outputs[rows])
    return inside

