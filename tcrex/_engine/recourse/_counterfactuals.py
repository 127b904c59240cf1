"""Counterfactual points, real examples, metacounterfactuals and the full local explanation of one input
(``TCREx.counterfactuals``, ``nearest_points``, ``real_examples``, ``explain_one``), from a fitted state."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._alternatives import check_alternatives
from ..base._data import Encoded, _native, as_frame, one_row
from ...errors import ParameterError, not_fitted
from ..base._nearest import PercentileScale, move_into, nearest_rows
from ..explaining._lookup import (RowLookup, change_keep, conditions_dict, lookup, lookup_rows, model_columns, outputs, row_outside,
                                  sentence)
from ..fitting._solution import Solution
from ..fitting._derive import solutions_for
from ..fitting._state import FittedState, metarule_id, rule_id
from ._verify import verified_frame, verify_one, wants_verify
from ...vocabulary import STATUSES
from ...text import box_conditions, metacounterfactual_sentence, titled


@dataclass
class LocalExplanation:
    """Everything T-CREx says about one input, as plain data (see :meth:`TCREx.explain_one`)."""

    output: object
    status: str
    text: str
    target: int | None = None
    target_description: str | None = None
    rule: int | None = None
    rule_id: str | None = None  # the rule's public id ("R3", :meth:`TCREx.rule_id`), unique across targets
    rule_conditions: dict = field(default_factory=dict)
    metarule: int | None = None
    metarule_id: str | None = None  # the metarule's public id ("M4", :meth:`TCREx.metarule_id`), unique across targets
    metarule_conditions: dict = field(default_factory=dict)
    changes: list = field(default_factory=list)  # [{"feature", "current", "condition", ...}]
    keeps: list = field(default_factory=list)
    n_changes: int = 0
    counterfactual: dict | None = None  # nearest point of the rule box
    example: dict | None = None  # nearest fit row inside the rule whose output is in the target
    example_index: object = None
    alternatives: list = field(default_factory=list)  # metacounterfactuals, nearest first; with a model each
    # carries ``verified`` and, when verified, ``point`` (the model confirms it), ``if_point``, ``output``, ``changed``
    # model verification (``verify=True``): the counterfactual above is then the verified point
    counterfactual_valid: bool | None = None  # the model's output at the counterfactual is in the target
    counterfactual_output: object = None
    counterfactual_source: str | None = None  # boundary / searched / example (tcrex.vocabulary.SOURCES)
    boundary_point: dict | None = None  # the nearest point of the rule box (the paper's point)
    boundary_valid: bool | None = None
    boundary_output: object = None
    example_valid: bool | None = None
    example_output: object = None
    # what was verified: the text, changes and keeps above then describe the verified point
    recourse: str | None = None  # verified / similar_case / none (tcrex.vocabulary.RECOURSE_OUTCOMES)
    recommended_rule: int | None = None  # the rule whose point the model confirms (index within the target)
    recommended_rule_id: str | None = None
    recommended_rule_conditions: dict = field(default_factory=dict)
    changed: list = field(default_factory=list)  # the features the verified point changes, as the text names them
    paper_text: str | None = None  # the paper's sentence for the optimal rule (before verification)
    notes: list = field(default_factory=list)  # what verification could not do (e.g. no reference rows)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


# ------------------------------------------------------------------ nearest points of rules
def move_to_rules(state: FittedState, enc: Encoded, res: RowLookup) -> Encoded:
    """Each row with a rule moved to the nearest point of its rule (the others as they are)."""
    moved = Encoded(enc.num.copy(), enc.cat.copy())
    every = state.all_solutions()
    for t in np.unique(res.target_id[res.rule >= 0]):
        rows = np.flatnonzero((res.target_id == t) & (res.rule >= 0))
        part = move_into(enc.take(rows), every[t].rules, res.rule[rows], state.schema,
                         state.category_preference, state.transitions())
        moved.num[rows], moved.cat[rows] = part.num, part.cat
    return moved


def counterfactuals(state: FittedState, X, verify, model, y_pred, target, reference, text,
                    class_names) -> pd.DataFrame:
    """``TCREx.counterfactuals``: the verified points, or (``verify=False``) the paper's boundary points."""
    X = model_columns(state, as_frame(X), model)
    enc, res = lookup_rows(state, X, y_pred, target, model)
    if wants_verify(state, verify, model):
        return verified_frame(state, X, enc, res, model if model is not None else state.model, reference, text,
                              class_names)
    out = state.schema.decode(move_to_rules(state, enc, res), X.index)
    out.loc[(res.target_id >= 0) & (res.rule < 0)] = np.nan  # no rule, or none actionable
    return out


def nearest_points(state: FittedState, X, target: int, rule: int) -> pd.DataFrame:
    """``TCREx.nearest_points``: each row moved to the nearest point of one rule."""
    X = as_frame(X)
    enc = state.schema.encode(X)
    sol = state.all_solutions()[target]
    if not 0 <= rule < sol.n_rules:
        raise ParameterError(f"target {target} has rules 0..{sol.n_rules - 1}, not {rule}")
    moved = move_into(enc, sol.rules, np.full(len(enc), rule), state.schema, state.category_preference,
                      state.transitions())
    return state.schema.decode(moved, X.index)


# ------------------------------------------------------------------ real examples and distances
def real_examples(state: FittedState, X, y_pred, target, model) -> pd.DataFrame:
    """``TCREx.real_examples``: per row, the nearest fit row inside its rule whose output is in the target."""
    if not state.has_fit_data:
        raise not_fitted("real examples need the fit data, which a JSON export does not hold")
    X = as_frame(X)
    enc, res = lookup_rows(state, X, y_pred, target, model)
    pos = np.full(len(enc), -1, dtype=np.int64)
    dist = np.full(len(enc), np.nan)
    scale = state.scale()
    every = state.all_solutions()
    for t in np.unique(res.target_id[res.rule >= 0]):
        sol = every[t]
        in_target = sol.target.contains(state.fit_y)
        for r in np.unique(res.rule[(res.target_id == t) & (res.rule >= 0)]):
            rows = np.flatnonzero((res.target_id == t) & (res.rule == r))
            pool = np.flatnonzero(sol.rules.take([r]).contains(state.fit_enc)[:, 0] & in_target)
            best, d = nearest_rows(enc.take(rows), state.fit_enc.take(pool), scale)
            ok = best >= 0
            pos[rows[ok]] = pool[best[ok]]
            dist[rows] = d
    found = pos >= 0
    feats = state.schema.decode(state.fit_enc.take(np.maximum(pos, 0)), X.index)
    feats.loc[~found] = np.nan
    out = pd.DataFrame({"example_index": [state.fit_index[p] if p >= 0 else None for p in pos], "distance": dist},
                       index=X.index)
    return pd.concat([out, feats], axis=1)


def percentile_distance(state: FittedState, X_from, X_to, reference=None) -> np.ndarray:
    """``TCREx.percentile_distance``: row-wise total percentile shift."""
    a, b = state.schema.encode(as_frame(X_from)), state.schema.encode(as_frame(X_to))
    if len(a) != len(b):
        raise ParameterError(f"X_from has {len(a)} rows but X_to has {len(b)}; pair each row with one row")
    if reference is not None:
        scale = PercentileScale(state.schema.encode(as_frame(reference)))
    elif state.has_fit_data:
        scale = state.scale()
    else:
        raise not_fitted("percentiles need the fit data, which a JSON export does not hold; pass "
                             "reference= (rows whose percentiles to use)")
    return scale.distance(a, b)


# ------------------------------------------------------------------ one input in full
def metacounterfactuals(state: FittedState, enc: Encoded, sol: Solution, rule: int, k: int) -> list:
    """The ``k`` nearest other metarules whose rule differs from ``rule`` (paper §6.2), nearest first."""
    schema = state.schema
    others = np.flatnonzero(sol.metarule_rule != rule)
    if not len(others):
        return []
    rows = Encoded(np.repeat(enc.num, len(others), axis=0), np.repeat(enc.cat, len(others), axis=0))
    num_out, cat_out = sol.metarules.outside(rows, others)
    n_meta = num_out.sum(axis=1) + cat_out.sum(axis=1)
    moved = move_into(rows, sol.metarules, others, schema, state.category_preference)
    r2, m2, c2, p2 = sol.lookup(moved)
    o2 = sol.outside(p2)
    order = np.lexsort((others, c2, n_meta))[:k]
    t = state.solution_id(sol)
    meta_outside = np.zeros((len(others), len(schema)), dtype=bool)
    meta_outside[:, schema.numeric] = num_out
    meta_outside[:, schema.categorical] = cat_out
    result = []
    for a in order:
        m = int(others[a])
        mconds = box_conditions(schema, sol.metarules, m)
        meta_changes = [titled({"feature": schema.names[i], "condition": mconds[i]["text"], **mconds[i]["bounds"]},
                               schema.features[i].title) for i in np.flatnonzero(meta_outside[a])]
        change, keep = change_keep(schema, sol, int(r2[a]), o2[a]) if r2[a] >= 0 else ([], [])
        result.append({"metarule": m, "metarule_id": metarule_id(state, t, m), "rule": int(r2[a]),
                       "rule_id": rule_id(state, t, int(r2[a])),
                       "n_metachanges": int(n_meta[a]), "verified": None,
                       "metachanges": meta_changes, "n_changes": int(c2[a]), "changes": change, "keeps": keep,
                       "text": metacounterfactual_sentence(meta_changes, change, keep, actionable=r2[a] >= 0)})
    return result


def explain_one(state: FittedState, x, y_pred, target, model, n_alternatives, verify, reference,
                class_names) -> LocalExplanation:
    """``TCREx.explain_one``: the full local explanation of one input."""
    X = one_row(x, state.schema.names, state.fit_dtypes)
    enc = state.schema.encode(X)
    y = outputs(state, X, None if y_pred is None else np.atleast_1d(np.asarray(y_pred, dtype=object)), model)
    res = lookup(state, enc, y, solutions_for(state, target))
    status = STATUSES[res.status[0]]
    output = y[0].item() if isinstance(y[0], np.generic) else y[0]
    text = sentence(state, int(res.target_id[0]), int(res.rule[0]), status, row_outside(state, res, 0))
    exp = LocalExplanation(output=output, status=status, text=text)
    t = int(res.target_id[0])
    if t < 0:
        return exp
    sol = state.all_solutions()[t]
    exp.target, exp.target_description = t, sol.target.describe(state.names(class_names))
    r = int(res.rule[0])
    if res.metarule[0] >= 0:
        exp.metarule = int(res.metarule[0])
        exp.metarule_id = metarule_id(state, t, exp.metarule)
        exp.metarule_conditions = conditions_dict(state.schema, sol.metarules, exp.metarule)
    verify = wants_verify(state, verify, model)
    model = model if model is not None else state.model
    if r < 0:
        if exp.metarule is not None:  # no actionable rule here: where would there be one?
            exp.alternatives = metacounterfactuals(state, enc, sol, r, n_alternatives)
        if verify:  # no rule: a minimal change beyond the rules may still work
            verify_one(state, exp, X, enc, res, model, reference, class_names)
            check_alternatives(state, X, enc, t, exp.alternatives, model)
        return exp
    exp.rule, exp.rule_id = r, rule_id(state, t, r)
    exp.rule_conditions = conditions_dict(state.schema, sol.rules, r)
    change, keep = change_keep(state.schema, sol, r, row_outside(state, res, 0))
    current = X.iloc[0]
    for item in change + keep:
        item["current"] = _native(current[item["feature"]])
    exp.changes, exp.keeps, exp.n_changes = change, keep, len(change)
    moved = move_to_rules(state, enc, res)
    exp.counterfactual = {k: _native(v) for k, v in state.schema.decode(moved, X.index).iloc[0].items()}
    if state.has_fit_data:
        ex = real_examples(state, X, y, target, None)
        if ex["example_index"].iloc[0] is not None:
            exp.example_index = ex["example_index"].iloc[0]
            exp.example = {k: _native(v) for k, v in ex.iloc[0, 2:].items()}
    exp.alternatives = metacounterfactuals(state, enc, sol, r, n_alternatives)
    if verify:
        verify_one(state, exp, X, enc, res, model, reference, class_names)
        check_alternatives(state, X, enc, t, exp.alternatives, model)
    return exp
