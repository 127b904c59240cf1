"""Steps (b)-(e) for one target: maximal-valid rules, the grid, optimal rules per cell and the metarules.

A :class:`Solution` is one target's answer, a frozen record of plain arrays whose every field is declared (and
documented) below. Two builders return it complete: :func:`derive_solution` from a grown surrogate's counts, and
:func:`restore_solution` from exported rules and metarules (checked). Either way every cell of the grid knows its
optimal rule and its metarule, so explaining a row is a lookup of its cell. Nothing is set on a solution after
it is built; the pieces are computed by the plain functions below and handed to the constructor once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..base._boxes import Boxes
from ..base._data import Encoded, FeatureSchema
from ...errors import SchemaError
from ...constraints import UNIT
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
    """The grid :func:`derive_solution` would build for ``target``: its axes only, nothing per cell."""
    _, keep = maximal_valid(candidates, n_inside, n_target, tau, min_count)
    if not len(keep):
        return GridSize(target.describe(), 0, ())
    constraints = None if constraints is None or constraints.trivial else constraints
    grid = Grid(schema, candidates.take(keep), constraints)
    return GridSize(target.describe(), len(keep), tuple(int(d) for d in grid.dims))


@dataclass(frozen=True, eq=False)
class Solution:
    """One target's rules, grid and metarules (``TCREx.targets_[t]``, ``TCREx.solution(t)``): what pages,
    figures, the report and the CLI read about a target. Built complete by :func:`derive_solution` (a fit) or
    :func:`restore_solution` (a JSON export); never changed afterwards.

    Indices: a rule is a row of :attr:`rules` (0-based within this target; ``TCREx.rule_id`` gives the public
    "R3"), a metarule a row of :attr:`metarules`.
    """

    # ---- the target and what its counts refer to
    target: Target  #: the outcome Y* this solution leads to (a :class:`tcrex.Target`: classes or interval)
    schema: FeatureSchema  #: the features the boxes are over (the explainer's ``schema_``)
    n_fit_rows: int  #: rows the counts refer to (feasibility = ``rule_n / n_fit_rows``)
    constraints: object  #: the :class:`tcrex.constraints.Constraints` the optimal rules respect, or None when free
    # ---- step (b): the maximal-valid rules
    n_candidates: int  #: candidate boxes (surrogate nodes) considered; for a restored solution, its rules
    n_valid: int  #: candidates that were valid (enough rows, accuracy >= tau) before maximality
    rules: Boxes  #: the maximal-valid rules, in tie-break order
    rule_n: np.ndarray  #: int64 per rule: fit rows inside it
    rule_n_target: np.ndarray  #: int64 per rule: of those, rows whose output is in :attr:`target`
    # ---- steps (c)-(d): the grid and every cell's optimal rule
    grid: Grid | None  #: the grid of cells the rules span; None when the target has no rule
    tables: list  #: per feature, ``outside[state, rule]``: a point in that grid state must change for the rule
    cell_rule: np.ndarray  #: int64 per cell: its optimal rule (-1 where the constraints forbid every rule)
    cell_changes: np.ndarray  #: int64 per cell: the features its optimal rule asks to change
    cell_pattern: np.ndarray  #: int64 per cell: the id of its (rule, features to change) pattern
    pattern_rule: np.ndarray  #: int64 per pattern: its rule
    pattern_outside: np.ndarray  #: bool (patterns, features): the features each pattern changes
    # ---- step (e): the metarules
    metarules: Boxes  #: the metarules: leaves of the CART tree over the cells, a partition of the input space
    metarule_rule: np.ndarray  #: int64 per metarule: the rule optimal everywhere in it
    cell_metarule: np.ndarray  #: int64 per cell: the metarule holding it
    metarule_sparsity: np.ndarray  #: int64 per metarule: the most features its rule asks any of its cells to change
    metarule_cells: np.ndarray  #: int64 per metarule: the grid cells it holds

    @property
    def n_rules(self) -> int:
        """The number of rules (0: the target has no valid rule, its inputs get ``no_rule``)."""
        return len(self.rules)

    @property
    def n_metarules(self) -> int:
        return len(self.metarules)

    @property
    def n_cells(self) -> int:
        """Cells of the grid (0 without rules)."""
        return 0 if self.grid is None else self.grid.n_cells

    @property
    def feasibility(self) -> np.ndarray:
        """Per rule, the share of the fit rows inside it."""
        return self.rule_n / self.n_fit_rows

    @property
    def accuracy(self) -> np.ndarray:
        """Per rule, the share of its rows whose output is in the target."""
        return self.rule_n_target / np.maximum(self.rule_n, 1)

    def outside(self, pattern: np.ndarray) -> np.ndarray:
        """(k, n_features) features to change for each pattern id (none for -1)."""
        pattern = np.asarray(pattern)
        out = np.zeros((len(pattern), len(self.schema)), dtype=bool)
        ok = pattern >= 0
        if ok.any():
            out[ok] = self.pattern_outside[pattern[ok]]
        return out

    def state_masks(self, boxes: Boxes, m: int) -> list[np.ndarray]:
        """Per feature, which grid states box m covers (every state must be wholly in or out)."""
        return state_masks(self.schema, self.grid, boxes, m)

    def lookup(self, enc: Encoded, rows=None):
        """Rule, metarule, number of changes and change-pattern id of every row (or of the rows with indices
        ``rows``; all -1 / 0 with no rules)."""
        n = len(enc) if rows is None else len(rows)
        if self.grid is None:
            neg = np.full(n, -1, dtype=np.int64)
            return neg, neg.copy(), np.zeros(n, dtype=np.int64), neg.copy()
        cell = self.grid.cells(enc, rows)
        return self.cell_rule[cell], self.cell_metarule[cell], self.cell_changes[cell], self.cell_pattern[cell]


# ------------------------------------------------------------------ the builders
def _free(constraints):
    return None if constraints is None or constraints.trivial else constraints


def _empty(schema, target, n_fit_rows, constraints, n_candidates, n_valid, rules, rule_n, rule_n_target) -> Solution:
    """A target without rules: no grid, no metarules."""
    none = np.zeros(0, dtype=np.int64)
    n_cats = [a.shape[1] for a in rules.allowed]
    return Solution(target=target, schema=schema, n_fit_rows=n_fit_rows, constraints=constraints,
                    n_candidates=n_candidates, n_valid=n_valid, rules=rules, rule_n=rule_n,
                    rule_n_target=rule_n_target, grid=None, tables=[], cell_rule=none, cell_changes=none.copy(),
                    cell_pattern=none.copy(), pattern_rule=none.copy(),
                    pattern_outside=np.zeros((0, len(schema)), dtype=bool),
                    metarules=Boxes.unbounded(0, rules.low.shape[1], n_cats), metarule_rule=none.copy(),
                    cell_metarule=none.copy(), metarule_sparsity=none.copy(), metarule_cells=none.copy())


def derive_solution(schema, target, candidates: Boxes, n_inside, n_target, n_fit_rows, tau, min_count,
                    max_cells, random_state=0, progress=_noop, constraints=None) -> Solution:
    """Steps (b)-(e) for ``target`` from the surrogate's candidate boxes and their counts: the complete solution."""
    constraints = _free(constraints)
    # (b) validity by integer counts, then maximality among the valid rules
    valid, keep = maximal_valid(candidates, n_inside, n_target, tau, min_count)
    progress("maximal-valid rules", 0.1)
    rules = candidates.take(keep)
    rule_n = np.asarray(n_inside[keep], dtype=np.int64)
    rule_n_target = np.asarray(n_target[keep], dtype=np.int64)
    if not len(keep):
        return _empty(schema, target, n_fit_rows, constraints, len(candidates), len(valid), rules, rule_n,
                      rule_n_target)
    # (c) grid, counted before it is built
    grid = Grid(schema, rules, constraints)
    grid.check_size(max_cells, len(keep))
    progress("grid", 0.3)
    # (d) optimal rule per cell
    tables, cell_rule = _solve_cells(grid, rules, rule_n, n_fit_rows, constraints)
    cell_changes, cell_pattern, pattern_rule, pattern_outside = _patterns(grid, tables, cell_rule)
    progress("optimal rule per cell", 0.6)
    # (e) metarule tree over cell coordinates, grown to purity
    metarules, metarule_rule, cell_metarule = _grow_metarules(schema, grid, cell_rule, random_state)
    sparsity, cells = _metarule_stats(len(metarules), cell_metarule, cell_changes)
    progress("metarules", 1.0)
    return Solution(target=target, schema=schema, n_fit_rows=n_fit_rows, constraints=constraints,
                    n_candidates=len(candidates), n_valid=len(valid), rules=rules, rule_n=rule_n,
                    rule_n_target=rule_n_target, grid=grid, tables=tables, cell_rule=cell_rule,
                    cell_changes=cell_changes, cell_pattern=cell_pattern, pattern_rule=pattern_rule,
                    pattern_outside=pattern_outside, metarules=metarules, metarule_rule=metarule_rule,
                    cell_metarule=cell_metarule, metarule_sparsity=sparsity, metarule_cells=cells)


def restore_solution(schema, target, rules: Boxes, rule_n, rule_n_target, n_fit_rows, metarules: Boxes,
                     metarule_rule, constraints=None, max_cells: int | None = None,
                     max_bytes: int | None = None) -> Solution:
    """Rebuild a solution from exported rules and metarules, checking that the metarules are exactly the ones
    the rules imply. With ``max_cells`` the grid's size, and with ``max_bytes`` the memory solving it needs
    (:meth:`Grid.solve_bytes`), are checked first, before anything per cell is built."""
    constraints = _free(constraints)
    rule_n = np.asarray(rule_n, dtype=np.int64)
    rule_n_target = np.asarray(rule_n_target, dtype=np.int64)
    if not len(rules):
        return _empty(schema, target, n_fit_rows, constraints, 0, 0, rules, rule_n, rule_n_target)
    grid = Grid(schema, rules, constraints)
    if max_cells is not None and grid.n_cells > max_cells:
        raise SchemaError(f"the {len(rules)} rules of target {target.describe()} span a grid of "
                          f"{grid.n_cells:,} cells, above the export's max_cells = {max_cells:,}; the file "
                          "was damaged or edited")
    if max_bytes is not None:
        need = grid.solve_bytes(len(rules))
        if need > max_bytes:
            raise SchemaError(
                f"the {len(rules):,} rules of target {target.describe()} span a grid of {grid.n_cells:,} cells "
                f"({' x '.join(map(str, grid.dims))}) whose cell-by-rule tables would need about "
                f"{_size(need)} to rebuild, above the limit of {_size(max_bytes)} for a rules export; the file "
                "was damaged or edited, or its explainer is too large to import here (refit it with a larger "
                "rho, or raise the limit: TCREx.from_json(text, max_grid_bytes=...))")
    tables, cell_rule = _solve_cells(grid, rules, rule_n, n_fit_rows, constraints)
    cell_changes, cell_pattern, pattern_rule, pattern_outside = _patterns(grid, tables, cell_rule)
    metarule_rule = np.asarray(metarule_rule, dtype=np.int64)
    cell_metarule = np.full(grid.dims, -1, dtype=np.int64)
    for m in range(len(metarules)):
        region = np.ix_(*state_masks(schema, grid, metarules, m))
        if (cell_metarule[region] >= 0).any():
            raise SchemaError(f"metarule {m} overlaps another metarule; metarules must partition the space")
        cell_metarule[region] = m
    cell_metarule = cell_metarule.reshape(-1)
    if (cell_metarule < 0).any():
        raise SchemaError("the metarules leave part of the input space uncovered; they must partition it")
    if not np.array_equal(metarule_rule[cell_metarule], cell_rule):
        raise SchemaError("a metarule names a rule that is not the optimal one for its inputs; the rules, "
                          "their counts or the metarules were altered")
    sparsity, cells = _metarule_stats(len(metarules), cell_metarule, cell_changes)
    return Solution(target=target, schema=schema, n_fit_rows=n_fit_rows, constraints=constraints,
                    n_candidates=len(rules), n_valid=len(rules), rules=rules, rule_n=rule_n,
                    rule_n_target=rule_n_target, grid=grid, tables=tables, cell_rule=cell_rule,
                    cell_changes=cell_changes, cell_pattern=cell_pattern, pattern_rule=pattern_rule,
                    pattern_outside=pattern_outside, metarules=metarules, metarule_rule=metarule_rule,
                    cell_metarule=cell_metarule, metarule_sparsity=sparsity, metarule_cells=cells)


# ------------------------------------------------------------------ step (d)
def _solve_cells(grid: Grid, rules: Boxes, rule_n, n_fit_rows, constraints) -> tuple[list, np.ndarray]:
    """Step (d): the outside tables and the optimal rule of every cell (-1 where constraints forbid every rule)."""
    tables = grid.outside_tables(rules)
    if constraints is None:
        cell_rule, _ = optimal_rules(tables, rule_n, grid.dims)
    else:
        costs = cost_tables(grid, rules, tables)
        cell_rule = optimal_rules_weighted(costs, rule_n, n_fit_rows, grid.dims, UNIT)
    return tables, cell_rule


def _patterns(grid: Grid, tables: list, cell_rule: np.ndarray):
    """Every cell's rule and features-to-change pattern, numbered, so a row's lookup is a few gathers:
    ``(cell_changes, cell_pattern, pattern_rule, pattern_outside)``."""
    states = grid.all_states()
    outside = np.zeros(states.shape, dtype=bool)
    has_rule = cell_rule >= 0
    for i, table in enumerate(tables):
        outside[has_rule, i] = table[states[has_rule, i], cell_rule[has_rule]]
    cell_changes = outside.sum(axis=1).astype(np.int64)
    n_features = outside.shape[1]
    if n_features <= 55:
        # (rule, outside bits) packed in one int64 sorts exactly as the rows of np.unique(axis=0) would, and
        # a 1-D unique is far cheaper than a row-wise one (the rule is >= -1, the bits below 2**55)
        weights = np.left_shift(1, np.arange(n_features - 1, -1, -1, dtype=np.int64))
        key = (cell_rule.astype(np.int64) << n_features) + outside.astype(np.int64) @ weights
        uniq, first, cell_pattern = np.unique(key, return_index=True, return_inverse=True)
        pattern_rule = cell_rule[first].astype(np.int64)
        pattern_outside = outside[first]
    else:
        uniq, cell_pattern = np.unique(np.column_stack([cell_rule, outside]), axis=0, return_inverse=True)
        pattern_rule = uniq[:, 0].astype(np.int64)
        pattern_outside = uniq[:, 1:].astype(bool)
    return cell_changes, cell_pattern.reshape(-1), pattern_rule, pattern_outside


# ------------------------------------------------------------------ step (e)
def _design(schema: FeatureSchema, grid: Grid, states: np.ndarray) -> tuple[np.ndarray, list]:
    """Cell states as CART inputs: numeric states as ordinals, categorical states one-hot (>2 states)."""
    cols, spec = [], []
    for i, k in enumerate(grid.dims):
        if k == 1:
            continue
        if schema.features[i].is_categorical and k > 2:
            for s in range(k):
                cols.append(states[:, i] == s)
                spec.append((i, s))
        else:
            cols.append(states[:, i])
            spec.append((i, -1))
    if not cols:
        return np.zeros((len(states), 1), dtype=np.float32), [(0, -2)]
    return np.column_stack(cols).astype(np.float32), spec


def _grow_metarules(schema: FeatureSchema, grid: Grid, cell_rule: np.ndarray, random_state):
    """Step (e): the metarule tree over the cells, grown to purity: ``(metarules, metarule_rule, cell_metarule)``."""
    states = grid.all_states()
    classes, labels = np.unique(cell_rule, return_inverse=True)
    offsets = np.concatenate([[0], np.cumsum(grid.dims)]).astype(np.int64)
    if len(classes) == 1:  # one rule is optimal everywhere: CART's tree is the root alone
        return (_boxes_from_state_masks(schema, grid, np.ones((1, offsets[-1]), dtype=bool), offsets),
                classes.astype(np.int64), np.zeros(len(states), dtype=np.int64))
    design, spec = _design(schema, grid, states)
    # CART with Gini impurity, fitted as a multi-output squared-error tree on the one-hot rule labels: for
    # 0/1 indicators the summed variance is exactly the Gini impurity (sum_k p_k (1 - p_k)), so the splits
    # are CART's. The regressor skips scikit-learn's classification-target checks, which cost more than the
    # fit itself on these small grids; the design is already float32, C order and finite.
    onehot = np.zeros((len(labels), len(classes)), dtype=np.float64)
    onehot[np.arange(len(labels)), labels.reshape(-1)] = 1.0
    # scikit-learn on first use: a restored explainer (from_json, the CLI) never grows a tree, and importing
    # it costs ~1.7 s of CPU (docs/benchmarks.md, "The CLI's fixed cost and 2M rows")
    import sklearn  # noqa: PLC0415 - on first use (above)
    from sklearn.tree import DecisionTreeRegressor  # noqa: PLC0415 - on first use (above)

    with sklearn.config_context(skip_parameter_validation=True):
        tree = DecisionTreeRegressor(random_state=random_state).fit(design, onehot, check_input=False)
    t = tree.tree_
    leaves = np.flatnonzero(t.children_left < 0)
    leaf_id = np.full(t.node_count, -1, dtype=np.int64)
    leaf_id[leaves] = np.arange(len(leaves))
    cell_metarule = leaf_id[t.apply(design)]
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
    metarules = _boxes_from_state_masks(schema, grid, region[leaves], offsets)
    metarule_rule = classes[np.argmax(t.value[leaves, :, 0], axis=1)].astype(np.int64)
    if not np.array_equal(metarule_rule[cell_metarule], cell_rule):
        raise RuntimeError("internal error: the metarule tree is not pure")  # purity is guaranteed by CART
    return metarules, metarule_rule, cell_metarule


def _metarule_stats(n_metarules: int, cell_metarule: np.ndarray, cell_changes: np.ndarray):
    """Per metarule, its sparsity (the most changes of any of its cells) and its number of cells."""
    sparsity = np.zeros(n_metarules, dtype=np.int64)
    np.maximum.at(sparsity, cell_metarule, cell_changes)
    return sparsity, np.bincount(cell_metarule, minlength=n_metarules)


def _boxes_from_state_masks(schema: FeatureSchema, grid: Grid, regions: np.ndarray, offsets: np.ndarray) -> Boxes:
    """Boxes from (n_boxes, total states) allowed-state masks (feature i at ``offsets[i]:offsets[i+1]``; a
    numeric feature's allowed states are contiguous)."""
    n_cats = [len(schema.features[i].categories) for i in schema.categorical]
    boxes = Boxes.unbounded(len(regions), len(schema.numeric), n_cats)
    for i in range(len(grid.dims)):
        slot = schema.slot[i]
        states = regions[:, offsets[i]:offsets[i + 1]]
        if schema.features[i].is_categorical:
            boxes.allowed[slot][:] = states[:, grid.state_of_category[slot]]
        else:
            b = grid.bounds[slot]
            first = states.argmax(axis=1)
            last = states.shape[1] - 1 - states[:, ::-1].argmax(axis=1)
            boxes.low[:, slot] = np.concatenate([[-np.inf], b])[first]
            boxes.high[:, slot] = np.concatenate([b, [np.inf]])[last]
    return boxes


def state_masks(schema: FeatureSchema, grid: Grid, boxes: Boxes, m: int) -> list[np.ndarray]:
    """Per feature, which grid states box m covers (every state must be wholly in or out)."""
    masks = []
    for i, k in enumerate(grid.dims):
        slot = schema.slot[i]
        if schema.features[i].is_categorical:
            allowed = boxes.allowed[slot][m]
            soc = grid.state_of_category[slot]
            mask = np.zeros(k, dtype=bool)
            mask[soc[allowed]] = True
            if allowed.sum() != np.isin(soc, np.flatnonzero(mask)).sum():
                raise SchemaError(f"metarule {m} splits categories that every rule treats alike")
        else:
            b = grid.bounds[slot]
            low, high = boxes.low[m, slot], boxes.high[m, slot]
            for v in (low, high):
                if np.isfinite(v) and not np.isin(v, b):
                    raise SchemaError(f"metarule {m} has bound {v} on {schema.names[i]!r} that no rule has")
            state_low = np.concatenate([[-np.inf], b])
            state_high = np.concatenate([b, [np.inf]])
            mask = (low <= state_low) & (state_high <= high)
        masks.append(mask)
    return masks
