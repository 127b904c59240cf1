"""Step (a): the surrogate tree(s) and the candidate rules they propose.

The surrogate is grown once per fit. Every node of every tree is a candidate rule; node membership is recomputed
here in float64 with the box semantics ``low < x <= high`` (scikit-learn itself compares float32 copies of the
inputs), so the counts behind feasibility and accuracy are exactly the counts of rows inside each rule's box.
Counts for any target are then sums over leaves, which is what makes a new tau or target cheap (steps b-e only).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base._boxes import Boxes
from ..base._data import Encoded, FeatureSchema
from ._hist import distinct_values, grow_hist_trees, grow_hist_trees_encoded
from ..base._outputs import min_rule_rows
from ...vocabulary import CLASSIFICATION

_ROWS_PER_BLOCK = 4096  # rows per block when copying a row-major matrix to column-major (_column_major)

GROWERS = ("auto", "exact", "hist")
# grower="auto" on data that needs binning: the histogram grower from this many fit rows on, CART below. Measured
# (benchmarks/engine_speed.py --crossover, 6 numeric columns of distinct floats + 1 categorical, surrogate step):
# hist/exact = 1.09 at 1,000 rows, 0.61 at 2,000, 0.32 at 5,000, 0.16 at 20,000 (shared 2-core machine).
AUTO_HIST_MIN_ROWS = 2_000
_HIST_DEFAULT_BINS = 255
_HIST_ONLY = ("max_bins", "subsample")  # surrogate_params the exact grower (scikit-learn) does not accept
_EXACT_ALIKE = ("max_depth", "min_samples_leaf")  # params both growers read the same way on a single tree
_SKLEARN_GAP = 1e-7  # scikit-learn's FEATURE_THRESHOLD: CART never splits between float32 values closer than this


def resolve_grower(grower: str, enc: Encoded, n_trees: int, params=None, distinct: dict | None = None,
                   whole=None) -> tuple[str, str]:
    """The grower to use and why: ``(grower, reason)``.

    "exact" and "hist" resolve to themselves. "auto" resolves to "hist" where the histogram grower provably
    considers exactly CART's candidate splits (reason "hist exact"): one tree, no parameter only one grower reads,
    every numeric column with at most ``max_bins`` distinct values, each exactly a float32 (scikit-learn compares
    float32 copies) and no two closer than scikit-learn's 1e-7 (CART skips such splits); categoricals are code
    histograms whose one-vs-rest splits are CART's one-hot splits. The trees are then scikit-learn's up to
    tie-breaking between equally good splits. Otherwise it chooses by data size (reason "size"): "hist" from
    ``AUTO_HIST_MIN_ROWS`` fit rows on, "exact" below; a parameter only one grower accepts picks that grower
    (reason "params"). ``distinct``: filled with numeric slot -> the column's
    :func:`tcrex._engine.fitting._hist.distinct_values`, for each column the check read (the histogram grower
    bins from them instead of reading the column again); ``whole``: per numeric slot, whether the column may hold
    whole numbers only (the schema's ``integer``; a hint, checked).
    """
    if grower != "auto":
        return grower, "set"
    params = dict(params or {})
    if set(params) - set(_HIST_ONLY) - {"max_features"} - set(_EXACT_ALIKE):
        return "exact", "params"  # a scikit-learn option the histogram grower does not have
    if set(params) & set(_HIST_ONLY) - {"max_bins"}:
        return "hist", "params"
    if n_trees == 1 and not set(params) - set(_EXACT_ALIKE) - {"max_bins"} and \
            _hist_is_exact(enc.num, params.get("max_bins", _HIST_DEFAULT_BINS), distinct, whole):
        return "hist", "hist exact"
    if "max_bins" in params:
        return "hist", "params"
    return ("hist" if len(enc) >= AUTO_HIST_MIN_ROWS else "exact"), "size"


def _hist_is_exact(num: np.ndarray, max_bins, distinct: dict | None = None, whole=None) -> bool:
    """Whether every numeric column has at most ``max_bins`` distinct values, each exactly a float32 and no two
    within scikit-learn's 1e-7 (so the histogram grower's one bin per value gives CART's candidates). Each column
    it reads is kept in ``distinct`` (slot -> its ``distinct_values``) when given; ``whole``: per slot, whether
    the column may hold whole numbers only (counted rather than sorted)."""
    if not isinstance(max_bins, (int, np.integer)) or max_bins < 2:
        return False
    for j in range(num.shape[1]):
        # encoded columns hold no NaN: these are np.unique's values
        found = distinct_values(num[:, j], bool(whole[j]) if whole is not None else False)
        if distinct is not None:
            distinct[j] = found
        uniq = found[0]
        if len(uniq) > max_bins:
            return False
        with np.errstate(over="ignore"):
            as32 = uniq.astype(np.float32)
        if not np.array_equal(as32, uniq) or np.any(np.diff(as32) <= _SKLEARN_GAP):
            return False
    return True


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
                 grower: str = "auto"):
        self.grower = grower
        self.schema = schema
        self.task = task
        self.rho = rho
        self.n_trees = n_trees
        self.random_state = random_state
        self.params = dict(params or {})

    def fit(self, enc: Encoded, y_code: np.ndarray, by_column: Encoded | None = None) -> "Surrogate":
        """``y_code``: class codes (classification) or float outputs (regression); ``by_column``: a column-major
        copy of ``enc`` when the caller has one (:meth:`FeatureSchema.encode_both`). ``grower_`` is the grower
        used ("exact" or "hist"; "auto" resolved by :func:`resolve_grower`), ``grower_reason_`` why."""
        # column-major copies (enc's rows are contiguous): the choice and the grower read columns, the router
        # gathers from them
        cols = by_column
        if cols is None and self.grower != "exact":
            cols = Encoded(_column_major(enc.num), _column_major(enc.cat))
        distinct = {}  # numeric slot -> its distinct values and counts, when choosing the grower read them
        whole = [self.schema.features[i].integer for i in self.schema.numeric]
        self.grower_, self.grower_reason_ = resolve_grower(self.grower, enc if cols is None else cols, self.n_trees,
                                                           self.params, distinct, whole)
        if self.grower_ == "hist":
            # the histogram grower reads numeric columns and category codes: no one-hot matrix is built, and
            # rows are routed from the codes (a one-hot column is 1.0 exactly where its category is hot)
            columns = self.schema.one_hot_columns()
            for j, w in enumerate(whole):  # the columns the choice did not read: counted where whole numbers
                if j not in distinct:
                    distinct[j] = distinct_values(cols.num[:, j], w)
            trees = self._grow_encoded(cols, columns, y_code, distinct)
            numeric = (lambda c: cols.num[:, self.schema.slot[columns[c][0]]])  # noqa: E731
            trees = readable_thresholds(trees, lambda c: numeric(c) if columns[c][1] < 0 else None)
            route = (lambda tree: _route_encoded(tree, cols, columns, self.schema))  # noqa: E731
        else:
            design, columns = self.schema.one_hot(enc)
            trees = readable_thresholds(self._grow(design, y_code),
                                        lambda c: design[:, c] if columns[c][1] < 0 else None)
            route = (lambda tree: self._route(tree, design))  # noqa: E731
        self.n_rows_ = len(enc)
        self.min_count_ = min_rule_rows(self.n_rows_, self.rho)  # the same ceil as scikit-learn's
        self._extract(trees, route, columns)
        return self

    def _grow_encoded(self, enc: Encoded, columns, y_code: np.ndarray, distinct: dict | None = None) -> list:
        num_columns = [c for c, (_, code) in enumerate(columns) if code < 0]
        groups = [[c for c, (i, code) in enumerate(columns) if i == f and code >= 0] for f in self.schema.categorical]
        return grow_hist_trees_encoded(enc.num, num_columns, groups, enc.cat, len(columns), y_code, self.task,
                                       self.rho, self.n_trees, self.random_state, self.params, distinct)

    def _grow(self, design: np.ndarray, y_code: np.ndarray) -> list:  # the exact grower (hist: _grow_encoded)
        """Tree structures with ``children_left``, ``children_right``, ``feature``, ``threshold`` (left is
        ``x <= threshold`` on the design columns) and ``node_count``, nodes in pre-order."""
        if getattr(self, "grower_", self.grower) == "hist":  # (fit() takes the faster encoded path; this serves direct callers)
            return grow_hist_trees(design, y_code, self.task, self.rho, self.n_trees, self.random_state, self.params)
        # the minimum leaf as a count (scikit-learn's own ceil(rho * N)): a float min_samples_leaf must be < 1, so
        # rho = 1.0 would be refused, and an int rho = 1 would mean "one row"
        common = dict(min_samples_leaf=max(1, min_rule_rows(len(y_code), self.rho)), random_state=self.random_state)
        common.update(self.params)
        # scikit-learn on first use: a restored explainer never grows a surrogate (docs/benchmarks.md section 17)
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: PLC0415 - on first use
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: PLC0415 - on first use

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
        self._trees: list[_TreeIndex] = []
        node_ref = []  # (tree, node) of each unique candidate
        parts = []  # per tree, the boxes of its unique candidates
        seen: set[bytes] = set()
        for t, tree in enumerate(trees):
            boxes, parent, levels = _tree_boxes(tree, len(schema.numeric), n_cats, col_num, col_cat, col_code)
            self._trees.append(_TreeIndex(route(tree), parent, levels))
            new = []
            for node, k in enumerate(_box_keys(boxes)):
                if k not in seen:  # forests repeat boxes (the root in every tree): keep the first
                    seen.add(k)
                    new.append(node)
            node_ref.extend((t, node) for node in new)
            parts.append(boxes.take(new))
        self._node_ref = node_ref
        self._ref_tree = np.array([t for t, _ in node_ref], dtype=np.int64)
        self._ref_node = np.array([n for _, n in node_ref], dtype=np.int64)
        self.candidates_ = Boxes(np.concatenate([b.low for b in parts]), np.concatenate([b.high for b in parts]),
                                 [np.concatenate([b.allowed[j] for b in parts]) for j in range(len(n_cats))])
        self.n_inside_ = self.count(np.ones(self.n_rows_))

    @staticmethod
    def _route(tree, design: np.ndarray) -> np.ndarray:
        """Leaf of every row, routing with float64 ``x <= threshold`` (the box semantics)."""
        # column gathers are contiguous when the design is column-major (as FeatureSchema.one_hot makes it)
        return _walk(tree, design.shape[0],
                     lambda node, rows: design[:, tree.feature[node]].take(rows) <= tree.threshold[node])

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


@dataclass
class SplitTree:
    """A grown tree's split structure in scikit-learn's ``tree_`` layout (what the candidates are read from)."""

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray  # float64; left is ``x <= threshold``
    node_count: int


_SHORT_DIGITS = 12  # a threshold whose shortest round-trip form has more significant digits is an artefact


def readable_cut(a: float, b: float, centre: float | None = None) -> float:
    """A threshold between the fit values ``a < b`` with as few significant digits as possible: the shortest
    number in the middle half of the tree's gap around ``centre`` (the tree's own threshold), or in the middle
    half of ``[a, b)``, else in ``[a, b)``; on a tie in length the one nearest the tree's own threshold.

    Every threshold in ``[a, b)`` sends every fit row the same way; CART's midpoint (20.200000000000003 between
    20.1 and 20.3) would be printed in full, because a printed bound must be true of the values it mentions,
    while 20.2 is as true of the data and reads as people write. The tree split halfway between its own two
    values, which lie at or beyond ``a`` and ``b`` (a forest's tree sees a bootstrap sample of the fit rows), so
    its gap reaches at least ``max(centre - a, b - centre)`` to either side of ``centre``; staying in the middle
    half of a gap keeps the cut away from the data, as CART's midpoint is. (A float32 midpoint can sit at the
    edge of ``[a, b)``, where the middle half of ``[a, b)`` holds the shorter number.)"""
    mid = a + (b - a) / 2
    centre = mid if centre is None else float(centre)
    half = max(centre - a, b - centre)
    best = None
    for low, high, start in ((max(a, centre - half / 2), min(b, centre + half / 2), centre),
                             (a + (b - a) / 4, b - (b - a) / 4, mid)):
        for digits in range(1, 18):
            cut = float(f"{start:.{digits}g}")
            if low <= cut <= high and a <= cut < b:
                if best is None or digits < best[0]:
                    best = (digits, cut)
                break
    if best is not None:
        return best[1]
    for digits in range(1, 18):
        cut = float(f"{mid:.{digits}g}")
        if a <= cut < b:
            return cut
    return mid if a <= mid < b else a


def is_short(t: float) -> bool:
    """Whether a threshold reads as people write it: at most ``_SHORT_DIGITS`` significant digits in its shortest
    round-trip form (127.0, 28.85, 0.6735; not the float32 midpoint 28.849999427795410 or the float64 midpoint
    20.200000000000003)."""
    digits = repr(float(t)).lower().split("e")[0].lstrip("-").replace(".", "").strip("0")
    return len(digits) <= _SHORT_DIGITS


def readable_thresholds(trees, column_values) -> list:
    """The trees with every numeric threshold that is an arithmetic artefact (see :func:`is_short`) moved to
    :func:`readable_cut` around it, between the nearest fit values on either side (so no fit row changes side:
    counts, rules and metarules on the fit data stay the same). A short threshold is the tree's own and is kept:
    a rule is the surrogate's node, on every input, not only on the fit rows (a forest's tree splits 126 | 128 of
    its bootstrap sample at 127.0, which a cut between the fit values 127 and 128 would move to 127.5).

    A threshold is moved only when it is the one threshold of its column (over all the trees) between those two fit
    values: two trees of a forest may split the same gap at different numbers (0.7649999 and 0.765, or 0.9197 and
    0.9214), and moving one past or onto the other would change which box contains which: the maximal-valid rules
    (step b) are the surrogate's, so its nodes keep their order. Such thresholds are kept as the trees have them.

    ``column_values(design column)`` gives the fit rows' values of a numeric column, ``None`` for a one-hot one."""
    sorted_values: dict[int, np.ndarray] = {}
    grown = []
    in_gap: dict[tuple[int, int], set] = {}  # (design column, gap index) -> the distinct thresholds there
    for tree in trees:
        n = int(tree.node_count)
        left = np.asarray(tree.children_left)[:n].copy()
        feature = np.asarray(tree.feature)[:n].copy()
        threshold = np.asarray(tree.threshold, dtype=np.float64)[:n].copy()
        gaps = {}
        for node in np.flatnonzero(left >= 0).tolist():
            c = int(feature[node])
            if c not in sorted_values:
                values = column_values(c)
                sorted_values[c] = None if values is None else np.sort(values[~np.isnan(values)])
            u = sorted_values[c]
            if u is None:
                continue
            t = float(threshold[node])
            i = int(np.searchsorted(u, t, side="right"))
            gaps[node] = i
            in_gap.setdefault((c, i), set()).add(t)
        grown.append((n, left, feature, threshold, gaps, tree))
    out = []
    for n, left, feature, threshold, gaps, tree in grown:
        for node, i in gaps.items():
            t, c = float(threshold[node]), int(feature[node])
            u = sorted_values[c]
            if is_short(t) or len(in_gap[(c, i)]) > 1:
                continue
            if 0 < i < len(u):
                threshold[node] = readable_cut(float(u[i - 1]), float(u[i]), t)
        out.append(SplitTree(left, np.asarray(tree.children_right)[:n].copy(), feature, threshold, n))
    return out


def _column_major(a: np.ndarray) -> np.ndarray:
    """A column-major copy of the matrix ``a``, made a block of rows at a time: each cache line of a row-major
    ``a`` is then read once while it is cached (a plain transposing copy is about twice as slow)."""
    if a.flags.f_contiguous:
        return a
    out = np.empty(a.shape[::-1], dtype=a.dtype)
    for start in range(0, a.shape[0], _ROWS_PER_BLOCK):
        out[:, start:start + _ROWS_PER_BLOCK] = a[start:start + _ROWS_PER_BLOCK].T
    return out.T


def _walk(tree, n_rows: int, goes_left) -> np.ndarray:
    """Leaf of every row: walk the nodes depth-first carrying each node's row indices (so each depth costs one
    pass over the rows, not one per node); ``goes_left(node, rows)`` is the test of those rows."""
    left, right = np.asarray(tree.children_left).tolist(), np.asarray(tree.children_right).tolist()
    leaf = np.empty(n_rows, dtype=np.int64)
    stack = [(0, np.arange(n_rows))]
    while stack:
        node, rows = stack.pop()
        lc, rc = left[node], right[node]
        if lc < 0:
            leaf[rows] = node
            continue
        go = goes_left(node, rows)
        if left[lc] < 0 and left[rc] < 0:  # two leaves: no need to split the rows
            leaf[rows] = np.where(go, lc, rc)
            continue
        stack.append((rc, rows.compress(~go)))
        stack.append((lc, rows.compress(go)))
    return leaf


def _route_encoded(tree, enc: Encoded, columns, schema: FeatureSchema) -> np.ndarray:
    """:meth:`Surrogate._route` on the one-hot design that ``enc`` stands for, without building it (gathers are
    fastest from column-major ``enc`` arrays)."""

    def goes_left(node, rows):
        i, code = columns[tree.feature[node]]
        slot, t = schema.slot[i], tree.threshold[node]
        if code < 0:
            return enc.num[:, slot].take(rows) <= t
        # the one-hot column is 1.0 where the category is hot, else 0.0
        hot_left, cold_left = bool(1.0 <= t), bool(0.0 <= t)
        if hot_left == cold_left:
            return np.full(len(rows), hot_left)
        return enc.cat[:, slot].take(rows) == code if hot_left else enc.cat[:, slot].take(rows) != code

    return _walk(tree, len(enc), goes_left)


def _tree_boxes(tree, n_num: int, n_cats: list, col_num, col_cat, col_code):
    """Box of every node (pre-order ids), its parent and its nodes grouped by depth (deepest first).

    One pass from the root down, in plain Python (trees have tens to hundreds of nodes, so per-node numpy calls
    would cost more than the work): a child inherits its parent's box and tightens the split feature. Bounds
    and masks are lists shared between nodes until one of them changes, and a change is made on a copy."""
    n_nodes = int(tree.node_count)
    left = np.asarray(tree.children_left)[:n_nodes].tolist()
    right = np.asarray(tree.children_right)[:n_nodes].tolist()
    feat = np.asarray(tree.feature)[:n_nodes].tolist()
    thr = np.asarray(tree.threshold, dtype=np.float64)[:n_nodes].tolist()
    num_of, cat_of, code_of = col_num.tolist(), col_cat.tolist(), col_code.tolist()
    parent, depth = [-1] * n_nodes, [0] * n_nodes
    low, high, allowed = [None] * n_nodes, [None] * n_nodes, [None] * n_nodes
    low[0], high[0], allowed[0] = [-np.inf] * n_num, [np.inf] * n_num, [[True] * k for k in n_cats]
    stack = [0]
    while stack:
        node = stack.pop()
        lc, rc = left[node], right[node]
        if lc < 0:
            continue
        for child in (lc, rc):
            parent[child], depth[child] = node, depth[node] + 1
            low[child], high[child], allowed[child] = low[node], high[node], allowed[node]
        col, t = feat[node], thr[node]
        s = num_of[col]
        if s >= 0:  # numeric split: left is x <= t (high = min(high, t)), right is x > t (low = max(low, t))
            if t < high[node][s]:
                high[lc] = high[node].copy()
                high[lc][s] = t
            if t > low[node][s]:
                low[rc] = low[node].copy()
                low[rc][s] = t
        else:  # one-hot column: left is "cold" (category excluded), right is "hot" (only it)
            j, code = cat_of[col], code_of[col]
            mask = allowed[node][j]
            cold, hot = mask.copy(), [False] * len(mask)
            cold[code], hot[code] = False, mask[code]
            allowed[lc] = allowed[node][:j] + [cold] + allowed[node][j + 1:]
            allowed[rc] = allowed[node][:j] + [hot] + allowed[node][j + 1:]
        stack += (rc, lc)
    boxes = Boxes(np.array(low, dtype=np.float64).reshape(n_nodes, n_num),
                  np.array(high, dtype=np.float64).reshape(n_nodes, n_num),
                  [np.array([a[j] for a in allowed], dtype=bool).reshape(n_nodes, k) for j, k in enumerate(n_cats)])
    depth = np.array(depth, dtype=np.int64)
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=0)), 0, -1)]
    return boxes, np.array(parent, dtype=np.int64), levels


def _box_keys(boxes: Boxes) -> list[bytes]:
    """Exact identity of every box: the bytes of ``Boxes.key``'s fields, row by row."""
    n = len(boxes)
    parts = [boxes.low.reshape(n, -1).view(np.uint8).reshape(n, -1),
             boxes.high.reshape(n, -1).view(np.uint8).reshape(n, -1)]
    parts += [a.view(np.uint8).reshape(n, -1) for a in boxes.allowed]
    mat = np.ascontiguousarray(np.concatenate(parts, axis=1)) if parts else np.zeros((n, 0), dtype=np.uint8)
    return [mat[r].tobytes() for r in range(n)]
