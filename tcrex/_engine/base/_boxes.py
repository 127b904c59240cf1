"""Axis-aligned boxes (rules and metarules) over original features.

A box holds, per numeric feature, an interval ``(low, high]`` (``-inf``/``inf`` when open) and, per categorical
feature, the set of allowed categories as a boolean mask. The mask form is Appendix A's representation in
disguise: a "hot" rule allows one category, a "multi-cold" rule allows all but its cold ones, and the
simplifications of Appendix A (hot voids cold, all-but-one-cold is hot) hold automatically. The strict-subset
relation on masks is exactly the paper's modified subset relation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._data import Encoded


@dataclass
class Boxes:
    low: np.ndarray  # (R, n_numeric) float64
    high: np.ndarray  # (R, n_numeric) float64
    allowed: list  # one (R, n_categories) bool array per categorical feature

    def __len__(self) -> int:
        return self.low.shape[0]

    @classmethod
    def unbounded(cls, n: int, n_numeric: int, n_categories: list[int]) -> "Boxes":
        return cls(np.full((n, n_numeric), -np.inf), np.full((n, n_numeric), np.inf),
                   [np.ones((n, k), dtype=bool) for k in n_categories])

    def take(self, idx) -> "Boxes":
        idx = np.asarray(idx, dtype=np.int64)
        return Boxes(self.low[idx], self.high[idx], [a[idx] for a in self.allowed])

    def key(self, r: int) -> bytes:
        """Exact identity of box r (for de-duplication)."""
        parts = [self.low[r].tobytes(), self.high[r].tobytes()] + [a[r].tobytes() for a in self.allowed]
        return b"|".join(parts)

    # ------------------------------------------------------------------ geometry
    def outside(self, enc: Encoded, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row i, which numeric / categorical features of ``enc`` lie outside box ``r[i]`` (paper Eq. 8)."""
        num_out = (enc.num <= self.low[r]) | (enc.num > self.high[r])
        cat_out = np.zeros(enc.cat.shape, dtype=bool)
        for j, a in enumerate(self.allowed):
            cat_out[:, j] = ~a[r, enc.cat[:, j]]
        return num_out, cat_out

    def contains(self, enc: Encoded) -> np.ndarray:
        """(n_rows, n_boxes) membership, for tests and small inputs."""
        inside = np.ones((len(enc), len(self)), dtype=bool)
        for j in range(self.low.shape[1]):
            x = enc.num[:, j][:, None]
            inside &= (x > self.low[:, j][None, :]) & (x <= self.high[:, j][None, :])
        for j, a in enumerate(self.allowed):
            inside &= a[:, enc.cat[:, j]].T
        return inside

    def strict_subset_of_any(self, chunk: int = 256) -> np.ndarray:
        """For each box i, whether some other (distinct) box j contains it: the maximality test of step b.

        Boxes must be de-duplicated, so containment of a different box is strict. Vectorised in chunks.
        """
        n = len(self)
        result = np.zeros(n, dtype=bool)
        for start in range(0, n, chunk):
            i = np.arange(start, min(start + chunk, n))
            inside = np.ones((len(i), n), dtype=bool)  # inside[a, j]: box i[a] within box j
            for d in range(self.low.shape[1]):
                inside &= self.low[None, :, d] <= self.low[i, d][:, None]
                inside &= self.high[i, d][:, None] <= self.high[None, :, d]
            for a in self.allowed:
                # allowed_i must be a subset of allowed_j: no category allowed by i and refused by j
                inside &= ~(a[i][:, None, :] & ~a[None, :, :]).any(axis=2)
            inside[np.arange(len(i)), i] = False
            result[i] = inside.any(axis=1)
        return result

    def constrained(self, numeric: list[int], categorical: list[int]) -> np.ndarray:
        """(R, n_features) whether each box constrains each feature; ``numeric``/``categorical`` give the feature
        index of each numeric / categorical slot."""
        out = np.zeros((len(self), len(numeric) + len(categorical)), dtype=bool)
        out[:, numeric] = np.isfinite(self.low) | np.isfinite(self.high)
        for j, i in enumerate(categorical):
            out[:, i] = ~self.allowed[j].all(axis=1)
        return out

    def complexity(self) -> np.ndarray:
        """Finite terms per box: one per finite numeric bound, one per constrained categorical (paper §4)."""
        terms = np.isfinite(self.low).sum(axis=1) + np.isfinite(self.high).sum(axis=1)
        for a in self.allowed:
            terms = terms + (~a.all(axis=1))
        return terms.astype(np.int64)
