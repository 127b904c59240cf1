"""Local explanations: counterfactual points, real examples and their distances.

Pure functions over plain arrays so the explainer can apply them to one row or to many.
"""
from __future__ import annotations

import numpy as np

from ._boxes import Boxes
from ._data import Encoded, FeatureSchema


def nearest_in_interval(x: np.ndarray, low: np.ndarray, high: np.ndarray, integer) -> np.ndarray:
    """Closest value to each x inside ``(low, high]`` (x itself when already inside).

    Above ``low`` means strictly above it: the next integer for integer features, otherwise the next
    representable float. An integer feature whose interval holds no whole number falls back to the float rule.
    ``integer`` is one flag, or flags broadcast against x (e.g. one per column when columns are features).
    """
    x = np.asarray(x, dtype=np.float64)
    low = np.broadcast_to(np.asarray(low, dtype=np.float64), x.shape)
    high = np.broadcast_to(np.asarray(high, dtype=np.float64), x.shape)
    out = x.copy()
    below, above = x <= low, x > high
    up = np.nextafter(low, np.inf)
    down = high.copy()
    integer = np.asarray(integer, dtype=bool)
    if integer.any():
        up_int = np.floor(low) + 1
        down_int = np.floor(high)
        up = np.where(integer & (up_int <= high), up_int, up)
        down = np.where(integer & (down_int > low), down_int, down)
    out[below] = up[below]
    out[above] = down[above]
    return out


def move_into(enc: Encoded, boxes: Boxes, idx: np.ndarray, schema: FeatureSchema,
              preferred_category: list | None = None, transitions: list | None = None) -> Encoded:
    """Each row moved to the nearest point of box ``idx[row]`` (features already inside are left alone).

    A categorical outside the box moves to the allowed category with the highest preference (the most common in
    the fit data when known, else the first allowed in category order) among those its transition map allows.
    """
    num = enc.num.copy()
    cat = enc.cat.copy()
    for j, i in enumerate(schema.numeric):
        num[:, j] = nearest_in_interval(enc.num[:, j], boxes.low[idx, j], boxes.high[idx, j],
                                        schema.features[i].integer)
    for j in range(len(schema.categorical)):
        allowed = boxes.allowed[j][idx]  # (n, k)
        inside = allowed[np.arange(len(idx)), enc.cat[:, j]]
        if transitions is not None and transitions[j] is not None:
            allowed = allowed & transitions[j][enc.cat[:, j]]
        pref = preferred_category[j] if preferred_category is not None else None
        score = np.where(allowed, (pref if pref is not None else -np.arange(allowed.shape[1]))[None, :], -np.inf)
        choice = np.argmax(score, axis=1)
        cat[:, j] = np.where(inside, enc.cat[:, j], choice)
    return Encoded(num, cat)


class PercentileScale:
    """Total percentile shift (Pawelczyk et al. 2020) with percentiles from the fit data; a category change is 1."""

    def __init__(self, fit: Encoded):
        self.sorted = [np.sort(fit.num[:, j]) for j in range(fit.num.shape[1])]
        self.n = len(fit)

    def transform(self, enc: Encoded) -> np.ndarray:
        out = np.empty(enc.num.shape, dtype=np.float64)
        for j, s in enumerate(self.sorted):
            out[:, j] = np.searchsorted(s, enc.num[:, j], side="right") / self.n
        return out

    def distance(self, a: Encoded, b: Encoded, a_pct: np.ndarray | None = None) -> np.ndarray:
        """Row-wise distance between equally long a and b (``a_pct``: ``transform(a)`` when already known)."""
        return (np.abs((self.transform(a) if a_pct is None else a_pct) - self.transform(b)).sum(axis=1)
                + (a.cat != b.cat).sum(axis=1))


def nearest_rows(query: Encoded, pool: Encoded, scale: PercentileScale, max_pairs: int = 4_000_000) -> tuple:
    """For each query row, the position in ``pool`` of its nearest row and the distance (chunked)."""
    if len(pool) == 0:
        return np.full(len(query), -1, dtype=np.int64), np.full(len(query), np.nan)
    qp, pp = scale.transform(query), scale.transform(pool)
    best = np.empty(len(query), dtype=np.int64)
    dist = np.empty(len(query))
    step = max(1, max_pairs // max(len(pool), 1))
    for s in range(0, len(query), step):
        e = min(s + step, len(query))
        d = np.abs(qp[s:e, None, :] - pp[None, :, :]).sum(axis=2)
        d += (query.cat[s:e, None, :] != pool.cat[None, :, :]).sum(axis=2)
        best[s:e] = np.argmin(d, axis=1)
        dist[s:e] = d[np.arange(e - s), best[s:e]]
    return best, dist


def category_preference(counts: list, schema: FeatureSchema) -> list[np.ndarray]:
    """Per categorical feature, each category's frequency in the fit data (``counts``: per categorical slot, the
    count of each category), ties to the earlier category."""
    prefs = []
    for j, i in enumerate(schema.categorical):
        k = len(schema.features[i].categories)
        c = np.asarray(counts[j], dtype=np.float64)
        prefs.append(c - np.arange(k) / (k + 1))  # strictly ordered, frequency first
    return prefs

