"""Recount every candidate rule of a fitted surrogate on more rows (mergeable counts), then re-choose the rules.

Fit on a sample, then count, per candidate box, the rows inside it and the rows inside it whose output is in each
target, over all rows (partition by partition; :class:`CandidateCounts` add up), and re-derive the valid rules
(ρ, τ) and metarules from those counts: rules sitting near τ on the sample no longer flip.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._outputs import min_rule_rows
from ._solution import Solution


@dataclass
class CandidateCounts:
    """Per candidate rule: rows inside (``n_inside``) and rows inside in each fitted target (``n_target[t]``)."""

    n_rows: int
    n_inside: np.ndarray
    n_target: list = field(default_factory=list)

    def __add__(self, other: "CandidateCounts") -> "CandidateCounts":
        if len(self.n_inside) != len(other.n_inside) or len(self.n_target) != len(other.n_target):
            raise ValueError("counts from different explainers cannot be merged")
        return CandidateCounts(self.n_rows + other.n_rows, self.n_inside + other.n_inside,
                               [a + b for a, b in zip(self.n_target, other.n_target)])

    __radd__ = lambda self, other: self if other == 0 else self.__add__(other)  # noqa: E731  (sum())


def candidate_counts(ex, X, y, chunk: int = 20_000) -> CandidateCounts:
    """Counts of ``ex``'s candidate rules on the rows X with outputs y (raw model outputs)."""
    cands = ex.surrogate_.candidates_
    enc = ex.schema_.encode(X)
    y = np.asarray(y)
    n_inside = np.zeros(len(cands), dtype=np.int64)
    n_target = [np.zeros(len(cands), dtype=np.int64) for _ in ex.targets_]
    in_t = [s.target.contains(y) for s in ex.targets_]
    for a in range(0, len(enc), chunk):
        sub = enc.take(slice(a, a + chunk))
        inside = cands.contains(sub)
        n_inside += inside.sum(axis=0)
        for t, m in enumerate(in_t):
            n_target[t] += inside[m[a:a + chunk]].sum(axis=0)
    return CandidateCounts(len(enc), n_inside, n_target)


def recount(ex, counts: CandidateCounts) -> dict:
    """Re-derive ``ex``'s rules from ``counts``; returns a summary (how many rules the recount changed)."""
    min_count = min_rule_rows(counts.n_rows, ex.rho)
    before = [{s.rules.key(r) for r in range(s.n_rules)} for s in ex.targets_]
    sols = [Solution.derive(ex.schema_, s.target, ex.surrogate_.candidates_, counts.n_inside, nt, counts.n_rows,
                            ex.tau, min_count, ex.max_cells, ex.random_state, lambda step, f: None, ex.constraints_)
            for s, nt in zip(ex.targets_, counts.n_target)]
    after = [{s.rules.key(r) for r in range(s.n_rules)} for s in sols]
    ex.targets_ = sols
    ex.n_fit_rows_ = counts.n_rows  # supports and the JSON's counts now refer to all counted rows
    ex._extra_targets = []
    changed = sum(len(a ^ b) for a, b in zip(before, after))
    return {"n_rows": counts.n_rows, "rules_before": sum(map(len, before)), "rules_after": sum(map(len, after)),
            "rules_changed": changed}
