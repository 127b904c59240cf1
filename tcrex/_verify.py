"""Model-verified counterfactual points (issue #11).

A rule is only tau-accurate on average, so the model may disagree at the nearest point of a rule box (the paper's
counterfactual point). :func:`verify_points` checks every point on the model and, where the boundary point fails,
searches *inside the same rule box* for the nearest point (total percentile shift, the paper's distance) that the
model sends to the row's target:

1. the rule's *change* features move deeper into their allowed range (candidates: quantiles of the fit rows inside
   the rule whose output is in the target; the other allowed categories);
2. only if that fails, the rule's *keep* features may move too (within the rule), including points on the segment
   from the boundary point to the nearest constraint-respecting real example over the rule's features;
3. then one feature the rule leaves free (any value of it is inside the box) at a quantile / common category of the
   rule's in-target rows — one extra change;
4. then points on that segment over all features (features the rule leaves free move toward the example);
5. the real example itself (the nearest fit row inside the rule whose output is in the target and that the
   constraints allow) is the last resort.

Every candidate lies inside the row's rule box with ``(low, high]`` and integer semantics and respects the
actionability constraints (immutable features never move; increase/decrease-only features never move the wrong
way; category moves follow the allowed transitions); features the rule leaves free keep the row's values (except in
stages 3-5). All candidates of a batch of rows are
scored with one model call per stage (one call for all stages when the batch is small); up to ``ONE_CALL_ROWS``
checked rows (a small test fold, one row), the boundary points go into that same single call (candidates are then
built for every row and used only for the rows whose boundary point fails: the same choices, one call instead of
two, which matters because each model call has a fixed cost much larger than scoring a few thousand points).
Candidates are built with whole-array operations per rule (all values of all features at once), in the same order
as one block at a time, so ties between equally near candidates still go to the earlier one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._constraints import DECREASE, IMMUTABLE, INCREASE
from ._data import Encoded, _native
from ._local import nearest_in_interval
from ._outputs import predict
from ._vocabulary import BOUNDARY, EXAMPLE, RECOURSE_OUTCOMES, SEARCHED, SOURCES, VERIFIED_SOURCES

#: Quantiles of the rule's in-target fit rows tried as values of a feature.
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
#: Positions on the segment from the boundary point to the real example.
ALPHAS = (0.25, 0.5, 0.75)
#: Most common categories (of the rule's in-target rows) tried for a categorical feature the rule leaves free.
MAX_FREE_CATEGORIES = 5
#: Up to this many failing rows, all stages' candidates are scored in one model call (each call has a fixed cost
#: that dominates on small batches); beyond it, stage by stage so repaired rows cost nothing more.
SMALL_ROWS = 400
#: Up to this many checked rows (a test fold, one row of the dashboard), the boundary points and every candidate
#: of every row are scored in a single model call: candidates are also built for rows whose boundary point turns
#: out valid (and then ignored), which costs less than a second call on batches this small.
ONE_CALL_ROWS = 200
#: Row x pool-row distances computed at a time when looking for each row's nearest real example (fits the cache).
EXAMPLE_CHUNK = 1 << 18
#: Pools larger than this are de-duplicated by hashing rows (pandas) rather than sorting them.
HASH_DEDUP_ROWS = 2000
#: Rows whose candidates are scored together (bounds memory; one model call per stage per chunk).
CHUNK_ROWS = 4000
#: Rounds of each stage by candidate rank (nearest first). One round: on the paper's datasets most failing rows
#: are not repaired by their nearest few candidates, and every extra model call costs more than it saves.
ROUNDS = ((0, np.iinfo(np.int64).max),)
_SRC = {s: i for i, s in enumerate(SOURCES)}


@dataclass
class Verified:
    """Per input row (arrays of the input's length)."""

    point: Encoded  # the point to recommend (the boundary point where unchecked)
    checked: np.ndarray  # bool: the row has a rule and its point was checked on the model
    valid: np.ndarray  # bool: model output at the point is in the row's target (meaningful where checked)
    source: np.ndarray  # int: index into SOURCES, -1 where unchecked
    output: np.ndarray  # object: the model's output at the point (None where unchecked)
    boundary: Encoded  # the boundary point (paper)
    boundary_valid: np.ndarray  # bool
    boundary_output: np.ndarray  # object
    n_model_calls: int = 0
    n_candidates: int = 0


def frame_like(points: pd.DataFrame, X: pd.DataFrame) -> pd.DataFrame:
    """Points with the column order and dtypes (categorical, bool, numeric) of X, as the model expects them."""
    points = points[[str(c) for c in X.columns]] if list(points.columns) != list(X.columns) else points.copy()
    points.columns = X.columns
    for c in X.columns:
        dtype = X[c].dtype
        col = points[c]
        if col.dtype == dtype:
            continue
        try:
            if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
                points[c] = col.astype(dtype)
            elif pd.api.types.is_integer_dtype(dtype) and pd.api.types.is_numeric_dtype(col.dtype) \
                    and np.all(np.mod(col.to_numpy(dtype=np.float64), 1) == 0):
                points[c] = col.astype(dtype)
            elif pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_numeric_dtype(col.dtype):
                points[c] = pd.to_numeric(col)
        except (TypeError, ValueError):
            pass
    return points


class _Model:
    def __init__(self, ex, model, X):
        names = set(ex.schema_.names)
        self.ex, self.model = ex, model
        self.X = X if len(X.columns) == len(names) else X[[c for c in X.columns if str(c) in names]]
        self.calls = 0
        # categorical features the model receives as pandas categories: points are built with those codes directly
        # (casting decoded values costs a lookup of every value per call)
        self.as_categorical = {}
        for c in self.X.columns:
            dtype = self.X[c].dtype
            if isinstance(dtype, pd.CategoricalDtype) and str(c) in names:
                f = ex.schema_.features[ex.schema_.names.index(str(c))]
                if not f.is_categorical:
                    continue
                try:  # the cast frame_like would make, once per category instead of once per point
                    codes = pd.Series(np.asarray(f.categories, dtype=object)).astype(dtype).cat.codes
                except (TypeError, ValueError):
                    continue
                self.as_categorical[f.name] = (np.asarray(codes, dtype=np.int64), dtype)

    def outputs(self, enc: Encoded) -> np.ndarray:
        if len(enc) == 0:
            return np.zeros(0, dtype=object)
        self.calls += 1
        frame = frame_like(self.ex._decode(enc, pd.RangeIndex(len(enc)), self.as_categorical), self.X)
        return predict(self.model, frame)

    def in_target(self, out: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        ok = np.zeros(len(out), dtype=bool)
        for t in np.unique(tgt):
            sel = tgt == t
            ok[sel] = self.ex._all_targets[t].target.contains(out[sel])
        return ok


def first_of_each_distinct_row(m: np.ndarray) -> np.ndarray:
    """Ascending positions of the first occurrence of each distinct row of ``m`` (the sorted ``return_index`` of
    ``np.unique(m, axis=0)``, which sorts rows as structured values and costs 4 ms for a 10,000-row pool): rows
    sorted column by column with a stable sort, then the first row of each run of equal rows; above
    ``HASH_DEDUP_ROWS`` rows pandas' hash-based ``duplicated`` is faster still. The fit data holds no NaN."""
    if len(m) > HASH_DEDUP_ROWS:
        return np.flatnonzero(~pd.DataFrame(m).duplicated(keep="first").to_numpy())
    if len(m) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(m.T[::-1])
    s = m[order]
    starts = np.r_[True, (s[1:] != s[:-1]).any(axis=1)]
    return np.sort(order[starts])


def d_size(shape) -> int:
    return shape[0] * shape[1]


def _objects(out: np.ndarray) -> np.ndarray:
    return np.array([v.item() if isinstance(v, np.generic) else v for v in out] + [None], dtype=object)[:-1]


def verify_points(ex, X: pd.DataFrame, enc: Encoded, res: dict, model) -> Verified:
    """Check each row's boundary point on ``model`` and search inside its rule where it fails (see module doc)."""
    n = len(enc)
    boundary = ex._move_to_rules(enc, res)
    point = Encoded(boundary.num.copy(), boundary.cat.copy())
    checked = (res["target"] >= 0) & (res["rule"] >= 0)
    rows = np.flatnonzero(checked)
    valid = np.zeros(n, dtype=bool)
    source = np.full(n, -1, dtype=np.int64)
    output = np.full(n, None, dtype=object)
    b_valid = np.zeros(n, dtype=bool)
    b_output = np.full(n, None, dtype=object)
    m = _Model(ex, model, X)
    result = Verified(point, checked, valid, source, output, boundary, b_valid, b_output)
    if not len(rows):
        return result

    def checked_boundary(out, ok, at=rows):
        b_valid[at], b_output[at] = ok, _objects(out)
        valid[at], output[at], source[at] = ok, b_output[at], _SRC[BOUNDARY]

    if ex.has_fit_data and len(rows) <= min(ONE_CALL_ROWS, SMALL_ROWS):
        # one model call: every row's boundary point with all its candidates (the same choices as checking the
        # boundary points first and searching for the failing rows, as below)
        search = _Search(ex, enc, boundary, res, m)
        order = rows[np.lexsort((res["rule"][rows], res["target"][rows]))]
        search.run(order, point, valid, source, output,
                   boundary_check=lambda out, ok: checked_boundary(out, ok, order))
        result.n_candidates, result.n_model_calls = search.n_candidates, m.calls
        return result
    out = m.outputs(boundary.take(rows))
    ok = m.in_target(out, res["target"][rows])
    checked_boundary(out, ok)
    failing = rows[~ok]
    if len(failing) and ex.has_fit_data:
        search = _Search(ex, enc, boundary, res, m)
        # group rows by rule so that chunks share rule-level work
        order = failing[np.lexsort((res["rule"][failing], res["target"][failing]))]
        for s in range(0, len(order), CHUNK_ROWS):
            search.run(order[s:s + CHUNK_ROWS], point, valid, source, output)
        result.n_candidates = search.n_candidates
    result.n_model_calls = m.calls
    return result


class _Search:
    def __init__(self, ex, enc: Encoded, boundary: Encoded, res: dict, m: _Model):
        self.ex, self.enc, self.boundary, self.res, self.m = ex, enc, boundary, res, m
        self.schema = ex.schema_
        self.scale = ex._scale()
        self.fit = ex._fit_enc
        cons = ex.constraints_.features if getattr(ex, "constraints_", None) is not None else None
        self.kind = [c.kind for c in cons] if cons is not None else ["free"] * len(self.schema)
        self.trans = ex._transitions()
        self.rule_cache = {}
        self.in_target = {}  # per target: which fit rows' outputs are in it
        self.n_candidates = 0
        self._pct = None

    def pct(self, rows: np.ndarray) -> np.ndarray:
        """Percentiles of the input rows (computed once for all rows: the transform is row by row)."""
        if self._pct is None:
            self._pct = self.scale.transform(self.enc)
        return self._pct[rows]

    # ------------------------------------------------------------------ per rule: its box, pool and quantiles
    def _rule(self, t: int, r: int) -> dict:
        key = (t, r)
        if key not in self.rule_cache:
            sol = self.ex._all_targets[t]
            box = sol.rules.take([r])
            inside = box.contains(self.fit)[:, 0]
            if t not in self.in_target:
                self.in_target[t] = sol.target.contains(self.ex._fit_y)
            pool = np.flatnonzero(inside & self.in_target[t])
            src = pool if len(pool) else np.flatnonzero(inside)
            d = self.fit.num.shape[1]
            qs = np.quantile(self.fit.num[src], QUANTILES, method="nearest", axis=0) if len(src) and d else None
            qfull = [qs[:, j] if qs is not None else np.zeros(0) for j in range(d)]
            self.rule_cache[key] = {"low": box.low[0], "high": box.high[0], "allowed": [a[0] for a in box.allowed],
                                    "pool": pool, "qfull": qfull, "quant": [np.unique(q) for q in qfull]}
        return self.rule_cache[key]

    def _limits(self, rule: dict, x: Encoded) -> tuple[np.ndarray, np.ndarray]:
        """Per row and numeric slot, the allowed interval ``(lo, hi]``: the rule's, narrowed by directions."""
        lo = np.broadcast_to(rule["low"], x.num.shape).copy()
        hi = np.broadcast_to(rule["high"], x.num.shape).copy()
        for j, i in enumerate(self.schema.numeric):
            kind = self.kind[i]
            below_x = (x.num[:, j] - 0.5) if self.schema.features[i].integer else np.nextafter(x.num[:, j], -np.inf)
            if kind == INCREASE:
                lo[:, j] = np.maximum(lo[:, j], below_x)
            elif kind == DECREASE:
                hi[:, j] = np.minimum(hi[:, j], x.num[:, j])
            elif kind == IMMUTABLE:
                lo[:, j], hi[:, j] = below_x, x.num[:, j]
        return lo, hi

    def _allowed_move(self, j: int, frm: np.ndarray, to: np.ndarray) -> np.ndarray:
        """Whether categorical slot j may move from each ``frm`` category to ``to`` under the constraints."""
        i = self.schema.categorical[j]
        if self.kind[i] == IMMUTABLE:
            return frm == to
        if self.trans is None or self.trans[j] is None:
            return np.ones(len(frm), dtype=bool)
        return self.trans[j][frm, to]

    def _example(self, rule: dict, x: Encoded, rows: np.ndarray) -> np.ndarray:
        """Per row, the position in the fit data of the nearest in-target fit row of the rule that the constraints
        allow the row to reach (-1 when none). Duplicate pool rows are searched once; distances accumulate one
        feature at a time in float32 (only the choice of the example depends on them)."""
        best = np.full(len(x), -1, dtype=np.int64)
        if not len(rule["pool"]):
            return best
        if "pool_unique" not in rule:
            p = self.fit.take(rule["pool"])
            first = first_of_each_distinct_row(np.column_stack([p.num, p.cat.astype(np.float64)]))
            rule["pool_unique"] = rule["pool"][first]
            rule["pool_enc"] = p.take(first)
            rule["pool_pct"] = self.scale.transform(rule["pool_enc"]).astype(np.float32)
        pool, p, pp = rule["pool_unique"], rule["pool_enc"], rule["pool_pct"]
        qp = self.pct(rows).astype(np.float32)
        # cache-sized chunks of rows, with buffers reused across features and chunks (no temporary arrays)
        step = max(1, EXAMPLE_CHUNK // len(pool))
        bufs = np.empty((2, min(step, len(x)) * len(pool)), dtype=np.float32)
        same = np.empty(bufs.shape[1], dtype=bool)
        for s in range(0, len(x), step):
            e = min(s + step, len(x))
            shape = (e - s, len(pool))
            d, tmp = bufs[0, :d_size(shape)].reshape(shape), bufs[1, :d_size(shape)].reshape(shape)
            neq = same[:d_size(shape)].reshape(shape)
            d.fill(0)
            for j in range(qp.shape[1]):
                np.subtract(qp[s:e, j][:, None], pp[:, j][None, :], out=tmp)
                d += np.abs(tmp, out=tmp)
            for j in range(x.cat.shape[1]):
                d += np.not_equal(x.cat[s:e, j][:, None], p.cat[:, j][None, :], out=neq)
            for j, i in enumerate(self.schema.numeric):
                kind = self.kind[i]
                if kind in (INCREASE, DECREASE, IMMUTABLE):
                    xv, pv = x.num[s:e, j][:, None], p.num[:, j][None, :]
                    d[(pv < xv) if kind == INCREASE else (pv > xv) if kind == DECREASE else (pv != xv)] = np.inf
            for j, i in enumerate(self.schema.categorical):
                if self.kind[i] == IMMUTABLE:
                    d[x.cat[s:e, j][:, None] != p.cat[:, j][None, :]] = np.inf
                elif self.trans is not None and self.trans[j] is not None:
                    d[~self.trans[j][x.cat[s:e, j][:, None], p.cat[:, j][None, :]]] = np.inf
            k = np.argmin(d, axis=1)
            found = np.isfinite(d[np.arange(e - s), k])
            best[s:e] = np.where(found, pool[k], -1)
        return best

    # ------------------------------------------------------------------ candidates of one rule's rows
    def _candidates(self, rows: np.ndarray, t: int, r: int, part: str = "all") -> list[tuple]:
        """(num, cat, row position, phase) blocks; phase 1 moves only change features, 2 any feature the rule
        constrains, 3 one feature it leaves free, 4 all features (toward the real example), 5 is the real example. ``part``: "cheap" (no real example needed: blocks A-D), "example" (E-F only, for
        the rows the cheap moves did not repair, since finding the example is the costly part) or "all"."""
        rule = self._rule(t, r)
        x, b = self.enc.take(rows), self.boundary.take(rows)
        n_g = len(rows)
        lo, hi = self._limits(rule, x)
        num_out = (x.num <= rule["low"]) | (x.num > rule["high"])
        constrained = np.isfinite(rule["low"]) | np.isfinite(rule["high"])
        movable = [j for j, i in enumerate(self.schema.numeric) if constrained[j] and self.kind[i] != IMMUTABLE]
        pos = np.arange(n_g)
        blocks = []
        integer = np.array([self.schema.features[i].integer for i in self.schema.numeric], dtype=bool)

        def clip_all(slots, values):
            """Per slot of ``slots``, (n_g, len(values(slot))): each value clipped into every row's allowed interval
            of that numeric slot (one vectorised call for all slots)."""
            vals = [np.asarray(values(j), dtype=np.float64) for j in slots]
            cols = np.repeat(np.asarray(slots, dtype=np.int64), [len(v) for v in vals])
            if not len(cols):
                return {}
            v = np.concatenate(vals)
            clipped = nearest_in_interval(np.broadcast_to(v[None, :], (n_g, len(v))), lo[:, cols], hi[:, cols],
                                          integer[cols][None, :])
            ends = np.cumsum([len(v_) for v_ in vals])
            return {j: clipped[:, e - len(v_):e] for j, v_, e in zip(slots, vals, ends) if len(v_)}

        def add(num, cat, usable, phase):
            if usable.any():
                blocks.append((num[usable], cat[usable], pos[usable], np.broadcast_to(phase, (n_g,))[usable]))

        def add_stacked(num, cat, usable, phase):
            """Many blocks at once: (k, n_g, ...) arrays, taken block by block, rows in order within a block (the
            order the candidates had when added one block at a time: ties between equally near candidates go to
            the earlier one)."""
            if usable.any():
                k = usable.shape[0]
                blocks.append((np.broadcast_to(num, (k,) + b.num.shape)[usable],
                               np.broadcast_to(cat, (k,) + b.cat.shape)[usable],
                               np.broadcast_to(pos, (k, n_g))[usable], np.broadcast_to(phase, (k, n_g))[usable]))

        def numeric_moves(slots, values, phase_of):
            """One numeric slot at a time at each of its values (blocks in slot, value order)."""
            parts = list(clip_all(slots, values).items())
            if not parts:
                return
            k = sum(v.shape[1] for _, v in parts)
            num = np.repeat(b.num[None], k, axis=0)
            usable = np.empty((k, n_g), dtype=bool)
            phase = np.empty((k, n_g), dtype=np.int64)
            at = 0
            for j, v in parts:
                m_ = v.shape[1]
                num[at:at + m_, :, j] = v.T
                usable[at:at + m_] = v.T != b.num[:, j][None, :]
                phase[at:at + m_] = phase_of(j)
                at += m_
            add_stacked(num, b.cat[None], usable, phase)

        def category_moves(j, cats, phase):
            """Categorical slot j set to each of ``cats`` (blocks in that order), where the constraints allow."""
            cats = np.asarray(cats, dtype=np.int64)
            if not len(cats):
                return
            cat = np.repeat(b.cat[None], len(cats), axis=0)
            cat[:, :, j] = cats[:, None]
            usable = b.cat[:, j][None, :] != cats[:, None]
            i = self.schema.categorical[j]
            if self.kind[i] == IMMUTABLE:
                usable &= x.cat[:, j][None, :] == cats[:, None]
            elif self.trans is not None and self.trans[j] is not None:
                usable &= self.trans[j][x.cat[:, j][None, :], cats[:, None]]
            add_stacked(b.num[None], cat, usable, phase)

        # A: one constrained numeric feature at a quantile of the rule's in-target rows
        numeric_moves(movable, lambda j: rule["quant"][j], lambda j: np.where(num_out[:, j], 1, 2))
        # B / C: all change features (B) or all constrained features (C) at the same quantile
        moved = [j for j in movable if len(rule["qfull"][j])]
        if moved:
            qv = clip_all(moved, lambda j: rule["qfull"][j])
            num = np.repeat(b.num[None], 2 * len(QUANTILES), axis=0)
            for q in range(len(QUANTILES)):
                for j in moved:
                    num[2 * q, :, j] = np.where(num_out[:, j], qv[j][:, q], b.num[:, j])
                    num[2 * q + 1, :, j] = qv[j][:, q]
            phase = np.tile(np.array([1, 2])[:, None], (len(QUANTILES), n_g))
            add_stacked(num, b.cat[None], (num != b.num[None]).any(axis=2), phase)
        # D: another allowed category of a constrained categorical feature
        for j, i in enumerate(self.schema.categorical):
            allowed = rule["allowed"][j]
            if allowed.all() or self.kind[i] == IMMUTABLE:
                continue
            category_moves(j, np.flatnonzero(allowed), np.where(~allowed[x.cat[:, j]], 1, 2)[None, :])
        # G: one feature the rule leaves free (any value is inside the box) at a quantile / common category of the
        # rule's in-target rows: one extra change, tried only after the rule's own features
        free = [j for j, i in enumerate(self.schema.numeric) if not constrained[j] and self.kind[i] != IMMUTABLE]
        numeric_moves(free, lambda j: rule["quant"][j], lambda j: 3)
        pool_cat = self.fit.cat[rule["pool"]] if len(rule["pool"]) else None
        for j, i in enumerate(self.schema.categorical):
            if not rule["allowed"][j].all() or self.kind[i] == IMMUTABLE or pool_cat is None:
                continue
            counts = np.bincount(pool_cat[:, j], minlength=len(rule["allowed"][j]))
            top = np.argsort(-counts, kind="stable")[:MAX_FREE_CATEGORIES]
            category_moves(j, top[counts[top] > 0], 3)
        if part == "cheap":
            return blocks
        if part == "example":
            blocks.clear()
        # E: toward the nearest constraint-respecting real example; F: the example itself
        ex_pos = self._example(rule, x, rows)
        has = ex_pos >= 0
        if has.any():
            e = self.fit.take(np.maximum(ex_pos, 0))
            numeric_constrained = constrained.copy()
            cat_constrained = np.array([not a.all() for a in rule["allowed"]], dtype=bool)
            for only_rule in (True, False):
                for a in ALPHAS:
                    num = b.num + a * (e.num - b.num)
                    num[:, integer] = np.round(num[:, integer])
                    if only_rule:
                        num[:, ~numeric_constrained] = b.num[:, ~numeric_constrained]
                    num = np.where(np.isnan(num), b.num, num)
                    cat = b.cat.copy()
                    if a >= 0.5:
                        take = np.ones(len(self.schema.categorical), dtype=bool) if not only_rule else cat_constrained
                        cat[:, take] = e.cat[:, take]
                    add(num, cat, has & ((num != b.num).any(axis=1) | (cat != b.cat).any(axis=1)),
                        2 if only_rule else 4)
            add(e.num, e.cat, has, 5)
        return blocks

    # ------------------------------------------------------------------ one chunk of failing rows
    def run(self, rows: np.ndarray, point: Encoded, valid, source, output, boundary_check=None) -> None:
        """Search for ``rows`` (whose boundary points failed). With ``boundary_check`` (only for at most
        ``SMALL_ROWS`` rows), the rows' boundary points are not checked yet: they are scored in the same model call
        as the candidates, ``boundary_check(outputs, in_target)`` receives their results, and only the rows whose
        boundary point fails take a searched point."""
        res = self.res
        tgt, rule = res["target"][rows], res["rule"][rows]
        done = np.zeros(len(rows), dtype=bool)
        num = cat = owner = phase = dist = None

        def gather(part):
            nonlocal num, cat, owner, phase, dist
            nums, cats, owners, phases = [], [], [], []
            todo = ~done
            for t, r in sorted(set(zip(tgt[todo].tolist(), rule[todo].tolist()))):
                sel = np.flatnonzero((tgt == t) & (rule == r) & todo)
                for n_, c_, p_, ph_ in self._candidates(rows[sel], t, r, part):
                    nums.append(n_), cats.append(c_), owners.append(sel[p_]), phases.append(ph_)
            if not nums:
                return
            n_, c_ = np.concatenate(nums), np.concatenate(cats)
            o_, ph_ = np.concatenate(owners), np.concatenate(phases)
            d_ = self.scale.distance(self.enc.take(rows[o_]), Encoded(n_, c_), self.pct(rows[o_]))
            if num is None:
                num, cat, owner, phase, dist = n_, c_, o_, ph_, d_
            else:
                num, cat = np.concatenate([num, n_]), np.concatenate([cat, c_])
                owner, phase, dist = np.concatenate([owner, o_]), np.concatenate([phase, ph_]), np.concatenate([dist, d_])

        small = len(rows) <= SMALL_ROWS
        gather("all" if small else "cheap")
        pre = None
        if boundary_check is not None:  # boundary points and all candidates in one model call
            b = self.boundary.take(rows)
            nb, nc = len(rows), 0 if num is None else len(num)
            self.n_candidates += nc
            both = b if num is None else Encoded(np.concatenate([b.num, num]), np.concatenate([b.cat, cat]))
            out_all = self.m.outputs(both)
            ok_all = self.m.in_target(out_all, tgt if num is None else np.concatenate([tgt, tgt[owner]]))
            boundary_check(out_all[:nb], ok_all[:nb])
            done |= ok_all[:nb]
            pre = (out_all[nb:], ok_all[nb:])
        elif small and num is not None:  # few rows: every stage's candidates in one model call (same choices)
            self.n_candidates += len(num)
            out_all = self.m.outputs(Encoded(num, cat))
            pre = (out_all, self.m.in_target(out_all, tgt[owner]))
        for ph in (1, 2, 3, 4, 5):
            if ph == 2 and not small and not done.all():
                gather("example")
            if num is None:
                continue
            cand = np.flatnonzero((phase == ph) & ~done[owner])
            if not len(cand):
                continue
            # rank each row's candidates nearest first (ties: the earlier candidate); score them in rounds, so a row
            # repaired by one of its nearest candidates costs no further model outputs. The nearest valid
            # candidate of a round is the nearest valid one of the stage: later rounds hold only farther ones.
            cand = cand[np.lexsort((cand, dist[cand], owner[cand]))]
            starts = np.r_[True, owner[cand][1:] != owner[cand][:-1]]
            rank = np.arange(len(cand)) - np.maximum.accumulate(np.where(starts, np.arange(len(cand)), 0))
            for lo, hi in ROUNDS:
                sel = cand[(rank >= lo) & (rank < hi) & ~done[owner[cand]]]
                if not len(sel):
                    continue
                if pre is None:
                    self.n_candidates += len(sel)
                    out = self.m.outputs(Encoded(num[sel], cat[sel]))
                    ok = self.m.in_target(out, tgt[owner[sel]])
                else:
                    out, ok = pre[0][sel], pre[1][sel]
                good = sel[ok]  # sel is in (row, distance, index) order: the first per row is its nearest
                if not len(good):
                    continue
                first = np.r_[True, owner[good][1:] != owner[good][:-1]]
                best = good[first]
                outs = dict(zip(good.tolist(), _objects(out[ok])))
                g = rows[owner[best]]
                point.num[g], point.cat[g] = num[best], cat[best]
                valid[g] = True
                source[g] = _SRC[EXAMPLE] if ph == 5 else _SRC[SEARCHED]
                output[g] = np.array([outs[k] for k in best.tolist()] + [None], dtype=object)[:-1]
                done[owner[best]] = True


def wants_verify(ex, verify, model) -> bool:
    """``verify=None`` means: verify whenever a model is known (passed, or kept from ``fit``)."""
    known = model is not None or getattr(ex, "model_", None) is not None
    if verify is None:
        return known
    if verify and not known:
        from ._errors import ModelError
        raise ModelError("verify=True needs the model: pass model= (or fit with the model rather than y_pred)")
    return bool(verify)


def source_column(source: np.ndarray) -> pd.Categorical:
    return pd.Categorical.from_codes(source, categories=list(SOURCES))


def valid_column(checked: np.ndarray, valid: np.ndarray) -> pd.arrays.BooleanArray:
    return pd.arrays.BooleanArray(valid & checked, ~checked)


def verified_frame(ex, X: pd.DataFrame, enc: Encoded, res: dict, model) -> pd.DataFrame:
    """``counterfactuals(verify=True)``: verified points plus ``valid`` and ``source`` columns."""
    v = verify_points(ex, X, enc, res, model)
    out = ex._decode(v.point, X.index)
    out.loc[(res["target"] >= 0) & (res["rule"] < 0)] = np.nan  # no rule, or none actionable
    out["valid"] = valid_column(v.checked, v.valid)
    out["source"] = source_column(v.source)
    needing = res["target"] >= 0
    verified = v.valid & v.checked & np.isin(v.source, [_SRC[s] for s in VERIFIED_SOURCES])
    similar = v.valid & v.checked & (v.source == _SRC[EXAMPLE])
    code = np.where(verified, 0, np.where(similar, 1, 2))
    out["recourse"] = pd.Categorical.from_codes(np.where(needing, code, -1), categories=list(RECOURSE_OUTCOMES))
    changed_mask = ex._decode(enc, X.index).ne(ex._decode(v.point, X.index)).to_numpy() & v.checked[:, None]
    names = np.asarray(ex.schema_.names, dtype=object)
    out["changed"] = [tuple(names[m]) for m in changed_mask]
    out["recommended_rule"] = _ids_or_missing(np.where(verified & (v.source != _SRC[EXAMPLE]), res["rule"], -1))
    return out


def _ids_or_missing(values: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(np.maximum(values, 0).astype(np.int64), values < 0)


def verify_one(ex, exp, X: pd.DataFrame, enc: Encoded, res: dict, model) -> None:
    """Fill the verification fields of a LocalExplanation of one row that has a rule."""
    v = verify_points(ex, X, enc, res, model)
    exp.boundary_point = exp.counterfactual
    exp.boundary_valid, exp.boundary_output = bool(v.boundary_valid[0]), v.boundary_output[0]
    exp.counterfactual = {k: _native(val) for k, val in ex._decode(v.point, X.index).iloc[0].items()}
    exp.counterfactual_valid, exp.counterfactual_output = bool(v.valid[0]), v.output[0]
    exp.counterfactual_source = SOURCES[v.source[0]] if v.source[0] >= 0 else None
    if exp.example is not None:
        out = _Model(ex, model, X).outputs(ex.schema_.encode(pd.DataFrame([exp.example])))
        exp.example_output = _objects(out)[0]
        exp.example_valid = bool(ex._all_targets[exp.target].target.contains(out)[0])
