"""When is an audit gap *clear*? The rule is owned by the population layer (:func:`tcrex.population.clear_gaps`,
shared with the comparison of models); here it is applied with the audit's metrics and its findings are sorted.

A gap between a group and the reference (a row of :meth:`tcrex.audit.AuditResult.gaps`) is **clear** when

* its bootstrap interval excludes zero and neither side is a small group (the audit's ``significant``), **and**
* it is at least the **practical threshold**: ``practical`` percentage points for share metrics, ``practical``
  percent of the reference group's value for mean metrics (a gap of 0 is never clear).

A significant gap below the threshold is reported as such ("below the practical threshold"), never in red.

>>> from tcrex.audit import clear_gaps, split_findings                      # doctest: +SKIP
>>> clear_gaps(result.gaps(), practical=5.0)                                 # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._metrics import METRICS, gap_direction
from ._wording import gap_sentence

from .. import population
from ..population import PRACTICAL_DEFAULT  # the one owner of the threshold (tcrex.population exports it)

#: The audit's mean metrics: their practical threshold is a percent of the reference value.
MEAN_METRICS = tuple(m for m, spec in METRICS.items() if spec[2] == "mean")


def practical_gaps(gaps: pd.DataFrame, practical: float = PRACTICAL_DEFAULT) -> np.ndarray:
    """:func:`tcrex.population.practical_gaps` with the audit's metrics (the one rule of audit and comparison)."""
    return population.practical_gaps(gaps, practical, MEAN_METRICS)


def _significant(gaps: pd.DataFrame) -> np.ndarray:
    return population.significant_gaps(gaps)


def clear_gaps(gaps: pd.DataFrame, practical: float = PRACTICAL_DEFAULT) -> np.ndarray:
    """Boolean mask over ``gaps`` rows: the gap is clear (:func:`tcrex.population.clear_gaps`)."""
    return population.clear_gaps(gaps, practical, MEAN_METRICS)


def below_threshold_gaps(gaps: pd.DataFrame, practical: float = PRACTICAL_DEFAULT) -> np.ndarray:
    """Boolean mask: the interval excludes zero but the gap is smaller than the practical threshold."""
    return population.below_threshold_gaps(gaps, practical, MEAN_METRICS)


@dataclass
class AuditFindings:
    """An audit's plain-language findings sorted by the practical threshold (see :func:`split_findings`)."""

    overview: str
    clear: list = field(default_factory=list)  # sentences of the clear gaps
    below: list = field(default_factory=list)  # significant gaps below the practical threshold
    other: list = field(default_factory=list)  # everything else, in the audit's order
    practical: float = PRACTICAL_DEFAULT
    compared: bool = False  # somebody needs recourse, so groups were compared
    #: the clear gaps split by direction (:func:`tcrex.audit.gap_direction`): the group fares worse / better than
    #: the reference (red / green in the dashboard: "0.41 fewer changes" is good news, not an alarm)
    clear_worse: list = field(default_factory=list)
    clear_better: list = field(default_factory=list)


def split_findings(result, practical: float = PRACTICAL_DEFAULT) -> AuditFindings | None:
    """The findings of an :class:`~tcrex.audit.AuditResult` split into the overview, clear gaps, significant gaps
    below ``practical`` and the rest (None when the audit has no findings)."""
    sentences = result.findings()
    if not sentences:
        return None
    gaps = result.gaps()
    sig = gaps[_significant(gaps)] if len(gaps) else gaps
    big = practical_gaps(sig, practical)
    gap_sentences = [gap_sentence(result, row) for row in sig.itertuples()]
    direction = gap_direction(sig)
    clear = [s for s, b in zip(gap_sentences, big) if b]
    clear_worse = [s for s, b, d in zip(gap_sentences, big, direction) if b and d == "worse"]
    clear_better = [s for s, b, d in zip(gap_sentences, big, direction) if b and d != "worse"]
    below = [s for s, b in zip(gap_sentences, big) if not b]
    taken = set(gap_sentences)
    other = [s for s in sentences[1:] if s not in taken]
    return AuditFindings(overview=sentences[0], clear=clear, below=below, other=other, practical=practical,
                         compared=bool(int(result.table()["n"].sum())), clear_worse=clear_worse,
                         clear_better=clear_better)
