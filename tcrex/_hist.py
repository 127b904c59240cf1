"""A histogram-based surrogate grower (``TCREx(grower="hist")``): the same CART trees, grown on binned columns.

Every column of the surrogate design matrix is binned once per fit: a column with at most ``max_bins`` distinct
values keeps one bin per value (so the candidate splits are exactly CART's), a column with more distinct values
gets about ``max_bins`` equal-frequency bins whose edges are data values. One-hot columns are two bins (0 and 1).
A tree is then grown level by level: per node a histogram of class counts (classification: Gini-equivalent,
the squared error of the one-hot class indicators) or of counts and output sums (regression: squared error), the
best split maximises the usual proxy ``sum(left^2)/n_left + sum(right^2)/n_right`` over every bin boundary with at
least ``min_count = ceil(rho * N)`` fit rows on both sides, and the larger child's histogram is the parent's minus
the smaller child's. Growth stops, as in scikit-learn, when a node is pure or has no admissible split (or at
``max_depth``); a split of zero gain is still taken, as CART does.

The returned trees follow scikit-learn's tree layout: nodes numbered in pre-order, ``children_left`` /
``children_right`` (-1 at leaves), ``feature`` (design column), ``threshold`` and ``node_count``. Rows with
``x <= threshold`` (float64) go left: the threshold lies between the largest fit value of the left bins and the
smallest fit value of the right bins, so every fit row is routed exactly as the grower routed it, and every leaf
holds at least ``min_count`` fit rows.

Forests (``n_trees > 1``) grow each tree on a random subsample of the rows drawn without replacement (by default
63.2%, the expected share of distinct rows in a bootstrap sample) and consider a random subset of the columns at
every node (by default sqrt of the columns for classification, all for regression, as scikit-learn's forests).
Leaves then hold at least ``min_count`` subsample rows, so at least as many fit rows.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ._errors import ParameterError
from ._outputs import CLASSIFICATION, REGRESSION

_OPTIONS = ("max_bins", "max_depth", "max_features", "subsample", "min_samples_leaf")


@dataclass
class HistTree:
    """One grown tree in scikit-learn's ``tree_`` layout (pre-order node numbering)."""

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray  # design column of each split (-2 at leaves, like scikit-learn)
    threshold: np.ndarray  # left is ``x <= threshold`` in float64 (-2.0 at leaves)
    n_node_samples: np.ndarray  # rows of the tree's sample at each node
    value: np.ndarray  # per node: class counts (classification) or (count, output sum) (regression)

    @property
    def node_count(self) -> int:
        return len(self.children_left)

    @property
    def max_depth(self) -> int:
        depth = np.zeros(self.node_count, dtype=np.int64)
        for node in range(self.node_count):
            for child in (self.children_left[node], self.children_right[node]):
                if child >= 0:
                    depth[child] = depth[node] + 1
        return int(depth.max())


@dataclass
class _Options:
    max_bins: int
    max_depth: int | None
    max_features: int  # columns considered per node
    subsample: float
    min_count: int


def grow_hist_trees(design, y_code, task, rho, n_trees=1, random_state=0, params=None, *,
                    one_hot_groups=None, one_hot_codes=None) -> list[HistTree]:
    """Grow ``n_trees`` histogram trees on ``design`` (N x D float64) and the outputs ``y_code``.

    ``y_code`` holds class codes 0..K-1 (classification) or float outputs (regression). ``params`` may set
    ``max_bins`` (default 255), ``max_depth`` (default None), ``max_features`` (int, fraction, "sqrt", "log2" or
    None), ``subsample`` (row share per tree of a forest) and ``min_samples_leaf`` (int or fraction; never below
    ``ceil(rho * N)``). ``one_hot_groups`` optionally lists blocks of columns that one-hot encode a categorical
    (exactly one 1 per row); each block is then histogrammed as one feature, which is much faster than one
    feature per column (the splits considered are the same); ``one_hot_codes`` (N x groups) may give the position
    of the hot column in each group (trusted: the caller built the design from these codes), else it is derived
    from the design and checked.
    """
    design = np.asarray(design, dtype=np.float64)
    if design.ndim != 2:
        raise ParameterError(f"design must be a 2-D matrix, got {design.ndim} dimensions")
    n_rows, n_cols = design.shape
    if task not in (CLASSIFICATION, REGRESSION):
        raise ParameterError(f"task must be {CLASSIFICATION!r} or {REGRESSION!r}, got {task!r}")
    if len(y_code) != n_rows:
        raise ParameterError(f"got {len(y_code)} outputs for {n_rows} rows")
    opts = _options(dict(params or {}), rho, n_rows, n_cols, n_trees, task)
    if one_hot_codes is not None and one_hot_groups:
        groups = [np.asarray(list(g), dtype=np.int64) for g in one_hot_groups]
        group_codes = np.asarray(one_hot_codes)
        if group_codes.shape != (n_rows, len(groups)):
            raise ParameterError(f"one_hot_codes must be {n_rows} x {len(groups)}, got {group_codes.shape}")
    else:
        groups = _check_groups(design, one_hot_groups)
        group_codes = (np.column_stack([np.argmax(design[:, g], axis=1) for g in groups]) if groups
                       else np.zeros((n_rows, 0), dtype=np.intp))
    in_group = np.zeros(n_cols, dtype=bool)
    for g in groups:
        in_group[g] = True
    numeric = [(d, design[:, d]) for d in range(n_cols) if not in_group[d]]
    binned = _Binned(n_rows, n_cols, numeric, groups, group_codes, opts.max_bins)
    return _grow_all(binned, y_code, task, n_trees, random_state, opts)


def grow_hist_trees_encoded(num, num_columns, groups, group_codes, n_columns, y_code, task, rho, n_trees=1,
                            random_state=0, params=None) -> list[HistTree]:
    """:func:`grow_hist_trees` without materialising the one-hot design matrix (same trees).

    ``num`` (N x k) holds the numeric design columns ``num_columns``; ``groups`` lists the design columns of each
    one-hot block and ``group_codes`` (N x blocks) which of them is hot in each row; the design has
    ``n_columns`` columns in all. Thresholds and ``feature`` refer to design columns, as in grow_hist_trees.
    """
    num = np.asarray(num, dtype=np.float64)
    n_rows = num.shape[0] if num.ndim == 2 and num.shape[1] else len(group_codes)
    if len(y_code) != n_rows:
        raise ParameterError(f"got {len(y_code)} outputs for {n_rows} rows")
    if task not in (CLASSIFICATION, REGRESSION):
        raise ParameterError(f"task must be {CLASSIFICATION!r} or {REGRESSION!r}, got {task!r}")
    opts = _options(dict(params or {}), rho, n_rows, n_columns, n_trees, task)
    numeric = [(int(d), num[:, j]) for j, d in enumerate(num_columns)]
    groups = [np.asarray(list(g), dtype=np.int64) for g in groups]
    binned = _Binned(n_rows, n_columns, numeric, groups, np.asarray(group_codes), opts.max_bins)
    return _grow_all(binned, y_code, task, n_trees, random_state, opts)


def _grow_all(binned, y_code, task, n_trees, random_state, opts) -> list[HistTree]:
    n_rows = len(binned.key)
    target = _Target(y_code, task)
    rng = _rng(random_state)
    trees = []
    for _ in range(n_trees):
        if opts.subsample < 1.0:
            size = max(1, int(round(opts.subsample * n_rows)))
            rows = np.sort(rng.choice(n_rows, size=size, replace=False))
        else:
            rows = np.arange(n_rows)
        trees.append(_grow(binned, target, rows, opts, rng))
    return trees


# ---------------------------------------------------------------------------------------------- options
def _options(params: dict, rho, n_rows: int, n_cols: int, n_trees: int, task: str) -> _Options:
    unknown = sorted(set(params) - set(_OPTIONS))
    if unknown:
        raise ParameterError(f"unknown surrogate_params {unknown} for grower='hist'; it accepts {list(_OPTIONS)}")
    max_bins = params.get("max_bins", 255)
    if not isinstance(max_bins, numbers.Integral) or not 2 <= max_bins <= 65535:
        raise ParameterError(f"max_bins must be a whole number in [2, 65535], got {max_bins!r}")
    max_depth = params.get("max_depth")
    if max_depth is not None and (not isinstance(max_depth, numbers.Integral) or max_depth < 1):
        raise ParameterError(f"max_depth must be None or a whole number >= 1, got {max_depth!r}")
    forest = n_trees > 1
    default_features = ("sqrt" if task == CLASSIFICATION else None) if forest else None
    max_features = _n_features(params.get("max_features", default_features), n_cols)
    subsample = params.get("subsample", 0.632 if forest else 1.0)
    if not isinstance(subsample, numbers.Real) or not 0 < subsample <= 1:
        raise ParameterError(f"subsample must be a fraction in (0, 1], got {subsample!r}")
    min_count = int(math.ceil(rho * n_rows))  # the engine's (and scikit-learn's) ceil
    leaf = params.get("min_samples_leaf")
    if leaf is not None:
        if isinstance(leaf, numbers.Integral) and leaf >= 1:
            min_count = max(min_count, int(leaf))
        elif isinstance(leaf, numbers.Real) and 0 < leaf < 1:
            min_count = max(min_count, int(math.ceil(leaf * n_rows)))
        else:
            raise ParameterError(f"min_samples_leaf must be a whole number >= 1 or a fraction, got {leaf!r}")
    return _Options(int(max_bins), None if max_depth is None else int(max_depth), max_features,
                    float(subsample), max(1, min_count))


def _n_features(spec, n_cols: int) -> int:
    if spec is None:
        return n_cols
    if isinstance(spec, str):
        if spec == "sqrt":
            return max(1, int(math.sqrt(n_cols)))
        if spec == "log2":
            return max(1, int(math.log2(n_cols))) if n_cols > 1 else 1
        raise ParameterError(f"max_features must be 'sqrt', 'log2', a number or None, got {spec!r}")
    if isinstance(spec, numbers.Integral) and spec >= 1:
        return min(int(spec), n_cols)
    if isinstance(spec, numbers.Real) and 0 < spec <= 1:
        return max(1, int(spec * n_cols))
    raise ParameterError(f"max_features must be 'sqrt', 'log2', a whole number >= 1, a fraction or None, "
                         f"got {spec!r}")


def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2 ** 31))
    return np.random.default_rng(random_state)


# ---------------------------------------------------------------------------------------------- binning
class _Binned:
    """Every column as a histogram feature with a small integer code per row.

    An *ordered* feature is a numeric column cut into bins (candidate splits: bins <= b go left). A *nominal*
    feature is a one-hot block of columns, coded by which column is hot (candidate splits: one column hot goes
    right, the rest left, exactly a tree split ``column <= 0.5`` on that column). Constant columns take no part.
    Flat bins: the features' bins side by side; candidate split ``i`` belongs to flat bin ``i``.
    """

    def __init__(self, n_rows: int, n_columns: int, numeric: list, groups: list, group_codes: np.ndarray,
                 max_bins: int):
        """``numeric``: (design column, values) of the columns binned as ordered features; ``groups``: the design
        columns of each one-hot block, ``group_codes`` (N x blocks) the position of the hot one in each row."""
        self.n_columns = n_columns
        feat_codes, feat_bins, nominal = [], [], []
        self.upper: dict[int, np.ndarray] = {}  # per ordered column: largest value of bins 0..nb-2
        self.next_low: dict[int, np.ndarray] = {}  # per ordered column: smallest value of bins 1..nb-1
        cand_col = []  # design column of every flat bin's candidate split
        for d, values in numeric:
            codes, upper, next_low = _bin_column(values, max_bins)
            if codes is None:
                continue
            self.upper[d], self.next_low[d] = upper, next_low
            feat_codes.append(codes)
            feat_bins.append(len(upper) + 1)
            nominal.append(False)
            cand_col.append(np.full(len(upper) + 1, d))
        for gi, g in enumerate(groups):
            feat_codes.append(group_codes[:, gi])
            feat_bins.append(len(g))
            nominal.append(True)
            cand_col.append(np.asarray(g, dtype=np.int64))
        self.n_features = len(feat_codes)
        self.n_bins = np.array(feat_bins, dtype=np.int64)
        self.nominal = np.array(nominal, dtype=bool)
        self.offset = np.concatenate([[0], np.cumsum(self.n_bins)[:-1]]).astype(np.intp)
        self.n_flat = int(self.n_bins.sum())
        dtype = np.uint8 if (self.n_bins.max(initial=1) <= 256) else np.uint16
        codes = np.empty((n_rows, self.n_features), dtype=dtype, order="F")
        for f, c in enumerate(feat_codes):
            codes[:, f] = c
        # flat bin of every row on every feature (row-major, for gathering rows): feature f's bins are
        # offset[f] .. offset[f] + n_bins[f] - 1, so "code <= b" is "key <= flat bin of b" within a feature
        self.key = np.empty((n_rows, self.n_features), dtype=np.intp)
        np.add(codes, self.offset, out=self.key, casting="unsafe")
        # the same, compact and flat, for routing (one element per row: a narrow dtype gathers faster)
        small = np.int16 if self.n_flat < 2 ** 15 else np.int32
        self.key_flat = self.key.astype(small).reshape(-1)
        # candidate split of every flat bin
        self.flat_feature = np.repeat(np.arange(self.n_features), self.n_bins)
        self.bin_start = self.offset[self.flat_feature]
        self.cand_bin = np.arange(self.n_flat) - self.bin_start
        self.cand_col = np.concatenate(cand_col).astype(np.int64) if cand_col else np.zeros(0, dtype=np.int64)
        self.cand_nominal = self.nominal[self.flat_feature]
        last = self.cand_bin == self.n_bins[self.flat_feature] - 1
        self.cand_ok = self.cand_nominal | ~last
        self.ordered_flat = np.flatnonzero(~self.cand_nominal)
        self.nominal_flat = np.flatnonzero(self.cand_nominal)
        self.cand_threshold = self._thresholds()
        # ordered features come first, so the nominal bins are one tail slice [n_ordered_bins:]
        self.n_ordered_bins = int(self.n_bins[~self.nominal].sum())
        # for every ordered bin, the flat bin just before its feature (-1 for the first feature): subtracting the
        # running sum there turns one cumulative sum over all bins into per-feature prefix sums
        before = (self.bin_start - 1)[:self.n_ordered_bins]
        self.prefix_from = np.maximum(before, 0)
        self.prefix_zero = np.flatnonzero(before < 0)

    def threshold(self, flat: int) -> float:
        """A float64 value t that sends the candidate's left rows (and only them) to ``x <= t``."""
        return float(self.cand_threshold[flat])

    def _thresholds(self) -> np.ndarray:
        """Every candidate's threshold: the midpoint between the largest value going left and the smallest going
        right (or the left value itself when the midpoint rounds onto the right one: adjacent floats); 0.5 for a
        one-hot column (0 = cold goes left, 1 = hot goes right); NaN for the last bin of a feature (no split)."""
        lo = np.full(self.n_flat, np.nan)
        hi = np.full(self.n_flat, np.nan)
        for f in range(self.n_features):
            if self.nominal[f]:
                continue
            start = int(self.offset[f])
            col = int(self.cand_col[start])
            k = len(self.upper[col])
            lo[start:start + k], hi[start:start + k] = self.upper[col], self.next_low[col]
        with np.errstate(invalid="ignore", over="ignore"):
            t = lo / 2 + hi / 2
            bad = ~((lo <= t) & (t < hi))
        t = np.where(bad, lo, t)
        return np.where(self.cand_nominal, 0.5, t)

    def go_left(self, rows: np.ndarray, flat: np.ndarray) -> np.ndarray:
        """Whether each row goes left under candidate ``flat`` (one per row): ordered, its bin is at most the
        candidate's; nominal, its hot column is another one."""
        key = np.take(self.key_flat, rows * self.n_features + self.flat_feature[flat])
        if not len(self.nominal_flat):
            return key <= flat
        return np.where(self.cand_nominal[flat], key != flat, key <= flat)


def _check_groups(design: np.ndarray, groups) -> list:
    """One-hot groups as arrays of columns, checked: non-negative, exactly one 1 per row (so all else 0)."""
    if not groups:
        return []
    out, seen = [], set()
    for g in groups:
        g = np.asarray(list(g), dtype=np.int64)
        if not len(g) or seen & set(g.tolist()):
            raise ParameterError("one-hot groups must be non-empty and disjoint")
        seen |= set(g.tolist())
        block = design[:, g]
        if block.min(initial=0) < 0 or not np.all(block.sum(axis=1) == 1) or not np.all(block.max(axis=1) == 1):
            raise ParameterError(f"columns {g.tolist()} are not a one-hot group (exactly one 1 per row)")
        out.append(g)
    return out


def _bin_column(col: np.ndarray, max_bins: int):
    """Bin codes of one column, with each boundary's value below and above; None for a constant column."""
    n = len(col)
    srt = np.sort(col)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(srt[1:], srt[:-1], out=new[1:])
    uniq = srt[new]
    n_uniq = len(uniq)
    if n_uniq == 1:
        return None, None, None
    if n_uniq == 2:  # e.g. a 0/1 column
        return col > uniq[0], uniq[:1], uniq[1:]
    span = uniq[-1] - uniq[0]
    if span <= 4 * n + 1024 and np.all(uniq == np.floor(uniq)):  # whole numbers in a small range: a table
        lut = np.zeros(int(span) + 1, dtype=np.intp)
        lut[(uniq - uniq[0]).astype(np.intp)] = np.arange(n_uniq)
        rank = lut[(col - uniq[0]).astype(np.intp)]
    else:
        rank = np.empty(n, dtype=np.intp)
        rank[np.argsort(col)] = np.cumsum(new) - 1
    if n_uniq <= max_bins:
        ends = np.arange(n_uniq - 1)  # one bin per value: bin b ends at the b-th smallest value
        return rank, uniq[ends], uniq[ends + 1]
    first = np.flatnonzero(new)  # about equal-frequency bins whose edges are data values
    n_le = np.append(first[1:], n)  # rows <= uniq[i]
    goal = n * np.arange(1, max_bins) / max_bins
    ends = np.unique(np.searchsorted(n_le, goal, side="left"))
    ends = ends[ends < n_uniq - 1]
    bin_of_rank = np.searchsorted(ends, np.arange(n_uniq), side="left")
    return bin_of_rank[rank], uniq[ends], uniq[ends + 1]


# ---------------------------------------------------------------------------------------------- statistics
class _Target:
    """Histogram channels: class counts (classification) or (count, output sum) (regression)."""

    def __init__(self, y_code, task: str):
        self.task = task
        if task == CLASSIFICATION:
            y = np.asarray(y_code)
            if not (np.issubdtype(y.dtype, np.integer) and (len(y) == 0 or y.min() >= 0)):
                _, y = np.unique(y, return_inverse=True)
            self.y = y.astype(np.intp).reshape(-1)
            self.n_channels = int(self.y.max()) + 1 if len(self.y) else 1
        else:
            self.y = np.asarray(y_code, dtype=np.float64).reshape(-1)
            if not np.all(np.isfinite(self.y)):
                raise ParameterError("regression outputs must be finite numbers")
            self.n_channels = 2

    def counts(self, stats: np.ndarray) -> np.ndarray:
        """Rows behind stats (..., C, k)."""
        return stats.sum(axis=-2) if self.task == CLASSIFICATION else stats[..., 0, :]

    def proxy(self, left: np.ndarray, total: np.ndarray, n_left: np.ndarray, n_total: np.ndarray) -> np.ndarray:
        """Impurity-decrease proxy ``sum(left^2)/n_left + sum(right^2)/n_right`` of every candidate split (larger
        is better): the Gini decrease for classes (for two classes, equivalently the squared error of the
        second class's indicator), the squared-error decrease for regression."""
        n_right = n_total[:, None] - n_left
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.task == CLASSIFICATION and self.n_channels > 2:
                right = total[:, :, None] - left
                return (np.square(left).sum(axis=1) / n_left) + (np.square(right).sum(axis=1) / n_right)
            s = left[:, 1, :]  # second class count, or output sum
            r = total[:, 1, None] - s
            score = s * s
            score /= n_left
            r *= r
            r /= n_right
            score += r
            return score

    def pure(self, totals: np.ndarray, rows: np.ndarray, child: np.ndarray, n_children: int) -> np.ndarray:
        """Whether each child node holds a single output value (then it is a leaf)."""
        if self.task == CLASSIFICATION:
            return totals.max(axis=1) >= totals.sum(axis=1)
        lo = np.full(n_children, np.inf)
        hi = np.full(n_children, -np.inf)
        y = self.y[rows]
        np.minimum.at(lo, child, y)
        np.maximum.at(hi, child, y)
        return lo >= hi

    def histograms(self, binned: _Binned, rows: np.ndarray, slot: np.ndarray, n_slots: int, all_rows: bool):
        """Histograms (S, C, flat bins) and totals (S, C) of the given rows grouped by ``slot``."""
        C, B = self.n_channels, binned.n_flat
        key = binned.key if all_rows else np.take(binned.key, rows, axis=0)  # a copy may be changed in place
        if self.task == CLASSIFICATION:
            label = slot * C + self.y[rows]
            total = np.bincount(label, minlength=n_slots * C).reshape(n_slots, C).astype(np.float64)
            if not B:
                return np.zeros((n_slots, C, 0)), total
            if all_rows:
                key = key + (label * B)[:, None]
            else:
                key += (label * B)[:, None]
            hist = np.bincount(key.reshape(-1), minlength=n_slots * C * B).reshape(n_slots, C, B)
            return hist.astype(np.float64), total
        y = self.y[rows]
        total = np.stack([np.bincount(slot, minlength=n_slots).astype(np.float64),
                          np.bincount(slot, weights=y, minlength=n_slots)], axis=1)
        hist = np.zeros((n_slots, C, B))
        if B:
            flat = (key + (slot * B)[:, None]).reshape(-1)
            hist[:, 0, :] = np.bincount(flat, minlength=n_slots * B).reshape(n_slots, B)
            hist[:, 1, :] = np.bincount(flat, weights=np.repeat(y, binned.n_features),
                                        minlength=n_slots * B).reshape(n_slots, B)
        return hist, total


# ---------------------------------------------------------------------------------------------- growth
class _Tree:
    """A tree under construction, nodes in creation (breadth-first) order."""

    def __init__(self):
        self.left, self.right, self.feature, self.threshold = [], [], [], []
        self.n_node, self.value, self.depth = [], [], []

    def add(self, n: int, value: np.ndarray, depth: int) -> int:
        self.left.append(-1), self.right.append(-1), self.feature.append(-2), self.threshold.append(-2.0)
        self.n_node.append(n), self.value.append(value), self.depth.append(depth)
        return len(self.left) - 1

    def split(self, nodes, feature, threshold, children, n, value, depth: int) -> None:
        """Split ``nodes`` at once: ``children`` (P, 2) are the next ids in order, ``n`` (P, 2) their row
        counts and ``value`` (P, 2, C) their statistics."""
        for node, f, t, (lc, rc) in zip(nodes.tolist(), feature.tolist(), threshold.tolist(), children.tolist()):
            self.feature[node], self.threshold[node], self.left[node], self.right[node] = f, t, lc, rc
        k = 2 * len(nodes)
        self.left.extend([-1] * k), self.right.extend([-1] * k), self.feature.extend([-2] * k)
        self.threshold.extend([-2.0] * k), self.depth.extend([depth] * k)
        self.n_node.extend(n.reshape(-1).tolist())
        self.value.extend(list(value.reshape(k, -1)))

    def preorder(self) -> HistTree:
        left, right = np.array(self.left, dtype=np.int64), np.array(self.right, dtype=np.int64)
        order, stack = [], [0]
        while stack:
            node = stack.pop()
            order.append(node)
            if left[node] >= 0:
                stack.append(right[node])
                stack.append(left[node])
        order = np.array(order, dtype=np.int64)
        new_id = np.empty(len(order), dtype=np.int64)
        new_id[order] = np.arange(len(order))

        def remap(a):
            return np.where(a[order] >= 0, new_id[np.maximum(a[order], 0)], -1)

        return HistTree(children_left=remap(left), children_right=remap(right),
                        feature=np.array(self.feature, dtype=np.int64)[order],
                        threshold=np.array(self.threshold, dtype=np.float64)[order],
                        n_node_samples=np.array(self.n_node, dtype=np.int64)[order],
                        value=np.array(self.value, dtype=np.float64)[order])


def _grow(binned: _Binned, target: _Target, rows: np.ndarray, opts: _Options, rng: np.random.Generator) -> HistTree:
    m = opts.min_count
    n_cols = binned.n_columns
    subset = opts.max_features < n_cols
    tree = _Tree()
    slot = np.zeros(len(rows), dtype=np.intp)
    hist, total = target.histograms(binned, rows, slot, 1, all_rows=len(rows) == len(binned.key))
    tree.add(len(rows), total[0], 0)
    level = np.array([0])  # nodes that may split, one slot each; hist/total hold their histograms
    if not binned.n_flat or not _may_split(target, total, np.array([len(rows)]), 0, m, opts.max_depth, rows, slot)[0]:
        level = level[:0]  # no column varies, or the root cannot split
    while len(level):
        n_slots = len(level)
        # every candidate split of every node: statistics of the rows going left, then the best admissible one
        left = _left_stats(hist, total, binned)
        n_left = target.counts(left)
        n_node = target.counts(total[:, :, None])[:, 0]
        ok = binned.cand_ok & (n_left >= m) & (n_left <= (n_node - m)[:, None])
        if subset:
            chosen = np.zeros((n_slots, n_cols), dtype=bool)
            for s in range(n_slots):
                chosen[s, rng.choice(n_cols, size=opts.max_features, replace=False)] = True
            ok &= chosen[:, binned.cand_col]
        score = target.proxy(left, total, n_left, n_node)
        score[~ok] = -np.inf
        best = np.argmax(score, axis=1)
        splits = ok[np.arange(n_slots), best]
        if not splits.any():
            break
        # children of every splitting node (left then right, side by side); statistics from the chosen candidate
        split_slots = np.flatnonzero(splits)
        c = best[split_slots]
        depth = tree.depth[int(level[split_slots[0]])] + 1
        first_child = len(tree.left)
        child_of_slot = np.full((n_slots, 2), -1, dtype=np.int64)
        child_of_slot[split_slots, 0] = first_child + 2 * np.arange(len(split_slots))
        child_of_slot[split_slots, 1] = child_of_slot[split_slots, 0] + 1
        stats_left = left[split_slots, :, c]
        n_l = np.rint(n_left[split_slots, c]).astype(np.int64)
        n_r = np.rint(n_node[split_slots]).astype(np.int64) - n_l
        tree.split(level[split_slots], binned.cand_col[c], binned.cand_threshold[c], child_of_slot[split_slots],
                   np.stack([n_l, n_r], axis=1), np.stack([stats_left, total[split_slots] - stats_left], axis=1),
                   depth)
        n_children = len(tree.left) - first_child
        # route the rows of splitting nodes exactly as the thresholds will (a right child follows its left one)
        if not splits.all():
            moving = splits[slot]
            rows, slot = rows[moving], slot[moving]
        child = (child_of_slot[:, 0] - first_child)[slot]
        child += ~binned.go_left(rows, best[slot])
        totals = np.array(tree.value[first_child:])
        counts = np.array(tree.n_node[first_child:])
        may = _may_split(target, totals, counts, depth, m, opts.max_depth, rows, child)
        # histograms: the smaller child of each pair directly, its sibling as the parent's minus it
        pairs = child_of_slot[split_slots] - first_child  # (P, 2)
        need = may[pairs].any(axis=1)
        if not need.any():
            break
        pairs, parent = pairs[need], split_slots[need]
        small = (counts[pairs[:, 1]] < counts[pairs[:, 0]]).astype(np.int64)
        direct = pairs[np.arange(len(pairs)), small]
        other = pairs[np.arange(len(pairs)), 1 - small]
        direct_slot = np.full(n_children, -1, dtype=np.intp)
        direct_slot[direct] = np.arange(len(direct))
        ds = direct_slot[child]
        sel = ds >= 0
        h_direct, t_direct = target.histograms(binned, rows[sel], ds[sel], len(direct), all_rows=False)
        # the next level: the children that may split
        keep_d, keep_o = may[direct], may[other]
        nxt = np.concatenate([direct[keep_d], other[keep_o]])
        n_d = int(keep_d.sum())
        new_hist = np.empty((len(nxt),) + hist.shape[1:])
        new_hist[:n_d] = h_direct[keep_d]
        np.subtract(hist[parent[keep_o]], h_direct[keep_o], out=new_hist[n_d:])
        total = np.concatenate([t_direct[keep_d], total[parent[keep_o]] - t_direct[keep_o]])
        hist = new_hist
        level = nxt + first_child
        next_slot = np.full(n_children, -1, dtype=np.intp)
        next_slot[nxt] = np.arange(len(nxt))
        slot = next_slot[child]
        active = slot >= 0
        rows, slot = rows[active], slot[active]
    return tree.preorder()


def _left_stats(hist: np.ndarray, total: np.ndarray, binned: _Binned) -> np.ndarray:
    """Per node, channel and candidate: the statistics of the rows going left (a new array)."""
    k = binned.n_ordered_bins
    if k:
        left = np.cumsum(hist, axis=2)  # then per ordered feature, minus what precedes the feature
        base = left[:, :, binned.prefix_from]
        base[:, :, binned.prefix_zero] = 0.0
        left[:, :, :k] -= base
    else:
        left = np.empty_like(hist)
    if k < binned.n_flat:  # one-hot blocks: left is "this column cold"
        np.subtract(total[:, :, None], hist[:, :, k:], out=left[:, :, k:])
    return left


def _may_split(target: _Target, totals, counts, depth: int, m: int, max_depth, rows, child) -> np.ndarray:
    ok = counts >= 2 * m
    if max_depth is not None and depth >= max_depth:
        ok[:] = False
    if ok.any():
        ok &= ~target.pure(totals, rows, child, len(counts))
    return ok
