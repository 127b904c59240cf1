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
        if self.grower == "hist":
            # the histogram grower reads numeric columns and category codes: no one-hot matrix is built, and
            # rows are routed from the codes (a one-hot column is 1.0 exactly where its category is hot)
            columns = self.schema.one_hot_columns()
            trees = self._grow_encoded(enc, columns, y_code)
            route = (lambda tree: _route_encoded(tree, enc, columns, self.schema))  # noqa: E731
        else:
            design, columns = self.schema.one_hot(enc)
            trees = self._grow(design, y_code)
            route = (lambda tree: self._route(tree, design))  # noqa: E731
        self.n_rows_ = len(enc)
        self.min_count_ = int(math.ceil(self.rho * self.n_rows_))  # the same ceil as scikit-learn's
        self._extract(trees, route, columns)
        return self

    def _grow_encoded(self, enc: Encoded, columns, y_code: np.ndarray) -> list:
        from ._hist import grow_hist_trees_encoded
        num_columns = [c for c, (_, code) in enumerate(columns) if code < 0]
        groups = [[c for c, (i, code) in enumerate(columns) if i == f and code >= 0] for f in self.schema.categorical]
        return grow_hist_trees_encoded(enc.num, num_columns, groups, enc.cat, len(columns), y_code, self.task,
                                       self.rho, self.n_trees, self.random_state, self.params)

    def _grow(self, design: np.ndarray, y_code: np.ndarray) -> list:
        """Tree structures with ``children_left``, ``children_right``, ``feature``, ``threshold`` (left is
        ``x <= threshold`` on the design columns) and ``node_count``, nodes in pre-order."""
        if self.grower == "hist":  # (fit() takes the faster encoded path; this serves direct callers)
            from ._hist import grow_hist_trees
            return grow_hist_trees(design, y_code, self.task, self.rho, self.n_trees, self.random_state, self.params)
        # the minimum leaf as a count (scikit-learn's own ceil(rho * N)): a float min_samples_leaf must be < 1, so
        # rho = 1.0 would be refused, and an int rho = 1 would mean "one row"
        common = dict(min_samples_leaf=max(1, int(math.ceil(self.rho * len(y_code)))), random_state=self.random_state)
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
    def _extract(self, trees, route, columns) -> None:
        """Candidate boxes of every node; ``route(tree)`` gives the leaf of every fit row."""
        schema = self.schema
        n_cats = [len(schema.features[i].categories) for i in schema.categorical]
        # per design column: numeric slot (or -1) and categorical slot + category code (or -1)
        col_num = np.array([schema.slot[i] if code < 0 else -1 for i, code in columns], dtype=np.int64)
        col_cat = np.array([schema.slot[i] if code >= 0 else -1 for i, code in columns], dtype=np.int64)
        col_code = np.array([code for _, code in columns], dtype=np.int64)
        lows, highs, masks = [], [], [[] for _ in n_cats]
        self._trees: list[_TreeIndex] = []
        node_ref = []  # (tree, node) of each unique candidate
        seen: set[bytes] = set()
        for t, tree in enumerate(trees):
            boxes, parent, levels = _tree_boxes(tree, len(schema.numeric), n_cats, col_num, col_cat, col_code)
            self._trees.append(_TreeIndex(route(tree), parent, levels))
            keys = _box_keys(boxes)
            for node in range(len(parent)):
                k = keys[node]
                if k not in seen:  # forests repeat boxes (the root in every tree): keep the first
                    seen.add(k)
                    node_ref.append((t, node))
                    lows.append(boxes.low[node])
                    highs.append(boxes.high[node])
                    for m, a in zip(masks, boxes.allowed):
                        m.append(a[node])
        self._node_ref = node_ref
        self._ref_tree = np.array([t for t, _ in node_ref], dtype=np.int64)
        self._ref_node = np.array([n for _, n in node_ref], dtype=np.int64)
        n_num = len(schema.numeric)
        n_cand = len(node_ref)  # (reshape(-1, 0) is ambiguous: give the row count, for data without numerics)
        self.candidates_ = Boxes(np.array(lows, dtype=np.float64).reshape(n_cand, n_num),
                                 np.array(highs, dtype=np.float64).reshape(n_cand, n_num),
                                 [np.array(m, dtype=bool).reshape(n_cand, k) for m, k in zip(masks, n_cats)])
        self.n_inside_ = self.count(np.ones(self.n_rows_))

    @staticmethod
    def _route(tree, design: np.ndarray) -> np.ndarray:
        """Leaf of every row, routing with float64 ``x <= threshold`` (the box semantics)."""
        # column comparisons are contiguous when the design is column-major (as FeatureSchema.one_hot makes it)
        return _walk(tree, design.shape[0], lambda node: design[:, tree.feature[node]] <= tree.threshold[node])

    def count(self, weights: np.ndarray) -> np.ndarray:
        """Sum of ``weights`` over fit rows inside each unique candidate (e.g. 1 for n, in-target for n_target)."""
        out = np.empty(len(self._ref_node), dtype=np.float64)
        for t, ti in enumerate(self._trees):
            pick = self._ref_tree == t
            if pick.any():
                out[pick] = ti.node_sums(weights)[self._ref_node[pick]]
        return np.rint(out).astype(np.int64)

    @property
    def n_nodes_(self) -> int:
        return sum(ti.n_nodes for ti in self._trees)


def _walk(tree, n_rows: int, goes_left) -> np.ndarray:
    """Leaf of every row: walk the nodes depth-first carrying a row mask; ``goes_left(node)`` is the rows' test."""
    left, right = tree.children_left, tree.children_right
    leaf = np.zeros(n_rows, dtype=np.int64)
    stack = [(0, None)]  # (node, mask of its rows; None for all rows)
    while stack:
        node, mask = stack.pop()
        if left[node] < 0:
            if mask is None:
                leaf[:] = node
            else:
                leaf[mask] = node
            continue
        go = goes_left(node)
        if mask is None:
            stack.append((right[node], ~go))
            stack.append((left[node], go))
        else:
            stack.append((right[node], mask & ~go))
            stack.append((left[node], mask & go))
    return leaf


def _route_encoded(tree, enc: Encoded, columns, schema: FeatureSchema) -> np.ndarray:
    """:meth:`Surrogate._route` on the one-hot design that ``enc`` stands for, without building it."""

    def goes_left(node):
        i, code = columns[tree.feature[node]]
        slot, t = schema.slot[i], tree.threshold[node]
        if code < 0:
            return enc.num[:, slot] <= t
        return np.where(enc.cat[:, slot] == code, 1.0 <= t, 0.0 <= t)  # the one-hot column: 1.0 hot, else 0.0

    return _walk(tree, len(enc), goes_left)


def _node_depths(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(left), dtype=np.int64)
    internal = np.flatnonzero(left >= 0)
    parent = np.full(len(left), -1, dtype=np.int64)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    frontier = np.array([0])
    d = 0
    while len(frontier):  # breadth-first: children of the frontier
        depth[frontier] = d
        inner = frontier[left[frontier] >= 0]
        frontier = np.concatenate([left[inner], right[inner]])
        d += 1
    return depth


def _tree_boxes(tree, n_num: int, n_cats: list, col_num, col_cat, col_code):
    """Box of every node (pre-order ids), its parent and its nodes grouped by depth (deepest first), built one
    depth at a time: a child inherits its parent's box and tightens the split feature."""
    left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
    feat, thr = np.asarray(tree.feature), np.asarray(tree.threshold, dtype=np.float64)
    n_nodes = int(tree.node_count)
    boxes = Boxes.unbounded(n_nodes, n_num, n_cats)
    internal = np.flatnonzero(left[:n_nodes] >= 0)
    parent = np.full(n_nodes, -1, dtype=np.int64)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    is_left = np.zeros(n_nodes, dtype=bool)
    is_left[left[internal]] = True
    depth = _node_depths(left[:n_nodes], right[:n_nodes])
    max_depth = int(depth.max()) if n_nodes else 0
    by_depth = [np.flatnonzero(depth == d) for d in range(max_depth + 1)]
    for d in range(1, max_depth + 1):
        child = by_depth[d]
        p = parent[child]
        boxes.low[child] = boxes.low[p]
        boxes.high[child] = boxes.high[p]
        for a in boxes.allowed:
            a[child] = a[p]
        col = feat[p]
        t = thr[p]
        lft = is_left[child]
        num = col_num[col]
        # numeric split: left is x <= t (high = min(high, t)), right is x > t (low = max(low, t)), as min()/max()
        sel = (num >= 0) & lft
        c, s = child[sel], num[sel]
        cur = boxes.high[c, s]
        boxes.high[c, s] = np.where(t[sel] < cur, t[sel], cur)
        sel = (num >= 0) & ~lft
        c, s = child[sel], num[sel]
        cur = boxes.low[c, s]
        boxes.low[c, s] = np.where(t[sel] > cur, t[sel], cur)
        # one-hot column: left is "cold" (category excluded), right is "hot" (only it)
        cat = col_cat[col]
        code = col_code[col]
        for j, a in enumerate(boxes.allowed):
            sel = (cat == j) & lft
            a[child[sel], code[sel]] = False
            sel = (cat == j) & ~lft
            if sel.any():
                c = child[sel]
                hot = np.zeros((len(c), a.shape[1]), dtype=bool)
                hot[np.arange(len(c)), code[sel]] = True
                a[c] &= hot
    levels = [by_depth[d] for d in range(max_depth, 0, -1)]
    return boxes, parent, levels


def _box_keys(boxes: Boxes) -> list[bytes]:
    """Exact identity of every box: the bytes of ``Boxes.key``'s fields, row by row."""
    n = len(boxes)
    parts = [boxes.low.reshape(n, -1).view(np.uint8).reshape(n, -1),
             boxes.high.reshape(n, -1).view(np.uint8).reshape(n, -1)]
    parts += [a.view(np.uint8).reshape(n, -1) for a in boxes.allowed]
    mat = np.ascontiguousarray(np.concatenate(parts, axis=1)) if parts else np.zeros((n, 0), dtype=np.uint8)
    return [mat[r].tobytes() for r in range(n)]
