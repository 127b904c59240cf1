"""Steps (b)-(e) for one target: maximal-valid rules, the grid, optimal rules per cell and the metarules.

A :class:`Solution` is plain arrays. It is derived from a grown surrogate (:meth:`Solution.derive`) or rebuilt
from exported rules and metarules (:meth:`Solution.restore`); either way every cell of the grid knows its optimal
rule and its metarule, so explaining a row is a lookup of its cell.
"""
from __future__ import annotations

import math

import numpy as np

from ._boxes import Boxes
from ._data import Encoded, FeatureSchema
from .errors import SchemaError
from .constraints import UNIT
from ._grid import Grid, GridSize, cost_tables, optimal_rules, optimal_rules_weighted
from ._targets import Target


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def _noop(step, fraction):
    pass


def maximal_valid(candidates: Boxes, n_inside, n_target, tau, min_count) -> tuple[np.ndarray, np.ndarray]:
    """Step (b): the ids of the valid candidates (at least ``min_count`` rows, accuracy >= tau, by integer counts)
    and of the maximal ones among them (no valid rule strictly contains them)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = np.where(n_inside > 0, n_target / np.maximum(n_inside, 1), 0.0)
    valid = np.flatnonzero((n_inside >= min_count) & (accuracy >= tau))
    if not len(valid):
        return valid, valid
    dominated = candidates.take(valid).strict_subset_of_any()
    return valid, valid[~dominated]


def grid_size(schema: FeatureSchema, target: Target, candidates: Boxes, n_inside, n_target, tau, min_count,
              constraints=None) -> GridSize:
    """The grid :meth:`Solution.derive` would build for ``target``: its axes only, nothing per cell."""
    _, keep = maximal_valid(candidates, n_inside, n_target, tau, min_count)
    if not len(keep):
        return GridSize(target.describe(), 0, ())
    constraints = None if constraints is None or constraints.trivial else constraints
    grid = Grid(schema, candidates.take(keep), constraints)
    return GridSize(target.describe(), len(keep), tuple(int(d) for d in grid.dims))


class Solution:
    def __init__(self, schema: FeatureSchema, target: Target, n_fit_rows: int, constraints=None):
        self.schema = schema
        self.target = target
        self.n_fit_rows = n_fit_rows
        self.constraints = None if constraints is None or constraints.trivial else constraints

    # ------------------------------------------------------------------ construction
    @classmethod
    def derive(cls, schema, target, candidates: Boxes, n_inside, n_target, n_fit_rows, tau, min_count,
               max_cells, random_state=0, progress=_noop, constraints=None) -> "Solution":
        sol = cls(schema, target, n_fit_rows, constraints)
        # (b) validity by integer counts, then maximality among the valid rules
        valid, keep = maximal_valid(candidates, n_inside, n_target, tau, min_count)
        progress("maximal-valid rules", 0.1)
        sol._set_rules(candidates.take(keep), n_inside[keep], n_target[keep])
        sol.n_candidates = len(candidates)
        sol.n_valid = len(valid)
        if not len(keep):
            sol._empty()
            return sol
        # (c) grid, counted before it is built
        sol.grid = Grid(schema, sol.rules, sol.constraints)
        sol.grid.check_size(max_cells, len(keep))
        progress("grid", 0.3)
        # (d) optimal rule per cell
        sol._solve_cells()
        progress("optimal rule per cell", 0.6)
        # (e) metarule tree over cell coordinates, grown to purity
        sol._grow_metarules(random_state)
        progress("metarules", 1.0)
        return sol

    @classmethod
    def restore(cls, schema, target, rules: Boxes, rule_n, rule_n_target, n_fit_rows, metarules: Boxes,
                metarule_rule, constraints=None, max_cells: int | None = None,
                max_bytes: int | None = None) -> "Solution":
        """Rebuild a solution from exported rules and metarules, checking that the metarules are exactly the ones
        the rules imply. With ``max_cells`` the grid's size, and with ``max_bytes`` the memory solving it needs
        (:meth:`Grid.solve_bytes`), are checked first, before anything per cell is built."""
        sol = cls(schema, target, n_fit_rows, constraints)
        sol._set_rules(rules, np.asarray(rule_n, dtype=np.int64), np.asarray(rule_n_target, dtype=np.int64))
        sol.n_candidates = sol.n_valid = len(rules)
        if not len(rules):
            sol._empty()
            return sol
        sol.grid = Grid(schema, rules, sol.constraints)
        if max_cells is not None and sol.grid.n_cells > max_cells:
            raise SchemaError(f"the {len(rules)} rules of target {target.describe()} span a grid of "
                              f"{sol.grid.n_cells:,} cells, above the export's max_cells = {max_cells:,}; the file "
                              "was damaged or edited")
        if max_bytes is not None:
            need = sol.grid.solve_bytes(len(rules))
            if need > max_bytes:
                raise SchemaError(
                    f"the {len(rules):,} rules of target {target.describe()} span a grid of {sol.grid.n_cells:,} cells "
                    f"({' x '.join(map(str, sol.grid.dims))}) whose cell-by-rule tables would need about "
                    f"{_size(need)} to rebuild, above the limit of {_size(max_bytes)} for a rules export; the file "
                    "was damaged or edited, or its explainer is too large to import here (refit it with a larger "
                    "rho, or raise the limit: TCREx.from_json(text, max_grid_bytes=...))")
        sol._solve_cells()
        metarule_rule = np.asarray(metarule_rule, dtype=np.int64)
        cell_metarule = np.full(sol.grid.dims, -1, dtype=np.int64)
        for m in range(len(metarules)):
            masks = sol.state_masks(metarules, m)
            region = np.ix_(*masks)
            if (cell_metarule[region] >= 0).any():
                raise SchemaError(f"metarule {m} overlaps another metarule; metarules must partition the space")
            cell_metarule[region] = m
        cell_metarule = cell_metarule.reshape(-1)
        if (cell_metarule < 0).any():
            raise SchemaError("the metarules leave part of the input space uncovered; they must partition it")
        if not np.array_equal(metarule_rule[cell_metarule], sol.cell_rule):
            raise SchemaError("a metarule names a rule that is not the optimal one for its inputs; the rules, "
                              "their counts or the metarules were altered")
        sol.cell_metarule = cell_metarule
        sol.metarules = metarules
        sol.metarule_rule = metarule_rule
        sol._metarule_stats()
        return sol

    def _set_rules(self, rules: Boxes, n, n_target) -> None:
        self.rules = rules
        self.rule_n = np.asarray(n, dtype=np.int64)
        self.rule_n_target = np.asarray(n_target, dtype=np.int64)

    def _solve_cells(self) -> None:
        """Step (d): the optimal rule of every cell (-1 where constraints forbid every rule), then patterns."""
        self.tables = self.grid.outside_tables(self.rules)
        if self.constraints is None:
            self.cell_rule, _ = optimal_rules(self.tables, self.rule_n, self.grid.dims)
        else:
            costs = cost_tables(self.grid, self.rules, self.tables)
            self.cell_rule = optimal_rules_weighted(costs, self.rule_n, self.n_fit_rows, self.grid.dims, UNIT)
        self._patterns()

    def _patterns(self) -> None:
        """Every cell's rule and features-to-change pattern, numbered, so a row's lookup is a few gathers."""
        states = self.grid.all_states()
        outside = np.zeros(states.shape, dtype=bool)
        has_rule = self.cell_rule >= 0
        for i, table in enumerate(self.tables):
            outside[has_rule, i] = table[states[has_rule, i], self.cell_rule[has_rule]]
        self.cell_changes = outside.sum(axis=1).astype(np.int64)
        n_features = outside.shape[1]
        if n_features <= 55:
            # (rule, outside bits) packed in one int64 sorts exactly as the rows of np.unique(axis=0) would, and
            # a 1-D unique is far cheaper than a row-wise one (the rule is >= -1, the bits below 2**55)
            weights = np.left_shift(1, np.arange(n_features - 1, -1, -1, dtype=np.int64))
            key = (self.cell_rule.astype(np.int64) << n_features) + outside.astype(np.int64) @ weights
            uniq, first, self.cell_pattern = np.unique(key, return_index=True, return_inverse=True)
            self.pattern_rule = self.cell_rule[first].astype(np.int64)
            self.pattern_outside = outside[first]
        else:
            uniq, self.cell_pattern = np.unique(np.column_stack([self.cell_rule, outside]), axis=0,
                                                return_inverse=True)
            self.pattern_rule = uniq[:, 0].astype(np.int64)
            self.pattern_outside = uniq[:, 1:].astype(bool)
        self.cell_pattern = self.cell_pattern.reshape(-1)

    def outside(self, pattern: np.ndarray) -> np.ndarray:
        """(k, n_features) features to change for each pattern id (none for -1)."""
        pattern = np.asarray(pattern)
        out = np.zeros((len(pattern), len(self.schema)), dtype=bool)
        ok = pattern >= 0
        if ok.any():
            out[ok] = self.pattern_outside[pattern[ok]]
        return out

    def _empty(self) -> None:
        self.grid = None
        self.cell_pattern = np.zeros(0, dtype=np.int64)
        self.pattern_rule = np.zeros(0, dtype=np.int64)
        self.pattern_outside = np.zeros((0, len(self.schema)), dtype=bool)
        self.tables = []
        self.cell_rule = self.cell_changes = self.cell_metarule = np.zeros(0, dtype=np.int64)
        n_cats = [a.shape[1] for a in self.rules.allowed]
        self.metarules = Boxes.unbounded(0, self.rules.low.shape[1], n_cats)
        self.metarule_rule = np.zeros(0, dtype=np.int64)
        self.metarule_sparsity = np.zeros(0, dtype=np.int64)
        self.metarule_cells = np.zeros(0, dtype=np.int64)

    @property
    def n_rules(self) -> int:
        return len(self.rules)

    @property
    def n_cells(self) -> int:
        return 0 if self.grid is None else self.grid.n_cells

    @property
    def feasibility(self) -> np.ndarray:
        return self.rule_n / self.n_fit_rows

    @property
    def accuracy(self) -> np.ndarray:
        return self.rule_n_target / np.maximum(self.rule_n, 1)

    # ------------------------------------------------------------------ step (e)
    def _design(self, states: np.ndarray) -> tuple[np.ndarray, list]:
        """Cell states as CART inputs: numeric states as ordinals, categorical states one-hot (>2 states)."""
        cols, spec = [], []
        for i, k in enumerate(self.grid.dims):
            if k == 1:
                continue
            if self.schema.features[i].is_categorical and k > 2:
                for s in range(k):
                    cols.append(states[:, i] == s)
                    spec.append((i, s))
            else:
                cols.append(states[:, i])
                spec.append((i, -1))
        if not cols:
            return np.zeros((len(states), 1), dtype=np.float32), [(0, -2)]
        return np.column_stack(cols).astype(np.float32), spec

    def _grow_metarules(self, random_state) -> None:
        states = self.grid.all_states()
        classes, labels = np.unique(self.cell_rule, return_inverse=True)
        offsets = np.concatenate([[0], np.cumsum(self.grid.dims)]).astype(np.int64)
        if len(classes) == 1:  # one rule is optimal everywhere: CART's tree is the root alone
            self.cell_metarule = np.zeros(len(states), dtype=np.int64)
            self.metarules = self._boxes_from_state_masks(np.ones((1, offsets[-1]), dtype=bool), offsets)
            self.metarule_rule = classes.astype(np.int64)
            self._metarule_stats()
            return
        design, spec = self._design(states)
        # CART with Gini impurity, fitted as a multi-output squared-error tree on the one-hot rule labels: for
        # 0/1 indicators the summed variance is exactly the Gini impurity (sum_k p_k (1 - p_k)), so the splits
        # are CART's. The regressor skips scikit-learn's classification-target checks, which cost more than the
        # fit itself on these small grids; the design is already float32, C order and finite.
        onehot = np.zeros((len(labels), len(classes)), dtype=np.float64)
        onehot[np.arange(len(labels)), labels.reshape(-1)] = 1.0
        # scikit-learn on first use: a restored explainer (from_json, the CLI) never grows a tree, and importing
        # it costs ~1.7 s of CPU (issue #38, docs/benchmarks.md section 17)
        import sklearn  # noqa: PLC0415 - on first use (above)
        from sklearn.tree import DecisionTreeRegressor  # noqa: PLC0415 - on first use (above)

        with sklearn.config_context(skip_parameter_validation=True):
            tree = DecisionTreeRegressor(random_state=random_state).fit(design, onehot, check_input=False)
        t = tree.tree_
        leaves = np.flatnonzero(t.children_left < 0)
        leaf_id = np.full(t.node_count, -1, dtype=np.int64)
        leaf_id[leaves] = np.arange(len(leaves))
        self.cell_metarule = leaf_id[t.apply(design)]
        # every node's region as allowed grid states, all features side by side (feature i's states at
        # offsets[i]:offsets[i + 1]); node ids are pre-order, so a parent is always filled before its children
        region = np.ones((t.node_count, offsets[-1]), dtype=bool)
        left_of, right_of = t.children_left.tolist(), t.children_right.tolist()
        split_on, threshold = t.feature.tolist(), t.threshold.tolist()
        for node in range(t.node_count):
            left, right = left_of[node], right_of[node]
            if left < 0:
                continue
            region[left] = region[right] = region[node]
            i, s = spec[split_on[node]]
            start, stop = offsets[i], offsets[i + 1]
            if s < 0:  # ordinal states: left is state <= threshold (a half-integer)
                cut = start + math.floor(threshold[node]) + 1
                region[left, cut:stop] = False
                region[right, start:cut] = False
            else:  # one-hot column of state s: left is "not s", right is "s"
                region[left, start + s] = False
                region[right, start:stop] = False
                region[right, start + s] = region[node, start + s]
        self.metarules = self._boxes_from_state_masks(region[leaves], offsets)
        self.metarule_rule = classes[np.argmax(t.value[leaves, :, 0], axis=1)].astype(np.int64)
        if not np.array_equal(self.metarule_rule[self.cell_metarule], self.cell_rule):
            raise RuntimeError("internal error: the metarule tree is not pure")  # purity is guaranteed by CART
        self._metarule_stats()

    def _metarule_stats(self) -> None:
        m = len(self.metarules)
        self.metarule_sparsity = np.zeros(m, dtype=np.int64)
        np.maximum.at(self.metarule_sparsity, self.cell_metarule, self.cell_changes)
        self.metarule_cells = np.bincount(self.cell_metarule, minlength=m)

    def _boxes_from_state_masks(self, regions: np.ndarray, offsets: np.ndarray) -> Boxes:
        """Boxes from (n_boxes, total states) allowed-state masks (feature i at ``offsets[i]:offsets[i+1]``; a
        numeric feature's allowed states are contiguous)."""
        n_cats = [len(self.schema.features[i].categories) for i in self.schema.categorical]
        boxes = Boxes.unbounded(len(regions), len(self.schema.numeric), n_cats)
        for i in range(len(self.grid.dims)):
            slot = self.schema.slot[i]
            states = regions[:, offsets[i]:offsets[i + 1]]
            if self.schema.features[i].is_categorical:
                boxes.allowed[slot][:] = states[:, self.grid.state_of_category[slot]]
            else:
                b = self.grid.bounds[slot]
                first = states.argmax(axis=1)
                last = states.shape[1] - 1 - states[:, ::-1].argmax(axis=1)
                boxes.low[:, slot] = np.concatenate([[-np.inf], b])[first]
                boxes.high[:, slot] = np.concatenate([b, [np.inf]])[last]
        return boxes

    def state_masks(self, boxes: Boxes, m: int) -> list[np.ndarray]:
        """Per feature, which grid states box m covers (every state must be wholly in or out)."""
        masks = []
        for i, k in enumerate(self.grid.dims):
            slot = self.schema.slot[i]
            if self.schema.features[i].is_categorical:
                allowed = boxes.allowed[slot][m]
                soc = self.grid.state_of_category[slot]
                mask = np.zeros(k, dtype=bool)
                mask[soc[allowed]] = True
                if allowed.sum() != np.isin(soc, np.flatnonzero(mask)).sum():
                    raise SchemaError(f"metarule {m} splits categories that every rule treats alike")
            else:
                b = self.grid.bounds[slot]
                low, high = boxes.low[m, slot], boxes.high[m, slot]
                for v in (low, high):
                    if np.isfinite(v) and not np.isin(v, b):
                        raise SchemaError(f"metarule {m} has bound {v} on {self.schema.names[i]!r} that no rule has")
                state_low = np.concatenate([[-np.inf], b])
                state_high = np.concatenate([b, [np.inf]])
                mask = (low <= state_low) & (state_high <= high)
            masks.append(mask)
        return masks

    # ------------------------------------------------------------------ step (g)
    def lookup(self, enc: Encoded, rows=None):
        """Rule, metarule, number of changes and change-pattern id of every row (or of the rows with indices
        ``rows``; all -1 / 0 with no rules)."""
        n = len(enc) if rows is None else len(rows)
        if self.grid is None:
            neg = np.full(n, -1, dtype=np.int64)
            return neg, neg.copy(), np.zeros(n, dtype=np.int64), neg.copy()
        cell = self.grid.cells(enc, rows)
        return self.cell_rule[cell], self.cell_metarule[cell], self.cell_changes[cell], self.cell_pattern[cell]
