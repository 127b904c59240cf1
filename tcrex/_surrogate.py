"""Step (a): the surrogate tree(s) and the candidate rules they propose.

The surrogate is grown once per fit. Every node of every tree is a candidate rule; node membership is recomputed
here in float64 with the box semantics ``low < x <= high`` (scikit-learn itself compares float32 copies of the
inputs), so the counts behind feasibility and accuracy are exactly the counts of rows inside each rule's box.
Counts for any target are then sums over leaves, which is what makes a new tau or target cheap (steps b-e only).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ._boxes import Boxes
from ._data import Encoded, FeatureSchema
from ._outputs import CLASSIFICATION


@dataclass
class _TreeIndex:
    leaf_of_row: np.ndarray  # (N,) node id of each fit row's leaf
    parent: np.ndarray  # (n_nodes,) parent node id, -1 for the root
    levels: list  # node ids grouped by depth, deepest first (for summing leaves up the tree)

    @property
    def n_nodes(self) -> int:
        return len(self.parent)

    def node_sums(self, weights: np.ndarray) -> np.ndarray:
        sums = np.bincount(self.leaf_of_row, weights=weights, minlength=self.n_nodes).astype(np.float64)
        for nodes in self.levels:
            np.add.at(sums, self.parent[nodes], sums[nodes])
        return sums


class Surrogate:
    """Grown trees plus, for each unique candidate box, a way to count fit rows inside it."""

    def __init__(self, schema: FeatureSchema, task: str, rho: float, n_trees: int, random_state, params=None,
                 grower: str = "exact"):
        self.grower = grower
        self.schema = schema
        self.task = task
        self.rho = rho
        self.n_trees = n_trees
        self.random_state = random_state
        self.params = dict(params or {})

    def fit(self, enc: Encoded, y_code: np.ndarray) -> "Surrogate":
        """``y_code``: class codes (classification) or float outputs (regression)."""
        design, columns = self.schema.one_hot(enc)
        trees = self._grow(design, y_code)
        self.n_rows_ = len(enc)
        self.min_count_ = int(math.ceil(self.rho * self.n_rows_))  # the same ceil as scikit-learn's
        self._extract(trees, design, columns)
        return self

    def _grow(self, design: np.ndarray, y_code: np.ndarray) -> list:
        """Tree structures with ``children_left``, ``children_right``, ``feature``, ``threshold`` (left is
        ``x <= threshold`` on the design columns) and ``node_count``, nodes in pre-order."""
        if self.grower == "hist":
            from ._hist import grow_hist_trees
            return grow_hist_trees(design, y_code, self.task, self.rho, self.n_trees, self.random_state, self.params)
        common = dict(min_samples_leaf=self.rho, random_state=self.random_state)
        common.update(self.params)
        if self.n_trees == 1:
            cls = DecisionTreeClassifier if self.task == CLASSIFICATION else DecisionTreeRegressor
            model = cls(**common).fit(design, y_code)
            trees = [model.tree_]
        else:
            cls = RandomForestClassifier if self.task == CLASSIFICATION else RandomForestRegressor
            model = cls(n_estimators=self.n_trees, n_jobs=1, **common).fit(design, y_code)
            trees = [est.tree_ for est in model.estimators_]
        return trees

    # ------------------------------------------------------------------ candidates
    def _extract(self, trees, design: np.ndarray, columns) -> None:
        schema = self.schema
        n_cats = [len(schema.features[i].categories) for i in schema.categorical]
        lows, highs, masks = [], [], [[] for _ in n_cats]
        self._trees: list[_TreeIndex] = []
        self._node_ref: list[tuple[int, int]] = []  # (tree, node) of each unique candidate
        seen: dict[bytes, int] = {}
        for t, tree in enumerate(trees):
            left, right = tree.children_left, tree.children_right
            feat, thr = tree.feature, tree.threshold
            n_nodes = tree.node_count
            boxes = Boxes.unbounded(n_nodes, len(schema.numeric), n_cats)
            parent = np.full(n_nodes, -1)
            for node in range(n_nodes):  # node ids are in pre-order: a parent precedes its children
                if left[node] < 0:
                    continue
                f_idx, code = columns[feat[node]]
                slot = schema.slot[f_idx]
                for child, is_left in ((left[node], True), (right[node], False)):
                    parent[child] = node
                    boxes.low[child] = boxes.low[node]
                    boxes.high[child] = boxes.high[node]
                    for a in boxes.allowed:
                        a[child] = a[node]
                    if code < 0:
                        if is_left:
                            boxes.high[child, slot] = min(boxes.high[node, slot], thr[node])
                        else:
                            boxes.low[child, slot] = max(boxes.low[node, slot], thr[node])
                    else:  # one-hot column: left is "cold" (category excluded), right is "hot" (only it)
                        a = boxes.allowed[slot]
                        if is_left:
                            a[child, code] = False
                        else:
                            hot = np.zeros(a.shape[1], dtype=bool)
                            hot[code] = True
                            a[child] &= hot
            self._trees.append(_TreeIndex(self._route(tree, design), parent, _levels(parent)))
            for node in range(n_nodes):
                k = boxes.key(node)
                if k not in seen:  # forests repeat boxes (the root in every tree): keep the first
                    seen[k] = len(self._node_ref)
                    self._node_ref.append((t, node))
                    lows.append(boxes.low[node])
                    highs.append(boxes.high[node])
                    for m, a in zip(masks, boxes.allowed):
                        m.append(a[node])
        n_num = len(schema.numeric)
        self.candidates_ = Boxes(np.array(lows).reshape(-1, n_num), np.array(highs).reshape(-1, n_num),
                                 [np.array(m, dtype=bool).reshape(-1, k) for m, k in zip(masks, n_cats)])
        self.n_inside_ = self.count(np.ones(self.n_rows_))

    @staticmethod
    def _route(tree, design: np.ndarray) -> np.ndarray:
        """Leaf of every row, routing with float64 ``x <= threshold`` (the box semantics)."""
        left, right, feat, thr = tree.children_left, tree.children_right, tree.feature, tree.threshold
        node = np.zeros(design.shape[0], dtype=np.int64)
        rows = np.arange(design.shape[0])
        active = left[node] >= 0
        while active.any():
            r, nd = rows[active], node[active]
            go_left = design[r, feat[nd]] <= thr[nd]
            node[r] = np.where(go_left, left[nd], right[nd])
            active[r] = left[node[r]] >= 0
        return node

    def count(self, weights: np.ndarray) -> np.ndarray:
        """Sum of ``weights`` over fit rows inside each unique candidate (e.g. 1 for n, in-target for n_target)."""
        per_tree = [ti.node_sums(weights) for ti in self._trees]
        out = np.array([per_tree[t][node] for t, node in self._node_ref])
        return np.rint(out).astype(np.int64)

    @property
    def n_nodes_(self) -> int:
        return sum(ti.n_nodes for ti in self._trees)


def _levels(parent: np.ndarray) -> list:
    depth = np.zeros(len(parent), dtype=np.int64)
    for node in range(1, len(parent)):  # pre-order: a parent's depth is known before its children's
        depth[node] = depth[parent[node]] + 1
    return [np.flatnonzero(depth == d) for d in range(int(depth.max()), 0, -1)]
