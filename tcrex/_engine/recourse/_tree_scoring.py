"""Candidate points scored on a tree ensemble's own trees, for the verified search (:mod:`._search`).

The search asks the model about many small batches of points (the nearest point of a rule, deeper ones, the
subsets of a change beyond the rules, one feature given back at a time): with a library model each call pays a
fixed cost (a pandas frame built, converted and checked) far above scoring its points. For a classifier whose
trees can be read (an XGBoost ``XGBClassifier`` with the objective binary:logistic or multi:softprob, a scikit-learn decision tree,
random forest or extra-trees classifier), :func:`tree_scorer` reads them into a :class:`tcrex.trees.TreeEnsemble`
and scores the points on encoded arrays through :meth:`TreeEnsemble.compiled`: the class whose score is highest, as
the library's ``predict`` decides. A point whose decision lies within a rounding error of a tie (the library sums
its trees in another order or precision) is asked of the real model, as is a point holding a category the trees
do not know: every output the scorer gives is the model's. :func:`confirmed` then asks the real model, in one call,
about every point the search recorded (the advice, the rules' nearest points, the similar cases); the caller
searches again on the real model if any answer differed, so "verified" keeps meaning "the model said so".
"""
from __future__ import annotations

import json
import weakref

import numpy as np
import pandas as pd

from ...trees import MISSING_NAN_DEFAULT, TreeArrays, TreeEnsemble
from ..base._data import Encoded
from ..base._outputs import model_feature_names
from ._search import _objects

#: A forest's decision closer than this to a tie (the gap between the two highest averaged class probabilities,
#: float64 sums of at most one per tree; equal probabilities are common) is asked of the real model. XGBoost's
#: band is computed per model (:func:`_xgb_tie`): it adds float32 leaf values one tree at a time.
FOREST_TIE = 1e-9


class TreeScorer:
    """``scorer(enc) -> outputs``: the model's outputs on encoded points, from its trees (see the module doc).
    ``columns``: per model input, ("num", slot) or ("cat", slot, table of the model's code per schema code, NaN
    where the model does not know the category)."""

    def __init__(self, ensemble: TreeEnsemble, columns: list, classes: np.ndarray, tie: float, real):
        self.ensemble, self.columns, self.classes, self.tie, self.real = ensemble, columns, classes, tie, real
        self.compiled = ensemble.compiled()
        self.points = self.asked = 0

    def matrix(self, enc: Encoded) -> tuple[np.ndarray, np.ndarray]:
        """(the model's inputs as numbers, per point whether a category the trees do not know is held)."""
        X = np.empty((len(enc), len(self.columns)), dtype=np.float64)
        unknown = np.zeros(len(enc), dtype=bool)
        for j, col in enumerate(self.columns):
            if col[0] == "num":
                X[:, j] = enc.num[:, col[1]]
            else:
                X[:, j] = col[2][enc.cat[:, col[1]]]
                unknown |= np.isnan(X[:, j])
        return X, unknown

    def __call__(self, enc: Encoded) -> np.ndarray:
        if not len(enc):
            return np.zeros(0, dtype=self.classes.dtype)
        X, unsure = self.matrix(enc)
        raw = self.compiled.raw_scores(X)
        if raw.shape[1] == 1:
            idx = (raw[:, 0] > 0).astype(np.int64)
            unsure |= np.abs(raw[:, 0]) <= self.tie
        else:
            idx = np.argmax(raw, axis=1)
            top = np.partition(raw, raw.shape[1] - 2, axis=1)[:, -2:]
            unsure |= (top[:, 1] - top[:, 0]) <= self.tie
        out = self.classes[idx]
        self.points += len(enc)
        ask = np.flatnonzero(unsure)
        if len(ask):
            self.asked += len(ask)
            out = out.astype(np.result_type(out.dtype, object) if out.dtype.kind not in "biuf" else out.dtype)
            out[ask] = np.asarray(self.real(enc.take(ask)))
        return out


def tree_scorer(model, schema, X: pd.DataFrame, as_categorical: dict, real) -> TreeScorer | None:
    """The :class:`TreeScorer` of ``model`` (fed frames shaped like ``X``: its columns, dtypes and the schema's
    ``as_categorical`` codes), or None when its trees cannot be read or its decision is not one of those above
    (then every point is asked of the model). ``real(enc)``: the model's outputs, for the points near a tie."""
    try:
        read = _read(model)
    except (ImportError, AttributeError, KeyError, TypeError, ValueError, IndexError, json.JSONDecodeError):
        return None
    if read is None:
        return None
    ensemble, classes, tie, cats = read
    names = model_feature_names(model)
    names = [str(c) for c in (names if names is not None else X.columns)]
    if len(names) != ensemble.n_features or not set(names) <= set(schema.names) or len(set(names)) != len(names):
        return None
    columns = []
    for j, name in enumerate(names):
        i = schema.names.index(name)
        f = schema.features[i]
        kind = cats[j] if cats is not None else "num"
        if not f.is_categorical:
            if kind != "num" or not pd.api.types.is_numeric_dtype(X[name].dtype):
                return None
            columns.append(("num", schema.slot[i]))
            continue
        if kind == "num" or name not in as_categorical:
            return None
        codes, dtype = as_categorical[name]
        table = np.asarray(codes, dtype=np.float64)
        names_of = kind if isinstance(kind, list) else None
        if names_of is not None:  # the model re-codes categories by their names (XGBoost >= 3.1 stores them)
            if [str(c) for c in dtype.categories] != names_of:
                return None
        table[table < 0] = np.nan
        columns.append(("cat", schema.slot[i], table))
    is_cat = np.array([c[0] == "cat" for c in columns], dtype=bool)
    for t in ensemble.trees:  # a categorical split of a numeric input, or the reverse: not this reading
        internal = t.left >= 0
        if np.any(t.categorical[internal] != is_cat[t.feature[internal]]):
            return None
    return TreeScorer(ensemble, columns, classes, tie, real)


# ------------------------------------------------------------------------------------------ readers
#: What was read from each model's trees, while the model lives: an XGBoost booster read once (its JSON parse
#: costs more than a search on a small batch), a forest as long as it holds the same trees.
_READ = weakref.WeakKeyDictionary()


def _read(model):
    xgb = type(model).__name__ == "XGBClassifier"
    owner = model.get_booster() if xgb else model
    key = (owner.num_boosted_rounds(),) if xgb else tuple(id(e.tree_) for e in getattr(model, "estimators_", [model]))
    try:
        kept = _READ.get(owner)
    except TypeError:  # not weakly referable: read every time
        kept = None
    if kept is not None and kept[0] == key:
        return kept[1]
    read = _xgboost(model) if xgb else _forest(model)
    try:
        _READ[owner] = (key, read)
    except TypeError:
        pass
    return read


def _xgboost(model):
    """(ensemble, classes, tie, per input "num" / "cat" / the category names it stores) of an XGBClassifier."""
    booster = model.get_booster()
    try:
        if model.best_iteration is not None:  # predict then uses the trees up to the best iteration only
            return None
    except AttributeError:
        pass
    doc = json.loads(bytes(booster.save_raw("json")))
    learner = doc["learner"]
    objective = learner["objective"]["name"]
    if objective not in ("binary:logistic", "multi:softprob"):  # (multi:softmax's predict gives its own dtype)
        return None
    gb = learner["gradient_booster"]
    if gb["name"] != "gbtree":
        return None
    mp = learner["learner_model_param"]
    n_features = int(mp["num_feature"])
    n_class = int(mp.get("num_class", 0))
    n_groups = n_class if objective.startswith("multi:") else 1
    body = gb["model"]
    types = learner.get("feature_types") or ["float"] * n_features
    cats = ["cat" if t == "c" else "num" for t in types]
    stored = body.get("cats")
    if isinstance(stored, dict) and stored.get("enc"):
        for j, enc in enumerate(stored["enc"]):
            if cats[j] == "cat" and enc.get("values") is not None and len(enc.get("offsets", [])) > 1:
                raw = bytes(int(v) for v in enc["values"])
                off = [int(o) for o in enc["offsets"]]
                cats[j] = [raw[a:b].decode("utf-8") for a, b in zip(off[:-1], off[1:])]
    info = body["tree_info"]
    trees = []
    for k, t in enumerate(body["trees"]):
        left = np.asarray(t["left_children"], dtype=np.int64)
        right = np.asarray(t["right_children"], dtype=np.int64)
        cond = np.asarray(t["split_conditions"], dtype=np.float32)
        internal = left >= 0
        categorical = np.zeros(len(left), dtype=bool)
        stype = np.asarray(t.get("split_type", [0] * len(left)), dtype=np.int64)
        categorical[internal] = stype[internal] == 1
        left_categories = {}
        cat_nodes = [int(c) for c in t.get("categories_nodes", [])]
        seg, size, allc = t.get("categories_segments", []), t.get("categories_sizes", []), t.get("categories", [])
        for c, node in enumerate(cat_nodes):
            right_set = {int(v) for v in allc[int(seg[c]):int(seg[c]) + int(size[c])]}
            feature = int(t["split_indices"][node])
            n_known = len(cats[feature]) if isinstance(cats[feature], list) else 0
            top = max(n_known or 1 << 10, max(right_set, default=-1) + 1)
            # a category in the node's set goes right, every other one left (XGBoost's partition splits)
            left_categories[node] = set(range(top)) - right_set
        threshold = np.where(internal, np.nextafter(cond, np.float32(-np.inf)), 0.0).astype(np.float64)
        trees.append(TreeArrays(
            left=np.where(internal, left, -1), right=np.where(internal, right, -1),
            feature=np.where(internal, np.asarray(t["split_indices"], dtype=np.int64), 0),
            threshold=threshold, value=np.where(internal, 0.0, cond.astype(np.float64)),
            default_left=np.asarray(t["default_left"], dtype=bool) & internal,
            missing=np.full(len(left), MISSING_NAN_DEFAULT, dtype=np.int64), categorical=categorical,
            left_categories=left_categories, group=int(info[k]), nan_categories_default=True))
    ensemble = TreeEnsemble(trees=trees, n_features=n_features, n_groups=n_groups, dtype="float32")
    ensemble.bias = np.asarray(_xgb_bias(booster, ensemble, n_features), dtype=np.float64)
    classes = np.arange(max(n_class, 2), dtype=np.int64)
    if not np.array_equal(np.asarray(model.classes_), classes):
        return None
    return ensemble, classes, _xgb_tie(ensemble), cats


def _xgb_bias(booster, ensemble: TreeEnsemble, n_features: int) -> np.ndarray:
    """The margin the booster adds to its trees' sum (its base score, read as XGBoost reads it): its margin on a
    row of missing values less the trees' sum there."""
    row = np.full((1, n_features), np.nan, dtype=np.float32)
    margin = np.asarray(booster.inplace_predict(row, predict_type="margin", validate_features=False),
                        dtype=np.float64).reshape(1, -1)
    return (margin - ensemble.raw_scores(row))[0]


def _xgb_tie(ensemble: TreeEnsemble) -> float:
    """A bound on how far XGBoost's margin (or the gap between two class margins) can lie from the float64 sum of
    the same leaves: each float32 addition errs by at most 2**-24 of a partial sum, and no partial sum exceeds the
    base score plus every tree's largest leaf; plus the float32 logistic's rounding of margins near 0 to 0.5."""
    largest = np.zeros(ensemble.n_groups)
    for t in ensemble.trees:
        leaf = t.left < 0
        largest[t.group] += float(np.abs(t.value[leaf]).max(initial=0.0))
    bias = np.abs(ensemble.bias) if ensemble.bias is not None else np.zeros(ensemble.n_groups)
    per_group = len(ensemble.trees) // max(ensemble.n_groups, 1) + 1
    bound = float(np.max((bias + largest) * per_group * 2.0 ** -24))
    return 2 * bound + 1e-6


def _forest(model):
    """(ensemble, classes, tie, None) of a scikit-learn decision tree, random forest or extra-trees classifier."""
    if not type(model).__module__.startswith("sklearn."):
        return None  # scikit-learn is imported only for its own models: its import costs a CLI ~1.7 s of CPU
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier  # noqa: PLC0415 - lazy, see above
    from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier  # noqa: PLC0415

    if type(model) in (DecisionTreeClassifier, ExtraTreeClassifier):
        estimators = [model]
    elif type(model) in (RandomForestClassifier, ExtraTreesClassifier):
        estimators = list(model.estimators_)
    else:
        return None
    classes = np.asarray(model.classes_)
    if classes.ndim != 1 or len(classes) < 2 or classes.dtype.kind not in "biuO":
        return None
    k = len(classes)
    trees = []
    for est in estimators:
        tr = est.tree_
        if tr.n_outputs != 1:
            return None
        value = tr.value[:, 0, :].astype(np.float64)
        value = value / np.maximum(value.sum(axis=1, keepdims=True), 1e-300)  # the tree's class probabilities
        internal = tr.children_left >= 0
        common = dict(left=np.asarray(tr.children_left, dtype=np.int64),
                      right=np.asarray(tr.children_right, dtype=np.int64),
                      feature=np.where(internal, tr.feature, 0).astype(np.int64),
                      threshold=np.where(internal, tr.threshold, 0.0).astype(np.float64),
                      default_left=np.asarray(tr.missing_go_to_left, dtype=bool) & internal,
                      missing=np.full(tr.node_count, MISSING_NAN_DEFAULT, dtype=np.int64),
                      categorical=np.zeros(tr.node_count, dtype=bool))
        if k == 2:  # one score: class 1's probability less class 0's (argmax takes class 0 on a tie)
            trees.append(TreeArrays(value=value[:, 1] - value[:, 0], **common))
        else:
            trees.extend(TreeArrays(value=value[:, c], group=c, **common) for c in range(k))
    ensemble = TreeEnsemble(trees=trees, n_features=int(model.n_features_in_), n_groups=1 if k == 2 else k,
                            average=True, dtype="float32")
    return ensemble, classes, FOREST_TIE, None


def confirmed(rec, real) -> bool:
    """Whether the real model gives, at every point the search recorded (each row's advice or similar case, the
    rules' nearest points it reports, the paper rule's nearest point), the output recorded there (one call)."""
    parts = []
    for enc, rows, outputs in ((rec.point, np.flatnonzero(rec.found), rec.output),
                               (rec.boundary, np.flatnonzero(rec.boundary_checked), rec.boundary_output),
                               (rec.nearest, np.flatnonzero(rec.nearest_output != None), rec.nearest_output)):  # noqa: E711
        if len(rows):
            parts.append((enc.take(rows), outputs[rows]))
    if not parts:
        return True
    points = Encoded(np.concatenate([p[0].num for p in parts]), np.concatenate([p[0].cat for p in parts]))
    said = np.concatenate([np.asarray(p[1], dtype=object) for p in parts])
    out = _objects(real(points))
    return bool(np.all(out == said))
