"""Model-verified recourse, as frames and local explanations (issues #11, #24).

The search itself is :mod:`tcrex._recourse`: for every row that needs recourse, a point that is exactly the advice
(the features it names, at the values it states) and that the model confirms, or a minimal change beyond the
rules, or a similar real case that is never counted as verified. This module feeds it the model (points decoded
to frames with the dtypes the model was given) and turns its result into ``counterfactuals(verify=True)``'s
columns, ``explain_one``'s verdict fields and the sentence that states what was verified.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._data import Encoded, _native, as_frame
from ._outputs import predict
from ._recourse import Recourse, _objects, find_recourse, reference_rows
from .vocabulary import ALREADY_IN_TARGET, EXAMPLE, NEXT_RULE, RECOURSE_OUTCOMES, SEARCHED, SOURCES
from .text import class_label, output_text, status_sentence, verified_sentence

_SRC = {s: i for i, s in enumerate(SOURCES)}

def frame_like(points: pd.DataFrame, X: pd.DataFrame) -> pd.DataFrame:
    """Points with the column order and dtypes (categorical, bool, numeric) of X, as the model expects them."""
    points = points[[str(c) for c in X.columns]] if list(points.columns) != list(X.columns) else points.copy()
    points.columns = X.columns
    for c in X.columns:
        dtype = X[c].dtype
        col = points[c]
        if col.dtype == dtype:
            continue
        try:
            if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
                points[c] = col.astype(dtype)
            elif pd.api.types.is_integer_dtype(dtype) and pd.api.types.is_numeric_dtype(col.dtype) \
                    and np.all(np.mod(col.to_numpy(dtype=np.float64), 1) == 0):
                points[c] = col.astype(dtype)
            elif pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_numeric_dtype(col.dtype):
                points[c] = pd.to_numeric(col)
        except (TypeError, ValueError):
            pass
    return points


class _Model:
    def __init__(self, ex, model, X):
        names = set(ex.schema_.names)
        self.ex, self.model = ex, model
        self.X = X if len(X.columns) == len(names) else X[[c for c in X.columns if str(c) in names]]
        self.calls = 0
        # categorical features the model receives as pandas categories: points are built with those codes directly
        # (casting decoded values costs a lookup of every value per call)
        self.as_categorical = {}
        for c in self.X.columns:
            dtype = self.X[c].dtype
            if isinstance(dtype, pd.CategoricalDtype) and str(c) in names:
                f = ex.schema_.features[ex.schema_.names.index(str(c))]
                if not f.is_categorical:
                    continue
                try:  # the cast frame_like would make, once per category instead of once per point
                    codes = pd.Series(np.asarray(f.categories, dtype=object)).astype(dtype).cat.codes
                except (TypeError, ValueError):
                    continue
                self.as_categorical[f.name] = (np.asarray(codes, dtype=np.int64), dtype)

    def outputs(self, enc: Encoded) -> np.ndarray:
        if len(enc) == 0:
            return np.zeros(0, dtype=object)
        self.calls += 1
        frame = frame_like(self.ex._decode(enc, pd.RangeIndex(len(enc)), self.as_categorical), self.X)
        return predict(self.model, frame)



def wants_verify(ex, verify, model) -> bool:
    """``verify=None`` means: verify whenever a model is known (passed, or kept from ``fit``)."""
    known = model is not None or getattr(ex, "model_", None) is not None
    if verify is None:
        return known
    if verify and not known:
        from .errors import ModelError
        raise ModelError("verify=True needs the model: pass model= (or fit with the model rather than y_pred)")
    return bool(verify)


def source_column(source: np.ndarray) -> pd.Categorical:
    return pd.Categorical.from_codes(source, categories=list(SOURCES))


def verify_points(ex, X: pd.DataFrame, enc: Encoded, res: dict, model, reference=None) -> Recourse:
    """The recourse of every row (:func:`tcrex._recourse.find_recourse`) on ``model``; ``reference``: rows for
    the search beyond the rules and for similar cases (default: the fit rows in memory)."""
    m = _Model(ex, model, X)
    ref_enc = None
    if reference is not None:
        ref_enc = ex.schema_.encode(as_frame(reference))

    # the fit rows' outputs are this model's when the explainer was fitted with this very model
    own = getattr(ex, "model_", None) is not None and model is ex.model_

    def ref():
        return reference_rows(ex, ref_enc, m.outputs, ex._fit_y if own else None)

    return find_recourse(ex, enc, res, m.outputs, reference=ref)


def _cell(value):
    return output_text(_native(value))


def _decoded(ex, enc: Encoded, index) -> np.ndarray:
    return ex._decode(enc, index).to_numpy(dtype=object)


def sentences(ex, rec: Recourse, X: pd.DataFrame, res: dict, rows=None, class_names=None, point=None) -> list:
    """The sentence of each row (or of ``rows``): the verified point's changes, exactly (see
    :func:`tcrex.text.verified_sentence`). Rows with the same rule, changes, values and verdict share one sentence,
    built once (on a batch most rows repeat one of a few hundred)."""
    rows = np.arange(len(X)) if rows is None else np.asarray(rows)
    names = ex.schema_.names
    if point is None:  # the points as feature values (the caller may have decoded them already)
        point = _decoded(ex, rec.point.take(rows), X.index[rows])
    nearest = _decoded(ex, rec.nearest.take(rows), X.index[rows])
    conds_of, ids, texts, cells = {}, {}, {}, {}

    def cell(v):
        key = (type(v), v)
        if key not in cells:
            cells[key] = _cell(v)
        return cells[key]

    def rule_id(t, r):
        if (t, r) not in ids:
            ids[(t, r)] = ex.rule_id(t, r) if r >= 0 else None
        return ids[(t, r)]

    out = []
    for k, i in enumerate(rows):
        t = int(res["target"][i])
        if t < 0:
            out.append(status_sentence(ALREADY_IN_TARGET))
            continue
        changed = np.flatnonzero(rec.changed[i])
        r, paper, src = int(rec.rule[i]), int(res["rule"][i]), int(rec.source[i])
        values = tuple(cell(point[k, f]) for f in changed)
        near = tuple(cell(nearest[k, f]) for f in changed) if r >= 0 else None
        verdict = _named(rec.nearest_output[i], class_names)
        key = (t, r, paper, src, tuple(changed), values, near, verdict)
        if key not in texts:
            sol = ex._all_targets[t]
            if r >= 0 and (t, r) not in conds_of:
                conds_of[(t, r)] = ex._conditions(sol.rules, r)
            conds = conds_of.get((t, r), {})
            changes = [{"feature": names[f], "value": v, "condition": conds[f]["text"] if f in conds else None,
                        "nearest": near[j] if near is not None else None}
                       for j, (f, v) in enumerate(zip(changed, values))]
            keeps = [{"feature": names[f], "condition": c["text"]} for f, c in conds.items() if not rec.changed[i, f]]
            texts[key] = verified_sentence(SOURCES[src] if src >= 0 else None, changes, keeps,
                                           rule_id=rule_id(t, r), paper_rule_id=rule_id(t, paper),
                                           nearest_output=verdict, target=sol.target.describe(class_names))
        out.append(texts[key])
    return out


def _named(output, class_names):
    """A model output as the sentence says it: its class name when ``class_names`` knows it."""
    if output is None or class_names is None:
        return output
    return class_label(output, class_names) or output


def recourse_codes(rec: Recourse) -> np.ndarray:
    """Per row the index into RECOURSE_OUTCOMES (-1 for rows that do not need recourse)."""
    similar = rec.found & (rec.source == _SRC[EXAMPLE])
    code = np.where(rec.verified, 0, np.where(similar, 1, 2))
    return np.where(rec.needing, code, -1)


def _ids_or_missing(values: np.ndarray) -> pd.arrays.IntegerArray:
    values = np.asarray(values, dtype=np.int64)
    return pd.arrays.IntegerArray(np.maximum(values, 0), values < 0)


def verified_frame(ex, X: pd.DataFrame, enc: Encoded, res: dict, model, reference=None, text=True,
                   class_names=None) -> pd.DataFrame:
    """``counterfactuals(verify=True)``: the point of each row and what was verified (see its docstring)."""
    rec = verify_points(ex, X, enc, res, model, reference)
    out = ex._decode(rec.point, X.index)
    out.loc[rec.needing & ~rec.found] = np.nan
    out["valid"] = pd.arrays.BooleanArray(rec.found.copy(), ~rec.needing)
    out["source"] = source_column(np.where(rec.found, rec.source, -1))
    out["recourse"] = pd.Categorical.from_codes(recourse_codes(rec), categories=list(RECOURSE_OUTCOMES))
    names = np.asarray(ex.schema_.names, dtype=object)
    out["changed"] = [tuple(names[m]) for m in rec.changed]
    out["n_changes"] = rec.changed.sum(axis=1).astype(np.int64)
    out["rule"] = _ids_or_missing(np.where(rec.needing, res["rule"], -1))
    out["recommended_rule"] = _ids_or_missing(np.where(rec.verified, rec.rule, -1))
    out["output"] = pd.Series(rec.output, index=X.index, dtype=object)
    if text:
        out["text"] = sentences(ex, rec, X, res, class_names=class_names,
                                point=out[list(ex.schema_.names)].to_numpy(dtype=object))
    out.attrs["notes"] = list(rec.notes)
    return out


def verify_one(ex, exp, X: pd.DataFrame, enc: Encoded, res: dict, model, reference=None, class_names=None) -> None:
    """Fill the verification fields of the LocalExplanation of one row that needs recourse: the point, the
    sentence and the changes become what was verified; the paper's sentence stays in ``paper_text``."""
    rec = verify_points(ex, X, enc, res, model, reference)
    t = int(res["target"][0])
    exp.paper_text = exp.text
    exp.recourse = RECOURSE_OUTCOMES[recourse_codes(rec)[0]]
    exp.notes = list(rec.notes)
    if rec.boundary_checked[0]:
        exp.boundary_point = {k: _native(v) for k, v in ex._decode(rec.boundary, X.index).iloc[0].items()}
        exp.boundary_valid, exp.boundary_output = bool(rec.boundary_valid[0]), rec.boundary_output[0]
    exp.text = sentences(ex, rec, X, res, class_names=class_names)[0]
    source = SOURCES[rec.source[0]] if rec.found[0] else None
    point = {k: _native(v) for k, v in ex._decode(rec.point, X.index).iloc[0].items()}
    current = X.iloc[0]
    if source == EXAMPLE:  # a similar case: shown as the example, never as the verified point
        exp.example, exp.example_index = point, None
        exp.example_output, exp.example_valid = rec.output[0], True
        exp.counterfactual_valid, exp.counterfactual_source = False, None
        return
    if source is None:
        exp.counterfactual_valid, exp.counterfactual_source = False, None
        return
    exp.counterfactual = point
    exp.counterfactual_valid, exp.counterfactual_output, exp.counterfactual_source = True, rec.output[0], source
    names = ex.schema_.names
    r = int(rec.rule[0])
    exp.changed = [names[f] for f in np.flatnonzero(rec.changed[0])]
    if r >= 0:
        sol = ex._all_targets[t]
        exp.recommended_rule, exp.recommended_rule_id = r, ex.rule_id(t, r)
        exp.recommended_rule_conditions = ex._conditions_dict(sol.rules, r)
        change, keep = ex._change_keep(sol, r, rec.changed[0])
    else:
        change = [{"feature": f, "condition": None} for f in exp.changed]
        keep = []
    nearest = ex._decode(rec.nearest, X.index).iloc[0]
    for item in change:
        item["current"] = _native(current[item["feature"]])
        item["value"] = point[item["feature"]]
        if r >= 0 and source in (SEARCHED, NEXT_RULE):
            item["nearest"] = _native(nearest[item["feature"]])
    for item in keep:
        item["current"] = _native(current[item["feature"]])
    exp.changes, exp.keeps, exp.n_changes = change, keep, len(change)
    if exp.example is not None:
        out = _Model(ex, model, X).outputs(ex.schema_.encode(pd.DataFrame([exp.example])))
        exp.example_output = _objects(out)[0]
        exp.example_valid = bool(ex._all_targets[t].target.contains(out)[0])
