"""The gaps frame: one row per (metric, group) with its difference from the reference, its interval and whether
it is significant -- the audit's :meth:`~tcrex.audit.AuditResult.gaps` and the comparison's gaps alike -- and when
a gap is **clear**, the one rule both apply (the audit's findings, the comparison's findings, the dashboard, the
CLI and the report):

* its bootstrap interval excludes zero and neither side is a small group (``significant``), **and**
* it is at least the **practical threshold**: ``practical`` percentage points for share metrics, ``practical``
  percent of the reference group's value for mean metrics (a gap of 0 is never clear)."""
from __future__ import annotations

import numpy as np
import pandas as pd

#: Default practical threshold: percentage points for shares, percent of the reference value for means.
PRACTICAL_DEFAULT = 5.0

GAP_COLUMNS = ["metric", "group", "reference", "value", "reference_value", "difference", "ci_low", "ci_high",
                "significant", "n_group", "n_reference", "small_group"]

GAP_TYPES = {"metric": object, "group": object, "reference": object, "value": float, "reference_value": float,
              "difference": float, "ci_low": float, "ci_high": float, "significant": bool, "n_group": np.int64,
              "n_reference": np.int64, "small_group": bool}




def practical_gaps(gaps: pd.DataFrame, practical: float = PRACTICAL_DEFAULT, means=()) -> np.ndarray:
    """Boolean mask over ``gaps`` rows: the gap is at least ``practical`` percentage points (share metrics) or
    ``practical`` percent of the reference value (the metrics named in ``means``), and not zero."""
    if not len(gaps):
        return np.zeros(0, dtype=bool)
    is_mean = gaps["metric"].isin(list(means)).to_numpy()
    size = gaps["difference"].abs().to_numpy(dtype=np.float64)
    ref = gaps["reference_value"].abs().to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        big_share = size * 100 >= practical - 1e-9
        big_mean = size >= ref * practical / 100 - 1e-12
        nonzero = size > 0
    return np.where(is_mean, big_mean, big_share) & nonzero


def significant_gaps(gaps: pd.DataFrame) -> np.ndarray:
    """Boolean mask over ``gaps`` rows: the interval excludes zero and neither side is a small group."""
    if not len(gaps):
        return np.zeros(0, dtype=bool)
    return gaps["significant"].fillna(False).to_numpy(dtype=bool)


def clear_gaps(gaps: pd.DataFrame, practical: float = PRACTICAL_DEFAULT, means=()) -> np.ndarray:
    """Boolean mask over ``gaps`` rows: the gap is clear (significant and at least the practical threshold)."""
    return significant_gaps(gaps) & practical_gaps(gaps, practical, means)


def below_threshold_gaps(gaps: pd.DataFrame, practical: float = PRACTICAL_DEFAULT, means=()) -> np.ndarray:
    """Boolean mask: the interval excludes zero but the gap is smaller than the practical threshold."""
    return significant_gaps(gaps) & ~practical_gaps(gaps, practical, means)


def threshold_text(practical: float) -> str:
    """The threshold in words, as the findings and captions state it."""
    return f"{practical:g} percentage points for shares, {practical:g} % of the reference value for means"
