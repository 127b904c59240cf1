"""Percentile bootstrap from counts, shared by the audit and the comparison of models: the generator, Multinomial
resamples of count cells (:func:`resample_sums`), a gap with its interval (:func:`gap_row`) and its parameters.

Resampling n individuals with replacement gives Multinomial(n, p) counts over their distinct outcomes, so a
resample costs draws over a few dozen combinations, never over the rows. The audit's per-group counts
(``tcrex.audit``) and the comparison's count cells (``tcrex.compare``) resample this way.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import ParameterError


def check_bootstrap_params(n_boot, confidence, min_group_size) -> None:
    if not isinstance(n_boot, numbers.Integral) or isinstance(n_boot, bool) or n_boot < 1:
        raise ParameterError(f"n_boot must be a whole number >= 1, got {n_boot!r} (1000 is a good default)")
    if not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise ParameterError(f"confidence must be a fraction in (0, 1), got {confidence!r} (e.g. 0.95)")
    if not isinstance(min_group_size, numbers.Integral) or isinstance(min_group_size, bool) or min_group_size < 0:
        raise ParameterError(f"min_group_size must be a whole number >= 0, got {min_group_size!r}")


def ratio(a, b) -> float:
    return a / b if b else np.nan


def bootstrap_rng(random_state) -> np.random.Generator:
    """The bootstrap's generator: ``random_state`` itself when it is a numpy Generator, else one seeded by it."""
    return random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)


def resample_sums(rng, weights, rows, n_boot) -> np.ndarray:
    """Per resample (``n_boot`` rows), the column sums of ``rows`` (K x m) over n = sum(weights) individuals drawn
    with replacement, ``weights[k]`` of them having the values ``rows[k]``: Multinomial(n, weights / n) counts
    times ``rows``. Zeros, and no draw from ``rng``, when there is nobody (n = 0)."""
    n = int(np.sum(weights))
    if n == 0:
        return np.zeros((n_boot, np.shape(rows)[1]))
    return rng.multinomial(n, weights / n, size=n_boot).astype(np.float64) @ rows


def gap_row(metric, group, reference, value, reference_value, resampled, reference_resampled, *, alpha, n_group,
            n_reference, min_group_size) -> dict:
    """One row of a gaps frame (:data:`~tcrex.population.GAP_COLUMNS`): ``difference`` = value - reference value, its
    percentile interval from the paired resamples, and ``significant``: the interval excludes zero and neither
    side is a small group (fewer than ``min_group_size`` individuals)."""
    diff = snap_zero(value - reference_value)
    lo, hi = percentile_interval(snap_zero(resampled - reference_resampled), alpha)
    small = n_group < min_group_size or n_reference < min_group_size
    excludes = bool(np.isfinite(lo) and np.isfinite(hi) and (lo > 0 or hi < 0))
    return {"metric": metric, "group": group, "reference": reference, "value": value,
            "reference_value": reference_value, "difference": diff, "ci_low": lo, "ci_high": hi,
            "significant": excludes and not small and bool(np.isfinite(diff)),
            "n_group": n_group, "n_reference": n_reference, "small_group": small}


def snap_zero(x, tol=1e-12):
    """Rounding noise to exact zero: equal means computed over different counts differ by ~1e-17, which must
    neither look like a gap nor make an interval exclude zero."""
    if np.ndim(x) == 0:
        return 0.0 if abs(x) < tol else float(x)
    x = np.array(x, dtype=np.float64)
    x[np.abs(x) < tol] = 0.0
    return x


def percentile_interval(x, alpha) -> tuple[float, float]:
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if not len(x):
        return np.nan, np.nan
    lo, hi = np.quantile(x, [alpha, 1 - alpha])
    return float(lo), float(hi)
