"""The comparison itself: :func:`compare_models` on rows at once, :func:`compare_counts` of a partition and
:func:`compare_from_counts` of added counts."""
from __future__ import annotations


import numpy as np
import pandas as pd

from .. import as_frame, check_fitted, conform_dtypes
from ..errors import DataError, ModelError, ParameterError
from ..population import (check_bootstrap_params, group_labels, group_series, named_groups)
from ._counts import ComparisonCounts, _order
from ._models import _check_features, _check_model, _outputs, fit_explainer_b, resolve_target, target_id_of
from ._people import _cells, _people, _rule_counts
from ._result import ComparisonResult, _summarise
from ._vocabulary import COMPARED_ROWS, FIT_ROWS_A, GIVEN, REFERENCE_ROWS


# ---------------------------------------------------------------------------------------------------- public API
def compare_models(explainer_a, X, model_b, *, model_a=None, target=None, groups=None, explainer_b=None,
                   n_boot=1000, confidence=0.95, random_state=0, reference=None, min_group_size=30,
                   class_names=None, reference_rows=None, params_b=None) -> "ComparisonResult":
    """Compare recourse under model A (explained by ``explainer_a``) and model B on the people ``X``.

    Parameters
    ----------
    explainer_a : fitted (or restored) TCREx explaining model A.
    X : DataFrame of the people to compare (it may hold extra columns, e.g. the grouping column).
    model_b : the new model (anything with ``predict`` or a callable), on A's features and task.
    model_a : model A (default: the explainer's own model); needed to verify A's points.
    target : the favourable outcome (defaults to the explainer's ``target``; required with default targets).
    groups : optional grouping (a column name of X, or values aligned with X), as for :func:`tcrex.audit.audit`.
    explainer_b : B's explainer; default an explainer with A's parameters and constraints fitted on model B over
        A's fit rows, or over X when A was restored from JSON (``explainer_b_fit_on`` says which). In the latter
        case B's explainer keeps only its JSON form, like A's, so both models' points are verified the same way.
    params_b : the default explainer B's own ``rho``, ``tau``, ``n_trees`` and/or ``max_cells`` (a dict; the rest
        stays A's): model B may need a larger rho or fewer trees to stay within the cell limit.
    n_boot, confidence, random_state, reference, min_group_size : the per-group bootstrap, as in the audit.
    class_names : readable class names for the findings (``{1: "approved"}``).
    reference_rows : the rows explainer A was fitted on, for an explainer restored from JSON (which holds no rows):
        both models' searches beyond the rules, the distances and the re-check of A's rules use them, and the
        default explainer B is fitted on them; with A's fit rows this gives the answer of the explainer before
        its export. ``tcrex compare --reference-rows`` passes them.
    """
    check_fitted(explainer_a)
    check_bootstrap_params(n_boot, confidence, min_group_size)
    X = as_frame(X)
    model_a = model_a if model_a is not None else getattr(explainer_a, "model_", None)
    if model_a is None:
        raise ModelError("explainer A holds no model (restored from JSON, or fitted on y_pred); pass model_a= so "
                         "that A's points can be verified")
    known = {}  # model B's outputs already asked for: on X, or on A's fit rows
    if explainer_b is None:
        names, Xf = _features(explainer_a, X)
        resolve_target(explainer_a, target)
        _check_features("B", model_b, names)
        if reference_rows is not None:
            rows, fit_on = _features(explainer_a, as_frame(reference_rows))[1], REFERENCE_ROWS
        elif explainer_a.has_fit_data:
            rows, fit_on = explainer_a.fit_rows(), FIT_ROWS_A
        else:
            rows, fit_on = Xf, COMPARED_ROWS
        y_rows_b = _outputs("B", explainer_a, conform_dtypes(rows, Xf), model_b)
        _check_model("B", model_b, names, explainer_a, y_rows_b)
        known["X" if fit_on == COMPARED_ROWS else "fit_rows"] = y_rows_b
        known["rows"] = rows
        explainer_b = fit_explainer_b(explainer_a, rows, y_rows_b, fit_on=fit_on, params_b=params_b)
    else:
        if params_b:
            raise ParameterError("params_b sets the default explainer B's parameters; with explainer_b= given, "
                                 "fit it with those parameters instead")
        fit_on = GIVEN
    counts, people = _counts(explainer_a, X, model_b, model_a=model_a, target=target, groups=groups,
                             explainer_b=explainer_b, fit_on=fit_on, class_names=class_names, known=known,
                             reference_rows=reference_rows)
    labels = people.pop("group").astype(object).to_numpy() if "group" in people else None
    order = _order(counts)
    result = _summarise(counts, order, n_boot=n_boot, confidence=confidence, reference=reference,
                        random_state=random_state, min_group_size=min_group_size)
    if labels is not None:
        people.insert(0, "group", pd.Categorical(labels, categories=order))
    result.people = people
    result.explainer_b = explainer_b
    return result


def compare_counts(explainer_a, X, model_b, *, explainer_b, model_a=None, target=None, groups=None,
                   class_names=None, explainer_b_fit_on: str = GIVEN, return_people: bool = False,
                   reference_rows=None):
    """The comparison's mergeable counts for the rows X (one partition, file or batch).

    ``explainer_b`` is required: every partition must be compared with the same explainer of model B. Counts of
    several partitions add up (``a + b``, ``sum(parts)``) and :func:`compare_from_counts` turns them into what
    :func:`compare_models` computes on all rows at once with the same explainers. ``explainer_b_fit_on`` says
    in words which rows explainer B was fitted on (reported with the result). ``return_people=True`` returns
    ``(counts, people)``: the people-level frame of these rows too (with a ``group`` column when grouped).
    ``reference_rows``: as for :func:`compare_models` (the same rows for every partition).
    """
    check_fitted(explainer_a)
    X = as_frame(X)
    model_a = model_a if model_a is not None else getattr(explainer_a, "model_", None)
    if model_a is None:
        raise ModelError("explainer A holds no model; pass model_a= so that A's points can be verified")
    counts, people = _counts(explainer_a, X, model_b, model_a=model_a, target=target, groups=groups,
                             explainer_b=explainer_b, fit_on=str(explainer_b_fit_on), class_names=class_names,
                             reference_rows=reference_rows)
    return (counts, people) if return_people else counts


def favourable_target(explainer_a, target=None):
    """The target spec a comparison measures recourse towards (``target`` or the explainer's own), checked: one
    favourable outcome, or a clear message naming what to pass."""
    check_fitted(explainer_a)
    return resolve_target(explainer_a, target)[0]


def check_models(explainer_a, X, model_b, model_a=None) -> None:
    """Clear messages, before any work, when model B (or A) takes other features than explainer A explains, solves
    another task or predicts classes A never predicted (checked on the first rows of ``X``)."""
    check_fitted(explainer_a)
    names, Xf = _features(explainer_a, as_frame(X))
    for name, model in (("A", model_a), ("B", model_b)):
        if model is None:
            continue
        _check_features(name, model, names)
        if len(Xf):
            _check_model(name, model, names, explainer_a, _outputs(name, explainer_a, Xf.head(256), model))


def compare_from_counts(counts: ComparisonCounts, *, n_boot=1000, confidence=0.95, reference=None, random_state=0,
                        min_group_size=30) -> "ComparisonResult":
    """The comparison of all rows whose :func:`compare_counts` were summed into ``counts`` (no ``people``)."""
    check_bootstrap_params(n_boot, confidence, min_group_size)
    return _summarise(counts, _order(counts), n_boot=n_boot, confidence=confidence, reference=reference,
                      random_state=random_state, min_group_size=min_group_size)


def _features(explainer_a, X) -> tuple[list, pd.DataFrame]:
    names = list(explainer_a.schema_.names)
    missing = [n for n in names if n not in X.columns]
    if missing:
        raise DataError(f"X lacks column(s) {missing[:20]} that explainer A explains; give the people's features "
                        f"({names})")
    return names, X[names]


def _counts(explainer_a, X, model_b, *, model_a, target, groups, explainer_b, fit_on, class_names, known=None,
            reference_rows=None):
    check_fitted(explainer_b)
    names, Xf = _features(explainer_a, X)
    if list(explainer_b.schema_.names) != names:
        raise DataError(f"explainer B explains the features {list(explainer_b.schema_.names)[:20]} but explainer A "
                        f"explains {names[:20]}; both must explain the same features")
    if explainer_b.task_ != explainer_a.task_:
        raise ModelError(f"explainer B explains a {explainer_b.task_} model but explainer A a {explainer_a.task_} "
                         "model; compare models of the same task")
    spec, wanted = resolve_target(explainer_a, target)
    _check_features("B", model_b, names)
    if groups is not None:
        series, group_column = group_series(X, named_groups(explainer_a, X, groups))
        labels, values, categories, missing = group_labels(series)
    else:
        labels, values, categories, missing, group_column = np.full(len(X), "", dtype=object), [""], None, False, None
    known = known or {}
    y_a = _outputs("A", explainer_a, Xf, model_a)
    ref = None if reference_rows is None else conform_dtypes(_features(explainer_a, as_frame(reference_rows))[1], Xf)
    distance = explainer_a.has_fit_data or ref is not None
    people, extra = _people(explainer_a, explainer_b, Xf, model_a, model_b, spec, distance, y_a, known.get("X"),
                            reference=ref)
    target_id = target_id_of(explainer_a, wanted)
    if ref is not None:
        rows_on, measured, y_rows = ref, REFERENCE_ROWS, known.get("fit_rows")
        if y_rows is None and target_id is not None:
            y_rows = _outputs("B", explainer_a, ref, model_b)
    elif explainer_a.has_fit_data:
        rows_on, measured = known["rows"] if "rows" in known else explainer_a.fit_rows(), FIT_ROWS_A
        y_rows = known.get("fit_rows")
        if y_rows is None and target_id is not None:
            y_rows = _outputs("B", explainer_a, conform_dtypes(rows_on, Xf), model_b)
    else:
        rows_on, measured, y_rows = Xf, COMPARED_ROWS, extra["y_b"]
    rules = _rule_counts(explainer_a, target_id, people, extra, rows_on, y_rows)
    counts = ComparisonCounts(
        group_column=group_column, features=names, target=wanted.describe(class_names), target_id=target_id,
        tau=float(explainer_a.tau), distance_available=distance, explainer_b_fit_on=fit_on,
        rules_measured_on=measured, cells=_cells(people, labels), rules=rules, group_values=list(values),
        group_categories=None if categories is None else tuple(categories), has_missing=bool(missing),
        rules_text=rules_of_target(explainer_a, target_id))
    if groups is not None:
        people.insert(0, "group", labels)
    return counts, people


def rules_of_target(ex, target_id) -> pd.DataFrame | None:
    """Per rule of the target: its id, conditions, accuracy and rows as fitted (targets derived on demand too)."""
    if target_id is None:
        return None
    sol = ex.solution(target_id)
    return pd.DataFrame({"rule": np.arange(sol.n_rules, dtype=np.int64),
                         "rule_id": [ex.rule_id(target_id, r) for r in range(sol.n_rules)],
                         "conditions": [ex.conditions_text(sol.rules, r) for r in range(sol.n_rules)],
                         "accuracy": np.asarray(sol.accuracy, dtype=np.float64)[:sol.n_rules],
                         "n": np.asarray(sol.rule_n, dtype=np.int64)[:sol.n_rules]})
