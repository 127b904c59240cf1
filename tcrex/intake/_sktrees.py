"""Structural checks of the trees inside a scikit-learn model loaded from a .skops file, before anything predicts.

scikit-learn's tree code (``sklearn.tree._tree.Tree``, the gradient-boosting stage predictor, the histogram
gradient-boosting ``TreePredictor``) walks its node arrays in Cython without bounds checks: a child index outside
the tree crashes the process (segmentation fault), a child pointing back up loops for ever, a split on a feature
index beyond the input reads other memory and silently returns predictions. skops restores those arrays from the
file as they are. So, as for XGBoost (``_xgboost.py``), every tree reachable from the loaded object is checked
here: node arrays of consistent lengths, children in range, every node reached exactly once from the root (no
loops, no shared branches), split features in ``[0, n_features)``, thresholds that are numbers, categorical split
records inside their bitset arrays; and the ensembles that call their trees without input checks (forests,
gradient boosting, histogram gradient boosting) hold trees built for exactly their number of inputs and outputs.
The KD and ball trees of k-nearest neighbours (implicit children ``2i+1``, ``2i+2``, a point index into the
training data) are checked the same way.

The objects are only read, never called: constructing them (``Tree.__setstate__``) copies the arrays and checks
their dtypes, and reading is made safe by checking ``node_count`` against the allocated ``capacity`` first.
"""
from __future__ import annotations

import functools
import types

import numpy as np

from ..errors import ModelError

MAX_FEATURES = 1_000_000
#: Bits per categorical bitset row in histogram gradient boosting (8 x uint32: category codes 0..255).
_BITSET_WIDTH = 8


#: Objects whose attributes are code, not fitted state: never walked into.
_NOT_STATE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              functools.partial)


class _Bad(Exception):
    """Internal: a structural problem, turned into a ModelError by :func:`check_trees`."""


def check_trees(obj) -> int:
    """Check every tree inside ``obj`` (any loaded estimator, pipeline, ...); return how many were checked.

    Raises :class:`tcrex.errors.ModelError` naming the first problem found.
    """
    try:
        return _walk(obj)
    except _Bad as exc:
        raise ModelError(f"the scikit-learn model in this .skops file is damaged or was edited by hand: {exc}") \
            from None
    except (TypeError, ValueError, AttributeError, IndexError, OverflowError, MemoryError) as exc:
        raise ModelError("the scikit-learn model in this .skops file is damaged or was edited by hand: its trees "
                         f"cannot be read ({type(exc).__name__})") from None


def _walk(root) -> int:
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.ensemble._forest import BaseForest
    from sklearn.ensemble._gb import BaseGradientBoosting
    from sklearn.neighbors import BallTree, KDTree
    from sklearn.tree import BaseDecisionTree
    from sklearn.tree._tree import Tree

    hist = (HistGradientBoostingClassifier, HistGradientBoostingRegressor)
    binary = (KDTree, BallTree)
    seen: set[int] = set()
    checked = 0
    stack = [(root, type(root).__name__)]
    while stack:
        obj, where = stack.pop()
        if id(obj) in seen or obj is None or isinstance(obj, (str, bytes, int, float, bool, np.generic)):
            continue
        seen.add(id(obj))
        if isinstance(obj, Tree):
            _check_tree(obj, obj.n_features, where)
            checked += 1
            continue
        if isinstance(obj, BaseDecisionTree):
            tree = _check_decision_tree(obj, where)
            if tree is not None:
                seen.add(id(tree))
                checked += 1
        elif isinstance(obj, BaseForest):
            _check_forest(obj, where)
        elif isinstance(obj, BaseGradientBoosting):
            _check_gradient_boosting(obj, where)
        elif isinstance(obj, hist):
            checked += _check_hist(obj, where)
        elif isinstance(obj, binary):
            _check_binary_tree(obj, where)
            checked += 1
            continue
        if isinstance(obj, dict):
            stack.extend((v, f"{where}[{k!r}]") for k, v in obj.items())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(obj))
        elif isinstance(obj, np.ndarray):
            if obj.dtype == object:
                stack.extend((v, f"{where}[{i}]") for i, v in enumerate(obj.ravel().tolist()))
        elif hasattr(obj, "__dict__") and not isinstance(obj, _NOT_STATE):
            stack.extend((v, f"{where}.{k}") for k, v in vars(obj).items())
    return checked


# ---------------------------------------------------------------------------------------------- helpers
def _n_features_in(est, where: str) -> int | None:
    n = getattr(est, "n_features_in_", None)
    if n is None:
        return None
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or not 1 <= int(n) <= MAX_FEATURES:
        raise _Bad(f"{where}: n_features_in_ = {n!r} is not a number of inputs")
    return int(n)


def _reached_once(left: np.ndarray, right: np.ndarray, internal: np.ndarray, what: str) -> None:
    """Children in range were checked; now walk from the root level by level: every node exactly once."""
    n = len(left)
    visits = np.zeros(n, dtype=np.int64)
    visits[0] = 1
    frontier = np.array([0], dtype=np.int64)
    for _ in range(n):
        frontier = frontier[internal[frontier]]
        if not len(frontier):
            break
        children = np.concatenate([left[frontier], right[frontier]])
        np.add.at(visits, children, 1)
        if visits[children].max() > 1:
            raise _Bad(f"{what}: a node is reached twice from the root (the tree has a loop or a shared branch)")
        frontier = children
    if visits.min() < 1:
        raise _Bad(f"{what}: node {int(np.flatnonzero(visits < 1)[0])} cannot be reached from the root")


def _check_nodes(left, right, feature, threshold, is_leaf, n_features: int, what: str) -> np.ndarray:
    """The checks every tree format shares; returns the mask of internal (split) nodes."""
    n = len(left)
    internal = ~is_leaf
    if internal.any():
        kids = np.concatenate([left[internal], right[internal]])
        if kids.min() < 1 or kids.max() >= n:
            bad = int(kids[(kids < 1) | (kids >= n)][0])
            raise _Bad(f"{what}: a child index ({bad}) points outside the tree's {n} nodes")
        used = feature[internal]
        if used.min() < 0 or used.max() >= n_features:
            bad = int(used[(used < 0) | (used >= n_features)][0])
            raise _Bad(f"{what}: a split uses feature index {bad}, but the model has {n_features} input(s)")
        if np.isnan(threshold[internal]).any():
            raise _Bad(f"{what}: a split threshold is not a number (NaN)")
    _reached_once(left.astype(np.int64), right.astype(np.int64), internal, what)
    return internal


# ---------------------------------------------------------------------------------------------- sklearn.tree
def _check_tree(tree, n_features: int, what: str) -> None:
    nf = tree.n_features
    if not 1 <= nf <= MAX_FEATURES or nf > n_features:
        raise _Bad(f"{what}: the tree is built for {nf} input(s), the model has {n_features}")
    if tree.n_outputs < 1:
        raise _Bad(f"{what}: the tree has {tree.n_outputs} outputs")
    count, capacity = tree.node_count, tree.capacity
    if not 1 <= count <= capacity:  # checked before reading: the node arrays are views of node_count entries
        raise _Bad(f"{what}: node_count = {count} but the tree holds {capacity} nodes")
    left = np.asarray(tree.children_left, dtype=np.int64)
    right = np.asarray(tree.children_right, dtype=np.int64)
    leaf = left == -1
    if np.any((right == -1) != leaf):
        bad = int(np.flatnonzero((right == -1) != leaf)[0])
        raise _Bad(f"{what}: node {bad} has exactly one child")
    _check_nodes(left, right, np.asarray(tree.feature, dtype=np.int64), np.asarray(tree.threshold, dtype=np.float64),
                 leaf, nf, what)


def _check_decision_tree(est, where: str):
    from sklearn.tree._tree import Tree

    tree = getattr(est, "tree_", None)
    if tree is None:
        return None
    if not isinstance(tree, Tree):
        raise _Bad(f"{where}: tree_ is a {type(tree).__name__}, not a tree")
    n = _n_features_in(est, where)
    _check_tree(tree, tree.n_features if n is None else n, f"{where} (tree)")
    if n is not None and tree.n_features != n:
        raise _Bad(f"{where}: the tree is built for {tree.n_features} input(s), the estimator takes {n}")
    return tree


def _same_inputs(parent_n: int | None, subs, where: str, kinds) -> None:
    for i, sub in enumerate(subs):
        if not isinstance(sub, kinds):
            raise _Bad(f"{where}: member {i} is a {type(sub).__name__}, not a decision tree")
        n = _n_features_in(sub, f"{where} member {i}")
        if parent_n is not None and n != parent_n:
            raise _Bad(f"{where}: member {i} takes {n} input(s), the ensemble takes {parent_n}")


def _check_forest(est, where: str) -> None:
    """Forests call their trees with ``check_input=False``: each must take exactly the forest's inputs."""
    from sklearn.tree import BaseDecisionTree

    subs = getattr(est, "estimators_", None)
    if subs is None:
        return
    if not isinstance(subs, list):
        raise _Bad(f"{where}: estimators_ must be a list of trees")
    _same_inputs(_n_features_in(est, where), subs, where, BaseDecisionTree)


def _check_gradient_boosting(est, where: str) -> None:
    """The stage predictor walks ``estimators_[i, k].tree_`` in Cython and adds into column k of the raw
    predictions: the array must be (stages, outputs per stage) of regression trees on the model's inputs."""
    from sklearn.base import is_classifier
    from sklearn.tree import DecisionTreeRegressor

    subs = getattr(est, "estimators_", None)
    if subs is None:
        return
    if not isinstance(subs, np.ndarray) or subs.dtype != object or subs.ndim != 2 or subs.shape[0] < 1:
        raise _Bad(f"{where}: estimators_ must be a 2-D array of trees")
    k = subs.shape[1]
    per_stage = getattr(est, "n_trees_per_iteration_", None)
    if per_stage is not None and per_stage != k:
        raise _Bad(f"{where}: {k} tree(s) per stage, but n_trees_per_iteration_ = {per_stage!r}")
    if is_classifier(est):
        n_classes = getattr(est, "n_classes_", None)
        if not isinstance(n_classes, (int, np.integer)) or n_classes < 2 or k != (1 if n_classes == 2 else n_classes):
            raise _Bad(f"{where}: {k} tree(s) per stage do not fit n_classes_ = {n_classes!r}")
        init = getattr(est, "init_", "zero")
        if init != "zero" and len(getattr(init, "classes_", ())) != n_classes:
            raise _Bad(f"{where}: the initial estimator knows a different number of classes")
    else:
        init = getattr(est, "init_", "zero")
        if k != 1 or (init != "zero" and getattr(init, "n_outputs_", 1) != 1):
            raise _Bad(f"{where}: a regressor needs one tree per stage and one initial output")
    n = _n_features_in(est, where)
    _same_inputs(n, subs.ravel().tolist(), where, DecisionTreeRegressor)


# ---------------------------------------------------------------------------------------------- histogram GB
_PREDICTOR_FIELDS = ("value", "feature_idx", "num_threshold", "missing_go_to_left", "left", "right", "is_leaf",
                     "is_categorical", "bitset_idx")


def _check_hist(est, where: str) -> int:
    predictors = getattr(est, "_predictors", None)
    if predictors is None:
        return 0
    n = _n_features_in(est, where)
    if n is None:
        raise _Bad(f"{where}: a fitted model without n_features_in_")
    mapper = getattr(est, "_bin_mapper", None)
    is_cat = getattr(mapper, "is_categorical_", None)
    is_cat = np.zeros(n, dtype=bool) if is_cat is None else np.asarray(is_cat)
    if is_cat.shape != (n,):
        raise _Bad(f"{where}: the bin mapper describes {is_cat.size} input(s), the model takes {n}")
    pre = getattr(est, "_preprocessor", None)
    if pre is not None:
        width = _preprocessor_width(pre, n, where)
        if width != n:
            raise _Bad(f"{where}: its categorical preprocessor gives {width} column(s) for {n} input(s)")
    per_stage = getattr(est, "n_trees_per_iteration_", None)
    if not isinstance(predictors, list):
        raise _Bad(f"{where}: the predictors must be a list of stages")
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    checked = 0
    for i, stage in enumerate(predictors):
        if not isinstance(stage, list) or (per_stage is not None and len(stage) != per_stage):
            raise _Bad(f"{where}: stage {i} does not hold n_trees_per_iteration_ = {per_stage!r} trees")
        for j, p in enumerate(stage):
            if not isinstance(p, TreePredictor):
                raise _Bad(f"{where}: stage {i} holds a {type(p).__name__}, not a tree")
            _check_predictor(p, n, is_cat.astype(bool), f"{where} tree {i}.{j}")
            checked += 1
    return checked


def _preprocessor_width(pre, n: int, where: str) -> int:
    """Columns out of the ColumnTransformer histogram gradient boosting builds for native categories (one out per
    column in: an OrdinalEncoder for the categorical columns, an identity for the others)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import FunctionTransformer, OrdinalEncoder

    parts = getattr(pre, "transformers_", None)
    if not isinstance(pre, ColumnTransformer) or not isinstance(parts, list):
        raise _Bad(f"{where}: its categorical preprocessor is not the one scikit-learn builds")
    width = 0
    for part in parts:
        if not isinstance(part, tuple) or len(part) != 3:
            raise _Bad(f"{where}: its categorical preprocessor is malformed")
        _, t, cols = part
        if isinstance(t, str) and t == "drop":
            continue
        if not ((isinstance(t, str) and t == "passthrough") or isinstance(t, (OrdinalEncoder, FunctionTransformer))):
            raise _Bad(f"{where}: its categorical preprocessor holds a {type(t).__name__}")
        if isinstance(cols, slice):
            width += len(range(n)[cols])
        else:
            arr = np.atleast_1d(np.asarray(cols))
            width += int(arr.sum()) if arr.dtype == bool else len(arr)
    return width


def _bitsets(arr, what: str) -> int:
    if not isinstance(arr, np.ndarray) or arr.ndim != 2 or arr.shape[1] != _BITSET_WIDTH or arr.dtype != np.uint32:
        raise _Bad(f"{what} must be an array of shape (n, {_BITSET_WIDTH}) of uint32")
    return arr.shape[0]


def _check_predictor(p, n_features: int, is_cat: np.ndarray, what: str) -> None:
    nodes = getattr(p, "nodes", None)
    if not isinstance(nodes, np.ndarray) or nodes.ndim != 1 or not len(nodes) or nodes.dtype.names is None or \
            any(f not in nodes.dtype.names for f in _PREDICTOR_FIELDS):
        raise _Bad(f"{what}: the node array is not a list of tree nodes")
    n_raw = _bitsets(getattr(p, "raw_left_cat_bitsets", None), f"{what}: raw_left_cat_bitsets")
    n_binned = _bitsets(getattr(p, "binned_left_cat_bitsets", None), f"{what}: binned_left_cat_bitsets")
    leaf = nodes["is_leaf"] != 0
    left, right = nodes["left"].astype(np.int64), nodes["right"].astype(np.int64)
    feature = nodes["feature_idx"].astype(np.int64)
    categorical = (nodes["is_categorical"] != 0) & ~leaf
    threshold = np.where(categorical, 0.0, nodes["num_threshold"].astype(np.float64))
    _check_nodes(left, right, feature, threshold, leaf, n_features, what)
    if categorical.any():
        idx = nodes["bitset_idx"][categorical].astype(np.int64)
        if idx.max() >= min(n_raw, n_binned):
            raise _Bad(f"{what}: a categorical split points outside its category bitsets")
        if not is_cat[feature[categorical]].all():
            raise _Bad(f"{what}: a categorical split is on a feature that is not categorical")


# ---------------------------------------------------------------------------------------------- neighbours
def _check_binary_tree(tree, where: str) -> None:
    """A KD or ball tree of k-nearest neighbours: the query walks node i's children at 2i+1 and 2i+2 and reads
    ``data[idx_array[idx_start:idx_end]]`` of its leaves, and the metric's weight vector, without bounds checks."""
    what = f"{where} ({type(tree).__name__})"
    state = tree.__getstate__()  # copies of the arrays and the counters, nothing is run
    data, idx, nodes, bounds = (np.asarray(a) for a in state[:4])
    n_nodes, metric = state[6], state[11]
    if data.ndim != 2 or not data.shape[0] or not 1 <= data.shape[1] <= MAX_FEATURES:
        raise _Bad(f"{what}: the training points are not a table")
    n, d = data.shape
    if idx.shape != (n,) or not np.array_equal(np.sort(idx.astype(np.int64)), np.arange(n)):
        raise _Bad(f"{what}: the point index is not a permutation of the {n} training points")
    if nodes.ndim != 1 or not len(nodes) or nodes.dtype.names is None or \
            any(f not in nodes.dtype.names for f in ("idx_start", "idx_end", "is_leaf")) or n_nodes != len(nodes):
        raise _Bad(f"{what}: the node array does not match its {n_nodes!r} nodes")
    if bounds.ndim != 3 or bounds.shape[1:] != (len(nodes), d):
        raise _Bad(f"{what}: the node bounds do not match the nodes and features")
    start, end = nodes["idx_start"].astype(np.int64), nodes["idx_end"].astype(np.int64)
    if start.min() < 0 or end.max() > n or np.any(start > end):
        raise _Bad(f"{what}: a node's point range lies outside the {n} training points")
    inner = np.flatnonzero(nodes["is_leaf"] == 0)
    if len(inner) and 2 * inner.max() + 2 >= len(nodes):
        raise _Bad(f"{what}: a node's children lie outside the tree's {len(nodes)} nodes")
    # SEuclidean's V and Minkowski's w are read per feature; the other metrics keep a 1-entry placeholder
    weighted = type(metric).__name__.startswith(("SEuclidean", "Minkowski"))
    vec = np.asarray(metric.__getstate__()[1]) if weighted else np.zeros(0)
    if vec.size and vec.shape != (d,):
        raise _Bad(f"{what}: the distance weights have {vec.size} entries for {d} features")
