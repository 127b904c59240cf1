"""Explaining rows with a fitted state: the target serving each row, its rule and metarule (the lookup), and the
sentence that states the advice (``TCREx.explain``, ``explain_arrow``, ``feature_actions``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base._boxes import Boxes
from ..base._data import Encoded, FeatureSchema, as_frame, conform_dtypes
from ..fitting._derive import solutions_for
from ...errors import ModelError
from ..base._outputs import as_regression, check_outputs, model_feature_names, model_frame, predict
from ..fitting._solution import Solution
from ..fitting._state import FittedState
from ..fitting._targets import serving_target
from ...vocabulary import (ALREADY_IN_RULE, ALREADY_IN_TARGET, CLASSIFICATION, NO_ACTIONABLE_RULE, NO_RULE, OK,
                          STATUSES)
from ...text import box_conditions, status_sentence, titled

_STATUS_DTYPE = pd.CategoricalDtype(list(STATUSES))  # built once: validating categories costs per call


# ------------------------------------------------------------------ outputs of rows
def outputs(state: FittedState, X: pd.DataFrame, y_pred, model=None) -> np.ndarray:
    """``y_pred`` checked against the rows, else ``model`` (or the fitted model) applied to X with the fit data's
    dtypes where they keep every value (:func:`fit_dtypes_of`)."""
    if y_pred is not None:
        return check_outputs(y_pred, len(X))
    model = model if model is not None else state.model
    if model is None:
        raise ModelError("no model to compute outputs: pass y_pred= (the model's outputs on X) or model=")
    return predict(model, model_frame(model, fit_dtypes_of(state, X), state.schema.names))


def fit_dtypes_of(state: FittedState, X: pd.DataFrame) -> pd.DataFrame:
    """X with the fit data's pandas categories given back (:func:`conform_dtypes`, where the cast keeps every value)
    to the columns that lost them, before any model sees it: rows decoded from the explainer's encoding (the kept
    fit rows) and frames read back from a file (Parquet's text columns) reach a model trained on pandas categories
    as it was trained. A column the caller holds as categories, or as numbers, is left as given; X itself when the
    explainer holds no fit dtypes (restored from JSON) or nothing lost its categories."""
    if state is None or not state.fit_dtypes or len({str(c) for c in X.columns}) != X.shape[1]:
        return X  # (duplicate names: encoding reports them)
    lost = {str(c): state.fit_dtypes[str(c)] for c in X.columns
            if isinstance(state.fit_dtypes.get(str(c)), pd.CategoricalDtype)
            and not isinstance(X[c].dtype, pd.CategoricalDtype)}
    return conform_dtypes(X, lost) if lost else X


def model_columns(state: FittedState, X: pd.DataFrame, model) -> pd.DataFrame:
    """X as the model takes it when its points are checked (counterfactuals, effectiveness): the explainer's
    features in the model's declared order (same set), else in fit order; extra columns dropped; the fit data's
    dtypes (:func:`fit_dtypes_of`). Points are built like X, so a model that reads columns by position must see
    them in its own order."""
    model = model if model is not None else state.model
    names = [str(n) for n in state.schema.names]
    declared = model_feature_names(model)
    want = declared if declared is not None and set(declared) == set(names) else names
    cols = [str(c) for c in X.columns]
    if cols == want or not set(want) <= set(cols) or len(set(cols)) != len(cols):
        return fit_dtypes_of(state, X)
    return fit_dtypes_of(state, X.set_axis(cols, axis=1)[want])


# ------------------------------------------------------------------ the lookup
@dataclass(frozen=True)
class RowLookup:
    """What the lookup found for each of n rows (:func:`lookup`): aligned int64 arrays, -1 where there is none.

    The one record every per-row algorithm reads (sentences, counterfactual points, verified recourse,
    effectiveness); ``explain()``'s frame is its public face (``target``, ``rule``, ``metarule``, ``changes``,
    ``status``); ``explain()`` calls ``target_id`` ``target``."""

    target_id: np.ndarray  #: id of the target serving the row (into ``state.all_solutions()``); -1: already in a target
    rule: np.ndarray  #: the optimal rule of the row's cell, an index within its target; -1: none
    metarule: np.ndarray  #: the metarule holding the row's cell, an index within its target; -1: none
    changes: np.ndarray  #: features the rule asks the row to change (0 without a rule)
    pattern: np.ndarray  #: id of the cell's (rule, features to change) pattern within its target; -1: none
    status: np.ndarray  #: index into :data:`tcrex.vocabulary.STATUSES`

    def __len__(self) -> int:
        return len(self.target_id)


def serving(state: FittedState, solutions, y) -> np.ndarray:
    """Target id (into ``state.all_solutions()``) serving each row, -1 when its output is already in it."""
    every = state.all_solutions()
    targets = [s.target for s in solutions]
    ids = np.array([next(i for i, s in enumerate(every) if s is sol) for sol in solutions], dtype=np.int64)
    if state.task == CLASSIFICATION:
        inv, uniq = pd.factorize(np.asarray(y))
        local = serving_target(targets, np.asarray(uniq))[inv]
    else:
        local = serving_target(targets, as_regression(y))
    return np.where(local >= 0, ids[np.maximum(local, 0)], -1)


def lookup(state: FittedState, enc: Encoded, y, solutions) -> RowLookup:
    """Per row: serving ``target``, ``rule``, ``metarule`` (-1 when none), number of ``changes``, the cell's change
    ``pattern`` and the ``status`` (index into STATUSES)."""
    every = state.all_solutions()
    n = len(enc)
    tgt = serving(state, solutions, y)
    rule = np.full(n, -1, dtype=np.int64)
    meta = np.full(n, -1, dtype=np.int64)
    changes = np.zeros(n, dtype=np.int64)
    pattern = np.full(n, -1, dtype=np.int64)
    served = np.flatnonzero(np.bincount(tgt + 1)[1:])  # the targets serving a row, ascending (small ids)
    for t in served:
        if len(served) == 1 and (tgt == t).all():
            rule, meta, changes, pattern = every[t].lookup(enc)
            break
        rows = np.flatnonzero(tgt == t)
        rule[rows], meta[rows], changes[rows], pattern[rows] = every[t].lookup(enc, rows)
    status = np.full(n, STATUSES.index(OK), dtype=np.int64)
    status[(tgt >= 0) & (rule >= 0) & (changes == 0)] = STATUSES.index(ALREADY_IN_RULE)
    has_rules = np.array([s.n_rules > 0 for s in every] + [False])[tgt]
    status[(tgt >= 0) & (rule < 0) & has_rules] = STATUSES.index(NO_ACTIONABLE_RULE)
    status[(tgt >= 0) & (rule < 0) & ~has_rules] = STATUSES.index(NO_RULE)
    status[tgt < 0] = STATUSES.index(ALREADY_IN_TARGET)
    return RowLookup(target_id=tgt, rule=rule, metarule=meta, changes=changes, pattern=pattern, status=status)


def lookup_rows(state: FittedState, X: pd.DataFrame, y_pred, target, model, by_column: bool = False
                ) -> tuple[Encoded, RowLookup]:
    """X encoded and looked up (outputs from ``y_pred`` or the model; ``target``: the targets to serve);
    ``by_column``: X encoded column-major (the lookup reads columns; gathers of rows want the default)."""
    enc = state.schema.encode(X, by_column=by_column)
    return enc, lookup(state, enc, outputs(state, X, y_pred, model), solutions_for(state, target))


def row_outside(state: FittedState, res: RowLookup, row: int) -> np.ndarray:
    """Which features row ``row`` of a lookup must change (from its cell's pattern)."""
    t = int(res.target_id[row])
    if t < 0:
        return np.zeros(len(state.schema), dtype=bool)
    return state.all_solutions()[t].outside([res.pattern[row]])[0]


# ------------------------------------------------------------------ conditions and sentences
def conditions_dict(schema: FeatureSchema, boxes: Boxes, r: int) -> dict:
    """``{feature: {"low", "high", "text"} | {"in", "text"}}`` for the features box ``r`` constrains."""
    return {schema.names[i]: {**c["bounds"], "text": c["text"]} for i, c in box_conditions(schema, boxes, r).items()}


def change_keep(schema: FeatureSchema, sol: Solution, r: int, outside: np.ndarray,
                memo: dict | None = None) -> tuple[list, list]:
    """The rule's constrained features split into those to change and those to keep (with conditions);
    ``memo`` caches the rule's conditions across calls."""
    memo = {} if memo is None else memo
    key = (id(sol), r)
    if key not in memo:
        memo[key] = box_conditions(schema, sol.rules, r)
    change, keep = [], []
    for i, cond in memo[key].items():
        entry = titled({"feature": schema.names[i], "condition": cond["text"], **cond["bounds"]},
                       schema.features[i].title)
        (change if outside[i] else keep).append(entry)
    return change, keep


def sentence(state: FittedState, t: int, r: int, status: str, outside: np.ndarray, memo: dict | None = None) -> str:
    """The row's sentence (:func:`tcrex.text.status_sentence`), given only what its status speaks of."""
    if status == ALREADY_IN_TARGET:
        return status_sentence(status)
    sol = state.all_solutions()[t]
    if status == NO_RULE:
        return status_sentence(status, target=sol.target.describe(state.names()), tau=state.tau)
    if status == NO_ACTIONABLE_RULE:
        return status_sentence(status, constraints=state.constraints.describe())
    change, keep = change_keep(state.schema, sol, r, outside, memo)
    return status_sentence(status, changes=change, keeps=keep)


def text_codes(state: FittedState, res: RowLookup) -> tuple[np.ndarray, list]:
    """Per row the code of its sentence, and the distinct sentences in order of appearance; each sentence is
    built once per distinct (target, rule and change pattern, status)."""
    n = len(res.target_id)
    n_targets = len(state.all_solutions()) + 1
    key = ((res.pattern + 1) * n_targets + res.target_id + 1) * len(STATUSES) + res.status
    inv, uniq = pd.factorize(key)
    first = np.empty(len(uniq), dtype=np.int64)
    first[inv[::-1]] = np.arange(n)[::-1]  # the first row of every distinct key
    conditions = {}  # (target, rule) -> its conditions: many patterns share a rule
    texts = [sentence(state, int(res.target_id[row]), int(res.rule[row]), STATUSES[res.status[row]],
                      row_outside(state, res, row), conditions) for row in first]
    # sentences repeat across rows, so a categorical column holds each one once (in order of appearance)
    code_of = {}
    codes = np.array([code_of.setdefault(text, len(code_of)) for text in texts], dtype=np.int64)
    return (codes[inv] if n else np.zeros(0, dtype=np.int64)), list(code_of)


# ------------------------------------------------------------------ explain / explain_arrow / feature_actions
def _explain_parts(state: FittedState, X, y_pred, target, model):
    X = as_frame(X)
    _, res = lookup_rows(state, X, y_pred, target, model, by_column=True)  # only the lookup reads the rows
    return X, res, text_codes(state, res)


def ids_column(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Ids as a nullable Int64 column, missing where the engine says -1 (none)."""
    values = np.asarray(values, dtype=np.int64)
    missing = values < 0
    return pd.arrays.IntegerArray(np.where(missing, 0, values), missing)


def explain_frame(state: FittedState, X, y_pred, target, model) -> pd.DataFrame:
    """``TCREx.explain``'s frame."""
    X, res, (codes, sentences) = _explain_parts(state, X, y_pred, target, model)
    return pd.DataFrame({
        "target": ids_column(res.target_id),
        "rule": ids_column(res.rule),
        "metarule": ids_column(res.metarule),
        "changes": res.changes,
        "status": pd.Categorical.from_codes(res.status, dtype=_STATUS_DTYPE),
        "text": pd.Categorical.from_codes(codes, categories=pd.Index(sentences, dtype=object), validate=False),
    }, index=X.index, copy=False)  # the columns are this call's own arrays: no copy needed (a third of the cost)


def explain_table(state: FittedState, X, y_pred, target, model):
    """``TCREx.explain_arrow``'s table."""
    import pyarrow as pa  # noqa: PLC0415 - only the Parquet writers ask for Arrow: the engine imports without it
    X, res, (codes, sentences) = _explain_parts(state, X, y_pred, target, model)

    def ids(values):
        return pa.array(values, type=pa.int64(), mask=values < 0)

    return pa.table({
        "target": ids(res.target_id), "rule": ids(res.rule), "metarule": ids(res.metarule),
        "changes": pa.array(res.changes, type=pa.int64()),
        "status": pa.DictionaryArray.from_arrays(pa.array(res.status.astype(np.int32)),
                                                 pa.array(list(STATUSES), type=pa.string())),
        "text": pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32, copy=False)),
                                               pa.array(sentences, type=pa.string())),
    })


def feature_actions(state: FittedState, X, y_pred, target, model) -> pd.DataFrame:
    """``TCREx.feature_actions``: per row and feature "change", "keep" or ""."""
    X = as_frame(X)
    enc, res = lookup_rows(state, X, y_pred, target, model, by_column=True)
    schema = state.schema
    action = np.zeros((len(enc), len(schema)), dtype=np.int8)  # 0 free, 1 keep, 2 change
    for t in np.unique(res.target_id[res.rule >= 0]):
        rows = np.flatnonzero((res.target_id == t) & (res.rule >= 0))
        sol = state.all_solutions()[t]
        outside = sol.outside(res.pattern[rows])
        constrained = sol.rules.constrained(schema.numeric, schema.categorical)[res.rule[rows]]
        action[rows] = np.where(outside, 2, np.where(constrained, 1, 0))
    return pd.DataFrame({name: pd.Categorical.from_codes(action[:, i], categories=["", "keep", "change"])
                         for i, name in enumerate(schema.names)}, index=X.index)
