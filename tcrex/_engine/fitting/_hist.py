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

from ...errors import ParameterError
from ..base._outputs import min_rule_rows
from ...vocabulary import CLASSIFICATION, REGRESSION

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
                            random_state=0, params=None, distinct: dict | None = None) -> list[HistTree]:
    """:func:`grow_hist_trees` without materialising the one-hot design matrix (same trees).

    ``num`` (N x k) holds the numeric design columns ``num_columns``; ``groups`` lists the design columns of each
    one-hot block and ``group_codes`` (N x blocks) which of them is hot in each row; the design has
    ``n_columns`` columns in all. Thresholds and ``feature`` refer to design columns, as in grow_hist_trees.
    ``distinct``: column j of ``num`` -> its :func:`distinct_values`, where the caller already has them.
    """
    num = np.asarray(num, dtype=np.float64)
    n_rows = num.shape[0] if num.ndim == 2 and num.shape[1] else len(group_codes)
    if len(y_code) != n_rows:
        raise ParameterError(f"got {len(y_code)} outputs for {n_rows} rows")
    if task not in (CLASSIFICATION, REGRESSION):
        raise ParameterError(f"task must be {CLASSIFICATION!r} or {REGRESSION!r}, got {task!r}")
    opts = _options(dict(params or {}), rho, n_rows, n_columns, n_trees, task)
    num_t = np.ascontiguousarray(num.T)  # one contiguous row per column
    distinct = distinct or {}
    numeric = [(int(d), num_t[j], distinct.get(j)) for j, d in enumerate(num_columns)]
    groups = [np.asarray(list(g), dtype=np.int64) for g in groups]
    binned = _Binned(n_rows, n_columns, numeric, groups, np.asarray(group_codes), opts.max_bins)
    return _grow_all(binned, y_code, task, n_trees, random_state, opts)


def _grow_all(binned, y_code, task, n_trees, random_state, opts) -> list[HistTree]:
    n_rows = binned.n_rows
    target = _Target(y_code, task, binned)
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
    min_count = min_rule_rows(n_rows, rho)  # the engine's (and scikit-learn's) ceil
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
    Flat bins: the features' bins side by side (ordered features first); candidate split ``i`` belongs to flat
    bin ``i``.
    """

    def __init__(self, n_rows: int, n_columns: int, numeric: list, groups: list, group_codes: np.ndarray,
                 max_bins: int):
        """``numeric``: (design column, values[, their :func:`distinct_values` or None]) of the columns binned as
        ordered features; ``groups``: the design columns of each one-hot block, ``group_codes`` (N x blocks) the position of
        the hot one in each row."""
        self.n_rows, self.n_columns = n_rows, n_columns
        # codes[f, r]: the bin of row r on feature f, one contiguous row per feature (routing reads one feature of
        # a node's rows), in the narrowest unsigned type that holds every bin
        widest = max([max_bins] + [len(g) for g in groups])
        dtype = np.uint8 if widest <= 256 else np.uint16 if widest <= 65536 else np.uint32
        codes = np.empty((len(numeric) + len(groups), n_rows), dtype=dtype)
        n_bins, nominal, cand_col, lo, hi = [], [], [], [], []
        for d, values, *known in numeric:
            bins, upper, next_low = _bin_column(values, max_bins, *known)
            if bins is None:
                continue
            codes[len(n_bins)] = bins
            n_bins.append(len(upper) + 1)
            nominal.append(False)
            cand_col.append(np.full(len(upper) + 1, d))
            # the values on either side of every bin boundary (none after the last bin)
            lo += [upper, [np.nan]]
            hi += [next_low, [np.nan]]
        for gi, g in enumerate(groups):
            codes[len(n_bins)] = group_codes[:, gi]
            n_bins.append(len(g))
            nominal.append(True)
            cand_col.append(np.asarray(g, dtype=np.int64))
        self.n_features = len(n_bins)
        self.codes = codes[:self.n_features]
        self.n_bins = np.array(n_bins, dtype=np.int64)
        self.nominal = np.array(nominal, dtype=bool)
        self.offset = np.concatenate([[0], np.cumsum(self.n_bins)[:-1]]).astype(np.intp)
        self.n_flat = int(self.n_bins.sum())
        # candidate split of every flat bin: its feature and bin within the feature
        self.flat_feature = np.repeat(np.arange(self.n_features), self.n_bins)
        cand_bin = np.arange(self.n_flat) - self.offset[self.flat_feature]
        last = cand_bin == self.n_bins[self.flat_feature] - 1
        self.cand_col = np.concatenate(cand_col).astype(np.int64) if cand_col else np.zeros(0, dtype=np.int64)
        self.cand_nominal = self.nominal[self.flat_feature]
        self.cand_bad = last & ~self.cand_nominal  # the last bin of an ordered feature: no split
        # ordered features come first, so the nominal bins are one tail slice [n_ordered_bins:]
        self.n_ordered_bins = int(self.n_bins[~self.nominal].sum())
        self.cand_lo = np.concatenate(lo) if lo else np.zeros(0)
        self.cand_hi = np.concatenate(hi) if hi else np.zeros(0)
        self.cand_threshold = _thresholds(self.cand_lo, self.cand_hi, self.n_flat - self.n_ordered_bins)
        # the ordered features after the first: where their bins start, the flat bin just before each, and their
        # bin counts (subtracting the running sum there turns one cumulative sum over all bins into per-feature
        # prefix sums)
        n_ordered = int((~self.nominal).sum())
        self.rest_start = int(self.offset[1]) if n_ordered > 1 else self.n_ordered_bins
        self.before_feature = self.offset[1:n_ordered] - 1
        self.rest_bins = self.n_bins[1:n_ordered]
        # per flat bin, as Python values: read once per split node
        self._feature_of = self.flat_feature.tolist()
        self._bin_of = cand_bin.tolist()
        self._nominal_of = self.cand_nominal.tolist()

    def flat_key(self) -> np.ndarray:
        """(F, N) flat bins: ``codes`` plus each feature's offset, as the platform integer ``np.bincount`` reads."""
        return np.add(self.codes, self.offset[:, None], dtype=np.intp)

    def node_threshold(self, flat: int, node_counts: np.ndarray) -> float:
        """The threshold of candidate ``flat`` in a node whose rows per flat bin are ``node_counts``: as CART,
        the midpoint between the largest value going left and the smallest value of the node going right, i.e.
        the low edge of the first bin after ``flat`` that holds rows of the node (bins the node leaves empty
        would give the same split of its rows but a wider box)."""
        if self._nominal_of[flat]:
            return float(self.cand_threshold[flat])
        f = self._feature_of[flat]
        end = int(self.offset[f] + self.n_bins[f])
        nonzero = np.flatnonzero(node_counts[flat + 1:end])
        if not len(nonzero):
            return float(self.cand_threshold[flat])
        nxt = flat + 1 + int(nonzero[0])  # the first bin of the node after the split; its low edge follows nxt - 1
        return float(_thresholds(self.cand_lo[flat:flat + 1], self.cand_hi[nxt - 1:nxt], 0)[0])

    def goes_left(self, rows: np.ndarray, flat: int) -> np.ndarray:
        """Whether each of the rows goes left under candidate ``flat``: ordered, its bin is at most the candidate's;
        nominal, its hot column is another one."""
        code, b = self.codes[self._feature_of[flat]].take(rows), self._bin_of[flat]
        return code != b if self._nominal_of[flat] else code <= b


def _thresholds(lo: np.ndarray, hi: np.ndarray, n_nominal: int) -> np.ndarray:
    """Every candidate's threshold, from the largest value going left (``lo``) and the smallest going right
    (``hi``) of the ordered bins: their midpoint (or ``lo`` itself when the midpoint rounds onto ``hi``: adjacent
    floats); NaN for the last bin of a feature (no split); then 0.5 for each of the ``n_nominal`` one-hot columns
    (0 = cold goes left, 1 = hot goes right)."""
    with np.errstate(invalid="ignore", over="ignore"):
        t = lo / 2 + hi / 2
        bad = ~((lo <= t) & (t < hi))
    return np.concatenate([np.where(bad, lo, t), np.full(n_nominal, 0.5)])


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


def distinct_values(col: np.ndarray, whole: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of the finite column ``col``, ascending, and for each the number of values at most it:
    ``(uniq, n_le)``. When ``whole`` says every value may be a whole number (a hint: it is checked), whole numbers
    spanning at most ``4 N + 1024`` are counted (one ``np.bincount``) instead of sorted: the same values and
    counts, several times faster on the tens of thousands of rows of a large fit."""
    n = len(col)
    if whole and n:
        low, high = float(col.min()), float(col.max())
        if high - low <= 4 * n + 1024 and np.array_equal(col, np.floor(col)):
            counts = np.bincount((col - low).astype(np.intp), minlength=int(high - low) + 1)
            present = np.flatnonzero(counts)
            # whole numbers below 2**53 in magnitude (the span is small and float32 caps the values): exact
            return present + low, np.cumsum(counts).take(present)
    srt = np.sort(col)
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(srt[1:], srt[:-1], out=new[1:])
    first = np.flatnonzero(new)  # where each distinct value starts in sorted order
    return srt.compress(new), np.append(first[1:], n)


def _bin_column(col: np.ndarray, max_bins: int, distinct: tuple | None = None):
    """Bin codes of one column, with each boundary's value below and above; None for a constant column.
    ``distinct``: the column's :func:`distinct_values`, when the caller has them."""
    n = len(col)
    uniq, n_le = distinct_values(col) if distinct is None else distinct
    n_uniq = len(uniq)
    if n_uniq == 1:
        return None, None, None
    if n_uniq == 2:  # e.g. a 0/1 column
        return col > uniq[0], uniq[:1], uniq[1:]
    first = np.append(0, n_le[:-1])  # where each distinct value starts in sorted order (rows < uniq[i])
    span = uniq[-1] - uniq[0]
    if span <= 4 * n + 1024 and np.all(uniq == np.floor(uniq)):  # whole numbers in a small range: a table
        lut = np.zeros(int(span) + 1, dtype=np.intp)
        lut[(uniq - uniq[0]).astype(np.intp)] = np.arange(n_uniq)
        rank = lut[(col - uniq[0]).astype(np.intp)]
    else:  # invert the sorting order
        rank = np.empty(n, dtype=np.intp)
        rank[np.argsort(col)] = np.repeat(np.arange(n_uniq), n_le - first)  # (cheaper than a cumsum of new)
    if n_uniq <= max_bins:
        ends = np.arange(n_uniq - 1)  # one bin per value: bin b ends at the b-th smallest value
        return rank, uniq[ends], uniq[ends + 1]
    goal = n * np.arange(1, max_bins) / max_bins  # about equal-frequency bins whose edges are data values
    ends = np.searchsorted(n_le, goal, side="left")  # non-decreasing: keep each value once
    ends = ends[np.append(True, ends[1:] != ends[:-1]) & (ends < n_uniq - 1)]
    bin_of_rank = np.searchsorted(ends, np.arange(n_uniq), side="left")
    return bin_of_rank[rank], uniq[ends], uniq[ends + 1]


# ---------------------------------------------------------------------------------------------- statistics
class _Target:
    """Histogram channels: class counts (classification) or (count, output sum) (regression).

    Output sums are accumulated row by row in increasing row order (``np.bincount``), and a node's rows are kept
    in that order, so every float sum is reproducible."""

    def __init__(self, y_code, task: str, binned: _Binned):
        self.task = task
        if task == CLASSIFICATION:
            y = np.asarray(y_code)
            if not (np.issubdtype(y.dtype, np.integer) and (len(y) == 0 or y.min() >= 0)):
                _, y = np.unique(y, return_inverse=True)
            self.y = y.astype(np.intp).reshape(-1)
            self.n_channels = int(self.y.max()) + 1 if len(self.y) else 1
            # histogram key of every (feature, row): the flat bin within the row's class block of bins
            self.key = binned.flat_key()
            self.key += binned.n_flat * self.y
        else:
            self.y = np.asarray(y_code, dtype=np.float64).reshape(-1)
            if not np.all(np.isfinite(self.y)):
                raise ParameterError("regression outputs must be finite numbers")
            self.n_channels = 2
            self.key = binned.flat_key()
        self.n_flat = binned.n_flat
        self.n_first_bins = int(binned.n_bins[0]) if binned.n_features else 0

    def counts(self, stats: np.ndarray) -> np.ndarray:
        """Rows behind stats (..., C, k)."""
        return stats.sum(axis=-2) if self.task == CLASSIFICATION else stats[..., 0, :]

    def proxy(self, left: np.ndarray, total: np.ndarray, n_left: np.ndarray, n_right: np.ndarray) -> np.ndarray:
        """Impurity-decrease proxy ``sum(left^2)/n_left + sum(right^2)/n_right`` of every candidate split (larger
        is better): the Gini decrease for classes (for two classes, equivalently the squared error of the
        second class's indicator), the squared-error decrease for regression."""
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

    def pure(self, rows: np.ndarray) -> bool:
        """Whether the rows (of a regression node) hold a single output value; classification tells purity from
        the class counts (:func:`_may_split`)."""
        y = self.y.take(rows)
        return bool(y.min() >= y.max())

    def total(self, rows: np.ndarray) -> np.ndarray:
        """Statistics (C,) of the rows."""
        if self.task == CLASSIFICATION:
            return np.bincount(self.y.take(rows), minlength=self.n_channels).astype(np.float64)
        return np.array([len(rows), _row_sum(self.y.take(rows))], dtype=np.float64)

    def histogram(self, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Histogram (C, flat bins) and statistics (C,) of the rows (None: every row); needs a flat bin."""
        B = self.n_flat
        key = self.key if rows is None else np.take(self.key, rows, axis=1)
        flat = key.reshape(-1)  # feature by feature, each in row order
        if self.task == CLASSIFICATION:
            hist = np.bincount(flat, minlength=self.n_channels * B).reshape(self.n_channels, B).astype(np.float64)
            # every row lies in one bin of the first feature: its class counts (whole numbers, so exact sums)
            return hist, hist[:, :self.n_first_bins].sum(axis=1)
        y = self.y if rows is None else self.y.take(rows)
        hist = np.empty((2, B))
        hist[0] = np.bincount(flat, minlength=B)
        hist[1] = np.bincount(flat, weights=np.tile(y, key.shape[0]), minlength=B)
        return hist, np.array([len(y), _row_sum(y)], dtype=np.float64)


def _row_sum(y: np.ndarray) -> float:
    """The sum of ``y`` accumulated in order (as the histograms' bincount does), not numpy's pairwise sum."""
    return np.bincount(np.zeros(len(y), dtype=np.intp), weights=y, minlength=1)[0]


# ---------------------------------------------------------------------------------------------- growth
class _Tree:
    """A tree under construction, nodes in creation (breadth-first) order."""

    def __init__(self):
        self.left, self.right, self.feature, self.threshold = [], [], [], []
        self.n_node, self.value = [], []

    def add(self, n: int, value: np.ndarray) -> int:
        self.left.append(-1), self.right.append(-1), self.feature.append(-2), self.threshold.append(-2.0)
        self.n_node.append(n), self.value.append(value)
        return len(self.left) - 1

    def split(self, nodes, feature, threshold, children, n, value) -> None:
        """Split ``nodes`` at once: ``children`` (P, 2) are the next ids in order, ``n`` (P, 2) their row
        counts and ``value`` (P, 2, C) their statistics."""
        for node, f, t, (lc, rc) in zip(nodes.tolist(), feature.tolist(), threshold.tolist(), children.tolist()):
            self.feature[node], self.threshold[node], self.left[node], self.right[node] = f, t, lc, rc
        k = 2 * len(nodes)
        self.left.extend([-1] * k), self.right.extend([-1] * k), self.feature.extend([-2] * k)
        self.threshold.extend([-2.0] * k)
        self.n_node.extend(n.reshape(-1).tolist())
        self.value.extend(list(value.reshape(k, -1)))

    def preorder(self) -> HistTree:
        order, stack = [], [0]
        while stack:
            node = stack.pop()
            order.append(node)
            if self.left[node] >= 0:
                stack.append(self.right[node])
                stack.append(self.left[node])
        left, right = np.array(self.left, dtype=np.int64), np.array(self.right, dtype=np.int64)
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
    # the nodes that may split, one slot each: node ids, rows (each in increasing order), histograms (S, C, B)
    # and statistics (S, C)
    level, members = np.array([0]), [rows]
    if binned.n_flat:
        hist, total = target.histogram(None if len(rows) == binned.n_rows else rows)
        hist, total = hist[None], total[None]
    else:
        hist, total = None, target.total(rows)[None]
    tree.add(len(rows), total[0])
    root_splits = _may_split(target, total, np.array([len(rows)]), 0, opts)[0]
    if not binned.n_flat or not root_splits or (target.task == REGRESSION and target.pure(rows)):
        level = level[:0]  # no column varies, or the root cannot split
    depth = 0
    while len(level):
        n_slots = len(level)
        # every candidate split of every node: statistics of the rows going left, then the best admissible one
        left = _left_stats(hist, total, binned)
        n_left = target.counts(left)
        n_node = target.counts(total[:, :, None])[:, 0]
        n_right = n_node[:, None] - n_left
        # inadmissible: fewer than min_count rows on a side, or no split at all (the last bin of a feature)
        bad = np.minimum(n_left, n_right) < m
        bad |= binned.cand_bad
        if subset:
            chosen = np.zeros((n_slots, n_cols), dtype=bool)
            for s in range(n_slots):
                chosen[s, rng.choice(n_cols, size=opts.max_features, replace=False)] = True
            bad |= ~chosen[:, binned.cand_col]
        score = target.proxy(left, total, n_left, n_right)
        np.putmask(score, bad, -np.inf)
        best = score.argmax(axis=1)
        splits = ~bad[np.arange(n_slots), best]
        if not splits.any():
            break
        # children of every splitting node: the p-th gets the next ids first + 2p (left) and first + 2p + 1
        # (right); their statistics come from the chosen candidate
        split_slots = np.flatnonzero(splits)
        c = best[split_slots]
        depth += 1
        n_pairs = len(split_slots)
        first = len(tree.left)
        value = np.empty((n_pairs, 2, total.shape[1]))
        value[:, 0] = left[split_slots, :, c]
        np.subtract(total[split_slots], value[:, 0], out=value[:, 1])
        n_child = np.empty((n_pairs, 2), dtype=np.int64)
        n_child[:, 0] = np.rint(n_left[split_slots, c])
        n_child[:, 1] = np.rint(n_node[split_slots]).astype(np.int64) - n_child[:, 0]
        node_counts = target.counts(hist[split_slots])  # (pairs, flat bins): rows of each node per bin
        thresholds = [binned.node_threshold(cand, node_counts[p]) for p, cand in enumerate(c.tolist())]
        tree.split(level[split_slots], binned.cand_col[c], np.array(thresholds, dtype=np.float64),
                   first + np.arange(2 * n_pairs).reshape(n_pairs, 2), n_child, value)
        may = _may_split(target, value.reshape(2 * n_pairs, -1), n_child.reshape(-1), depth, opts).reshape(n_pairs, 2)
        # the next level: the children that may split, the directly histogrammed ones first. A pair with such a
        # child routes its rows exactly as the thresholds will (the bins are the thresholds' sides), histograms
        # its smaller child directly and gets the other one's as the parent's minus it.
        direct, other = [], []  # (node, rows, histogram, statistics) of the children that go on
        for p, (s, cand, (n_lc, n_rc), keep) in enumerate(zip(split_slots.tolist(), c.tolist(), n_child.tolist(),
                                                               may.tolist())):
            if not any(keep):
                continue
            d = int(n_rc < n_lc)  # the smaller child: the right one only if strictly smaller
            # the rows of each child that is histogrammed or may split (in order)
            rows, go = members[s], binned.goes_left(members[s], cand)
            sides = [rows.compress(go) if keep[0] or d == 0 else None,
                     rows.compress(~go) if keep[1] or d == 1 else None]
            if target.task == REGRESSION:  # a child holding a single output value is a leaf
                keep = [k and not target.pure(r) for k, r in zip(keep, sides)]
                if not any(keep):
                    continue
            h, t = target.histogram(sides[d])
            if keep[d]:
                direct.append((first + 2 * p + d, sides[d], h, t))
            if keep[1 - d]:
                other.append((first + 2 * p + 1 - d, sides[1 - d], hist[s] - h, total[s] - t))
        nxt = direct + other
        if not nxt:
            break
        level = np.array([node for node, _, _, _ in nxt])
        members = [r for _, r, _, _ in nxt]
        hist = np.array([h for _, _, h, _ in nxt])
        total = np.array([t for _, _, _, t in nxt])
    return tree.preorder()


def _left_stats(hist: np.ndarray, total: np.ndarray, binned: _Binned) -> np.ndarray:
    """Per node, channel and candidate: the statistics of the rows going left (a new array)."""
    k = binned.n_ordered_bins
    if k:
        left = np.cumsum(hist, axis=2)  # then per ordered feature, minus what precedes the feature
        left[:, :, binned.rest_start:k] -= np.repeat(left[:, :, binned.before_feature], binned.rest_bins, axis=2)
    else:
        left = np.empty_like(hist)
    if k < binned.n_flat:  # one-hot blocks: left is "this column cold"
        np.subtract(total[:, :, None], hist[:, :, k:], out=left[:, :, k:])
    return left


def _may_split(target: _Target, value: np.ndarray, counts: np.ndarray, depth: int, opts: _Options) -> np.ndarray:
    """Whether nodes with statistics ``value`` (K, C) and ``counts`` (K,) rows at ``depth`` may split: at least
    2 * min_count rows, above max_depth and, for classes, more than one class (regression purity needs the rows:
    :meth:`_Target.pure`)."""
    ok = counts >= 2 * opts.min_count
    if opts.max_depth is not None and depth >= opts.max_depth:
        ok[:] = False
    if target.task == CLASSIFICATION and ok.any():
        ok &= value.max(axis=1) < value.sum(axis=1)
    return ok
