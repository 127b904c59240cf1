"""Confidence intervals from counts: a group's individuals as counts of distinct outcomes, their point values and
their percentile bootstrap, exact and vectorised.

Resampling n individuals with replacement gives Multinomial(n, p) counts over their distinct outcomes, so a
resample costs draws over a few dozen combinations, never over the rows (:func:`tcrex.population.resample_sums`,
shared with the comparison of recourse across models, :mod:`tcrex.compare`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..population import ratio, resample_sums
from ._metrics import METRICS

_MEANS = {"mean_changes": "changes", "mean_distance": "distance", "mean_feasibility": "feasibility",
          "mean_accuracy": "accuracy"}
#: Means of the rule the recourse follows: over the individuals whose recourse follows a rule.
_RULE_MEANS = ("mean_feasibility", "mean_accuracy")
#: Columns of a :class:`CountedGroup`'s combinations.
_WIDTH = 6


@dataclass
class CountedGroup:
    """A group's individuals needing recourse, as counts: everything its point values and bootstrap need.

    ``combos``: the distinct (has recourse, changes, feasibility, accuracy, verified, through a rule) rows among
    them, sorted (no recourse: zeros, with the verified flag), ``weights`` how many individuals have each;
    ``distances`` the distinct distances of those with recourse, sorted, ``dist_n`` how many have each. "Through a
    rule" marks recourse that follows a rule (all of it in a rules-only audit; verified advice that is a minimal
    change beyond the rules has none): feasibility and accuracy are means over those.
    """

    n: int
    combos: np.ndarray
    weights: np.ndarray
    distances: np.ndarray
    dist_n: np.ndarray
    works_known: bool

    @classmethod
    def build(cls, combos, weights, distances, dist_n, works_known) -> "CountedGroup":
        combos = np.asarray(combos, dtype=np.float64).reshape(-1, _WIDTH)
        weights = np.asarray(weights, dtype=np.int64)
        if len(combos):
            combos, inv = np.unique(combos, axis=0, return_inverse=True)
            weights = np.rint(np.bincount(inv.reshape(-1), weights=weights, minlength=len(combos))).astype(np.int64)
        distances = np.asarray(distances, dtype=np.float64)
        dist_n = np.asarray(dist_n, dtype=np.int64)
        if len(distances):
            distances, inv = np.unique(distances, return_inverse=True)
            dist_n = np.rint(np.bincount(inv.reshape(-1), weights=dist_n, minlength=len(distances))).astype(np.int64)
        return cls(int(weights.sum()), combos, weights, distances, dist_n, bool(works_known))

    @classmethod
    def from_values(cls, vals: dict) -> "CountedGroup":
        """From per-individual arrays (``has``, ``changes``, ``distance``, ``feasibility``, ``accuracy``, optional
        ``works`` and ``with_rule``, default ``has``), as counted from rows."""
        h = np.asarray(vals["has"], dtype=bool)
        works = np.asarray(vals.get("works", np.full(len(h), np.nan)), dtype=np.float64)
        rule = h & np.asarray(vals.get("with_rule", h), dtype=bool)
        combos = np.column_stack([h.astype(np.float64)] + [np.where(h, vals["changes"], 0.0)]
                                 + [np.where(rule, vals[c], 0.0) for c in ("feasibility", "accuracy")]
                                 + [np.nan_to_num(works), rule.astype(np.float64)])
        dist = np.asarray(vals["distance"], dtype=np.float64)[h]
        return cls.build(combos, np.ones(len(h), np.int64), dist, np.ones(len(dist), np.int64),
                         not np.isnan(works).any())

    @classmethod
    def from_cells(cls, need: pd.DataFrame, dist: pd.DataFrame, works_known: bool) -> "CountedGroup":
        """From count cells of individuals needing recourse and their distance counts (:class:`AuditCounts`)."""
        h = need["has_recourse"].to_numpy(dtype=bool)
        rule = h & (need["rule"].to_numpy(dtype=np.int64) >= 0)
        combos = np.column_stack([h.astype(np.float64),
                                  np.where(h, need["changes"].to_numpy(dtype=np.float64), 0.0),
                                  np.where(rule, need["feasibility"].to_numpy(dtype=np.float64), 0.0),
                                  np.where(rule, need["accuracy"].to_numpy(dtype=np.float64), 0.0),
                                  np.maximum(need["works"].to_numpy(dtype=np.float64), 0.0),
                                  rule.astype(np.float64)])
        return cls.build(combos, need["n"].to_numpy(), dist["distance"].to_numpy(), dist["n"].to_numpy(),
                         works_known)

    @classmethod
    def pool(cls, parts) -> "CountedGroup":
        return cls.build(np.concatenate([p.combos for p in parts]), np.concatenate([p.weights for p in parts]),
                         np.concatenate([p.distances for p in parts]), np.concatenate([p.dist_n for p in parts]),
                         all(p.works_known for p in parts))

    @property
    def sums(self) -> np.ndarray:
        """(with recourse, sum of changes, of feasibility, of accuracy, verified, through a rule) over the
        individuals."""
        return self.weights.astype(np.float64) @ self.combos if len(self.combos) else np.zeros(_WIDTH)

    @property
    def n_rec(self) -> int:
        return int(self.weights[self.combos[:, 0] == 1].sum()) if len(self.combos) else 0

    @property
    def n_rule(self) -> int:
        """Individuals whose recourse follows a rule (the denominator of feasibility and accuracy)."""
        return int(round(self.sums[5]))

    @property
    def n_works(self) -> float:
        return float(self.sums[4]) if self.works_known else np.nan


def metric_n(grp: CountedGroup, metric) -> int:
    """How many individuals ``metric`` averages over: all needing recourse for shares of them, those whose recourse
    follows a rule for the rule's feasibility and accuracy, those with recourse for the other means."""
    if metric in ("recourse_share", "effectiveness"):
        return grp.n
    return grp.n_rule if metric in _RULE_MEANS else grp.n_rec


def point_values(grp: CountedGroup, distance_available=True) -> dict:
    if isinstance(grp, dict):
        grp = CountedGroup.from_values(grp)
    n_rec, sums = grp.n_rec, grp.sums
    out = {"recourse_share": ratio(float(n_rec), grp.n)}
    for k, (metric, col) in enumerate(_MEANS.items()):
        if col == "distance":
            out[metric] = ratio(float(grp.dist_n.astype(np.float64) @ grp.distances), n_rec) \
                if distance_available and n_rec else np.nan
        else:
            out[metric] = ratio(float(sums[{"changes": 1, "feasibility": 2, "accuracy": 3}[col]]),
                                grp.n_rule if metric in _RULE_MEANS else n_rec)
    out["effectiveness"] = ratio(grp.n_works, grp.n) if grp.works_known else np.nan  # NaN without a model
    return out


def pool_groups(parts) -> CountedGroup:
    return CountedGroup.pool(parts)


def bootstrap_group(rng, grp, n_boot, distance_available) -> dict:
    """Bootstrap sums of one group (a :class:`CountedGroup`, or per-individual arrays): per resample the number with
    recourse and the sums of each metric.

    Exact and vectorised, from counts alone. Resampling n individuals with replacement gives Multinomial(n, p)
    counts over the distinct (has recourse, changes, feasibility, accuracy, verified) combinations, so those
    metrics need only B x K draws (K distinct combinations, a few dozen). Given the number with recourse in a
    resample, its distances are that many draws with replacement from the group's distances with recourse (drawn
    from their distinct values and counts: the same as drawing from the sorted list of all of them).
    Returns per-resample metric values (NaN where a resample has nobody with recourse, or for feasibility and
    accuracy nobody through a rule) and the raw sums, so that pooled references ("rest") can be formed.
    """
    if isinstance(grp, dict):
        grp = CountedGroup.from_values(grp)
    n = grp.n
    nan = np.full(n_boot, np.nan)
    if n == 0:
        return {"n": np.zeros(n_boot), "n_rec": np.zeros(n_boot), "n_works": np.zeros(n_boot),
                "n_rule": np.zeros(n_boot), **{f"sum_{c}": np.zeros(n_boot) for c in _MEANS},
                **{m: nan.copy() for m in (*METRICS, "effectiveness")}}
    sums = resample_sums(rng, grp.weights, grp.combos, n_boot)  # (B, 6): n_rec, sums of changes, feasibility,
    # accuracy, n verified, n through a rule
    n_rec = sums[:, 0]
    out = {"n": np.full(n_boot, float(n)), "n_rec": n_rec, "n_rule": sums[:, 5], "sum_changes": sums[:, 1],
           "sum_feasibility": sums[:, 2], "sum_accuracy": sums[:, 3],
           "n_works": sums[:, 4] if grp.works_known else nan.copy()}
    if distance_available:
        out["sum_distance"] = _bootstrap_sums(rng, grp.distances, grp.dist_n, n_rec.astype(np.int64))
    else:
        out["sum_distance"] = nan.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        out["recourse_share"] = n_rec / n
        out["effectiveness"] = out["n_works"] / n
        for metric, col in _MEANS.items():
            over = out["n_rule"] if metric in _RULE_MEANS else n_rec
            out[metric] = np.where(over > 0, out[f"sum_{col}"] / np.maximum(over, 1), np.nan)
    return out


def _bootstrap_sums(rng, values, counts, sizes, max_chunk=4_000_000) -> np.ndarray:
    """For each resample b, the sum of ``sizes[b]`` draws with replacement from the multiset of ``values``
    (sorted, distinct) each present ``counts`` times.

    A draw is a uniform position in the sorted multiset, mapped to its value by the cumulative counts; all draws
    of a chunk of resamples are one flat index vector, summed per resample with ``add.reduceat``.
    """
    out = np.zeros(len(sizes))
    total = int(np.sum(counts))
    if not total or not len(sizes) or sizes.max() == 0:
        return out
    # the sorted multiset itself: position i holds the value a cumulative-count lookup would give (searching the
    # cumulative counts for every draw cost 20x more at a few hundred thousand values; the draws are the same)
    multiset = np.repeat(np.asarray(values), np.asarray(counts, dtype=np.int64))
    dtype = np.int32 if total < 2**31 else np.int64
    step = max(1, max_chunk // int(sizes.max()))
    for s in range(0, len(sizes), step):
        sz = sizes[s:s + step]
        idx = rng.integers(0, total, size=int(sz.sum()), dtype=dtype)
        starts = np.concatenate([[0], np.cumsum(sz)[:-1]])
        nonempty = sz > 0
        if nonempty.any():  # reduceat needs valid start offsets: only resamples that drew something
            drawn = multiset[idx]
            out[s:s + step][nonempty] = np.add.reduceat(drawn, starts[nonempty])
    return out


def pooled_resamples(parts, metric) -> np.ndarray:
    """Per-resample value of ``metric`` for several groups pooled (their resamples are independent)."""
    n = sum(p["n"] for p in parts)
    n_rec = sum(p["n_rec"] for p in parts)
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == "recourse_share":
            return np.where(n > 0, n_rec / np.maximum(n, 1), np.nan)
        if metric == "effectiveness":
            return np.where(n > 0, sum(p["n_works"] for p in parts) / np.maximum(n, 1), np.nan)
        total = sum(p[f"sum_{_MEANS[metric]}"] for p in parts)
        over = sum(p["n_rule"] for p in parts) if metric in _RULE_MEANS else n_rec
        return np.where(over > 0, total / np.maximum(over, 1), np.nan)
