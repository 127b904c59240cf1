"""The paper's steps for a fitted state: the surrogate (step a, :func:`fit_state`), then per target the valid
rules, grid and metarules (steps b-e, :func:`derive`) from the surrogate's counts (or the counts of
:func:`tcrex._engine.fitting._recount.recount`)."""
from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from ...codebook import check_class_names
from ...constraints import Constraints
from ...dictionary import (check_dictionary_param, fit_constraints, fit_parameters, label_questions,
                                  matched_labels, special_codes_param, with_titles)
from ..base._data import FeatureSchema, frame_columns, resolve_special_codes
from ...errors import ModelError, NoValidRuleError, ParameterError
from ..base._outputs import (as_regression, check_n_classes, check_outputs, check_rows_for_rho, check_task, class_codes,
                       detect_task, predict)
from ._grid import GridSize
from ._solution import Solution, derive_solution, grid_size
from ._state import FittedState, category_counts, preference_of, rederive
from ._surrogate import Surrogate
from ._targets import Target, targets_from_spec
from ...vocabulary import NO_RULE, REGRESSION


def _quiet(step, fraction) -> None:
    pass


def counts_for(state: FittedState, target: Target):
    """``(n_inside, n_target, n_rows, min_count)`` every derivation of ``state`` uses for ``target``: the recounted
    counts when :func:`tcrex._engine.fitting._recount.recount` ran, else the surrogate's fit counts."""
    rec = state.recounted
    if rec is None:
        n_target = state.surrogate.count(target.contains(state.fit_y).astype(np.float64))
        return state.surrogate.n_inside_, n_target, state.n_fit_rows, state.surrogate.min_count_
    n_target = rec.counts.for_target(target)
    if n_target is None:
        raise ParameterError(f"the rules were recounted on {rec.counts.n_rows:,} rows for the fitted targets only; "
                             f"{target.describe()} was not counted there. Fit with this target, then recount.")
    return rec.counts.n_inside, n_target, rec.counts.n_rows, rec.min_count


def solve(state: FittedState, target: Target, report=_quiet) -> Solution:
    """The rules, grid and metarules of one target."""
    n_inside, n_target, n_rows, min_count = counts_for(state, target)
    return derive_solution(state.schema, target, state.surrogate.candidates_, n_inside, n_target, n_rows,
                           state.tau, min_count, state.max_cells, state.random_state, report, state.constraints)


def derive(state: FittedState, spec, report=_quiet) -> list[Solution]:
    """The solutions of every target of ``spec`` (the ``target`` parameter); raises when no target has a valid
    rule and warns for each target without one."""
    targets = targets_from_spec(spec, state.task, state.fit_y, state.classes)
    solutions = []
    for t, target in enumerate(targets):
        sub = (lambda step, f, t=t: report(f"{step} (target {t})", (t + f) / len(targets)))  # noqa: E731
        solutions.append(solve(state, target, sub))
    if all(s.n_rules == 0 for s in solutions):
        best = max(s.n_candidates for s in solutions)
        raise NoValidRuleError(
            f"no valid rule: none of the {best} candidate rules holds at least {state.min_count} "
            f"rows (rho={state.rho}) with accuracy >= tau={state.tau}. Lower tau, lower rho, or use more "
            "surrogate trees.")
    for t, s in enumerate(solutions):
        if s.n_rules == 0:
            warnings.warn(f"target {t} ({s.target.describe()}) has no valid rule at tau={state.tau}; inputs it "
                          f"serves get status {NO_RULE!r}", stacklevel=4)
    return solutions


def solutions_for(state: FittedState, spec) -> list[Solution]:
    """The solutions serving the targets of ``spec`` (None: the fitted targets). A target the fit did not solve is
    solved now and kept in the state's declared cache (``StateCache.extra_solutions``), so its id stays valid;
    the fitted targets never change."""
    if spec is None:
        return state.solutions
    fit_y = state.fit_y if state.fit_y is not None else np.zeros(1)
    found = []
    for w in targets_from_spec(spec, state.task, fit_y, state.classes):
        match = next((s for s in state.all_solutions() if s.target == w), None)
        if match is None:
            state.require_surrogate(f"explain towards {w.describe()}")
            match = solve(state, w)
            state.cache.extra_solutions.append(match)
        found.append(match)
    return found


def fit_state(X: pd.DataFrame, model, y_pred, params: dict, report=_quiet, t0: float | None = None) -> FittedState:
    """``TCREx.fit``: the state of a fit on X (``params``: the estimator's parameters, already checked; ``t0``:
    when the fit started, for ``timings``)."""
    t0 = time.perf_counter() if t0 is None else t0
    state = grown_state(X, model, y_pred, params, report, t0)
    t2 = time.perf_counter()
    state.solutions = derive(state, params["target"], lambda step, f: report(step, 0.3 + 0.7 * f))
    state.timings["rules_and_metarules"] = time.perf_counter() - t2
    state.timings["total"] = time.perf_counter() - t0
    return state


def grid_sizes(X: pd.DataFrame, model, y_pred, params: dict) -> list[GridSize]:
    """``TCREx.grid_sizes``: per target, the grid a fit with ``params`` would build, from the grown surrogate and
    the maximal-valid rules only (step a and b; nothing per cell)."""
    state = grown_state(X, model, y_pred, params)
    out = []
    for target in targets_from_spec(params["target"], state.task, state.fit_y, state.classes):
        n_inside, n_target, _, min_count = counts_for(state, target)
        out.append(grid_size(state.schema, target, state.surrogate.candidates_, n_inside, n_target, state.tau,
                             min_count, state.constraints))
    return out


def grown_state(X: pd.DataFrame, model, y_pred, params: dict, report=_quiet, t0: float | None = None) -> FittedState:
    """Step (a): the state of a fit on X with its surrogate grown and no target solved yet."""
    t0 = time.perf_counter() if t0 is None else t0
    columns = frame_columns(X)  # fetched once, for detecting the types and for encoding
    dictionary = check_dictionary_param(params.get("dictionary"))
    params, notes = fit_parameters(dictionary, list(X.columns), params)
    schema = FeatureSchema.detect(X, params["categorical_features"], params["numeric_features"], columns)
    labels = params["value_labels"]
    if dictionary is not None:  # a dictionary names what a column may hold; the data may lack some of it
        labels, more = matched_labels(schema, labels)
        notes += more
    schema = with_titles(schema.with_labels(labels), dictionary)  # checked before anything is grown
    enc, by_column = schema.encode_both(X, columns)  # rows, and the same as columns for the surrogate
    resolve_special_codes(schema, by_column, special_codes_param(schema, dictionary, params["special_codes"]))
    notes += [question for _, _, question in label_questions(schema)]
    report("model outputs", 0.02)
    y = check_outputs(y_pred, len(X)) if y_pred is not None else predict(model, X)
    task = check_task(params["task"]) or detect_task(y, model if y_pred is None else None)
    if task == REGRESSION:
        y = as_regression(y)
        classes = []
        y_code = y
    else:
        classes_arr, y_code = class_codes(y)
        classes = [c.item() if isinstance(c, np.generic) else c for c in classes_arr]
        if len(classes) < 2:
            raise ModelError(f"the model outputs a single class ({classes[0]!r}) on every row; there is no "
                             "other output to reach — use data on which it predicts at least two classes")
        check_n_classes(classes)
    class_names = check_class_names(params["class_names"], classes)
    rows_problem = check_rows_for_rho(len(X), params["rho"])
    if rows_problem:
        raise ParameterError(rows_problem)
    spec, suggested = fit_constraints(schema, dictionary, params["constraints"])
    constraints = Constraints(schema, spec)
    names = set(schema.names)
    report("surrogate", 0.05)
    t1 = time.perf_counter()
    surrogate = Surrogate(schema, task, params["rho"], params["n_trees"], params["random_state"],
                          params["surrogate_params"], params["grower"]).fit(enc, y_code, by_column)
    t2 = time.perf_counter()
    counts = category_counts(by_column, schema)
    state = FittedState(
        schema=schema, task=task, classes=classes, constraints=constraints, n_fit_rows=len(X), solutions=[],
        tau=params["tau"], rho=params["rho"], max_cells=params["max_cells"], random_state=params["random_state"],
        max_changes=params["max_changes"], model=model if y_pred is None else None, surrogate=surrogate, grower=surrogate.grower_,
        n_surrogate_fits=1, timings={"encode": t1 - t0, "surrogate": t2 - t1}, fit_enc=enc, fit_y=y,
        fit_index=X.index, fit_dtypes={str(c): d for c, d in zip(X.columns, X.dtypes) if str(c) in names},
        category_counts=counts, category_preference=preference_of(counts, schema), class_names=class_names,
        dictionary=dictionary, suggested_constraints=suggested, dictionary_notes=notes)
    return state


def relabel_state(state: FittedState, value_labels, class_names, dictionary=None) -> FittedState:
    """A new state with another codebook and/or other class names (None: keep them; {} removes them) and/or
    another data dictionary's words (titles and labels; its codes must be the ones the rules were fitted with):
    nothing is re-derived (labels change words, never rules), but the cached frames hold sentences, so the cache
    is fresh."""
    changes = {}
    if dictionary is not None:
        dictionary = check_dictionary_param(dictionary)
        changes = {"dictionary": dictionary}
        for name, codes in dictionary.special_codes.items():
            if name in state.schema.names:
                f = state.schema.features[state.schema.index(name)]
                if f.is_categorical or [float(c) for c in codes] != [float(c) for c in f.special_codes]:
                    raise ParameterError(
                        f"the dictionary declares the special codes {codes} of {name!r}, but the rules were fitted "
                        f"with {f.special_codes or 'none'}; codes change the rules, not only words: fit again with "
                        "this dictionary (TCREx(dictionary=...), tcrex fit --dictionary)")
        labels, _ = matched_labels(state.schema, {**dictionary.value_labels, **(value_labels or {})})
        schema = with_titles(state.schema.with_labels(labels), dictionary)
    else:
        schema = state.schema if value_labels is None else state.schema.with_labels(value_labels)
    names = state.class_names if class_names is None else check_class_names(class_names, state.classes)
    return rederive(state, schema=schema, class_names=names, **changes)


def update_state(state: FittedState, tau, constraints, spec, report=_quiet) -> FittedState:
    """``TCREx.update``: a new state with the solutions of ``spec`` re-derived for ``tau`` and ``constraints`` (None:
    keep them) from the same surrogate; ``state`` is left as it was (also when this raises)."""
    t0 = time.perf_counter()
    new = rederive(state, tau=tau,
                   constraints=Constraints(state.schema, constraints) if constraints is not None else state.constraints,
                   timings=dict(state.timings))
    new.solutions = derive(new, spec, report)
    new.timings["rules_and_metarules"] = time.perf_counter() - t0
    return new
