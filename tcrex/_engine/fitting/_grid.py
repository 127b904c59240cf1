"""Steps (c) and (d): the grid of cells spanned by the maximal-valid rules, and the optimal rule of every cell.

Work happens in integer grid coordinates. Per numeric feature the sorted finite bounds b_0 < ... < b_{m-1}
define m + 1 states: state k is the interval (b_{k-1}, b_k] with b_{-1} = -inf and b_m = inf, so a value x has
state ``searchsorted(b, x, side="left")``. Per categorical feature, categories that every rule treats alike share
one state (categories no rule mentions collapse together; impossible one-hot cells never arise). No prototype can
fall on a bound or at infinity, and empty cells still get their correct rule.

Per feature, a table ``outside[state, rule]`` says whether a point in that state must change to satisfy the rule.
Every actionability constraint of the roadmap (immutable, direction, weights, transitions) is also a function of
(state, rule) only, so it folds into the same tables without losing exactness.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..base._boxes import Boxes
from ...constraints import DECREASE, IMMUTABLE, INCREASE
from ..base._data import Encoded, FeatureSchema
from ...errors import CellLimitError

#: Up to this many bounds a numeric state is counted with one vectorised comparison per bound, which is several
#: times faster than numpy's binary search on a column (measured: 3-15x for 1-16 bounds on 131k values).
_COMPARE_BOUNDS = 16


def numeric_state(bounds: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``searchsorted(bounds, values, side="left")``: the number of (sorted) bounds below each value, i.e. its state.

    Values are never missing here (encoding refuses missing values); for a NaN the two ways would differ."""
    if len(bounds) > _COMPARE_BOUNDS or not len(bounds):
        return np.searchsorted(bounds, values, side="left")
    state = (values > bounds[0]).astype(np.int64)
    for b in bounds[1:]:
        state += values > b
    return state


#: Seconds per grid cell of a fit's steps (c)-(e) (grid, optimal rules, patterns, the metarule tree), measured on
#: the 2-core reference machine with 3 surrogate trees on 1,000 rows x 20 features (docs/benchmarks.md section 16):
#: 7-15 microseconds as the machine's load went from 5 to 8, almost all of it the CART metarule tree. An order of
#: magnitude for a preview, not a promise.
SECONDS_PER_CELL = 1e-5


def cell_limit_message(n_cells: int, dims, n_rules: int, max_cells: int) -> str:
    """Why a grid is refused (its size, its axes, the limit) and what to change: one sentence for every caller."""
    return (f"the metarule grid would have {n_cells:,} cells ({' x '.join(map(str, dims))} over "
            f"{len(dims)} features, from {n_rules} maximal-valid rules), above max_cells={max_cells:,}. "
            "Raise rho (fewer, larger rules), lower tau, use fewer surrogate trees, drop features, or raise "
            "max_cells if you can afford the memory and time.")


@dataclass(frozen=True)
class GridSize:
    """The metarule grid one target's fit would build, counted from its maximal-valid rules before anything per
    cell exists (:meth:`tcrex.TCREx.grid_sizes`)."""
    target: str  #: the target, in words
    n_rules: int  #: maximal-valid rules (0: the target has no valid rule and builds no grid)
    dims: tuple  #: states per feature, in feature order

    @property
    def n_cells(self) -> int:
        return math.prod(self.dims) if self.n_rules else 0

    def seconds(self, per_cell: float = SECONDS_PER_CELL) -> float:
        """The expected time of steps (c)-(e) at ``per_cell`` seconds per cell."""
        return self.n_cells * per_cell

    def limit_message(self, max_cells: int) -> str | None:
        """The :class:`CellLimitError` message a fit with ``max_cells`` would raise, or None when it fits."""
        if self.n_cells <= max_cells:
            return None
        return cell_limit_message(self.n_cells, self.dims, self.n_rules, max_cells)


FORBIDDEN = 1 << 32  # cost of a forbidden change: above any allowed total (weights <= 1e4, < 400 features),
# and FORBIDDEN * N stays below 2**63 for up to 2e9 fit rows


class Grid:
    def __init__(self, schema: FeatureSchema, rules: Boxes, constraints=None):
        self.schema = schema
        self.constraints = constraints
        self.bounds: list[np.ndarray] = []  # per numeric feature (in schema.numeric order)
        every = np.sort(np.concatenate([rules.low, rules.high]), axis=0)  # one sort for all features
        fresh = np.isfinite(every)
        fresh[1:] &= every[1:] != every[:-1]
        for j in range(len(schema.numeric)):
            self.bounds.append(every[fresh[:, j], j])
        self.state_of_category: list[np.ndarray] = []  # per categorical feature: category code -> state
        self.category_of_state: list[np.ndarray] = []  # a representative category per state
        for j, a in enumerate(rules.allowed):
            signatures = a.T  # (n_categories, n_rules)
            if constraints is not None and not constraints.features[schema.categorical[j]].is_free():
                # categories a transition map treats differently must not share a state
                reach = constraints.transition_matrix(schema.categorical[j]).astype(np.int64) @ a.T.astype(np.int64)
                signatures = np.hstack([signatures, reach > 0])
            _, first, inverse = np.unique(signatures, axis=0, return_index=True, return_inverse=True)
            order = np.argsort(first)  # number states by their first category, for a stable layout
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            self.state_of_category.append(rank[inverse.reshape(-1)])
            self.category_of_state.append(first[order])
        # dims in feature order (the grid's axes follow the user's columns)
        self.dims = []
        for i in range(len(schema)):
            slot = schema.slot[i]
            if schema.features[i].is_categorical:
                self.dims.append(len(self.category_of_state[slot]))
            else:
                self.dims.append(len(self.bounds[slot]) + 1)
        self.n_cells = math.prod(self.dims)  # Python integers: 20 ** 30 must not overflow

    def solve_bytes(self, n_rules: int) -> int:
        """An upper estimate of the memory step (d) and the cell patterns need for ``n_rules`` rules, counted from
        the axes alone (nothing per cell is built): the per-feature ``[state, rule]`` tables and their copies, the
        ``cells x rules`` matrix of changes (or the chunked costs under constraints) with its broadcast copy, and
        the per-cell states, patterns and rule ids. 20,000 nested rules on one numeric feature make 40,001 cells
        but 40,001 x 20,000 table entries: several GB although the cell count is small."""
        n_features = len(self.dims)
        states = sum(self.dims)
        if self.constraints is None:
            per_change = 1 if n_features < 255 else 2
            tables = states * n_rules * (2 + per_change)  # bool table, permuted copy, cast copy
            solve = 2 * self.n_cells * n_rules * per_change  # the changes matrix and the one it grows from
        else:
            tables = states * n_rules * (1 + 8 + 8)  # bool table, int64 costs, their masks
            solve = 3 * min(self.n_cells, 8192) * n_rules * 8  # one chunk's costs, keys and picks
        per_cell = self.n_cells * (5 * n_features + 48)  # int32 states, bool outside, int64 rule / pattern / metarule
        return tables + solve + per_cell

    def check_size(self, max_cells: int, n_rules: int) -> None:
        if self.n_cells > max_cells:
            raise CellLimitError(cell_limit_message(self.n_cells, self.dims, n_rules, max_cells))

    # ------------------------------------------------------------------ coordinates
    def states(self, enc: Encoded) -> np.ndarray:
        """(n_rows, n_features) state of every row on every feature."""
        out = np.zeros((len(enc), len(self.dims)), dtype=np.int64)
        for i in range(len(self.dims)):
            if self.dims[i] == 1:
                continue
            slot = self.schema.slot[i]
            if self.schema.features[i].is_categorical:
                out[:, i] = self.state_of_category[slot][enc.cat[:, slot]]
            else:
                out[:, i] = numeric_state(self.bounds[slot], enc.num[:, slot])
        return out

    def cells(self, enc: Encoded, rows: np.ndarray | None = None) -> np.ndarray:
        """``flat(states(enc))`` of the rows (all, or the indices ``rows``) without the (n, features) state matrix:
        each feature's state times its stride, summed in place. Categorical states come from one gather of the
        codes; numeric states from :func:`numeric_state` (features with one state add nothing)."""
        n = len(enc) if rows is None else len(rows)
        out = np.zeros(n, dtype=np.int64)
        stride = 1
        for i in range(len(self.dims) - 1, -1, -1):  # C order: the last feature varies fastest
            k = self.dims[i]
            if k > 1:
                slot = self.schema.slot[i]
                if self.schema.features[i].is_categorical:
                    col = enc.cat[:, slot] if rows is None else enc.cat[rows, slot]
                    state = (self.state_of_category[slot] * stride).take(col)
                else:
                    col = enc.num[:, slot] if rows is None else enc.num[rows, slot]
                    state = numeric_state(self.bounds[slot], col)
                    if stride != 1:
                        state *= stride
                out += state
            stride *= k
        return out

    def flat(self, states: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple(states.T), self.dims) if len(self.dims) else np.zeros(len(states), int)

    def all_states(self) -> np.ndarray:
        """(n_cells, n_features) states of every cell, in flat (C) order."""
        grids = np.indices(self.dims, dtype=np.int32).reshape(len(self.dims), -1)
        return grids.T

    def interval(self, i: int, first_state: int, last_state: int) -> tuple[float, float]:
        """Real bounds ``(low, high]`` of numeric feature i's states first..last (inclusive)."""
        b = self.bounds[self.schema.slot[i]]
        low = b[first_state - 1] if first_state > 0 else -np.inf
        high = b[last_state] if last_state < len(b) else np.inf
        return float(low), float(high)

    # ------------------------------------------------------------------ per-(state, rule) tables
    def outside_tables(self, rules: Boxes) -> list[np.ndarray]:
        """Per feature, ``outside[state, rule]``: a point in that state lies outside the rule on that feature."""
        tables = []
        for i in range(len(self.dims)):
            slot = self.schema.slot[i]
            if self.schema.features[i].is_categorical:
                rep = self.category_of_state[slot]
                tables.append(~rules.allowed[slot][:, rep].T)
            else:
                b = self.bounds[slot]
                state_low = np.concatenate([[-np.inf], b])
                state_high = np.concatenate([b, [np.inf]])
                inside = ((rules.low[:, slot][None, :] <= state_low[:, None])
                          & (state_high[:, None] <= rules.high[:, slot][None, :]))
                tables.append(~inside)
        return tables


def cost_tables(grid: Grid, rules: Boxes, outside: list[np.ndarray]) -> list[np.ndarray]:
    """Per feature, the int64 cost ``[state, rule]`` of satisfying the rule under the constraints: 0 inside, the
    weight (in 1/1000 units) for an allowed change, FORBIDDEN for a change a constraint rules out."""
    schema = grid.schema
    tables = []
    for i, out in enumerate(outside):
        c = grid.constraints.features[i]
        cost = np.where(out, c.weight_units, 0).astype(np.int64)
        if c.kind == IMMUTABLE:
            cost[out] = FORBIDDEN
        elif schema.features[i].is_categorical and c.transitions:
            slot = schema.slot[i]
            reach = grid.constraints.transition_matrix(i)[grid.category_of_state[slot]]  # (states, k)
            ok = (reach.astype(np.int64) @ rules.allowed[slot].T.astype(np.int64)) > 0  # (states, rules)
            cost[out & ~ok] = FORBIDDEN
        elif c.kind in (INCREASE, DECREASE):
            slot = schema.slot[i]
            b = grid.bounds[slot]
            state_high = np.concatenate([b, [np.inf]])
            below = state_high[:, None] <= rules.low[:, slot][None, :]  # the state lies at or below the rule
            cost[out & (~below if c.kind == INCREASE else below)] = FORBIDDEN
        tables.append(cost)
    return tables


def optimal_rules_weighted(tables: list[np.ndarray], n_inside: np.ndarray, n_fit_rows: int, dims: list[int],
                           unit: int, chunk: int = 8192) -> np.ndarray:
    """Step (d) under constraints: per cell the rule minimising ``weighted changes - feasibility`` (exactly, as
    the integer key ``W * N - unit * n``; ties to the earlier rule), or -1 where every rule is forbidden."""
    n_cells = math.prod(dims)
    best = np.empty(n_cells, dtype=np.int64)
    feas = unit * np.asarray(n_inside, dtype=np.int64)
    for start in range(0, n_cells, chunk):
        cells = np.arange(start, min(start + chunk, n_cells))
        states = np.unravel_index(cells, dims)
        cost = np.zeros((len(cells), len(n_inside)), dtype=np.int64)
        for i, table in enumerate(tables):
            cost += table[states[i]]
        np.minimum(cost, FORBIDDEN, out=cost)
        key = cost * n_fit_rows - feas[None, :]
        pick = np.argmin(key, axis=1)
        best[cells] = np.where(cost[np.arange(len(cells)), pick] >= FORBIDDEN, -1, pick)
    return best


def optimal_rules(tables: list[np.ndarray], n_inside: np.ndarray, dims: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Step (d): for every cell (flat C order), the rule minimising ``changes - feasibility`` and its changes.

    Ties in changes go to the larger rule, then to the earlier rule: the integer key ``changes*(N+1) - n``
    ordered lexicographically. Columns are permuted so that a plain first-occurrence argmin over small
    integers implements that key, with no int64 blow-up.
    """
    n_rules = len(n_inside)
    order = np.lexsort((np.arange(n_rules), -n_inside))  # larger n first, then earlier rule
    dtype = np.uint8 if len(tables) < 255 else np.uint16
    changes = np.zeros((1, n_rules), dtype=dtype)
    for table in tables:  # outer sum over features, in C order: the last feature varies fastest
        t = table[:, order].astype(dtype)
        changes = (changes[:, None, :] + t[None, :, :]).reshape(-1, n_rules)
    best = np.argmin(changes, axis=1)
    return order[best], changes[np.arange(len(best)), best].astype(np.int64)
