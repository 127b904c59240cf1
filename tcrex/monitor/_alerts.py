"""When a run raises an alert: the policy (documented, configurable) and the alerts' sentences.

Three kinds, each read off the run's per-group table (so an alert names exactly the groups whose figures crossed a
line), for every group of every grouping and for everyone:

* ``share_drop``: a group's verified-recourse share fell by more than ``share_drop`` (a fraction: 0.05 is five
  percentage points) since the previous version, **and** the paired bootstrap interval of the change lies wholly
  below zero;
* ``gap_widening``: the gap between a group's verified-recourse share and the reference group's grew in size by
  more than ``gap_widening`` since the previous version, **and** the gap is clear now (the audit's rule: its interval
  excludes zero, neither side is a small group, and it reaches the practical threshold);
* ``invalidation_rate``: the share of the advice a group held that the new model rejects exceeds
  ``invalidation_rate``.

Alerts name groups: the groups of the monitor's groupings (intersections included) are checked, and the whole
population only when the monitor has no grouping (it is then its one group; otherwise its figures are the run's
headline, and a loss in one group would be said twice). No alert is raised for a small group (fewer than the monitor's ``min_group_size`` people counted, under either
version). A threshold of ``None`` turns its kind off. Registering a model identical to the current one changes no
person's status and no figure, so it raises no alert.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from ..population import COLUMN_JOIN, VALUE_JOIN
from ..text import feature_text
from ._errors import MonitorError
from ._vocabulary import ALERT_KINDS, GAP_WIDENING, INVALIDATION, SHARE_DROP


@dataclass(frozen=True)
class AlertPolicy:
    """The thresholds of the three alert kinds (fractions; ``None`` turns a kind off)."""

    #: A group's verified-recourse share falling by more than this (0.05 = 5 percentage points), interval below 0.
    share_drop: float | None = 0.05
    #: A group's gap from the reference group growing in size by more than this, and clear now.
    gap_widening: float | None = 0.05
    #: The share of the advice a group held that the new model rejects, above this.
    invalidation_rate: float | None = 0.25

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1
                                  or math.isnan(v)):
                raise MonitorError(f"alert policy: {f.name} must be a fraction from 0 to 1 (or None to turn it off), "
                                   f"got {v!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> "AlertPolicy":
        if d is None:
            return cls()
        if isinstance(d, AlertPolicy):
            return d
        unknown = sorted(set(d) - {f.name for f in fields(cls)})
        if unknown:
            raise MonitorError(f"alert policy: unknown setting(s) {unknown}; the settings are "
                               f"{[f.name for f in fields(cls)]}")
        return cls(**{k: (None if v is None else float(v)) for k, v in d.items()})


@dataclass(frozen=True)
class Alert:
    """One alert: its ``kind``, the group (``feature`` the grouping, ``value`` the group's label; ``group`` how
    sentences name it), the figure ``before`` and ``after``, the threshold, the interval and the ``message``."""

    kind: str
    feature: str | None
    value: str
    group: str
    before: float
    after: float
    threshold: float
    ci_low: float
    ci_high: float
    message: str

    def to_dict(self) -> dict:
        d = asdict(self)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict) -> "Alert":
        return cls(**{f.name: (np.nan if d.get(f.name) is None and f.type == "float" else d.get(f.name))
                      for f in fields(cls)})


def who(feature, value, titles: dict | None = None) -> str:
    """A group as a sentence names it: "everyone", "education = graduate school (c3)", and for an intersection
    "sex = c1 and education = c3"; a feature with a title in the data dictionary reads "level of education
    (education) = …" (:func:`tcrex.text.feature_text`)."""
    if feature is None:
        return "everyone"
    titles = titles or {}
    columns = str(feature).split(COLUMN_JOIN)
    values = str(value).split(VALUE_JOIN)
    if len(columns) != len(values):
        columns, values = [str(feature)], [str(value)]
    return " and ".join(f"{feature_text(c, titles.get(c))} = {v}" for c, v in zip(columns, values))


def _pp(x: float) -> str:
    return f"{x * 100:+.1f}".replace("-", "−")


def evaluate(policy: AlertPolicy, table, previous_table, *, version: str, min_group_size: int, confidence: float,
             titles: dict | None = None, reference_names: dict | None = None) -> list[Alert]:
    """The alerts of a run's per-group ``table`` against the previous run's (None at the baseline: no alert)."""
    if previous_table is None:
        return []
    conf = f"{confidence:.0%} CI"
    alerts: list[Alert] = []
    prev = {(r["feature"], r["value"]): r for r in previous_table.to_dict("records")}
    records = table.to_dict("records")
    grouped = any(r["feature"] is not None for r in records)
    for r in records:
        feature, value = r["feature"], r["value"]
        if grouped and feature is None:
            continue
        name = who(feature, value, titles)
        before_row = prev.get((feature, value))
        enough = r["n_needing"] >= min_group_size and r["n_previous_needing"] >= min_group_size
        thr = policy.share_drop
        change = r["share_change"]
        if thr is not None and enough and _finite(change) and -change > thr + 1e-12 and r["change_ci_high"] < 0:
            alerts.append(Alert(
                SHARE_DROP, feature, value, name, r["previous_share"], r["verified_share"], thr, r["change_ci_low"],
                r["change_ci_high"],
                f"Verified recourse for {name} fell from {r['previous_share']:.0%} to {r['verified_share']:.0%} at "
                f"version {version} ({_pp(change)} percentage points, {conf} {_pp(r['change_ci_low'])} to "
                f"{_pp(r['change_ci_high'])}), more than the {thr * 100:g}-point drop the policy allows."))
        thr = policy.gap_widening
        if thr is not None and feature is not None and before_row is not None and r["gap_clear"] \
                and _finite(r["gap"]) and _finite(before_row["gap"]) and abs(r["gap"]) - abs(before_row["gap"]) > thr + 1e-12:
            ref = who(feature, (reference_names or {}).get(feature, "the reference group"), titles)
            alerts.append(Alert(
                GAP_WIDENING, feature, value, name, before_row["gap"], r["gap"], thr, r["gap_ci_low"], r["gap_ci_high"],
                f"The gap in verified recourse between {name} and {ref} widened from {_pp(before_row['gap'])} to "
                f"{_pp(r['gap'])} percentage points at version {version} ({conf} of the gap now "
                f"{_pp(r['gap_ci_low'])} to {_pp(r['gap_ci_high'])}), more than the {thr * 100:g} points the policy "
                "allows."))
        thr = policy.invalidation_rate
        rate = r["invalidation_rate"]
        if thr is not None and _finite(rate) and r["n_advice_rechecked"] >= min_group_size and rate > thr + 1e-12:
            alerts.append(Alert(
                INVALIDATION, feature, value, name,
                np.nan if before_row is None else float(before_row["invalidation_rate"]), rate, thr, r["invalidation_ci_low"], r["invalidation_ci_high"],
                f"Version {version} rejects {rate:.0%} of the verified advice {name} held "
                f"({int(r['n_advice_rejected']):,} of {int(r['n_advice_rechecked']):,}; {conf} "
                f"{r['invalidation_ci_low']:.0%} to {r['invalidation_ci_high']:.0%}), above the policy's "
                f"{thr:.0%}."))
    return alerts


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


__all__ = ["AlertPolicy", "Alert", "evaluate", "who", "ALERT_KINDS"]
