"""Recourse that works, and says exactly what it verified.

A rule is only tau-accurate on average, so the model may disagree at the point a rule's advice leads to. This
module finds, for every row that needs recourse, a point that *is* the advice and that the model confirms:

1. **The paper's optimal rule.** The point changes exactly the features where the row lies outside the rule (the
   features the advice names); every other feature keeps the row's value. Each changed feature takes a value the
   data holds inside the rule's allowed range (``rule_values``: the observed values nearest to each end of the
   rule's interval and quantiles of the rule's in-target rows; the allowed categories by frequency), never an
   interpolated one, so a special code such as -7/-8/-9 is never split and no value lies outside the observed
   range. The nearest such point first (``boundary``), then deeper ones (``searched``), in a fixed order of
   depth (the sum of the features' ranks, then the largest rank): the same order whatever the scale.
2. **The next rules in cost order.** When no point of the optimal rule is confirmed, every other rule of the
   row's target that the constraints allow, cheapest first (weighted changes, then the larger rule, then the
   earlier one: the order of the metarules' own optimisation), with the same points; the cheapest rule with a
   confirmed point is the recommendation (``next_rule``).
3. **A minimal change beyond the rules.** When no rule has a confirmed point: the nearest reference row the
   constraints allow whose model output is in the target (valid by construction), then the person's own values
   given back: every subset of the differing features when they are few (the confirmed one with the fewest
   changes, then the nearest), else one feature at a time (the one whose return keeps the point closest first)
   for as long as the model still confirms it (``minimal_change``). With ``max_changes`` only subsets of at most
   that many features, and a row whose nearest case needs more tries the next nearest (``MAX_CASES`` in all).
   With ``max_changes`` above ``SHORT_FIRST`` (2), stages 1-3 run first for advice of at most 2 changes, then,
   for the rows left without verified recourse, up to ``max_changes``: short advice wherever one is verified.
   The longer pass reuses what the short one learnt about a row (its nearest cases, the subset sizes of each case
   already scored with none confirmed) instead of scoring those points again. When the constraints or the special
   codes bar every case that could serve a row (its history, protected attributes and codes match no real case
   with the target output), the nearest such cases are *projected* onto what the row may change — the case's
   value where the move is allowed, the row's own elsewhere, nearest by the moves that remain — and scored in
   tiers (``PROJECTED_TIERS``): the nearest confirmed single move of any projection first, else the nearest
   confirmed projection with the row's own values given back (``minimal_change`` too: a point the model
   confirms, changing only what the person may change).
4. Otherwise no verified recourse; the nearest reference row with the target output is offered as a *similar
   case* (``example``), never counted as verified.

Every candidate point is scored on the model in batches: one call per stage and chunk of rows (``CHUNK_ROWS``), a
stage being the candidates every live row tries next (the nearest point, the paper's rule deeper in tiers of
ranks, the next rules, the subsets of one size beyond the rules), so a row stops being scored once its answer is
known and the model sees few, large calls; the choice is the same as scoring everything at once. Nothing here
needs the fit rows except through ``rule_values`` (exported in the JSON) and the reference rows of step 3-4
(the fit rows by default; ``reference=`` for an explainer restored from JSON), so an explainer restored from JSON
and given the same model and reference rows returns the same points, sources and flags.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...constraints import DECREASE, IMMUTABLE, INCREASE, UNIT
from ..base._data import Encoded
from ..base._nearest import PercentileScale, nearest_in_interval
from ..base._in_target import contained
from ..explaining._lookup import RowLookup
from ..fitting._state import FittedState
from ...vocabulary import BOUNDARY, EXAMPLE, MINIMAL_CHANGE, NEXT_RULE, SEARCHED, SOURCES

#: Observed values kept nearest to each end of a rule's interval (the nearest points of the rule in the data).
NEAR_VALUES = 4
#: Quantiles of the rule's in-target fit rows kept as deeper values of each feature the rule constrains.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
#: Up to this many combinations of the changed features' values, every combination is tried; beyond it, the
#: features move deeper together and one at a time.
MAX_PRODUCT = 64
#: Next rules (in cost order) tried with every combination first; the rest with the joint moves only, this many
#: rules at a time (a target with hundreds of rules is searched only as far as some row still needs).
FIRST_NEXT_RULES = 3
NEXT_RULES_STEP = 8
#: Rows whose candidates are scored together: at most CHUNK_ROWS, and at most CHUNK_CELLS rows x features (a
#: round's points are a few dozen per row, up to 192 in the worst case, so this bounds its memory at a few hundred
#: MB). One model call per stage and chunk, and a model call has a fixed cost far above scoring a point, so chunks
#: are large.
CHUNK_ROWS = 32_768
CHUNK_CELLS = 1 << 18
#: The paper's rule searched deeper in tiers of ranks (in the order points are tried: the first tier is the next
#: nearest point), one model call each for the rows no earlier tier served: most rows it serves stop early.
DEEPER_TIERS = (1, 2, 4, 8, 16)
#: Up to this many rows (a test fold, one row of the dashboard), every round of the rule search is scored in one
#: model call: candidates of later rounds are built for rows an earlier round repairs (and ignored), which costs
#: less than another call on batches this small.
ONE_CALL_ROWS = 200
#: A minimal change beyond the rules tries every subset of the differing features up to this many (2**8 points a
#: row, one model call); rows further from their nearest real case give features back one at a time.
MAX_SUBSET_FEATURES = 8
#: With ``max_changes``, rows differing from their nearest real case in more features still try every subset of
#: at most max_changes of them when there are at most this many (12 features and max_changes 3: 298).
MAX_SUBSETS = 512
#: With ``max_changes`` above this, advice of at most this many changes is searched first (every stage), and the
#: longer advice up to ``max_changes`` only for the rows left without (docs/benchmarks.md section 11).
SHORT_FIRST = 2
#: With ``max_changes``, a row whose nearest allowed real case needs a longer change tries the next nearest ones,
#: up to this many in all.
MAX_CASES = 8
#: When no allowed real case leads to a change of at most ``max_changes`` features (the constraints bar every
#: case: the person's history, protected attributes, codes), the nearest real cases with the target output are
#: projected onto what the constraints let the person change (their own value kept wherever a move is barred) and
#: scored as starting points, nearest first in tiers: the first 32, then up to 128, then up to 512 for the rows no
#: earlier tier served (a far case often moves what the near ones leave: a larger payment, a higher limit).
PROJECTED_TIERS = (32, 128, 512)
#: Projected values (rows x cases x features) held at a time by that stage: its memory bound (about 64 MB of
#: float64 per array), whatever the number of rows.
PROJECTED_CELLS = 1 << 23
#: Row x reference-row distances computed at a time when looking for the nearest reference row.
EXAMPLE_CHUNK = 1 << 18
_SRC = {s: i for i, s in enumerate(SOURCES)}


# ------------------------------------------------------------------------------------------ per-rule values
def compute_rule_values(fit: Encoded, fit_y, sol) -> list[dict]:
    """Per rule of ``sol``: numeric slot -> ascending observed values inside the rule's interval (the
    ``NEAR_VALUES`` nearest each end and the ``QUANTILES`` of the rule's in-target rows), for every numeric
    feature the rule constrains. What the search inside the rules needs from the fit data (exported in JSON)."""
    n_rules = sol.n_rules
    out = [dict() for _ in range(n_rules)]
    if not n_rules or not len(fit) or not fit.num.shape[1]:
        return out
    in_target = sol.target.contains(fit_y)
    inside = sol.rules.contains(fit)  # (n, R)
    for j in range(fit.num.shape[1]):
        lows, highs = sol.rules.low[:, j], sol.rules.high[:, j]
        constrained = np.flatnonzero(np.isfinite(lows) | np.isfinite(highs))
        if not len(constrained):
            continue
        col = fit.num[:, j]
        uniq = np.unique(col)
        for r in constrained:
            a, b = np.searchsorted(uniq, lows[r], side="right"), np.searchsorted(uniq, highs[r], side="right")
            vals = uniq[a:b]
            if not len(vals):
                continue
            parts = [vals[:NEAR_VALUES], vals[-NEAR_VALUES:]]
            rows = inside[:, r] & in_target
            if not rows.any():
                rows = inside[:, r]
            if rows.any():
                parts.append(np.quantile(col[rows], QUANTILES, method="inverted_cdf"))
            out[r][j] = np.unique(np.concatenate(parts))
    return out


def rule_values(state: FittedState, t: int):
    """Target ``t``'s per-rule values: restored from JSON, or computed once from the fit rows (kept in the state's
    declared cache); None when the state has neither (the rules' nearest points are then used, see
    :meth:`Candidates._numeric_options`)."""
    if state.rule_values is not None and t < len(state.solutions):
        return state.rule_values[t]
    cached = state.cache.rule_values
    if t not in cached:
        cached[t] = (compute_rule_values(state.fit_enc, state.fit_y, state.all_solutions()[t])
                     if state.has_fit_data else None)
    return cached[t]


# ------------------------------------------------------------------------------------------ model calls
class Scorer:
    """The model's outputs on encoded points, and whether they are in each point's target."""

    def __init__(self, model_call, targets):
        self.model_call, self.targets, self.calls = model_call, targets, 0

    def outputs(self, enc: Encoded) -> np.ndarray:
        if not len(enc):
            return np.zeros(0, dtype=object)
        self.calls += 1
        return self.model_call(enc)

    def in_target(self, out: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        return contained(self.targets, out, np.asarray(tgt, dtype=np.int64))


def _objects(out: np.ndarray) -> np.ndarray:
    """Model outputs as an object array of Python scalars (numpy scalars become Python ones)."""
    out = np.asarray(out)
    if out.dtype != object:  # a numeric, bool or text array: astype gives Python scalars, as .item() would
        return out.astype(object)
    return np.array([v.item() if isinstance(v, np.generic) else v for v in out] + [None], dtype=object)[:-1]


def group_codes(columns) -> np.ndarray:
    """Per row, the code of its tuple of values in ``columns`` (integer arrays of one length), codes numbered in
    order of first appearance: a grouping of rows on several columns by hashing, without sorting rows."""
    code = None
    for col in columns:
        col = np.asarray(col, dtype=np.int64)
        if not len(col):
            return np.zeros(0, dtype=np.int64)
        if code is None:
            code = pd.factorize(col)[0].astype(np.int64)
        else:  # both stay below the number of rows, so the pair fits an int64
            code = pd.factorize(code * (int(col.max()) - int(col.min()) + 1) + (col - int(col.min())))[0] \
                .astype(np.int64)
    return code


def first_rows(code: np.ndarray) -> np.ndarray:
    """Per group of :func:`group_codes`, its first row."""
    first = np.full(int(code.max()) + 1 if len(code) else 0, len(code), dtype=np.int64)
    np.minimum.at(first, code, np.arange(len(code)))
    return first


def group_rows(columns) -> list:
    """The rows of each group of :func:`group_codes`, ascending, groups in order of first appearance."""
    code = group_codes(columns)
    if code is None or not len(code):
        return []
    order = np.argsort(code, kind="stable")
    return np.split(order, np.cumsum(np.bincount(code))[:-1])


# ------------------------------------------------------------------------------------------ the result
@dataclass
class Recourse:
    """Per input row (arrays of the input's length)."""

    point: Encoded  # the recommended point (the row itself where there is none)
    needing: np.ndarray  # bool: the row's output is not in its target
    found: np.ndarray  # bool: a point the model confirms (verified, or a similar case)
    source: np.ndarray  # int: index into SOURCES, -1 where nothing was found
    output: np.ndarray  # object: the model's output at the point
    rule: np.ndarray  # int: the recommended rule (within the row's target), -1 where none
    changed: np.ndarray  # (n, n_features) bool: the features the point changes
    nearest: Encoded  # the recommended rule's nearest point (its first candidate), the row where no rule
    nearest_output: np.ndarray  # object: the model's output there (None where not scored)
    boundary: Encoded  # the paper's optimal rule's nearest point in the data
    boundary_checked: np.ndarray  # bool
    boundary_valid: np.ndarray  # bool
    boundary_output: np.ndarray  # object
    notes: list = field(default_factory=list)  # what could not be done (e.g. no reference rows)
    #: False when rows needed the search beyond the rules but no reference rows were held (a restored explainer
    #: given none): their sentence says so instead of "no reference row reaches ..."
    searched_beyond: bool = True
    n_model_calls: int = 0
    n_candidates: int = 0
    n_tree_points: int = 0  # candidate points scored on the model's own trees (tcrex._engine.recourse._tree_scoring)
    n_beyond_max: int = 0  # rows whose change that works (beyond the rules) needs more than max_changes features

    @property
    def verified(self) -> np.ndarray:
        return self.found & (self.source >= 0) & (self.source != _SRC[EXAMPLE])


# ------------------------------------------------------------------------------------------ candidate points
def _rank_vectors(lengths: tuple) -> np.ndarray:
    """Rank vectors (one rank per changed feature, 0 = its nearest value) in the order they are tried: every
    combination when there are few, else the features moving deeper together and one at a time; ordered by the
    sum of ranks, then the largest rank, then generation order. Row 0 is all zeros (the nearest point)."""
    c = len(lengths)
    if c == 0:
        return np.zeros((1, 0), dtype=np.int64)
    if int(np.prod(lengths)) <= MAX_PRODUCT:
        grids = np.meshgrid(*[np.arange(n) for n in lengths], indexing="ij")
        vec = np.stack([g.reshape(-1) for g in grids], axis=1)
    else:
        depth = max(lengths)
        joint = np.minimum(np.arange(depth)[:, None], np.asarray(lengths)[None, :] - 1)
        singles = []
        for j, n in enumerate(lengths):
            v = np.zeros((n, c), dtype=np.int64)
            v[:, j] = np.arange(n)
            singles.append(v)
        vec = np.concatenate([joint] + singles)
        _, first = np.unique(vec, axis=0, return_index=True)
        vec = vec[np.sort(first)]
    order = np.lexsort((np.arange(len(vec)), vec.max(axis=1), vec.sum(axis=1)))
    return vec[order].astype(np.int64)


_RANKS: dict = {}


def value_class(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per value, 0 for an ordinary value and ``1 + c`` for the special code ``codes[c]``."""
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros(values.shape, dtype=np.int64)
    for c, code in enumerate(codes):
        out[values == code] = 1 + c
    return out


def _default_moves(feature) -> tuple[np.ndarray, np.ndarray]:
    """A feature's codes and the moves allowed without constraints: none into or out of a code."""
    codes = np.asarray(feature.special_codes, dtype=np.float64)
    return codes, np.eye(len(codes) + 1, dtype=bool)


def _ranks(lengths: tuple, joint_only: bool) -> np.ndarray:
    key = (lengths, joint_only)
    if key not in _RANKS:
        vec = _rank_vectors(lengths)
        if joint_only and len(lengths):  # the nearest point and the features moving deeper together
            keep = (vec == vec.max(axis=1, keepdims=True)).all(axis=1) | (vec == np.minimum(
                vec.max(axis=1, keepdims=True), np.asarray(lengths)[None, :] - 1)).all(axis=1)
            vec = vec[keep]
        _RANKS[key] = vec
    return _RANKS[key]


class Candidates:
    """Candidate points of rows for rules: built per group of rows that share a rule and the way they reach it."""

    def __init__(self, state: FittedState, enc: Encoded, targets):
        self.state, self.enc, self.targets = state, enc, targets
        self.schema = state.schema
        cons = state.constraints.features if state.constraints is not None else None
        self.kind = [c.kind for c in cons] if cons is not None else ["free"] * len(self.schema)
        self.weight = np.array([c.weight_units for c in cons] if cons is not None else [UNIT] * len(self.schema),
                               dtype=np.int64)
        self.trans = state.transitions()
        self.pref = state.category_preference
        self.integer = np.array([self.schema.features[i].integer for i in self.schema.numeric], dtype=bool)
        self.num_kind = np.array([self.kind[i] for i in self.schema.numeric], dtype=object)
        self.cat_kind = np.array([self.kind[i] for i in self.schema.categorical], dtype=object)
        self.values = {}
        self.notes = []
        self.max_changes = state.max_changes
        # special codes: per numeric slot with codes, (codes, allowed moves between value classes) and each row's
        # class (0: an ordinary value, 1 + c: the code codes[c]); a point keeps a feature's class unless allowed
        self.codes = {}
        self.origin = {}
        for j, i in enumerate(self.schema.numeric):
            if self.schema.features[i].special_codes:
                codes, moves = (state.constraints.code_moves(i) if state.constraints is not None
                                else _default_moves(self.schema.features[i]))
                self.codes[j] = (codes, moves)
                self.origin[j] = value_class(enc.num[:, j], codes)
        self.has_option = {}

    def _values(self, t: int):
        if t not in self.values:
            self.values[t] = rule_values(self.state, t)
            if self.values[t] is None:
                self.notes.append(f"the rules of target {self.targets[t].target.describe()} carry no observed "
                                  "values (a file written before version 4, or no fit rows): their points use "
                                  "each rule's nearest values instead")
        return self.values[t]

    # -------------------------------------------------------------- reachability and cost of rules for rows
    def reach(self, rows: np.ndarray, t: int, rules: np.ndarray):
        """For rows x rules: numeric / categorical outside masks, (n, R) forbidden and (n, R) cost key."""
        sol = self.targets[t]
        x = self.enc.take(rows)
        low, high = sol.rules.low[rules], sol.rules.high[rules]  # (R, m)
        xn = x.num[:, None, :]
        below, above = xn <= low[None], xn > high[None]
        num_out = below | above
        forbidden = np.zeros((len(rows), len(rules)), dtype=bool)
        for j, kind in enumerate(self.num_kind):
            if kind == IMMUTABLE:
                forbidden |= num_out[:, :, j]
            elif j in self.codes:  # the direction and the code moves both decide which options a rule has
                has = self._has_option(t, j)[rules]  # (R, classes, 2: down / up)
                origin = self.origin[j][rows]
                reachable = has[np.arange(len(rules))[None, :], origin[:, None], below[:, :, j].astype(np.int64)]
                forbidden |= num_out[:, :, j] & ~reachable
            elif kind == INCREASE:
                forbidden |= above[:, :, j]
            elif kind == DECREASE:
                forbidden |= below[:, :, j]
        cat_out = np.zeros((len(rows), len(rules), x.cat.shape[1]), dtype=bool)
        for j, allowed in enumerate(sol.rules.allowed):
            a = allowed[rules]  # (R, k)
            cat_out[:, :, j] = ~a[:, x.cat[:, j]].T
            if self.cat_kind[j] == IMMUTABLE:
                forbidden |= cat_out[:, :, j]
            elif self.trans is not None and self.trans[j] is not None:
                reachable = (self.trans[j][x.cat[:, j]].astype(np.int64) @ a.T.astype(np.int64)) > 0  # (n, R)
                forbidden |= cat_out[:, :, j] & ~reachable
        w_num = self.weight[self.schema.numeric] if len(self.schema.numeric) else np.zeros(0, dtype=np.int64)
        w_cat = self.weight[self.schema.categorical] if len(self.schema.categorical) else np.zeros(0, np.int64)
        cost = num_out.astype(np.int64) @ w_num + cat_out.astype(np.int64) @ w_cat
        if self.max_changes is not None:  # advice beyond max_changes features is not given
            forbidden |= (num_out.sum(axis=2) + cat_out.sum(axis=2)) > self.max_changes
        key = cost * sol.n_fit_rows - UNIT * sol.rule_n[rules][None, :]
        return num_out, cat_out, forbidden, cost, key

    def _has_option(self, t: int, j: int) -> np.ndarray:
        """(rules, value classes, 2) bool: does rule r of target t offer numeric slot j a value a row of that
        class may move to, moving down (0) or up (1)?"""
        if (t, j) not in self.has_option:
            n_classes = len(self.codes[j][0]) + 1
            has = np.zeros((self.targets[t].n_rules, n_classes, 2), dtype=bool)
            for r in range(self.targets[t].n_rules):
                for o in range(n_classes):
                    for up in (0, 1):
                        has[r, o, up] = len(self._numeric_options(t, r, j, bool(up), o)) > 0
            self.has_option[(t, j)] = has
        return self.has_option[(t, j)]

    # -------------------------------------------------------------- options of one changed feature
    def _numeric_options(self, t: int, r: int, j: int, up: bool, origin: int = 0) -> np.ndarray:
        """The values numeric slot j may take inside rule r, nearest first; for a feature with special codes only
        those a row of value class ``origin`` may move to (a code only where a transition allows it; an ordinary
        value in the feature's direction)."""
        values = self._values(t)
        vals = values[r].get(j) if values is not None else None
        sol = self.targets[t]
        low, high = sol.rules.low[r, j], sol.rules.high[r, j]
        if vals is None or not len(vals):  # no data to draw values from: the rule's nearest point
            start = low if up else high
            vals = nearest_in_interval(np.array([start - 1.0 if up else start + 1.0]) if np.isfinite(start)
                                       else np.array([0.0]), low, high, self.integer[j])
        elif not up:
            vals = vals[::-1]
        if j not in self.codes:
            return vals
        codes, moves = self.codes[j]
        cls = value_class(vals, codes)
        keep = moves[origin][cls]
        kind = self.num_kind[j]
        if origin == 0 and ((kind == INCREASE and not up) or (kind == DECREASE and up)):
            keep &= cls > 0  # an ordinary value against the direction: only a code a transition allows
        return vals[keep]

    def _category_options(self, t: int, r: int, j: int, frm: int) -> np.ndarray:
        allowed = self.targets[t].rules.allowed[j][r].copy()
        if self.trans is not None and self.trans[j] is not None:
            allowed &= self.trans[j][frm]
        cats = np.flatnonzero(allowed)
        if self.pref is not None:
            cats = cats[np.argsort(-self.pref[j][cats], kind="stable")]
        return cats

    # -------------------------------------------------------------- candidate blocks
    def build(self, rows: np.ndarray, t: int, r: int, num_out: np.ndarray, cat_out: np.ndarray,
              joint_only: bool = False, ranks_from: int = 0, ranks_to: int | None = None):
        """Candidate points of ``rows`` (all reaching rule ``r`` of target ``t``; ``num_out``/``cat_out`` their
        outside masks) as (num, cat, owner position in rows, rank order) with the nearest point at rank 0; only
        the ranks from ``ranks_from`` to before ``ranks_to`` (None: the last)."""
        x = self.enc.take(rows)
        sol = self.targets[t]
        up = x.num <= sol.rules.low[r][None, :]
        # rows grouped by how they reach the rule: which features change, in which direction, from which category
        origin = np.zeros(x.num.shape, dtype=np.int64)
        for j in self.codes:
            origin[:, j] = self.origin[j][rows]
        sig = np.concatenate([num_out.astype(np.int64) * (1 + up.astype(np.int64) + 2 * origin),
                              np.where(cat_out, x.cat + 1, 0)], axis=1)
        nums, cats, owners, orders = [], [], [], []
        m = x.num.shape[1]
        for members in group_rows(sig.T):
            key = sig[members[0]]
            slots, options = [], []
            for j in np.flatnonzero(key[:m]):
                slots.append(("n", j))
                options.append(self._numeric_options(t, r, j, bool(up[members[0], j]),
                                                     int(origin[members[0], j])))
            for j in np.flatnonzero(key[m:]):
                slots.append(("c", j))
                options.append(self._category_options(t, r, j, key[m + j] - 1))
            if any(len(o) == 0 for o in options):
                continue
            ranks = _ranks(tuple(len(o) for o in options), joint_only)
            rank_ids = np.arange(len(ranks))[ranks_from:ranks_to]
            ranks = ranks[ranks_from:ranks_to]
            k = len(ranks)
            if not k:
                continue
            num = np.repeat(x.num[members][None], k, axis=0)
            cat = np.repeat(x.cat[members][None], k, axis=0)
            for s, ((kind, j), opts) in enumerate(zip(slots, options)):
                v = opts[ranks[:, s]]
                if kind == "n":
                    num[:, :, j] = v[:, None]
                else:
                    cat[:, :, j] = v[:, None]
            nums.append(num.reshape(k * len(members), m))
            cats.append(cat.reshape(k * len(members), x.cat.shape[1]))
            owners.append(np.tile(members, k))
            orders.append(np.repeat(rank_ids, len(members)))
        if not nums:
            return None
        return np.concatenate(nums), np.concatenate(cats), np.concatenate(owners), np.concatenate(orders)


# ------------------------------------------------------------------------------------------ the search
def find_recourse(state: FittedState, enc: Encoded, res: RowLookup, model_call, *, reference=None) -> Recourse:
    """See the module doc. ``res``: the explainer's lookup of the rows; ``model_call(enc) -> outputs``;
    ``reference``: (encoded rows, their model outputs, PercentileScale) for steps 3-4, or None."""
    targets = state.all_solutions()
    n = len(enc)
    d = len(state.schema)
    tgt, paper_rule = res.target_id, res.rule
    needing = tgt >= 0
    scorer = Scorer(model_call, targets)
    cands = Candidates(state, enc, targets)
    point = Encoded(enc.num.copy(), enc.cat.copy())
    nearest = Encoded(enc.num.copy(), enc.cat.copy())
    rec = Recourse(point=point, needing=needing, found=np.zeros(n, dtype=bool),
                   source=np.full(n, -1, dtype=np.int64), output=np.full(n, None, dtype=object),
                   rule=np.full(n, -1, dtype=np.int64), changed=np.zeros((n, d), dtype=bool),
                   nearest=nearest, nearest_output=np.full(n, None, dtype=object),
                   boundary=Encoded(enc.num.copy(), enc.cat.copy()), boundary_checked=np.zeros(n, dtype=bool),
                   boundary_valid=np.zeros(n, dtype=bool), boundary_output=np.full(n, None, dtype=object))
    done = ~needing.copy()

    def accept(rows, num, cat, out, rule_of, source_of, near=None):
        point.num[rows], point.cat[rows] = num, cat
        rec.found[rows] = True
        rec.output[rows] = _objects(out)
        rec.rule[rows] = rule_of
        rec.source[rows] = source_of
        if near is not None:
            nearest.num[rows], nearest.cat[rows] = near[0], near[1]
            rec.nearest_output[rows] = near[2]
        done[rows] = True

    # short advice first: with max_changes above SHORT_FIRST, every stage is searched for advice of at most
    # SHORT_FIRST changes, then again up to max_changes for the rows it left without verified recourse
    most = state.max_changes
    limits = [most] if most is None or most <= SHORT_FIRST else [SHORT_FIRST, most]
    memory = {}  # what the search beyond the rules learnt in an earlier pass (see _beyond_rules)
    for limit in limits:
        cands.max_changes = limit
        rec.n_beyond_max = 0
        again = needing & ~(rec.found & (rec.source != _SRC[EXAMPLE]))  # rows still without verified recourse
        done[again] = False
        # 1-2: the paper's optimal rule, then 3: the next rules in cost order (rounds of rules per row)
        with_rule = np.flatnonzero(again & (paper_rule >= 0))
        _search_rules(cands, scorer, rec, with_rule, tgt, paper_rule, accept, done, targets)
        # 3: beyond the rules, 4: a similar case
        left = np.flatnonzero(again & ~done)
        if len(left):
            if callable(reference):  # computed only when some row needs it (it scores every reference row)
                reference = reference()
            if reference is None:
                rec.searched_beyond = False
                if limit == limits[-1]:
                    rec.notes.append(f"{len(left):,} row(s) have no rule point the model confirms; a change beyond "
                                     "the rules and similar cases need reference rows (reference=), which this "
                                     "explainer does not hold")
            else:
                _beyond_rules(cands, scorer, rec, left, tgt, reference, accept, memory)
    if rec.n_beyond_max:
        rec.notes.append(f"{rec.n_beyond_max:,} row(s) have no change of at most {cands.max_changes} features "
                         f"(max_changes) that the model confirms, from the rules or from their {MAX_CASES} nearest "
                         "real cases: they get no verified recourse, a similar case")
    rec.notes = cands.notes + rec.notes
    diff = (point.num != enc.num)
    rec.changed[:, state.schema.numeric] = diff
    rec.changed[:, state.schema.categorical] = point.cat != enc.cat
    rec.changed[~rec.found] = False
    point.num[~rec.found], point.cat[~rec.found] = enc.num[~rec.found], enc.cat[~rec.found]
    rec.n_model_calls = scorer.calls
    return rec


def _search_rules(cands, scorer, rec, rows, tgt, paper_rule, accept, done, targets):
    if not len(rows):
        return
    step = max(1, min(CHUNK_ROWS, CHUNK_CELLS // max(1, len(cands.schema))))
    for s in range(0, len(rows), step):
        chunk = rows[s:s + step]
        # per row, every reachable rule of its target in cost order (the paper's optimal rule first)
        plans = {}
        for t in np.unique(tgt[chunk]):
            sel = chunk[tgt[chunk] == t]
            sol = targets[t]
            rules = np.arange(sol.n_rules)
            num_out, cat_out, forbidden, cost, key = cands.reach(sel, t, rules)
            pr = paper_rule[sel]
            key = key.astype(np.float64)
            key[forbidden] = np.inf
            key[cost == 0] = np.inf  # the row is inside that rule and the model says no there
            # the paper's optimal rule first; it is searched only where allowed (special codes, max_changes)
            paper_ok = ~forbidden[np.arange(len(sel)), pr]
            key[np.arange(len(sel)), pr] = -np.inf
            order = np.argsort(key, axis=1, kind="stable")
            n_ok = np.isfinite(key).sum(axis=1) + 1  # + the paper rule (-inf counts as not finite)
            plans[t] = (sel, order, n_ok, num_out, cat_out, paper_ok)
        # rounds, in cost order: the paper's rule at its nearest point, then deeper; the next FIRST_NEXT_RULES rules
        # (every combination); the rest (joint moves). A small chunk scores every round in one model call (each
        # call has a fixed cost far above scoring a few thousand points); the choice is the same either way.
        most = max(plan[1].shape[1] for plan in plans.values())
        first = 1 + FIRST_NEXT_RULES
        if len(chunk) <= ONE_CALL_ROWS:  # the first rounds in one call; further rules, for the rows left
            rounds = [(0, 1, "nearest"), (0, 1, "deeper"), (1, first, "all")]
        else:  # the paper's rule deeper in tiers of ranks: most rows it serves stop at the first tiers
            rounds = [(0, 1, "nearest")] + [(0, 1, (lo, hi)) for lo, hi in zip(DEEPER_TIERS, DEEPER_TIERS[1:])] + [
                (0, 1, (DEEPER_TIERS[-1], None)), (1, first, "all")]
        rounds += [(lo, lo + NEXT_RULES_STEP, "joint") for lo in range(first, max(most, first), NEXT_RULES_STEP)]
        if len(chunk) <= ONE_CALL_ROWS:
            _score_round(rec, scorer, accept, [b for r in rounds[:4] for b in _round_blocks(cands, plans, done, *r)])
            rounds = rounds[4:]
        for r in rounds:
            if done[chunk].all():
                break
            _score_round(rec, scorer, accept, _round_blocks(cands, plans, done, *r))


def _round_blocks(cands, plans, done, lo, hi, mode) -> list:
    """Candidate blocks of the rules at cost positions ``lo`` to ``hi`` of every live row; ``mode``: "nearest"
    (rank 0 only), "deeper" (rank > 0), ``(first, stop)`` (ranks from ``first`` to before ``stop``, None: to the
    last), "all", or "joint" (the nearest point and joint moves only)."""
    blocks = []
    ranks = mode if isinstance(mode, tuple) else (0, 1) if mode == "nearest" else (1, None) if mode == "deeper" \
        else (0, None)
    for t, (sel, order, n_ok, num_out, cat_out, paper_ok) in plans.items():
        live = ~done[sel]
        if not live.any():
            continue
        top = order.shape[1] if hi is None else min(hi, order.shape[1])
        for pos in range(lo, top):
            use = live & (pos < n_ok)
            if pos == 0:  # the paper rule of rows inside it (already_in_rule), or barred, has nothing to try
                use &= paper_ok & ~((~num_out[np.arange(len(sel)), order[:, 0]]).all(axis=1)
                         & (~cat_out[np.arange(len(sel)), order[:, 0]]).all(axis=1))
            if not use.any():
                continue
            rule_at = order[:, pos]
            for r in np.unique(rule_at[use]):
                members = np.flatnonzero(use & (rule_at == r))
                b = cands.build(sel[members], t, int(r), num_out[members, r], cat_out[members, r], mode == "joint",
                                *ranks)
                if b is None:
                    continue
                num, cat, owner, rank = b
                blocks.append((num, cat, sel[members][owner], rank, np.full(len(owner), pos),
                               np.full(len(owner), r), np.full(len(owner), t)))
    return blocks


def _score_round(rec, scorer, accept, blocks) -> None:
    """Score candidate blocks in one model call; every row takes its first confirmed candidate in (rule position,
    rank) order, with the chosen rule's nearest point and its output (for the sentence)."""
    if not blocks:
        return
    num, cat, owner, rank, pos, rule, t_of = (np.concatenate(z) for z in zip(*blocks))
    if not len(owner):
        return
    out = scorer.outputs(Encoded(num, cat))
    ok = scorer.in_target(out, t_of)
    rec.n_candidates += len(owner)
    # the paper rule's nearest point: the boundary verdict of every row that had one
    first_paper = (pos == 0) & (rank == 0)
    b_rows = owner[first_paper]
    rec.boundary.num[b_rows], rec.boundary.cat[b_rows] = num[first_paper], cat[first_paper]
    rec.boundary_checked[b_rows] = True
    rec.boundary_valid[b_rows] = ok[first_paper]
    rec.boundary_output[b_rows] = _objects(out[first_paper])
    good = np.flatnonzero(ok)
    if not len(good):
        return
    good = good[np.lexsort((rank[good], pos[good], owner[good]))]
    first = np.r_[True, owner[good][1:] != owner[good][:-1]]
    best = good[first]
    # the chosen rule's nearest point: scored in this call, or (the paper's rule, searched deeper in a later
    # call) the boundary point checked before
    near_num, near_cat = num[best].copy(), cat[best].copy()
    near_out = np.full(len(best), None, dtype=object)
    zero = np.flatnonzero(rank == 0)
    if len(zero):
        n_r = int(rule.max()) + 1
        zkey = owner[zero] * n_r + rule[zero]
        zsort = np.argsort(zkey, kind="stable")
        want = owner[best] * n_r + rule[best]
        at = np.minimum(np.searchsorted(zkey[zsort], want), len(zsort) - 1)
        hit = zkey[zsort[at]] == want
        z = zero[zsort[at[hit]]]
        near_num[hit], near_cat[hit], near_out[hit] = num[z], cat[z], _objects(out[z])
    else:
        hit = np.zeros(len(best), dtype=bool)
    from_boundary = ~hit & (pos[best] == 0)
    rows = owner[best][from_boundary]
    near_num[from_boundary], near_cat[from_boundary] = rec.boundary.num[rows], rec.boundary.cat[rows]
    near_out[from_boundary] = rec.boundary_output[rows]
    source = np.where(pos[best] == 0, np.where(rank[best] == 0, _SRC[BOUNDARY], _SRC[SEARCHED]), _SRC[NEXT_RULE])
    accept(owner[best], num[best], cat[best], out[best], rule[best], source, near=(near_num, near_cat, near_out))


def _beyond_rules(cands, scorer, rec, rows, tgt, reference, accept, memory=None):
    """Steps 3-4 for ``rows`` (see the module doc).

    ``memory`` (a dict kept across the passes of :func:`find_recourse`) carries what an earlier pass learnt about
    the same rows, so that the pass of longer advice does not redo it: each row's nearest allowed
    cases (they do not depend on ``max_changes``), and per row and case the size up to which every subset of the
    features the case changes was scored and none confirmed (the short pass scores the subsets of at most 2 of
    them; the long pass starts at 3 for those rows). Both are facts about the rows, the reference rows and the
    model, so the answers are those of a search without memory."""
    if memory is None:
        memory = {}
    ref_enc, ref_out, scale = reference
    enc = cands.enc
    x = enc.take(rows)
    x_pct = scale.transform(x)
    for t in np.unique(tgt[rows]):
        sel = np.flatnonzero(tgt[rows] == t)
        in_t = np.flatnonzero(scorer.targets[t].target.contains(ref_out))
        if not len(in_t):
            continue
        pool = ref_enc.take(in_t)
        pool_pct = scale.transform(pool)
        # the nearest allowed real case first; with max_changes, a row whose change that works needs more
        # features tries the next nearest ones (up to MAX_CASES), each given back as far as the model agrees
        k = 1 if cands.max_changes is None else MAX_CASES
        cases = _remembered(memory, ("cases", t, k), rows[sel], lambda w: _nearest(
            cands, x.take(sel[w]), x_pct[sel[w]], pool, pool_pct, constrained=True, k=k))
        have = cases[:, 0] >= 0
        served = np.zeros(len(sel), dtype=bool)
        for attempt in range(cases.shape[1]):
            at = np.flatnonzero(have & ~served & (cases[:, attempt] >= 0))
            if not len(at):
                break
            pos = cases[at, attempt]
            r_rows = rows[sel[at]]
            known = _remembered(memory, ("failed", t, attempt), r_rows, lambda w: np.zeros(len(w), dtype=np.int64))
            num, cat, out, within = _give_back(cands, scorer, enc.take(r_rows), x_pct[sel[at]], pool.take(pos),
                                               scale, np.full(len(at), t), _objects(ref_out[in_t[pos]]), known=known)
            _remember(memory, ("failed", t, attempt), r_rows, known)
            accept(r_rows[within], num[within], cat[within], out[within], -1, _SRC[MINIMAL_CHANGE])
            served[at[within]] = True
        left = np.flatnonzero(~served & ~(cases[:, 0] >= 0))
        if len(left) and _any_bar(cands):
            # no real case is allowed to these rows at all (with constraints, a person's history or protected
            # attributes may match no real case): the nearest cases projected onto what the person can change.
            # Rows that have allowed cases, all needing more than max_changes features, keep that answer.
            r_rows = rows[sel[left]]
            got = _projected(cands, scorer, enc.take(r_rows), x_pct[sel[left]], pool, pool_pct, scale, t,
                             ids=r_rows, memory=memory.setdefault(("projected", t), {}))
            if got is not None:
                w, num, cat, out = got
                accept(r_rows[w], num, cat, out, -1, _SRC[MINIMAL_CHANGE])
                served[left[w]] = True
        failed = have & ~served  # every change that works needs more than max_changes features
        have[failed] = False
        rec.n_beyond_max += int(failed.sum())
        have[served] = True  # served by a projected case: no similar case needed
        if (~have).any():  # a similar case only: the nearest row with the target output that keeps the person's
            # immutable features (other constraints aside)
            lost = sel[~have]
            any_pos = _remembered(memory, ("similar", t), rows[lost], lambda w: _nearest(
                cands, x.take(lost[w]), x_pct[lost[w]], pool, pool_pct, constrained=IMMUTABLE))
            ok = any_pos >= 0
            if ok.any():
                e = pool.take(any_pos[ok])
                accept(rows[sel[~have][ok]], e.num, e.cat, ref_out[in_t[any_pos[ok]]], -1, _SRC[EXAMPLE])


def _num_move_barred(cands, j: int, xv: np.ndarray, pv: np.ndarray) -> np.ndarray:
    """Whether the constraints and the special codes bar the move of numeric slot ``j`` from ``xv`` to ``pv``
    (broadcastable arrays): a changed immutable value, a move into or out of a code that no transition allows, a
    move against the feature's direction between ordinary values. What :func:`_nearest` bars a reference row for
    and what a projection keeps the row's own value for."""
    kind = cands.num_kind[j]
    if kind == IMMUTABLE:
        return pv != xv
    barred = np.zeros(np.broadcast_shapes(np.shape(xv), np.shape(pv)), dtype=bool)
    ordinary = True
    if j in cands.codes:  # moves into / out of a code: the transitions decide
        codes, moves = cands.codes[j]
        ox, op = value_class(xv, codes), value_class(pv, codes)
        barred |= ~moves[ox, op]
        ordinary = (ox == 0) & (op == 0)  # a direction holds between values
    if kind == INCREASE:
        barred |= (pv < xv) & ordinary
    elif kind == DECREASE:
        barred |= (pv > xv) & ordinary
    return barred


def _cat_move_barred(cands, j: int, xc: np.ndarray, pc: np.ndarray) -> np.ndarray:
    """Whether the constraints bar the move of categorical slot ``j`` from ``xc`` to ``pc`` (broadcastable)."""
    if cands.cat_kind[j] == IMMUTABLE:
        return xc != pc
    if cands.trans is not None and cands.trans[j] is not None:
        return ~cands.trans[j][xc, pc] & (xc != pc)
    return np.zeros(np.broadcast_shapes(np.shape(xc), np.shape(pc)), dtype=bool)


def _num_move_allowed(cands, j: int, xv: np.ndarray, pv: np.ndarray) -> np.ndarray:
    """Whether moving numeric slot ``j`` from ``xv`` to ``pv`` is a change the constraints allow (a missing value
    on either side never moves)."""
    return (pv != xv) & ~np.isnan(xv) & ~np.isnan(pv) & ~_num_move_barred(cands, j, xv, pv)


def _cat_move_allowed(cands, j: int, xc: np.ndarray, pc: np.ndarray) -> np.ndarray:
    """Whether moving categorical slot ``j`` from ``xc`` to ``pc`` is a change the constraints allow."""
    return (xc != pc) & ~_cat_move_barred(cands, j, xc, pc)


def _projected(cands, scorer, x: Encoded, x_pct, pool: Encoded, pool_pct, scale, t: int, ids=None, memory=None):
    """A minimal change beyond the rules for rows no allowed real case serves: each row's nearest real cases with
    the target output (up to ``PROJECTED_TIERS[-1]``, nearest by the moves that remain), projected onto what the
    constraints let the row change (the case's value where the move is allowed, the row's own value elsewhere),
    scored on the model in tiers; from the nearest confirmed projection, the row's own values given back as in
    step 3. Returns (positions in ``x`` served, their points' num, cat and outputs) or None when none is.

    Rows go in chunks of at most ``PROJECTED_CELLS`` projected values (rows x cases x features), so the memory of
    the stage is bounded whatever the number of rows; each row's answer depends on that row alone.

    ``memory`` (a dict kept across the passes of :func:`find_recourse`, by the rows' numbers ``ids``) keeps what a
    pass learnt of a row it could not serve: the confirmed projections (nearest per tier) whose give-back needed
    more than that pass's ``max_changes``, and the subset size up to which each was scored with none confirmed.
    The longer pass gives those back further instead of projecting and scoring everything again -- the same
    projections, single moves and confirmations, so the same answer."""
    n = len(x)
    if not n or not len(pool):
        return None
    memory = {} if memory is None else memory
    ids = np.arange(n) if ids is None else np.asarray(ids)
    seen = np.array([int(i) in memory for i in ids], dtype=bool)
    got = []
    if seen.any():
        w = np.flatnonzero(seen)
        one = _given_back_further(cands, scorer, x.take(w), x_pct[w], scale, t, [memory[int(i)] for i in ids[w]])
        if one is not None:
            got.append((w[one[0]], *one[1:]))
    fresh = np.flatnonzero(~seen)
    width = max(1, x.num.shape[1] + x.cat.shape[1])
    rows_per = max(1, PROJECTED_CELLS // (min(PROJECTED_TIERS[-1], len(pool)) * width))
    for s in range(0, len(fresh), rows_per):
        part = fresh[s:s + rows_per]
        one, kept = _projected_rows(cands, scorer, x.take(part), x_pct[part], pool, pool_pct, scale, t)
        for local, starts in kept.items():
            memory[int(ids[part[local]])] = starts
        if one is not None:
            got.append((part[one[0]], *one[1:]))
    if not got:
        return None
    rows, num, cat, out = (np.concatenate(z) for z in zip(*got))
    order = np.argsort(rows, kind="stable")
    return rows[order], num[order], cat[order], out[order]


def _given_back_further(cands, scorer, x: Encoded, x_pct, scale, t: int, remembered: list):
    """Rows an earlier pass projected without serving: their remembered confirmed projections, in tier order,
    given back under this pass's ``max_changes`` (each from the subset size its earlier give-back reached).
    Returns (positions served, num, cat, out) or None; the entries are updated in place."""
    served = np.zeros(len(x), dtype=bool)
    got = []
    for attempt in range(max((len(r) for r in remembered), default=0)):
        at = np.flatnonzero(~served & np.array([len(r) > attempt for r in remembered], dtype=bool))
        if not len(at):
            break
        starts = [remembered[i][attempt] for i in at]
        num = np.stack([st[0] for st in starts])
        cat = np.stack([st[1] for st in starts])
        out = np.array([st[2] for st in starts], dtype=object)
        known = np.array([st[3] for st in starts], dtype=np.int64)
        bn, bc, bo, within = _give_back(cands, scorer, x.take(at), x_pct[at], Encoded(num, cat), scale,
                                        np.full(len(at), t), out, known=known)
        for i, row in enumerate(at):
            remembered[row][attempt] = (num[i], cat[i], out[i], int(known[i]))
        served[at[within]] = True
        got.append((at[within], bn[within], bc[within], bo[within]))
    if not got or not served.any():
        return None
    return tuple(np.concatenate(z) for z in zip(*got))


def _projected_rows(cands, scorer, x: Encoded, x_pct, pool: Encoded, pool_pct, scale, t: int):
    """:func:`_projected` for one chunk of rows: (its result or None, what to remember of each row not served)."""
    n = len(x)
    k = min(PROJECTED_TIERS[-1], len(pool))
    step = max(1, EXAMPLE_CHUNK // len(pool))
    xp, pp = x_pct.astype(np.float32), pool_pct.astype(np.float32)
    cases = np.full((n, k), -1, dtype=np.int64)
    for s in range(0, n, step):
        e = min(s + step, n)
        dist = np.zeros((e - s, len(pool)), dtype=np.float32)
        moves = np.zeros((e - s, len(pool)), dtype=np.int64)
        for j in range(x.num.shape[1]):  # a barred move keeps the row's value: it adds no distance
            ok = _num_move_allowed(cands, j, x.num[s:e, j][:, None], pool.num[:, j][None, :])
            dist += np.where(ok, np.abs(xp[s:e, j][:, None] - pp[:, j][None, :]), np.float32(0))
            moves += ok
        for j in range(x.cat.shape[1]):
            ok = _cat_move_allowed(cands, j, x.cat[s:e, j][:, None], pool.cat[:, j][None, :])
            dist += ok
            moves += ok
        dist[moves == 0] = np.inf  # the projection is the row itself: not a change
        cases[s:e] = _k_smallest(dist, k)
    got = []
    kept = {i: [] for i in range(n)}  # per row not served: its confirmed projections given back too little
    live = np.ones(n, dtype=bool)
    lo = 0
    for hi in PROJECTED_TIERS:  # nearest first: a row served by a tier is not scored on the next
        hi = min(hi, k)
        if hi <= lo:
            break
        rows_live = np.flatnonzero(live)
        owner, rank = np.nonzero(cases[rows_live, lo:hi] >= 0)  # row-major: each row's cases nearest first
        owner, pos = rows_live[owner], cases[rows_live[owner], lo + rank]
        lo = hi
        if not len(owner):
            continue
        start, cand = x.take(owner), pool.take(pos)
        num, cat = start.num.copy(), start.cat.copy()
        for j in range(num.shape[1]):  # the projection: the case's value wherever the row may move to it
            ok = _num_move_allowed(cands, j, start.num[:, j], cand.num[:, j])
            num[ok, j] = cand.num[ok, j]
        for j in range(cat.shape[1]):
            ok = _cat_move_allowed(cands, j, start.cat[:, j], cand.cat[:, j])
            cat[ok, j] = cand.cat[ok, j]
        # one change first: each projection's moves one at a time (the nearest confirmed single move wins), so a
        # row that one move serves is not given a longer change from the nearest projection
        diff = np.concatenate([num != start.num, cat != start.cat], axis=1)
        p_owner, slot = np.nonzero(diff)
        if len(p_owner):
            m = num.shape[1]
            # one point per row, feature and value: near cases often share a value (the nearest copy is kept,
            # the same point at the same distance, so the choice is unchanged)
            moved = np.where(slot < m, num[p_owner, np.minimum(slot, m - 1)],
                             cat[p_owner, np.maximum(slot - m, 0)] if cat.shape[1] else 0)
            _, value_id = np.unique(moved.astype(np.float64), return_inverse=True)  # one integer key per triple
            key = (owner[p_owner].astype(np.int64) * (m + cat.shape[1]) + slot) * (int(value_id.max()) + 1) \
                + value_id
            _, first_of = np.unique(key, return_index=True)
            first_of = np.sort(first_of)
            p_owner, slot = p_owner[first_of], slot[first_of]
            sn, sc = start.num[p_owner].copy(), start.cat[p_owner].copy()
            is_num = slot < m
            sn[is_num, slot[is_num]] = num[p_owner[is_num], slot[is_num]]
            sc[~is_num, slot[~is_num] - m] = cat[p_owner[~is_num], slot[~is_num] - m]
            so = scorer.outputs(Encoded(sn, sc))
            ok = np.flatnonzero(scorer.in_target(so, np.full(len(p_owner), t)))
            if len(ok):
                row_of = owner[p_owner[ok]]
                dist = scale.distance(x.take(row_of), Encoded(sn[ok], sc[ok]), x_pct[row_of])
                ok = ok[np.lexsort((slot[ok], p_owner[ok], dist, row_of))]  # nearest, then the nearer case
                best = ok[np.r_[True, owner[p_owner[ok]][1:] != owner[p_owner[ok]][:-1]]]
                rows1 = owner[p_owner[best]]
                live[rows1] = False
                got.append((rows1, sn[best], sc[best], _objects(so[best])))
        out = scorer.outputs(Encoded(num, cat))
        keep = live[owner]  # rows no single move served
        g = np.flatnonzero(scorer.in_target(out, np.full(len(owner), t)) & keep)
        if not len(g):
            continue
        first = g[np.r_[True, owner[g][1:] != owner[g][:-1]]]  # the row's nearest confirmed projection
        rows = owner[first]
        # every single move of every projection of these rows was scored above, none confirmed: subsets start at 2
        known = np.ones(len(rows), dtype=np.int64)
        start_out = _objects(out[first])
        bn, bc, bo, within = _give_back(cands, scorer, x.take(rows), x_pct[rows],
                                        Encoded(num[first], cat[first]), scale, np.full(len(rows), t),
                                        start_out, known=known)
        # a row whose nearest confirmed projection needs more than max_changes features tries the next tier
        # (and a longer pass gives that projection back further: kept)
        live[rows[within]] = False
        got.append((rows[within], bn[within], bc[within], bo[within]))
        for i in np.flatnonzero(~within):
            kept[int(rows[i])].append((num[first[i]].copy(), cat[first[i]].copy(), start_out[i], int(known[i])))
    for row in np.flatnonzero(~live):
        kept.pop(int(row), None)  # served: nothing to remember
    if not got or not sum(len(g[0]) for g in got):
        return None, kept
    rows, num, cat, out = (np.concatenate(z) for z in zip(*got))
    order = np.argsort(rows, kind="stable")
    return (rows[order], num[order], cat[order], out[order]), kept


def _remembered(memory: dict, key, rows: np.ndarray, compute) -> np.ndarray:
    """Per row of ``rows`` (ascending row numbers of the input), the value kept in ``memory[key]`` for it; rows
    without one get ``compute(positions in rows)`` (a function of each row alone), which is kept too."""
    have_rows, have_vals = memory.get(key, (np.zeros(0, dtype=np.int64), None))
    at = np.minimum(np.searchsorted(have_rows, rows), max(len(have_rows) - 1, 0))
    hit = (have_rows[at] == rows) if len(have_rows) else np.zeros(len(rows), dtype=bool)
    miss = np.flatnonzero(~hit)
    if not len(miss) and have_vals is not None:
        return have_vals[at].copy()
    new = compute(miss)
    out = np.empty((len(rows),) + new.shape[1:], dtype=new.dtype)
    out[miss] = new
    if hit.any():
        out[hit] = have_vals[at[hit]]
    _remember(memory, key, rows[miss], new)
    return out


def _remember(memory: dict, key, rows: np.ndarray, values: np.ndarray) -> None:
    """Keep ``values`` for ``rows`` (ascending row numbers) in ``memory[key]``, replacing what was kept for them."""
    have_rows, have_vals = memory.get(key, (np.zeros(0, dtype=np.int64), None))
    if have_vals is None or not len(have_rows):
        memory[key] = (np.asarray(rows, dtype=np.int64).copy(), np.asarray(values).copy())
        return
    keep = ~np.isin(have_rows, rows)
    all_rows = np.concatenate([have_rows[keep], rows])
    all_vals = np.concatenate([have_vals[keep], values])
    order = np.argsort(all_rows, kind="stable")
    memory[key] = (all_rows[order], all_vals[order])


def _nearest(cands, x: Encoded, x_pct, pool: Encoded, pool_pct, constrained, k: int | None = None) -> np.ndarray:
    """Per row of ``x``, the position in ``pool`` of its nearest row (total percentile shift, a category change
    counting 1) that the constraints allow the row to reach (``constrained=True``: every constraint and the
    special codes; ``"immutable"``: the same value of every immutable feature; False: any row), -1 when none.
    With ``k``: the positions of its ``k`` nearest such rows, nearest first ((rows, k), -1 beyond the last)."""
    best = np.full(len(x) if k is None else (len(x), k), -1, dtype=np.int64)
    if not len(pool) or not len(x):
        return best
    step = max(1, EXAMPLE_CHUNK // len(pool))
    xp, pp = x_pct.astype(np.float32), pool_pct.astype(np.float32)
    diff = np.empty((min(step, len(x)), len(pool)), dtype=np.float32)  # reused: no temporary per feature
    for s in range(0, len(x), step):
        e = min(s + step, len(x))
        dist = np.empty((e - s, len(pool)), dtype=np.float32)
        tmp = diff[:e - s]
        if not xp.shape[1]:
            dist[:] = 0
        for j in range(xp.shape[1]):  # the same float32 sums, feature by feature, as a plain expression would give
            if j == 0:  # 0 + |d| is |d|: the first feature's shifts are the sum so far
                np.subtract(xp[s:e, j][:, None], pp[:, j][None, :], out=dist)
                np.abs(dist, out=dist)
                continue
            np.subtract(xp[s:e, j][:, None], pp[:, j][None, :], out=tmp)
            np.abs(tmp, out=tmp)
            dist += tmp
        for j in range(x.cat.shape[1]):
            dist += x.cat[s:e, j][:, None] != pool.cat[:, j][None, :]
        if constrained is IMMUTABLE:
            barred = np.zeros(dist.shape, dtype=bool)
            for j in np.flatnonzero(cands.num_kind == IMMUTABLE):
                barred |= pool.num[:, j][None, :] != x.num[s:e, j][:, None]
            for j in np.flatnonzero(cands.cat_kind == IMMUTABLE):
                barred |= pool.cat[:, j][None, :] != x.cat[s:e, j][:, None]
            dist[barred] = np.inf
        elif constrained and _any_bar(cands):
            barred = np.zeros(dist.shape, dtype=bool)
            for j in range(x.num.shape[1]):
                barred |= _num_move_barred(cands, j, x.num[s:e, j][:, None], pool.num[:, j][None, :])
            for j in range(x.cat.shape[1]):
                barred |= _cat_move_barred(cands, j, x.cat[s:e, j][:, None], pool.cat[:, j][None, :])
            dist[barred] = np.inf
        if k is None:
            near = np.argmin(dist, axis=1)
            found = np.isfinite(dist[np.arange(e - s), near])
            best[s:e] = np.where(found, near, -1)
        else:  # ties in the order of the pool, as argmin breaks them
            best[s:e] = _k_smallest(dist, k)
    return best


def _any_bar(cands) -> bool:
    """Whether any constraint or special code can bar a reference row in :func:`_nearest` (else nothing is barred,
    and the mask of barred pairs is not built)."""
    return (bool(cands.codes) or any(kind in (INCREASE, DECREASE, IMMUTABLE) for kind in cands.num_kind)
            or any(kind == IMMUTABLE for kind in cands.cat_kind)
            or (cands.trans is not None and any(t is not None for t in cands.trans)))


def _k_smallest(dist: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``dist``, the columns of its ``k`` smallest finite values, smallest first and ties in column
    order (the first ``k`` columns of a stable argsort), -1 beyond the row's finite values.

    Only the columns up to a bound on each row's k-th smallest value are sorted (a full stable argsort of every
    row's ~4,000 reference distances took most of the search beyond the rules). The bound is the
    largest of the minima of k blocks of the row's columns: k distinct columns lie at or below it, so the k-th
    smallest does too, and the columns kept include every one the k first can be (ties at the k-th value as
    well); it costs one pass over the row, where a partition cost several."""
    n, m = dist.shape
    out = np.full((n, k), -1, dtype=np.int64)
    kk = min(k, m)
    if not n or not kk:
        return out
    if np.isnan(dist).any():  # a NaN is never a neighbour, as an infinite distance (and sorts after it)
        dist = np.where(np.isnan(dist), np.inf, dist)
    starts = (np.arange(kk) * m) // kk  # kk non-empty blocks (kk <= m)
    bound = np.minimum.reduceat(dist, starts, axis=1).max(axis=1)
    wide = ~np.isfinite(bound)  # a block with no finite value (barred pairs side by side): the k-th value itself
    if wide.any():
        bound[wide] = np.partition(dist[wide], kk - 1, axis=1)[:, kk - 1]
    r, c = np.nonzero((dist <= bound[:, None]) & np.isfinite(dist))  # every tie at the k-th value included
    order = np.lexsort((c, dist[r, c], r))  # by row, then distance, then column (the stable order)
    r, c = r[order], c[order]
    rank = np.arange(len(r)) - np.searchsorted(r, r)  # position within the row's candidates
    keep = rank < kk
    out[r[keep], rank[keep]] = c[keep]
    return out


def _give_back(cands, scorer, x: Encoded, x_pct, start: Encoded, scale, tgt, start_out, known=None):
    """From ``start`` (confirmed points, each a real row with the target output), give back the row's own values.

    Rows whose start differs in at most ``MAX_SUBSET_FEATURES`` features try the subsets of those features kept at
    the start's values: the confirmed subset with the fewest features wins (then the nearest, then the earlier
    subset) — the smallest change that the model confirms, exactly. Subsets are scored one size at a time (one
    model call per size, for the rows no smaller subset served), so a row served by one or two changes is not
    scored on all its 2**k subsets. Rows differing in more features give back one feature at a time (the one
    whose return shortens the distance most among those the model still confirms) until none can be.

    ``known`` (per row, optional, updated in place): every subset of at most ``known[i]`` of row i's differing
    features is known to be scored already with none confirmed (an earlier pass, same start): those sizes are not
    scored again, which changes no answer. On return it holds, per row, the size up to which that is true now."""
    num, cat = start.num.copy(), start.cat.copy()
    out = np.asarray(start_out, dtype=object).copy()
    diff = np.concatenate([start.num != x.num, start.cat != x.cat], axis=1)
    k = diff.sum(axis=1)
    most = cands.max_changes
    small = k <= MAX_SUBSET_FEATURES
    if most is not None:  # rows further away still try every subset of at most max_changes features if few
        few = np.array([_n_subsets(size, most) <= MAX_SUBSETS for size in range(int(k.max(initial=0)) + 1)])
        small |= few[k]  # per row through a table over the sizes (one Python call per size, not per row)
    live = small & (k > 1)  # one feature apart: the start itself is the smallest change
    floor = np.zeros(len(x), dtype=np.int64) if known is None else np.where(small, known, 0)
    top = int(k[live].max()) if live.any() else 0
    for changes in range(1, top if most is None else min(top, most + 1)):
        if not (live & (k > changes)).any():
            break
        scored = live & (k > changes) & (floor < changes)  # sizes known to fail are not scored again
        blocks = [_subsets(x, start, diff, np.flatnonzero(scored & (k == size)), size, changes)
                  for size in np.unique(k[scored])]
        blocks = [b for b in blocks if b is not None]
        if not blocks:
            continue
        cn, cc, owner, order = (np.concatenate(z) for z in zip(*blocks))
        o = scorer.outputs(Encoded(cn, cc))
        good = np.flatnonzero(scorer.in_target(o, tgt[owner]))
        if len(good):
            dist = scale.distance(x.take(owner[good]), Encoded(cn[good], cc[good]), x_pct[owner[good]])
            good = good[np.lexsort((order[good], dist, owner[good]))]
            best = good[np.r_[True, owner[good][1:] != owner[good][:-1]]]
            r = owner[best]
            num[r], cat[r] = cn[best], cc[best]
            out[r] = _objects(o[best])
            live[r] = False
        floor[scored & live] = changes  # every subset up to this size scored, none confirmed
    big = np.flatnonzero(~small)
    if len(big):
        n_, c_, o_ = _give_back_greedy(cands, scorer, x.take(big), x_pct[big], Encoded(num[big], cat[big]), scale,
                                       tgt[big], out[big])
        num[big], cat[big], out[big] = n_, c_, o_
    n_changed = (num != x.num).sum(axis=1) + (cat != x.cat).sum(axis=1)
    within = np.ones(len(x), dtype=bool) if most is None else n_changed <= most
    if known is not None:
        known[:] = np.maximum(known, floor)
    return num, cat, out, within


def _n_subsets(size: int, most: int) -> int:
    """Subsets of 1 to ``most`` of ``size`` features (fewer than all of them)."""
    return sum(math.comb(size, c) for c in range(1, min(most, size - 1) + 1))


def _masks(size: int, changes: int) -> tuple[np.ndarray, np.ndarray]:
    """The subsets of exactly ``changes`` of ``size`` features as (subsets, size) bool masks in the order of their
    bit masks, and that order (the bit mask's value - 1: the same tie-break whatever the subset sizes)."""
    combos = np.array(list(itertools.combinations(range(size), changes)), dtype=np.int64).reshape(-1, changes)
    bits = (np.int64(1) << combos).sum(axis=1)
    sort = np.argsort(bits, kind="stable")
    masks = np.zeros((len(combos), size), dtype=bool)
    masks[np.arange(len(combos))[:, None], combos] = True
    return masks[sort], bits[sort] - 1


def _subsets(x: Encoded, start: Encoded, diff: np.ndarray, rows: np.ndarray, size: int, changes: int):
    """The points of ``rows`` (each differing from its start in ``size`` features) that keep exactly ``changes``
    of those features at the start's values and the others at the row's own: (num, cat, owner row, subset
    order), subsets in the order of their bit masks over the differing features (the tie-break)."""
    if not len(rows):
        return None
    masks, order = _masks(size, changes)  # (subsets, size)
    where = np.argsort(~diff[rows], axis=1, kind="stable")[:, :size]  # each row's differing slots, in order
    m = x.num.shape[1]
    n_rows, n_masks = len(rows), len(masks)
    cn = np.repeat(x.num[rows][:, None, :], n_masks, axis=1)
    cc = np.repeat(x.cat[rows][:, None, :], n_masks, axis=1)
    at = np.arange(n_rows)
    for j in range(size):
        slot = where[:, j]
        take = np.flatnonzero(masks[:, j])
        is_num = slot < m
        rn, rc = at[is_num], at[~is_num]
        cn[rn[:, None], take[None, :], slot[is_num][:, None]] = start.num[rows[rn], slot[is_num]][:, None]
        cc[rc[:, None], take[None, :], (slot[~is_num] - m)[:, None]] = start.cat[rows[rc], slot[~is_num] - m][:, None]
    return (cn.reshape(n_rows * n_masks, m), cc.reshape(n_rows * n_masks, x.cat.shape[1]),
            np.repeat(rows, n_masks), np.tile(order, n_rows))


def _give_back_greedy(cands, scorer, x: Encoded, x_pct, start: Encoded, scale, tgt, start_out):
    """Give back the row's own value of one feature at a time — the feature whose return shortens the distance
    most among those the model still confirms — until none can be (one model call per step)."""
    schema = cands.schema
    p = Encoded(start.num.copy(), start.cat.copy())
    out = np.asarray(start_out, dtype=object).copy()
    m = x.num.shape[1]
    active = np.ones(len(x), dtype=bool)
    while active.any():
        rows = np.flatnonzero(active)
        p_pct = scale.transform(p.take(rows))
        gain_num = np.abs(p_pct - x_pct[rows])  # what returning each numeric feature saves
        diff_num = p.num[rows] != x.num[rows]
        diff_cat = p.cat[rows] != x.cat[rows]
        owner, feat = [], []
        for j in range(m):
            w = np.flatnonzero(diff_num[:, j])
            owner.append(w), feat.append(np.full(len(w), j))
        for j in range(x.cat.shape[1]):
            w = np.flatnonzero(diff_cat[:, j])
            owner.append(w), feat.append(np.full(len(w), m + j))
        owner, feat = np.concatenate(owner), np.concatenate(feat)
        if not len(owner):
            break
        num, cat = p.num[rows][owner], p.cat[rows][owner]
        is_num = feat < m
        num[is_num, feat[is_num]] = x.num[rows][owner[is_num], feat[is_num]]
        cj = feat[~is_num] - m
        cat[~is_num, cj] = x.cat[rows][owner[~is_num], cj]
        o = scorer.outputs(Encoded(num, cat))
        ok = scorer.in_target(o, tgt[rows][owner])
        gain = np.ones(len(owner))
        gain[is_num] = gain_num[owner[is_num], feat[is_num]]
        schema_pos = np.empty(len(owner), dtype=np.int64)
        schema_pos[is_num] = np.asarray(schema.numeric, dtype=np.int64)[feat[is_num]]
        schema_pos[~is_num] = np.asarray(schema.categorical, dtype=np.int64)[cj]
        good = np.flatnonzero(ok)
        still = np.zeros(len(rows), dtype=bool)
        if len(good):
            # per row the confirmed return with the largest gain (ties: the earlier feature in schema order)
            good = good[np.lexsort((schema_pos[good], -gain[good], owner[good]))]
            first = np.r_[True, owner[good][1:] != owner[good][:-1]]
            best = good[first]
            r = rows[owner[best]]
            p.num[r], p.cat[r] = num[best], cat[best]
            out[r] = _objects(o[best])
            still[owner[best]] = True
        active[rows[~still]] = False
    return p.num, p.cat, out


def reference_rows(state: FittedState, reference_enc: Encoded | None, model_call, fit_outputs=None):
    """(encoded reference rows, their model outputs, percentile scale) for steps 3-4: the given rows, else the fit
    rows in memory, else None. ``fit_outputs``: the fit rows' outputs when they are known to be this model's (the
    model the explainer was fitted with), which saves scoring them again."""
    if reference_enc is None:
        if not state.has_fit_data:
            return None
        reference_enc, scale = state.fit_enc, state.scale()
        if fit_outputs is not None and len(reference_enc):
            return reference_enc, np.asarray(fit_outputs, dtype=object), scale
    else:
        scale = PercentileScale(reference_enc)
    if not len(reference_enc):
        return None
    return reference_enc, model_call(reference_enc), scale
