"""Recount every candidate rule of a fitted surrogate on more rows (mergeable counts), then re-choose the rules.

Fit on a sample, then count, per candidate box, the rows inside it and the rows inside it per output (per class
for a classifier, per fitted target interval for a regression), over all rows (partition by partition;
:class:`CandidateCounts` add up), and re-derive the valid rules (ρ, τ) and metarules from those counts: rules
sitting near τ on the sample no longer flip.

The explainer's state keeps the counts (``TCREx.recount_counts_``): every later derivation — ``update(tau=...)``,
``update(target=...)``, ``update(constraints=...)``, targets derived on demand by ``explain(target=...)`` — reads
them (:func:`tcrex._engine.fitting._derive.counts_for`), so a recounted explainer never mixes the sample's counts with all rows' size.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ._derive import derive
from ...errors import ParameterError
from ..base._outputs import min_rule_rows
from ._state import FittedState, rederive
from ._targets import Target
from ...vocabulary import CLASSIFICATION


@dataclass
class CandidateCounts:
    """Per candidate rule: rows inside (``n_inside``) and rows inside whose output is in each of ``targets``
    (``n_target[k]``). A classifier's counts are per class (``Target(classes=(c,))`` for every fitted class), so
    any class target can be re-derived from them; a regression's are per fitted target interval."""

    n_rows: int
    n_inside: np.ndarray
    n_target: list = field(default_factory=list)
    targets: tuple = ()

    def __add__(self, other: "CandidateCounts") -> "CandidateCounts":
        if len(self.n_inside) != len(other.n_inside) or tuple(self.targets) != tuple(other.targets):
            raise ValueError("counts from different explainers cannot be merged")
        return CandidateCounts(self.n_rows + other.n_rows, self.n_inside + other.n_inside,
                               [a + b for a, b in zip(self.n_target, other.n_target)], tuple(self.targets))

    __radd__ = lambda self, other: self if other == 0 else self.__add__(other)  # noqa: E731  (sum())

    def for_target(self, target: Target) -> np.ndarray | None:
        """Rows inside every candidate whose output is in ``target``; None when these counts cannot tell (a
        regression interval that was not counted)."""
        if target in self.targets:
            return self.n_target[self.targets.index(target)]
        if target.classes is not None and all(t.classes is not None and len(t.classes) == 1 for t in self.targets):
            have = [t.classes[0] for t in self.targets]
            if all(c in have for c in target.classes):
                return sum((self.n_target[have.index(c)] for c in target.classes),
                           np.zeros(len(self.n_inside), dtype=np.int64))
        return None


@dataclass(frozen=True)
class Recounted:
    """The counts an explainer's rules are derived from after :func:`recount`, and the minimum rule size."""

    counts: CandidateCounts
    min_count: int


def count_targets(state: FittedState) -> tuple:
    """What :func:`candidate_counts` counts for ``state``: one target per class, or the fitted regression targets."""
    if state.task == CLASSIFICATION:
        return tuple(Target(classes=(c,)) for c in state.classes)
    return tuple(s.target for s in state.solutions)


def candidate_counts(state: FittedState, X, y, chunk: int = 20_000) -> CandidateCounts:
    """Counts of ``state``'s candidate rules on the rows X with outputs y (raw model outputs)."""
    cands = state.surrogate.candidates_
    enc = state.schema.encode(X)
    y = np.asarray(y)
    targets = count_targets(state)
    n_inside = np.zeros(len(cands), dtype=np.int64)
    n_target = [np.zeros(len(cands), dtype=np.int64) for _ in targets]
    in_t = [t.contains(y) for t in targets]
    for a in range(0, len(enc), chunk):
        sub = enc.take(slice(a, a + chunk))
        inside = cands.contains(sub)
        n_inside += inside.sum(axis=0)
        for t, m in enumerate(in_t):
            n_target[t] += inside[m[a:a + chunk]].sum(axis=0)
    return CandidateCounts(len(enc), n_inside, n_target, targets)


def recount(state: FittedState, counts: CandidateCounts, spec) -> FittedState:
    """A new state whose rules (targets of ``spec``) are re-derived from ``counts``, keeping the counts for later
    updates and a summary of what changed (``recount_summary``). Raises, leaving ``state`` as it was, when no
    rule is valid on the counted rows."""
    cands = state.surrogate.candidates_
    if len(counts.n_inside) != len(cands) or tuple(counts.targets) != count_targets(state):
        raise ParameterError("these counts come from another explainer (other candidate rules or outputs); count "
                             "with this explainer's candidate_counts()")
    before = [{s.rules.key(r) for r in range(s.n_rules)} for s in state.solutions]
    # supports and the JSON's counts now refer to all counted rows
    new = rederive(state, recounted=Recounted(counts, min_rule_rows(counts.n_rows, state.rho)),
                   n_fit_rows=counts.n_rows)
    solutions = derive(new, spec)
    after = [{s.rules.key(r) for r in range(s.n_rules)} for s in solutions]
    changed = sum(len(a ^ b) for a, b in zip(before, after))
    summary = {"n_rows": counts.n_rows, "rules_before": sum(map(len, before)), "rules_after": sum(map(len, after)),
               "rules_changed": changed}
    return replace(new, solutions=solutions, recount_summary=summary)
