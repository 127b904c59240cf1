"""Model-verified recourse, as frames and local explanations (issues #11, #24).

The search itself is :mod:`tcrex._engine.recourse._search`: for every row that needs recourse, a point that is exactly the advice
(the features it names, at the values it states) and that the model confirms, or a minimal change beyond the
rules, or a similar real case that is never counted as verified. This module feeds it the model (points decoded
to frames with the dtypes the model was given) and turns its result into ``counterfactuals(verify=True)``'s
columns, ``explain_one``'s verdict fields and the sentence that states what was verified.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..base._data import Encoded, _native, as_frame, categorical_codes, conform_frame
from ...errors import ModelError
from ..base._outputs import predict
from ._search import Recourse, _objects, find_recourse, first_rows, group_codes, reference_rows
from ._tree_scoring import confirmed, tree_scorer
from ..explaining._lookup import RowLookup, change_keep, conditions_dict
from ..fitting._state import FittedState, rule_id
from ...vocabulary import ALREADY_IN_TARGET, EXAMPLE, NEXT_RULE, RECOURSE_OUTCOMES, SEARCHED, SOURCES
from ...text import box_conditions, class_label, status_sentence, titled, value_text, verified_sentence

_SRC = {s: i for i, s in enumerate(SOURCES)}

class _Model:
    def __init__(self, state: FittedState, model, X):
        names = set(state.schema.names)
        self.schema, self.model = state.schema, model
        self.X = X if len(X.columns) == len(names) else X[[c for c in X.columns if str(c) in names]]
        self.calls = 0
        # categorical features the model receives as pandas categories: points are built with those codes directly
        # (casting decoded values costs a lookup of every value per call)
        self.as_categorical = {}
        for c in self.X.columns:
            dtype = self.X[c].dtype
            if isinstance(dtype, pd.CategoricalDtype) and str(c) in names:
                f = state.schema.features[state.schema.names.index(str(c))]
                if not f.is_categorical:
                    continue
                codes = categorical_codes(f.categories, dtype)
                if codes is not None:
                    self.as_categorical[f.name] = (codes, dtype)

    def outputs(self, enc: Encoded) -> np.ndarray:
        if len(enc) == 0:
            return np.zeros(0, dtype=object)
        self.calls += 1
        frame = conform_frame(self.schema.decode(enc, pd.RangeIndex(len(enc)), self.as_categorical), self.X,
                              fresh=True)
        return predict(self.model, frame)



def wants_verify(state: FittedState, verify, model) -> bool:
    """``verify=None`` means: verify whenever a model is known (passed, or kept from ``fit``)."""
    known = model is not None or state.model is not None
    if verify is None:
        return known
    if verify and not known:
        raise ModelError("verify=True needs the model: pass model= (or fit with the model rather than y_pred)")
    return bool(verify)


def source_column(source: np.ndarray) -> pd.Categorical:
    return pd.Categorical.from_codes(source, categories=list(SOURCES))


#: Whether the search scores candidates on a tree ensemble's own trees (:mod:`._tree_scoring`); False keeps every
#: candidate a call of the model (the benchmarks time both in one process).
tree_scoring = True


def verify_points(state: FittedState, X: pd.DataFrame, enc: Encoded, res: RowLookup, model, reference=None) -> Recourse:
    """The recourse of every row (:func:`tcrex._engine.recourse._search.find_recourse`) on ``model``; ``reference``: rows for
    the search beyond the rules and for similar cases (default: the fit rows in memory)."""
    m = _Model(state, model, X)
    ref_enc = None
    if reference is not None:
        ref_enc = state.schema.encode(as_frame(reference))

    # the fit rows' outputs are this model's when the explainer was fitted with this very model
    own = state.model is not None and model is state.model

    def ref(call):
        return lambda: reference_rows(state, ref_enc, call, state.fit_y if own else None)

    # candidates scored on the model's own trees where they can be read, every recorded point then confirmed by
    # the model itself in one call; any disagreement and the search runs again on the model alone
    fast = tree_scorer(model, state.schema, m.X, m.as_categorical, m.outputs) if tree_scoring else None
    if fast is not None:
        rec = find_recourse(state, enc, res, fast, reference=ref(fast))
        if confirmed(rec, m.outputs):
            rec.n_tree_points, rec.n_model_calls = fast.points, m.calls
            return rec
    return find_recourse(state, enc, res, m.outputs, reference=ref(m.outputs))


def sentences(state: FittedState, rec: Recourse, X: pd.DataFrame, res: RowLookup, class_names=None) -> list:
    """The sentence of each row: the verified point's changes, exactly (see :func:`tcrex.text.verified_sentence`).

    A sentence depends only on the row's target, recommended and paper rules, source, the features its point
    changes with the texts of their values (and of the rule's nearest values) and the model's verdict at the
    nearest point; rows equal in all of these share one sentence, built once from the group's first row (on a
    batch most rows repeat one of a few hundred or thousand). Rows are grouped on integer codes, without a pass
    of Python over the rows."""
    n = len(X)
    out = np.full(n, status_sentence(ALREADY_IN_TARGET), dtype=object)
    rows = np.flatnonzero(res.target_id >= 0)
    if not len(rows):
        return out.tolist()
    schema = state.schema
    changed = rec.changed[rows]
    has_rule = rec.rule[rows] >= 0
    target, rule, paper, source = res.target_id[rows], rec.rule[rows], res.rule[rows], \
        rec.source[rows]
    verdict, _ = pd.factorize(np.asarray(rec.nearest_output[rows], dtype=object))  # None -> -1
    columns = [target, rule, paper, source, verdict]
    texts = {}  # (feature, point or nearest) -> (text code per row, -1 where not said; the texts)
    for i, f in enumerate(schema.features):
        for which, enc, said in (("value", rec.point, changed[:, i]), ("nearest", rec.nearest, changed[:, i] & has_rule)):
            if said.any():
                values = (enc.cat if f.is_categorical else enc.num)[rows, schema.slot[i]]
                texts[(i, which)] = code, _ = _text_codes(f, values, said)
                columns.append(code)
    group = group_codes(columns)
    first = first_rows(group)
    names = schema.names
    titles = [f.title for f in schema.features]
    conds_of, ids, described = {}, {}, {}

    def id_of(t, r):
        if (t, r) not in ids:
            ids[(t, r)] = rule_id(state, t, r) if r >= 0 else None
        return ids[(t, r)]

    said = []
    for k in first:
        t, r, src, i = int(target[k]), int(rule[k]), int(source[k]), rows[k]
        sol = state.all_solutions()[t]
        if r >= 0 and (t, r) not in conds_of:
            conds_of[(t, r)] = box_conditions(state.schema, sol.rules, r)
        if t not in described:
            described[t] = sol.target.describe(class_names)
        conds = conds_of.get((t, r), {})
        changes = []
        for f in np.flatnonzero(changed[k]):
            code, shown = texts[(f, "value")]
            near = texts.get((f, "nearest"))
            changes.append(titled({"feature": names[f], "value": shown[code[k]],
                                   "condition": conds[f]["text"] if f in conds else None,
                                   "nearest": near[1][near[0][k]] if r >= 0 else None}, titles[f]))
        keeps = [titled({"feature": names[f], "condition": c["text"]}, titles[f]) for f, c in conds.items()
                 if not changed[k, f]]
        said.append(verified_sentence(SOURCES[src] if src >= 0 else None, changes, keeps,
                                      rule_id=id_of(t, r), paper_rule_id=id_of(t, int(paper[k])),
                                      nearest_output=_named(rec.nearest_output[i], class_names), target=described[t],
                                      reference_rows=rec.searched_beyond, max_changes=state.max_changes))
    out[rows] = np.asarray(said, dtype=object)[group]
    return out.tolist()


def _text_codes(feature, values: np.ndarray, said: np.ndarray):
    """(per value, the code of its text in a sentence, -1 where not ``said``; the texts): encoded numbers or
    category codes of ``feature``; values printed alike share a code, so rows group exactly as their sentences
    read (:func:`tcrex.text.output_text` of the decoded value)."""
    uniq, inverse = np.unique(values[said], return_inverse=True)
    shown = [value_text(_native(feature.categories[int(v)] if feature.is_categorical else float(v)), feature.labels)
             for v in uniq]
    text_code, distinct = pd.factorize(np.asarray(shown, dtype=object))
    code = np.full(len(values), -1, dtype=np.int64)
    code[said] = text_code[inverse.reshape(-1)]
    return code, list(distinct)


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


def changed_names(changed: np.ndarray, names: np.ndarray) -> np.ndarray:
    """Per row, the tuple of the names of its changed features (``changed``: (rows, features) bool), one tuple
    built per distinct pattern (a batch repeats a few dozen)."""
    out = np.empty(len(changed), dtype=object)
    if not changed.shape[1]:
        out[:] = [()] * len(changed)
        return out
    group = group_codes(changed.T)
    first = first_rows(group)
    tuples = np.empty(len(first), dtype=object)
    tuples[:] = [tuple(names[changed[i]]) for i in first]
    out[:] = tuples[group]
    return out


def _ids_or_missing(values: np.ndarray) -> pd.arrays.IntegerArray:
    values = np.asarray(values, dtype=np.int64)
    return pd.arrays.IntegerArray(np.maximum(values, 0), values < 0)


def verified_frame(state: FittedState, X: pd.DataFrame, enc: Encoded, res: RowLookup, model, reference=None, text=True,
                   class_names=None) -> pd.DataFrame:
    """``counterfactuals(verify=True)``: the point of each row and what was verified (see its docstring)."""
    rec = verify_points(state, X, enc, res, model, reference)
    out = state.schema.decode(rec.point, X.index)
    out.loc[rec.needing & ~rec.found] = np.nan
    out["valid"] = pd.arrays.BooleanArray(rec.found.copy(), ~rec.needing)
    out["source"] = source_column(np.where(rec.found, rec.source, -1))
    out["recourse"] = pd.Categorical.from_codes(recourse_codes(rec), categories=list(RECOURSE_OUTCOMES))
    names = np.asarray(state.schema.names, dtype=object)
    out["changed"] = changed_names(rec.changed, names)
    out["n_changes"] = rec.changed.sum(axis=1).astype(np.int64)
    out["rule"] = _ids_or_missing(np.where(rec.needing, res.rule, -1))
    out["recommended_rule"] = _ids_or_missing(np.where(rec.verified, rec.rule, -1))
    out["output"] = pd.Series(rec.output, index=X.index, dtype=object)
    if text:
        out["text"] = sentences(state, rec, X, res, class_names=class_names)
    out.attrs["notes"] = list(rec.notes)
    return out


def verify_one(state: FittedState, exp, X: pd.DataFrame, enc: Encoded, res: RowLookup, model, reference=None, class_names=None) -> None:
    """Fill the verification fields of the LocalExplanation of one row that needs recourse: the point, the
    sentence and the changes become what was verified; the paper's sentence stays in ``paper_text``."""
    rec = verify_points(state, X, enc, res, model, reference)
    t = int(res.target_id[0])
    exp.paper_text = exp.text
    exp.recourse = RECOURSE_OUTCOMES[recourse_codes(rec)[0]]
    exp.notes = list(rec.notes)
    if rec.boundary_checked[0]:
        exp.boundary_point = {k: _native(v) for k, v in state.schema.decode(rec.boundary, X.index).iloc[0].items()}
        exp.boundary_valid, exp.boundary_output = bool(rec.boundary_valid[0]), rec.boundary_output[0]
    exp.text = sentences(state, rec, X, res, class_names=class_names)[0]
    source = SOURCES[rec.source[0]] if rec.found[0] else None
    point = {k: _native(v) for k, v in state.schema.decode(rec.point, X.index).iloc[0].items()}
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
    names = state.schema.names
    r = int(rec.rule[0])
    exp.changed = [names[f] for f in np.flatnonzero(rec.changed[0])]
    if r >= 0:
        sol = state.all_solutions()[t]
        exp.recommended_rule, exp.recommended_rule_id = r, rule_id(state, t, r)
        exp.recommended_rule_conditions = conditions_dict(state.schema, sol.rules, r)
        change, keep = change_keep(state.schema, sol, r, rec.changed[0])
    else:
        change = [titled({"feature": f, "condition": None}, state.schema.features[state.schema.index(f)].title)
                  for f in exp.changed]
        keep = []
    nearest = state.schema.decode(rec.nearest, X.index).iloc[0]
    for item in change:
        item["current"] = _native(current[item["feature"]])
        item["value"] = point[item["feature"]]
        if r >= 0 and source in (SEARCHED, NEXT_RULE):
            item["nearest"] = _native(nearest[item["feature"]])
    for item in keep:
        item["current"] = _native(current[item["feature"]])
    exp.changes, exp.keeps, exp.n_changes = change, keep, len(change)
    if exp.example is not None:
        out = _Model(state, model, X).outputs(state.schema.encode(pd.DataFrame([exp.example])))
        exp.example_output = _objects(out)[0]
        exp.example_valid = bool(state.all_solutions()[t].target.contains(out)[0])
