"""Steps b-e of the paper for a fitted state: valid rules, grid and metarules per target, from the surrogate's
counts (or the counts of :func:`tcrex._recount.recount`)."""
from __future__ import annotations

import warnings

import numpy as np

from ._errors import NoValidRuleError, ParameterError
from ._solution import Solution
from ._state import FittedState
from ._targets import Target, targets_from_spec
from ._vocabulary import NO_RULE


def _quiet(step, fraction) -> None:
    pass


def counts_for(state: FittedState, target: Target):
    """``(n_inside, n_target, n_rows, min_count)`` every derivation of ``state`` uses for ``target``: the recounted
    counts when :func:`tcrex._recount.recount` ran, else the surrogate's fit counts."""
    rec = state.recounted
    if rec is None:
        n_target = state.surrogate.count(target.contains(state.fit_y).astype(np.float64))
        return state.surrogate.n_inside_, n_target, state.n_fit_rows, state.surrogate.min_count_
    n_target = rec.counts.for_target(target)
    if n_target is None:
        raise ParameterError(f"the rules were recounted on {rec.counts.n_rows:,} rows for the fitted targets only; "
                             f"{target.describe()} was not counted there. Fit with this target, then recount.")
    return rec.counts.n_inside, n_target, rec.counts.n_rows, rec.min_count


def solve(state: FittedState, target: Target, report=_quiet) -> Solution:
    """The rules, grid and metarules of one target."""
    n_inside, n_target, n_rows, min_count = counts_for(state, target)
    return Solution.derive(state.schema, target, state.surrogate.candidates_, n_inside, n_target, n_rows,
                           state.tau, min_count, state.max_cells, state.random_state, report, state.constraints)


def derive(state: FittedState, spec, report=_quiet) -> list[Solution]:
    """The solutions of every target of ``spec`` (the ``target`` parameter); raises when no target has a valid
    rule and warns for each target without one."""
    targets = targets_from_spec(spec, state.task, state.fit_y, state.classes)
    solutions = []
    for t, target in enumerate(targets):
        sub = (lambda step, f, t=t: report(f"{step} (target {t})", (t + f) / len(targets)))  # noqa: E731
        solutions.append(solve(state, target, sub))
    if all(s.n_rules == 0 for s in solutions):
        best = max(s.n_candidates for s in solutions)
        raise NoValidRuleError(
            f"no valid rule: none of the {best} candidate rules holds at least {state.min_count} "
            f"rows (rho={state.rho}) with accuracy >= tau={state.tau}. Lower tau, lower rho, or use more "
            "surrogate trees.")
    for t, s in enumerate(solutions):
        if s.n_rules == 0:
            warnings.warn(f"target {t} ({s.target.describe()}) has no valid rule at tau={state.tau}; inputs it "
                          f"serves get status {NO_RULE!r}", stacklevel=3)
    return solutions


def solutions_for(state: FittedState, spec) -> list[Solution]:
    """The solutions serving the targets of ``spec`` (None: the fitted targets). A target the fit did not solve is
    solved now and kept in the state's declared cache (``StateCache.extra_solutions``), so its id stays valid;
    the fitted targets never change."""
    if spec is None:
        return state.solutions
    fit_y = state.fit_y if state.fit_y is not None else np.zeros(1)
    found = []
    for w in targets_from_spec(spec, state.task, fit_y, state.classes):
        match = next((s for s in state.all_solutions() if s.target == w), None)
        if match is None:
            state.require_surrogate(f"explain towards {w.describe()}")
            match = solve(state, w)
            state.cache.extra_solutions.append(match)
        found.append(match)
    return found
