"""Tree ensembles as plain node arrays, in one shape: what the LightGBM and CatBoost loaders parse from a file, and
what the verified search reads from an XGBoost or scikit-learn model to score candidate points on its trees.

A :class:`TreeEnsemble` is data (numpy arrays), never the library's objects: the loaders build it from the file
before the library sees it, check it (:func:`check_tree`: children in range, every node reached exactly once from
the root, split features in range, finite thresholds), and keep it on the loaded model (``model.trees``) for code
that scores candidate points on the trees themselves. :meth:`TreeEnsemble.raw_scores` evaluates it in numpy; the
intake's tests compare it with the library's own raw scores on every row, which is what shows the parse read the
file as the library does. A model whose splits cannot be evaluated outside its library (CatBoost's target
statistics of categories, one-hot splits on hashed values) has ``complete=False`` and raises in ``raw_scores``.
:meth:`TreeEnsemble.compiled` gives the same scores through scikit-learn's compiled tree walk (one
``sklearn.tree._tree.Tree`` per tree, categorical splits as 0/1 columns), for the many small batches of a search.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

#: ``TreeArrays.missing``: how a missing value (NaN) is routed at a numeric split
MISSING_AS_ZERO = 0  # NaN is read as 0.0 and compared (LightGBM's missing type None)
MISSING_ZERO_DEFAULT = 1  # NaN and 0.0 take the node's default direction (LightGBM's missing type Zero)
MISSING_NAN_DEFAULT = 2  # NaN takes the node's default direction (LightGBM's missing type NaN, CatBoost)


class TreeProblem(Exception):
    """A structural problem of one tree (the loader adds the file's and the tree's name)."""


@dataclass
class TreeArrays:
    """One tree in scikit-learn's node layout: node 0 is the root, ``left``/``right`` are child node indices (-1 at
    leaves). At a numeric split a row goes left when ``x <= threshold`` (boxes are ``(low, high]``); at a
    categorical split (``categorical[node]``) when its category code is in ``left_categories[node]``; a missing
    value follows ``missing[node]`` and ``default_left[node]``. ``value`` holds the leaf outputs; ``group`` is the
    output (class) the tree adds to."""

    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray
    default_left: np.ndarray
    missing: np.ndarray
    categorical: np.ndarray
    left_categories: dict = field(default_factory=dict)
    group: int = 0
    #: at a categorical split a missing value follows ``default_left`` (XGBoost); else it goes right (LightGBM)
    nan_categories_default: bool = False

    @property
    def n_nodes(self) -> int:
        return len(self.left)


@dataclass
class TreeEnsemble:
    """Trees whose leaf outputs add up, per output group, to a raw score: ``scale * sum + bias`` (divided by the
    number of iterations when ``average``); ``link`` turns raw scores into the model's outputs ("identity",
    "sigmoid", "softmax", "exp"; a sigmoid of ``link_scale * raw``). ``dtype``: the precision the library compares
    inputs in (CatBoost: float32)."""

    trees: list
    n_features: int
    n_groups: int = 1
    bias: np.ndarray | None = None
    scale: float = 1.0
    average: bool = False
    link: str = "identity"
    link_scale: float = 1.0
    dtype: str = "float64"
    complete: bool = True
    why_incomplete: str = ""

    def raw_scores(self, X: np.ndarray) -> np.ndarray:
        """The raw score (margin) of every row of X (rows x features, categories as the model's codes), the value the
        link turns into the model's output: shape (n, n_groups). For averaged trees (a LightGBM random forest) the
        average, which LightGBM's own ``raw_score=True`` leaves undivided."""
        if not self.complete:
            raise ValueError(f"these trees cannot be evaluated outside their library: {self.why_incomplete}")
        X = np.asarray(X, dtype=np.float64)
        if self.dtype == "float32":
            X = X.astype(np.float32).astype(np.float64)
        out = np.zeros((len(X), self.n_groups), dtype=np.float64)
        for t in self.trees:
            out[:, t.group] += t.value[leaves(t, X)]
        if self.average and self.trees:
            out /= max(1, len(self.trees) // self.n_groups)
        out *= self.scale
        if self.bias is not None:
            out += self.bias
        return out

    def compiled(self) -> CompiledTrees:
        """The same scores as :meth:`raw_scores`, through compiled tree walks (built once, kept)."""
        c = self.__dict__.get("_compiled")
        if c is None:
            c = self.__dict__["_compiled"] = CompiledTrees(self)
        return c


class CompiledTrees:
    """A :class:`TreeEnsemble` evaluated by scikit-learn's compiled tree walk: each tree as a
    ``sklearn.tree._tree.Tree`` (``x <= threshold`` goes left, a missing value the node's default direction), each
    categorical split as a split at 0.5 of a column of its own (0 where the category goes left, 1 where it goes
    right, missing where the value is). scikit-learn compares float32 inputs, so rows whose values float32 does not
    hold exactly (for trees compared in float64), and rows a numeric split reads NaN or 0.0 of in a way the walk
    does not express (LightGBM's missing types None and Zero), are scored by :meth:`TreeEnsemble.raw_scores`
    instead: the scores are those of ``raw_scores`` on every row."""

    def __init__(self, ens: TreeEnsemble):
        from sklearn.tree._tree import NODE_DTYPE, Tree  # noqa: PLC0415 - the intake reads trees without scikit-learn

        if not ens.complete:
            raise ValueError(f"these trees cannot be evaluated outside their library: {ens.why_incomplete}")
        self.ens = ens
        self.tables = []  # per derived column: (feature, table of 0/1 per category code)
        self.walks = []  # (Tree, leaf value per node, group)
        zero_special = set()  # features a numeric split reads NaN as 0.0, or 0.0 as missing, of
        columns = ens.n_features + sum(int(t.categorical[t.left >= 0].sum()) for t in ens.trees)
        for t in ens.trees:
            n = t.n_nodes
            internal = t.left >= 0
            feature = np.where(internal, t.feature, -2).astype(np.int64)
            threshold = np.where(internal, t.threshold, -2.0).astype(np.float64)
            miss_left = (t.default_left & internal).astype(np.uint8)
            odd = internal & ~t.categorical & (t.missing != MISSING_NAN_DEFAULT)
            zero_special.update(int(f) for f in t.feature[odd])
            for node in np.flatnonzero(internal & t.categorical):
                left = np.asarray(sorted(t.left_categories.get(int(node), ())), dtype=np.int64)
                table = np.ones(int(left.max()) + 1 if len(left) else 0, dtype=np.float32)
                table[left] = 0.0
                feature[node] = ens.n_features + len(self.tables)
                threshold[node] = 0.5
                miss_left[node] = bool(t.default_left[node]) if t.nan_categories_default else False
                self.tables.append((int(t.feature[node]), table))
            nodes = np.zeros(n, dtype=NODE_DTYPE)
            nodes["left_child"] = np.where(internal, t.left, -1)
            nodes["right_child"] = np.where(internal, t.right, -1)
            nodes["feature"] = feature
            nodes["threshold"] = threshold
            nodes["n_node_samples"] = 1
            nodes["weighted_n_node_samples"] = 1.0
            nodes["missing_go_to_left"] = miss_left
            depth = _depth(t)
            tree = Tree(columns, np.array([1], dtype=np.intp), 1)
            tree.__setstate__({"max_depth": depth, "node_count": n, "nodes": nodes,
                               "values": np.zeros((n, 1, 1), dtype=np.float64)})
            self.walks.append((tree, np.asarray(t.value, dtype=np.float64), int(t.group)))
        self.zero_special = np.asarray(sorted(zero_special), dtype=np.int64)
        self.columns = columns
        # the derived columns of one feature in one gather: per feature, (its derived columns, a lookup whose row
        # c holds each column's 0/1 for category code c, then a row of 1 (right) for a code no table lists, then a
        # row of NaN for a missing value)
        self.by_feature = []
        for f in sorted({f for f, _ in self.tables}):
            ks = [k for k, (g, _) in enumerate(self.tables) if g == f]
            width = max(len(self.tables[k][1]) for k in ks)
            lookup = np.ones((width + 2, len(ks)), dtype=np.float32)
            for c, k in enumerate(ks):
                table = self.tables[k][1]
                lookup[:len(table), c] = table
            lookup[width + 1] = np.nan
            self.by_feature.append((f, ens.n_features + np.asarray(ks, dtype=np.int64), lookup))

    def raw_scores(self, X: np.ndarray) -> np.ndarray:
        """:meth:`TreeEnsemble.raw_scores` of every row of X."""
        ens = self.ens
        X = np.asarray(X, dtype=np.float64)
        x32 = X.astype(np.float32)
        with np.errstate(invalid="ignore"):
            exact = (x32 == X) | np.isnan(X) if ens.dtype != "float32" else np.ones(X.shape, dtype=bool)
            if len(self.zero_special):
                z = X[:, self.zero_special]
                exact[:, self.zero_special] &= ~(np.isnan(z) | (z == 0))
        slow = np.flatnonzero(~exact.all(axis=1))
        out = np.zeros((len(X), ens.n_groups), dtype=np.float64)
        if len(X):
            aug = np.empty((len(X), self.columns), dtype=np.float32)
            aug[:, :ens.n_features] = x32
            for f, cols, lookup in self.by_feature:
                v = X[:, f]
                width = len(lookup) - 2
                ok = np.isfinite(v) & (v >= 0) & (v < width)
                code = np.full(len(X), width, dtype=np.int64)
                code[ok] = v[ok].astype(np.int64)
                code[np.isnan(v)] = width + 1
                aug[:, cols] = lookup[code]
            for tree, value, group in self.walks:
                out[:, group] += value[tree.apply(aug)]
            if ens.average and ens.trees:
                out /= max(1, len(ens.trees) // ens.n_groups)
            out *= ens.scale
            if ens.bias is not None:
                out += ens.bias
        if len(slow):
            out[slow] = ens.raw_scores(X[slow])
        return out


def _depth(t: TreeArrays) -> int:
    """The tree's depth (levels below the root), one numpy step per level."""
    level, depth = np.zeros(1, dtype=np.int64), 0
    while True:
        level = level[t.left[level] >= 0]
        if not len(level):
            return depth
        level = np.concatenate([t.left[level], t.right[level]])
        depth += 1


def leaves(t: TreeArrays, X: np.ndarray) -> np.ndarray:
    """The leaf node each row of X reaches in tree ``t``."""
    node = np.zeros(len(X), dtype=np.int64)
    active = np.flatnonzero(t.left[node] >= 0)
    while active.size:
        nd = node[active]
        x = X[active, t.feature[nd]]
        nan = np.isnan(x)
        go_left = np.empty(len(nd), dtype=bool)
        cat = t.categorical[nd]
        num = ~cat
        if num.any():
            xv = np.where(nan & (t.missing[nd] == MISSING_AS_ZERO), 0.0, x)
            default = (nan & (t.missing[nd] != MISSING_AS_ZERO)) | ((t.missing[nd] == MISSING_ZERO_DEFAULT) & (xv == 0))
            go_left[num] = np.where(default, t.default_left[nd], xv <= t.threshold[nd])[num]
        for i in np.flatnonzero(cat):
            v = x[i]
            if np.isnan(v) and t.nan_categories_default:
                go_left[i] = bool(t.default_left[nd[i]])
            else:
                go_left[i] = (not np.isnan(v) and v >= 0 and int(v) in t.left_categories.get(int(nd[i]), ()))
        node[active] = np.where(go_left, t.left[nd], t.right[nd])
        active = active[t.left[node[active]] >= 0]
    return node


def check_tree(t: TreeArrays, n_features: int) -> None:
    """Children in range, every node but the root the child of exactly one node and reached from the root (no loop,
    no shared or unreachable branch), leaves on both sides, split features in ``[0, n_features)``, finite numeric
    thresholds and leaf values. Raises :class:`TreeProblem`."""
    n = t.n_nodes
    for f in fields(t):
        arr = getattr(t, f.name)
        if isinstance(arr, np.ndarray) and len(arr) != n:
            raise TreeProblem(f"its {f.name} array has {len(arr)} entries for {n} nodes")
    leaf = t.left < 0
    if np.any((t.right < 0) != leaf):
        raise TreeProblem(f"node {int(np.flatnonzero((t.right < 0) != leaf)[0])} has exactly one child")
    internal = np.flatnonzero(~leaf)
    if internal.size:
        children = np.concatenate([t.left[internal], t.right[internal]])
        if np.any(children == 0):
            raise TreeProblem("a node's child is the root (the tree loops back to its start)")
        if children.min() < 1 or children.max() >= n:
            bad = int(children[(children < 1) | (children >= n)][0])
            raise TreeProblem(f"a child index ({bad}) points outside its {n} nodes")
        if len(np.unique(children)) != len(children) or len(children) != n - 1:
            raise TreeProblem("a node is the child of two nodes or of none (a loop, a shared or an unreachable branch)")
        parent = np.zeros(n, dtype=np.int64)
        parent[t.left[internal]] = internal
        parent[t.right[internal]] = internal
        anc = parent.copy()  # pointer doubling: every node's ancestor 2^k steps up ends at the root unless it loops
        for _ in range(int(np.ceil(np.log2(max(n, 2)))) + 1):
            anc = anc[anc]
        if np.any(anc != 0):
            raise TreeProblem("its nodes form a loop that does not reach the root")
        used = t.feature[internal]
        if used.min() < 0 or used.max() >= n_features:
            bad = int(used[(used < 0) | (used >= n_features)][0])
            raise TreeProblem(f"a split uses feature index {bad}, but the model has {n_features} features")
        numeric = internal[~t.categorical[internal]]
        if numeric.size and not np.all(np.isfinite(t.threshold[numeric])):
            bad = t.threshold[numeric][~np.isfinite(t.threshold[numeric])][0]
            raise TreeProblem(f"a split threshold is {bad!r}, not a finite number")
    if not np.all(np.isfinite(t.value[leaf])):
        raise TreeProblem("a leaf value is not a finite number")
