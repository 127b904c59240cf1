"""The comparison's inputs: the favourable outcome, the two models checked against the explainer's features and
outputs, and explainer B fitted on model B's outputs."""
from __future__ import annotations


import numpy as np
import pandas as pd

from .. import TCREx, detect_task, model_feature_names
from ..errors import CellLimitError, DataError, ModelError, NoValidRuleError, ParameterError
from ..population import (favourable_outcome)
from ..vocabulary import CLASSIFICATION


# ---------------------------------------------------------------------------------------------------- inputs
def resolve_target(explainer, target):
    """The favourable outcome: ``target`` or the explainer's; one outcome (who needs recourse depends on it)."""
    return favourable_outcome(explainer, target, needs="comparing models needs", fitted="explainer A")


def _check_model(name: str, model, names: list, explainer, y) -> None:
    """Model ``name`` must take A's features and solve A's task (clear messages, never a traceback)."""
    task = getattr(model, "task", None) if isinstance(getattr(model, "task", None), str) else None
    task = task or detect_task(y, model)
    if task != explainer.task_:
        raise ModelError(f"model {name} solves a {task} task but explainer A explains a {explainer.task_} model; "
                         "compare models of the same task (both classifiers or both regressors)")
    if task == CLASSIFICATION:
        known = set(map(_key, explainer.classes_))
        unknown = sorted({_key(v) for v in pd.unique(np.asarray(y, dtype=object))} - known, key=str)
        if unknown:
            raise ModelError(f"model {name} predicts class(es) {unknown[:10]} that model A never predicted "
                             f"(A's classes: {list(explainer.classes_)}); compare models with the same labels")


def _key(v):
    return v.item() if isinstance(v, np.generic) else v


def _check_features(name: str, model, names: list) -> None:
    feats = model_feature_names(model)
    if feats is None:
        return
    missing, extra = [f for f in feats if f not in names], [f for f in names if f not in feats]
    if missing or extra:
        parts = ([f"needs {missing[:20]}, which explainer A does not explain"] if missing else []) + \
            ([f"does not take {extra[:20]}"] if extra else [])
        raise DataError(f"model {name} {' and '.join(parts)}; compare models trained on the same features "
                        f"(explainer A's features: {names})")


def _outputs(name: str, explainer, X, model) -> np.ndarray:
    try:
        return explainer.outputs(X, model=model)
    except ModelError as exc:
        raise ModelError(f"model {name}: {exc}") from None


def target_id_of(explainer, wanted) -> int | None:
    """Id of the explainer's target equal to ``wanted`` (its rules are the ones re-checked): a fitted one, else one
    derived on demand by ``explain(..., target=...)`` (ids continue after the fitted ones); None when there is
    none (a restored explainer asked about a target it was not fitted with)."""
    t = 0
    while True:
        try:
            sol = explainer.solution(t)
        except IndexError:
            return None
        if sol.target == wanted:
            return t
        t += 1


#: The parameters of explainer B a comparison may set apart from A's (``params_b=``); everything else (target,
#: constraints, features, codebook, grower) stays A's so that both explainers answer the same question.
PARAMS_B = ("rho", "tau", "n_trees", "max_cells")


#: what to do when explainer B cannot be fitted with A's parameters, in the Python API's words
REMEDY_B = "give explainer B other parameters (params_b=) or pass explainer_b= fitted with other parameters"


def fit_explainer_b(explainer_a, rows, outputs_b, *, fit_on: str, params_b=None, remedy: str = REMEDY_B):
    """Explainer B of a comparison: A's parameters (those of ``params_b`` overridden, :data:`PARAMS_B`),
    constraints and task, fitted on model B's outputs ``outputs_b`` over ``rows`` (A's fit rows, the reference
    rows or the compared rows, said in words by ``fit_on``). Model B is asked once about those rows, by the caller,
    and the same outputs serve the re-check of A's rules. For an explainer A restored from JSON (no fit rows), B
    goes through its JSON too, so that both verify their points alike (no in-box search). Too few rows or too big
    a grid for B is a clear message ending with ``remedy``. :func:`compare_models` and ``tcrex compare`` fit B
    with it."""
    unknown = sorted(set(params_b or {}) - set(PARAMS_B))
    if unknown:
        raise ParameterError(f"params_b may set {list(PARAMS_B)} only, not {unknown}")
    # A's codebook speaks of the same features; class names are given to the comparison itself (B may not output
    # every class A names)
    params = {**explainer_a.get_params(), **(params_b or {}), "task": explainer_a.task_, "class_names": None}
    whose = "A's parameters" if not params_b else "its own parameters " + ", ".join(
        f"{k}={params[k]}" for k in PARAMS_B)
    try:
        fitted = TCREx(**params).fit(rows, y_pred=outputs_b)
        if not explainer_a.has_fit_data:  # verify B's points exactly as A's: without fit rows (no in-box search)
            fitted = TCREx.from_json(fitted.to_json())
        return fitted
    except (NoValidRuleError, CellLimitError) as exc:
        raise type(exc)(f"could not fit explainer B ({whose}, model B, {fit_on}): {exc}; {remedy}") from None
