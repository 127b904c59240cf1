"""Tree ensembles as plain node arrays: what the LightGBM and CatBoost loaders parse from a file, checked, in one shape.

A :class:`TreeEnsemble` is data (numpy arrays), never the library's objects: the loaders build it from the file
before the library sees it, check it (:func:`check_tree`: children in range, every node reached exactly once from
the root, split features in range, finite thresholds), and keep it on the loaded model (``model.trees``) for code
that scores candidate points on the trees themselves. :meth:`TreeEnsemble.raw_scores` evaluates it in numpy; the
intake's tests compare it with the library's own raw scores on every row, which is what shows the parse read the
file as the library does. A model whose splits cannot be evaluated outside its library (CatBoost's target
statistics of categories, one-hot splits on hashed values) has ``complete=False`` and raises in ``raw_scores``.
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
