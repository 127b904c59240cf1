"""Subgroup recourse audit: does recourse under a fitted T-CREx explainer differ between groups of people?

>>> from tcrex.audit import audit
>>> result = audit(explainer, X, groups=df["sex"], y_pred=model.predict(X), target=1)   # doctest: +SKIP
>>> result.findings()                                                                     # doctest: +SKIP

Only individuals that *need* recourse (model output not in the target, i.e. status != ``already_in_target``) are
audited. Per group the audit reports whether they have recourse at all (status ``ok`` or ``already_in_rule``)
and, for those who do, how costly it is: number of changes, total percentile shift to the counterfactual point,
and the feasibility and accuracy of the rule they are given. Each group is compared with a reference (by default
the largest group, or ``reference="rest"`` for everyone else) with percentile-bootstrap confidence intervals.
See ``docs/audit.md`` for what every number means and its caveats.

Every number comes from mergeable per-group counts (:class:`AuditCounts`): :func:`audit` counts its rows, and
:func:`audit_counts` of partitions, added, give the same counts to :func:`audit_from_counts` (files, a process
pool, Dask; see ``tcrex.distributed``).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._data import as_frame
from .errors import DataError, ParameterError
from ._params import check_fitted
from ._targets import targets_from_spec
from .vocabulary import (ALREADY_IN_RULE, HAS_RECOURSE, NEEDS_RECOURSE, NO_ACTIONABLE_RULE, NO_RULE, OK,
                          has_recourse, needs_recourse)
from .vocabulary import is_verified
from .text import pluralise

__all__ = ["audit", "audit_counts", "audit_from_counts", "AuditCounts", "AuditResult", "METRICS", "REST",
           "MISSING_GROUP", "BETTER_WHEN", "gap_direction", "COLUMN_JOIN", "VALUE_JOIN"]

#: Metrics compared between groups: name -> (short label, plain description, "share" or "mean").
METRICS = {
    "recourse_share": ("share with recourse",
                       "share of the individuals needing recourse who have it (status ok or already_in_rule)",
                       "share"),
    "mean_changes": ("mean changes",
                     "average number of features to change, among individuals with recourse", "mean"),
    "mean_distance": ("mean distance",
                      "average total percentile shift to the nearest point of the assigned rule (a categorical "
                      "change counts 1), among individuals with recourse", "mean"),
    "mean_feasibility": ("mean feasibility",
                         "average feasibility (share of the fit data inside) of the assigned rule, among "
                         "individuals with recourse", "share"),
    "mean_accuracy": ("mean accuracy",
                      "average accuracy (share of the rule's fit rows whose output is in the target) of the "
                      "assigned rule, among individuals with recourse", "share"),
    "effectiveness": ("verified by a point that follows the advice",
                      "share of the individuals needing recourse with verified recourse: a point that changes "
                      "exactly what their advice names and that the model confirms (tcrex.vocabulary.is_verified; a similar "
                      "real case does not count; needs the model)", "share"),
}
#: Which way each metric is better for the individuals of a group: "higher" (more of them have recourse, more
#: feasible and accurate rules, more verified points) or "lower" (fewer changes, a shorter distance). A gap is
#: then *worse* or *better* for the group than for the reference (:func:`gap_direction`).
BETTER_WHEN = {"recourse_share": "higher", "mean_changes": "lower", "mean_distance": "lower",
               "mean_feasibility": "higher", "mean_accuracy": "higher", "effectiveness": "higher"}
#: Intersectional groups (``groups=["sex", "race"]``): the column names joined by this, the values by VALUE_JOIN.
COLUMN_JOIN = " × "
VALUE_JOIN = " · "
#: ``reference=REST`` compares every group with all other individuals together.
REST = "rest"
#: Label given to individuals whose group value is missing.
MISSING_GROUP = "(missing)"
REST_LABEL = "the rest of the population"
MAX_GROUPS = 50
RECOURSE_STATUSES = HAS_RECOURSE  # kept for callers of this name; the vocabulary owns it
_STATUS_COUNTS = NEEDS_RECOURSE
_SAME = object()  # "keep the current value" for regroup()


# ---------------------------------------------------------------------------------------------------- result
@dataclass
class AuditResult:
    """Everything :func:`audit` computed. Use the methods; the attributes are plain data for advanced use."""

    group_column: str
    groups: list  # group labels (text), in display order
    reference: str  # a group label, or REST
    target: str  # description of the audited target
    confidence: float
    n_boot: int
    min_group_size: int
    random_state: object
    features: list
    individuals: pd.DataFrame | None  # one row per input row (None for an audit built from counts alone)
    _table: pd.DataFrame = field(repr=False, default=None)
    _gaps: pd.DataFrame = field(repr=False, default=None)
    _intervals: pd.DataFrame = field(repr=False, default=None)
    _change_shares: pd.DataFrame = field(repr=False, default=None)
    _keep_shares: pd.DataFrame = field(repr=False, default=None)
    _changes_dist: pd.DataFrame = field(repr=False, default=None)
    _top_rules: dict = field(repr=False, default_factory=dict)
    group_is_feature: bool = False
    distance_available: bool = True
    _outcomes: object = field(repr=False, default=None)
    counts: "AuditCounts" = field(repr=False, default=None)  # the mergeable counts every number comes from

    # ------------------------------------------------------------------ frames
    def table(self) -> pd.DataFrame:
        """One row per group: counts per status, recourse share and the mean cost metrics (among those with
        recourse), ``small_group`` and ``is_reference``."""
        return self._table.copy()

    def gaps(self) -> pd.DataFrame:
        """One row per (metric, group): ``difference`` = group value - reference value, its percentile-bootstrap
        interval (``ci_low``, ``ci_high``), and ``significant`` (the interval excludes 0 and neither side is a
        small group). ``n_group`` / ``n_reference`` are the numbers of individuals the metric averages over."""
        return self._gaps.copy()

    def metric_intervals(self) -> pd.DataFrame:
        """One row per (group, metric): the group's own value and its bootstrap interval (for error bars)."""
        return self._intervals.copy()

    def feature_change_shares(self, kind: str = "change") -> pd.DataFrame:
        """Groups x features: share of the group's individuals with recourse whose rule asks them to change
        (``kind="change"``) or keep (``kind="keep"``) the feature."""
        if kind == "change":
            return self._change_shares.copy()
        if kind == "keep":
            return self._keep_shares.copy()
        raise ParameterError(f"kind must be 'change' or 'keep', got {kind!r}")

    def changes_distribution(self, normalize: bool = False) -> pd.DataFrame:
        """Groups x number of changes (0, 1, 2, ...): how many individuals with recourse need that many changes
        (``normalize=True``: as a share of the group's individuals with recourse)."""
        counts = self._changes_dist.copy()
        if not normalize:
            return counts
        totals = counts.sum(axis=1).replace(0, np.nan)
        return counts.div(totals, axis=0)

    def top_rules(self, group=None, k: int = 5) -> pd.DataFrame:
        """The most frequent rules among a group's individuals with recourse (all groups when ``group`` is None):
        group, target, rule, conditions, n, share."""
        cols = ["group", "target", "rule", "conditions", "n", "share"]
        keys = self.groups if group is None else [self._label(group)]
        parts = [self._top_rules[g].head(k).assign(group=g) for g in keys if len(self._top_rules.get(g, ()))]
        if not parts:
            return pd.DataFrame(columns=cols)
        return pd.concat(parts, ignore_index=True)[cols]

    def _label(self, group) -> str:
        label = str(group)
        if label not in self.groups:
            raise ParameterError(f"unknown group {group!r}; groups are {self.groups}")
        return label

    # ------------------------------------------------------------------ text
    def display(self, group) -> str:
        """How a group is named in sentences: ``"<column> = <label>"``; an intersection of several columns
        ``"sex = F and race = B"``."""
        columns = str(self.group_column).split(COLUMN_JOIN)
        values = str(group).split(VALUE_JOIN)
        if len(columns) > 1 and len(values) == len(columns):
            return " and ".join(f"{c} = {v}" for c, v in zip(columns, values))
        return f"{self.group_column} = {group}"

    @property
    def reference_is_rest(self) -> bool:
        """The reference is everyone outside the compared group (``reference="rest"``)."""
        return self.reference == REST and REST not in self.groups

    @property
    def reference_display(self) -> str:
        return REST_LABEL if self.reference_is_rest else self.display(self.reference)

    def findings(self) -> list[str]:
        """Plain-language findings: the overview, clear gaps, groups with no clear difference, small groups."""
        return _findings(self)

    # ------------------------------------------------------------------ recompute
    def regroup(self, groups=None, *, reference=None, n_boot=None, confidence=None, random_state=_SAME,
                min_group_size=None) -> "AuditResult":
        """The same audit with another grouping, reference, interval level or seed, without explaining again.

        ``groups``: a Series / array aligned with :attr:`individuals` (None keeps the current groups).
        ``reference=None`` picks the largest group; the other arguments default to this result's values.
        """
        if self._outcomes is None:
            raise ParameterError("this result was built from per-group counts and holds no per-individual outcomes "
                                 "to regroup; run the audit again with the new grouping")
        n_boot = self.n_boot if n_boot is None else n_boot
        confidence = self.confidence if confidence is None else confidence
        min_group_size = self.min_group_size if min_group_size is None else min_group_size
        random_state = self.random_state if random_state is _SAME else random_state
        _check_params(n_boot, confidence, min_group_size)
        index = self.individuals.index
        if groups is None:
            labels = self.individuals["group"].astype(object).to_numpy()
            order, name = list(self.groups), self.group_column
        else:
            labels, order, name = _resolve_groups(pd.DataFrame(index=index), groups)
        counts = _count(self._outcomes, labels, name, order)
        return _summarise(counts, order, n_boot=n_boot, confidence=confidence, reference=reference,
                          random_state=random_state, min_group_size=min_group_size, outcomes=self._outcomes,
                          labels=labels)

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict:
        """JSON-friendly summary (no NaN: missing numbers are None) for reports."""
        def shares(frame):
            return {str(g): {str(f): _num(v) for f, v in row.items()} for g, row in frame.iterrows()}

        return {
            "group_column": self.group_column,
            "groups": list(self.groups),
            "reference": self.reference,
            "reference_display": self.reference_display,
            "reference_is_rest": self.reference_is_rest,
            "target": self.target,
            "confidence": self.confidence,
            "n_boot": self.n_boot,
            "min_group_size": self.min_group_size,
            "random_state": int(self.random_state) if isinstance(self.random_state, numbers.Integral) else None,
            "group_is_feature": self.group_is_feature,
            "distance_available": self.distance_available,
            "metrics": {k: {"label": v[0], "description": v[1], "kind": v[2]} for k, v in METRICS.items()},
            "table": _records(self._table),
            "gaps": _records(self._gaps),
            "metric_intervals": _records(self._intervals),
            "feature_change_shares": shares(self._change_shares),
            "feature_keep_shares": shares(self._keep_shares),
            "changes_distribution": {str(g): {str(k): int(v) for k, v in row.items()}
                                     for g, row in self._changes_dist.iterrows()},
            "top_rules": {g: _records(self._top_rules[g].head(10)) for g in self.groups},
            "findings": self.findings(),
        }


# ---------------------------------------------------------------------------------------------------- audit
def audit(explainer, X, groups, *, y_pred=None, model=None, target=None, n_boot=1000, confidence=0.95,
          reference=None, random_state=0, min_group_size=30, class_names=None, reference_rows=None) -> AuditResult:
    """Compare recourse between groups of individuals under a fitted :class:`~tcrex.TCREx` explainer.

    Parameters
    ----------
    explainer : fitted TCREx
    X : DataFrame of the individuals to audit (it may hold extra columns, e.g. the grouping column).
    groups : the group of every row: a column name of X, or a Series / array aligned with X (a Series must share
        X's index). The grouping column need not be a model feature. Missing values form the group
        ``"(missing)"``; labels are shown as text.
    y_pred, model : the model's outputs on X, or a model to compute them (default: the explainer's model).
    target : the favourable outcome (a class, classes, or a regression interval ``(low, high)``); defaults to
        the explainer's ``target``. Required when the explainer was fitted with the default targets, because
        "who needs recourse" depends on which outcome is favourable.
    n_boot : bootstrap resamples (individuals resampled within each group independently).
    confidence : level of the percentile intervals, in (0, 1).
    reference : the group every other group is compared with; None = the largest group (most rows of X, ties
        to the first in display order); ``"rest"`` = all other individuals together.
    random_state : seed of the bootstrap (int, None or a numpy Generator).
    min_group_size : below this many individuals a comparison is flagged as too small, never "significant".
    class_names : readable names of the classes (``{1: "approved"}``): the findings then name the target
        "(target: approved)" instead of "(target: output = 1)".
    reference_rows : rows for the search beyond the rules when verifying recourse (``counterfactuals(...,
        reference=)``); default the explainer's fit rows. An explainer restored from JSON needs them to count the
        same verified recourse as the one it was exported from.
    """
    _check_params(n_boot, confidence, min_group_size)
    X = as_frame(X)
    labels, order, group_column = _resolve_groups(X, groups)
    outcomes = _outcomes(explainer, X, y_pred, model, target, class_names, reference_rows)
    counts = _count(outcomes, labels, group_column, order)
    return _summarise(counts, order, n_boot=n_boot, confidence=confidence, reference=reference,
                      random_state=random_state, min_group_size=min_group_size, outcomes=outcomes, labels=labels)


def audit_counts(explainer, X, groups, *, y_pred=None, model=None, target=None,
                 reference_rows=None) -> "AuditCounts":
    """The audit's mergeable counts for the rows X (one partition, file or batch of a larger population).

    Counts of several partitions add up (``a + b``, ``sum(parts)``) to the counts of all their rows, from which
    :func:`audit_from_counts` computes exactly what :func:`audit` computes on all rows at once (same seed, same
    numbers). ``groups`` is a column name of X or values aligned with X, as for :func:`audit`.
    """
    X = as_frame(X)
    series, name = _group_series(X, groups)
    labels, values, categories, missing = _group_labels(series)
    outcomes = _outcomes(explainer, X, y_pred, model, target, reference_rows=reference_rows)
    return _count(outcomes, labels, name, None, values=values, categories=categories, has_missing=missing)


def audit_from_counts(counts: "AuditCounts", *, n_boot=1000, confidence=0.95, reference=None, random_state=0,
                      min_group_size=30) -> AuditResult:
    """The audit of all rows whose :func:`audit_counts` were summed into ``counts`` (arguments as for
    :func:`audit`). No row is needed: the bootstrap resamples the per-group counts (see ``docs/audit.md``)."""
    _check_params(n_boot, confidence, min_group_size)
    order = _group_order(counts.group_values, counts.group_categories, counts.has_missing)
    return _summarise(counts, order, n_boot=n_boot, confidence=confidence, reference=reference,
                      random_state=random_state, min_group_size=min_group_size)


#: The key of a count cell: individuals with equal values of all of these are counted together.
_CELL_KEYS = ["group", "status", "needs_recourse", "has_recourse", "target", "rule", "changes", "feasibility",
              "accuracy", "works"]


@dataclass
class AuditCounts:
    """Everything the audit reports, as counts that add up across partitions of the rows.

    ``cells``: individuals per (group, status, needs/has recourse, target, rule, number of changes, the rule's
    feasibility and accuracy, verified by the model 1/0/-1 unknown); rule, changes, feasibility and accuracy are
    -1, -1, 0, 0 without recourse. ``distances``: individuals with recourse per (group, exact distance) — one bin
    per distinct value, so sums and resamples are exact. ``change`` / ``keep``: per group and feature, individuals
    with recourse told to change / keep it. The rest describes the grouping (raw values seen, categories, missing)
    and the audit (features, target, rule conditions, what is available).
    """

    group_column: str
    features: list
    target: str
    distance_available: bool
    effectiveness_available: bool
    rules_text: dict
    cells: pd.DataFrame
    distances: pd.DataFrame
    change: pd.DataFrame
    keep: pd.DataFrame
    group_values: list
    group_categories: tuple | None = None
    has_missing: bool = False

    @property
    def n_rows(self) -> int:
        return int(self.cells["n"].sum())

    def __add__(self, other: "AuditCounts") -> "AuditCounts":
        if (self.group_column, self.features, self.target, self.distance_available, self.effectiveness_available) \
                != (other.group_column, other.features, other.target, other.distance_available,
                    other.effectiveness_available):
            raise ParameterError("audit counts of different audits (grouping, explainer, target or model) cannot "
                                 "be added")
        values = list(pd.unique(pd.Series(list(self.group_values) + list(other.group_values), dtype=object)))
        cats = self.group_categories if self.group_categories == other.group_categories else None
        return AuditCounts(
            self.group_column, self.features, self.target, self.distance_available, self.effectiveness_available,
            {**self.rules_text, **other.rules_text},
            _canonical(pd.concat([self.cells, other.cells], ignore_index=True), _CELL_KEYS),
            _canonical(pd.concat([self.distances, other.distances], ignore_index=True), ["group", "distance"]),
            self.change.add(other.change, fill_value=0).astype(np.int64).sort_index(),
            self.keep.add(other.keep, fill_value=0).astype(np.int64).sort_index(),
            values, cats, self.has_missing or other.has_missing)

    __radd__ = lambda self, other: self if other == 0 else self.__add__(other)  # noqa: E731  (sum())


def _canonical(frame: pd.DataFrame, keys: list) -> pd.DataFrame:
    """Counts summed per key, sorted by key: the same counts give the same frame whatever the partitioning."""
    if not len(frame):
        return frame.reset_index(drop=True)
    out = frame.groupby(keys, sort=True, dropna=False)["n"].sum().reset_index()
    out["n"] = out["n"].astype(np.int64)
    return out


@dataclass
class _Outcomes:
    """What the explainer says about every row, independent of the grouping (so a result can be regrouped)."""

    frame: pd.DataFrame  # status, needs_recourse, has_recourse, target, rule, changes, distance, feasibility, accuracy
    change: np.ndarray  # (n, n_features) bool: the rule asks to change the feature
    keep: np.ndarray  # (n, n_features) bool: the rule asks to keep it
    features: list
    rules_text: dict  # (target, rule) -> conditions
    target: str
    distance_available: bool
    effectiveness_available: bool = False


def _outcomes(explainer, X, y_pred, model, target, class_names=None, reference_rows=None) -> _Outcomes:
    target_spec = _resolve_target(explainer, target)
    y = explainer.outputs(X, y_pred=y_pred, model=model)  # once, for the three calls below
    exp = explainer.explain(X, y_pred=y, target=target_spec)
    actions = explainer.feature_actions(X, y_pred=y, target=target_spec)
    n = len(X)
    status = exp["status"].astype(str).to_numpy()
    need = needs_recourse(status)
    has = has_recourse(status)
    tgt = exp["target"].fillna(-1).to_numpy(dtype=np.int64)
    rule = exp["rule"].fillna(-1).to_numpy(dtype=np.int64)
    changes = np.where(has, exp["changes"].to_numpy(dtype=np.float64), np.nan)
    feas = np.full(n, np.nan)
    acc = np.full(n, np.nan)
    for t in np.unique(tgt[has]):
        rows = np.flatnonzero(has & (tgt == t))
        sol = explainer.solution(t)
        feas[rows] = np.asarray(sol.feasibility, dtype=np.float64)[rule[rows]]
        acc[rows] = np.asarray(sol.accuracy, dtype=np.float64)[rule[rows]]
    dist, distance_available = _distances(explainer, X, y, target_spec, has)
    works, effectiveness_available = _works(explainer, X, y, model, target_spec, need, reference_rows)
    features = list(explainer.schema_.names)
    empty = np.zeros((n, 0), dtype=bool)
    change = np.column_stack([(actions[f] == "change").to_numpy() for f in features]) if features else empty
    keep = np.column_stack([(actions[f] == "keep").to_numpy() for f in features]) if features else empty
    frame = pd.DataFrame({
        "status": status, "needs_recourse": need, "has_recourse": has,
        "target": pd.array(np.where(tgt >= 0, tgt, None), dtype="Int64"),
        "rule": pd.array(np.where(has, rule, None), dtype="Int64"), "changes": changes, "distance": dist,
        "feasibility": feas, "accuracy": acc, "recourse_works": works}, index=X.index)
    target_desc = explainer.solution(int(tgt[need][0])).target.describe(class_names) if need.any() else \
        _describe_target(explainer, target_spec, class_names)
    return _Outcomes(frame, change, keep, features, _rules_text(explainer), target_desc, distance_available,
                     effectiveness_available)


def _count(oc: _Outcomes, labels, group_column, order, *, values=None, categories=None,
           has_missing=False) -> AuditCounts:
    """The mergeable counts of per-row outcomes grouped by ``labels`` (text, one per row).

    Rows are counted by integer codes (one mixed-radix key per row, hashed once); text appears only in the few
    resulting cells."""
    f = oc.frame
    n = len(f)
    gcode, gnames = pd.factorize(np.asarray(labels, dtype=object))
    scode, snames = pd.factorize(f["status"])
    need = f["needs_recourse"].to_numpy(dtype=bool)
    has = f["has_recourse"].to_numpy(dtype=bool)
    target = f["target"].fillna(-1).to_numpy(dtype=np.int64)
    rule = np.where(has, f["rule"].fillna(-1).to_numpy(dtype=np.int64), -1)
    changes = np.where(has, np.nan_to_num(f["changes"].to_numpy(dtype=np.float64), nan=-1), -1).astype(np.int64)
    works = f["recourse_works"].to_numpy(dtype=np.float64) if "recourse_works" in f else np.full(n, np.nan)
    works = np.where(np.isnan(works), -1, works).astype(np.int64)
    key = np.zeros(n, dtype=np.int64)
    for part, size in ((gcode, len(gnames)), (scode, len(snames)), (need, 2), (has, 2), (target + 1, None),
                       (rule + 1, None), (changes + 1, None), (works + 1, 3)):
        size = size or (int(part.max()) + 1 if n else 1)
        key = key * max(size, 1) + part
    inv, uniq = pd.factorize(key)
    first = np.full(len(uniq), n, dtype=np.int64)
    np.minimum.at(first, inv, np.arange(n))  # a row of every cell (feasibility and accuracy follow its rule)
    cells = pd.DataFrame({
        "group": np.asarray(gnames, dtype=object)[gcode[first]],
        "status": np.asarray(snames, dtype=object)[scode[first]],
        "needs_recourse": need[first], "has_recourse": has[first], "target": target[first], "rule": rule[first],
        "changes": changes[first],
        "feasibility": np.where(has[first], f["feasibility"].to_numpy(dtype=np.float64)[first], 0.0),
        "accuracy": np.where(has[first], f["accuracy"].to_numpy(dtype=np.float64)[first], 0.0),
        "works": works[first], "n": np.bincount(inv, minlength=len(uniq)).astype(np.int64)})
    use = has if oc.distance_available else np.zeros(n, dtype=bool)
    dist = pd.DataFrame({"g": gcode[use], "distance": f["distance"].to_numpy(dtype=np.float64)[use]})
    dist = dist.groupby(["g", "distance"], sort=False).size().reset_index(name="n")
    distances = pd.DataFrame({"group": np.asarray(gnames, dtype=object)[dist["g"].to_numpy(dtype=np.int64)],
                              "distance": dist["distance"].to_numpy(dtype=np.float64),
                              "n": dist["n"].to_numpy(dtype=np.int64)})
    present = np.flatnonzero(np.bincount(gcode[has], minlength=len(gnames)))  # groups with someone with recourse

    def per_group(matrix):
        sums = np.column_stack([np.bincount(gcode[has], weights=matrix[has, j], minlength=len(gnames))
                                for j in range(matrix.shape[1])]) if matrix.shape[1] else \
            np.zeros((len(gnames), 0))
        return pd.DataFrame(np.rint(sums[present]).astype(np.int64), columns=oc.features,
                            index=pd.Index(np.asarray(gnames, dtype=object)[present])).sort_index()

    return AuditCounts(
        group_column=group_column, features=list(oc.features), target=oc.target,
        distance_available=oc.distance_available, effectiveness_available=oc.effectiveness_available,
        rules_text=dict(oc.rules_text), cells=_canonical(cells, _CELL_KEYS),
        distances=_canonical(distances, ["group", "distance"]), change=per_group(oc.change), keep=per_group(oc.keep),
        group_values=list(order) if values is None else list(values), group_categories=None if categories is None
        else tuple(categories), has_missing=bool(has_missing))


def _summarise(c: AuditCounts, order, *, n_boot, confidence, reference, random_state, min_group_size,
               outcomes: _Outcomes | None = None, labels=None) -> AuditResult:
    """The audit from its counts (the one computation: :func:`audit` counts its rows first, too)."""
    features, distance_available, group_column = c.features, c.distance_available, c.group_column
    cells = c.cells
    by_group = dict(tuple(cells.groupby("group", sort=False))) if len(cells) else {}
    dist_by_group = dict(tuple(c.distances.groupby("group", sort=False))) if len(c.distances) else {}
    empty_cells, empty_dist = cells.iloc[:0], c.distances.iloc[:0]
    with_recourse = cells[cells["has_recourse"]]
    max_changes = int(with_recourse["changes"].max()) if len(with_recourse) else 0

    # ---- per group
    rows, change_sh, keep_sh, dist_rows, top = [], {}, {}, {}, {}
    values = {}  # group -> _Group: its individuals needing recourse, as counts
    for g in order:
        gc = by_group.get(g, empty_cells)
        need = gc[gc["needs_recourse"]]
        rec = need[need["has_recourse"]]
        n_total, n_need, n_rec = int(gc["n"].sum()), int(need["n"].sum()), int(rec["n"].sum())
        by_status = need.groupby("status")["n"].sum()
        counts = {s: int(by_status.get(s, 0)) for s in _STATUS_COUNTS}
        grp = values[g] = _Group.from_cells(need, dist_by_group.get(g, empty_dist), c.effectiveness_available)
        point = _stats_point(grp, distance_available)
        rows.append({
            "group": g, "n_total": n_total, "n_already_in_target": n_total - n_need,
            "n": n_need, "n_recourse": n_rec, "recourse_share": _ratio(n_rec, n_need),
            "n_ok": counts[OK], "n_already_in_rule": counts[ALREADY_IN_RULE],
            "n_no_rule": counts[NO_RULE], "no_rule_share": _ratio(counts[NO_RULE], n_need),
            "n_no_actionable_rule": counts[NO_ACTIONABLE_RULE],
            "no_actionable_rule_share": _ratio(counts[NO_ACTIONABLE_RULE], n_need),
            "mean_changes": point["mean_changes"], "mean_distance": point["mean_distance"],
            "mean_feasibility": point["mean_feasibility"], "mean_accuracy": point["mean_accuracy"],
            "n_verified": grp.n_works, "effectiveness": point["effectiveness"]})
        change_sh[g] = _shares(c.change, g, features, n_rec)
        keep_sh[g] = _shares(c.keep, g, features, n_rec)
        dist_rows[g] = np.rint(np.bincount(rec["changes"].to_numpy(dtype=np.int64), weights=rec["n"].to_numpy(),
                                           minlength=max_changes + 1)).astype(np.int64) if n_rec else \
            np.zeros(max_changes + 1, dtype=np.int64)
        top[g] = _top_rules(rec, c.rules_text, n_rec)
    table = pd.DataFrame(rows)
    ref = _resolve_reference(reference, order, table)
    table["small_group"] = table["n"] < min_group_size
    table["is_reference"] = table["group"] == ref

    # ---- bootstrap: every group resampled independently, in display order, from one seeded generator
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    boot = {g: _bootstrap_group(rng, values[g], n_boot, distance_available) for g in order}
    points = {g: _stats_point(values[g], distance_available) for g in order}
    sizes = {g: {mt: _metric_n(values[g], mt) for mt in METRICS} for g in order}
    alpha = (1 - confidence) / 2
    intervals, gaps = [], []
    for g in order:
        for metric in METRICS:
            lo, hi = _quantiles(boot[g][metric], alpha)
            intervals.append({"group": g, "metric": metric, "value": points[g][metric], "ci_low": lo,
                              "ci_high": hi, "n": sizes[g][metric]})
    pooled = ref == REST and REST not in order  # a group literally called "rest" is a group
    compared = list(order) if pooled else [g for g in order if g != ref]
    for metric in METRICS:
        for g in compared:
            if pooled:
                others = [o for o in order if o != g]
                if not others:
                    continue
                ref_point = _stats_point(_pool([values[o] for o in others]), distance_available)[metric]
                ref_boot = _pool_boot([boot[o] for o in others], metric)
                n_ref = sum(sizes[o][metric] for o in others)
            else:
                ref_point, ref_boot, n_ref = points[ref][metric], boot[ref][metric], sizes[ref][metric]
            value = points[g][metric]
            diff = _snap(value - ref_point)
            lo, hi = _quantiles(_snap(boot[g][metric] - ref_boot), alpha)
            n_g = sizes[g][metric]
            small = n_g < min_group_size or n_ref < min_group_size
            excludes = bool(np.isfinite(lo) and np.isfinite(hi) and (lo > 0 or hi < 0))
            gaps.append({"metric": metric, "group": g, "reference": ref, "value": value,
                         "reference_value": ref_point, "difference": diff, "ci_low": lo, "ci_high": hi,
                         "significant": excludes and not small and bool(np.isfinite(diff)),
                         "n_group": n_g, "n_reference": n_ref, "small_group": small})

    change_frame = pd.DataFrame.from_dict(change_sh, orient="index", columns=features)
    keep_frame = pd.DataFrame.from_dict(keep_sh, orient="index", columns=features)
    dist_frame = pd.DataFrame.from_dict(dist_rows, orient="index", columns=list(range(max_changes + 1)))
    for frame in (change_frame, keep_frame, dist_frame):
        frame.index.name = group_column
        frame.columns.name = None
    individuals = None
    if outcomes is not None:
        individuals = outcomes.frame.copy()
        individuals.insert(0, "group", pd.Categorical(labels, categories=order))
    return AuditResult(
        group_column=group_column, groups=list(order), reference=ref, target=c.target, confidence=confidence,
        n_boot=int(n_boot), min_group_size=int(min_group_size), random_state=random_state, features=features,
        individuals=individuals, _table=table, _gaps=pd.DataFrame(gaps, columns=_GAP_COLUMNS).astype(_GAP_TYPES),
        _intervals=pd.DataFrame(intervals, columns=["group", "metric", "value", "ci_low", "ci_high", "n"]),
        _change_shares=change_frame, _keep_shares=keep_frame, _changes_dist=dist_frame, _top_rules=top,
        group_is_feature=group_column in features, distance_available=distance_available, _outcomes=outcomes,
        counts=c)


def _shares(frame: pd.DataFrame, g, features, n_rec) -> np.ndarray:
    """Per feature, the share of the group's individuals with recourse counted in ``frame``."""
    if not n_rec:
        return np.full(len(features), np.nan)
    row = frame.loc[g].to_numpy(dtype=np.float64) if g in frame.index else np.zeros(len(features))
    return row / n_rec


_GAP_COLUMNS = ["metric", "group", "reference", "value", "reference_value", "difference", "ci_low", "ci_high",
                "significant", "n_group", "n_reference", "small_group"]
_GAP_TYPES = {"metric": object, "group": object, "reference": object, "value": float, "reference_value": float,
              "difference": float, "ci_low": float, "ci_high": float, "significant": bool, "n_group": np.int64,
              "n_reference": np.int64, "small_group": bool}


# ---------------------------------------------------------------------------------------------------- inputs
def _check_params(n_boot, confidence, min_group_size) -> None:
    if not isinstance(n_boot, numbers.Integral) or isinstance(n_boot, bool) or n_boot < 1:
        raise ParameterError(f"n_boot must be a whole number >= 1, got {n_boot!r} (1000 is a good default)")
    if not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise ParameterError(f"confidence must be a fraction in (0, 1), got {confidence!r} (e.g. 0.95)")
    if not isinstance(min_group_size, numbers.Integral) or isinstance(min_group_size, bool) or min_group_size < 0:
        raise ParameterError(f"min_group_size must be a whole number >= 0, got {min_group_size!r}")


def _resolve_groups(X: pd.DataFrame, groups) -> tuple[np.ndarray, list, str]:
    """Group label (text) of every row of X, the labels in display order, and the grouping column's name."""
    series, name = _group_series(X, groups)
    labels, values, categories, missing = _group_labels(series)
    return labels, _group_order(values, categories, missing), name


def _intersection(parts: list[pd.Series]) -> pd.Series:
    """Several groupings as one: a row's group is its values joined ("F · B"), "(missing)" standing for a missing
    value; the name joins the columns' names ("sex × race"). Groups are the combinations present."""
    text = [p.map(lambda v: MISSING_GROUP if pd.isna(v) else _label(v)).astype(str) for p in parts]
    joined = text[0]
    for t in text[1:]:
        joined = joined + VALUE_JOIN + t
    return joined.rename(COLUMN_JOIN.join(str(p.name) for p in parts))


def _group_series(X: pd.DataFrame, groups) -> tuple[pd.Series, str]:
    """The grouping as a Series aligned with X, and its name (checks the column, length and index). Several
    column names (a list) or a DataFrame of groupings give intersectional groups (:func:`_intersection`)."""
    if isinstance(groups, (list, tuple)) and len(groups) > 1 and all(isinstance(g, str) for g in groups):
        parts = [_group_series(X, g)[0].rename(g) for g in groups]
        series = _intersection(parts)
        return series, str(series.name)
    if isinstance(groups, pd.DataFrame):
        if groups.shape[1] == 0:
            raise DataError("groups is a table without columns; give at least one grouping column")
        parts = [_group_series(X, groups[c].rename(str(c)))[0].rename(str(c)) for c in groups.columns]
        series = parts[0] if len(parts) == 1 else _intersection(parts)
        return series, str(series.name)
    if isinstance(groups, (list, tuple)) and len(groups) == 1 and isinstance(groups[0], str):
        groups = groups[0]
    if isinstance(groups, str) or (np.ndim(groups) == 0 and not isinstance(groups, pd.Series)):
        if groups not in X.columns:
            raise DataError(f"groups names column {groups!r}, which is not in X (columns: {list(X.columns)}); "
                            "pass the column name or a Series/array with one group per row")
        return X[groups], str(groups)
    if isinstance(groups, pd.Series):
        name = "group" if groups.name is None else str(groups.name)
        if len(groups) != len(X):
            raise DataError(f"groups has {len(groups)} values but X has {len(X)} rows; give one group per row")
        if not groups.index.equals(X.index):
            same = (not groups.index.has_duplicates and not X.index.has_duplicates
                    and set(groups.index) == set(X.index))
            if not same:
                raise DataError("the groups Series is indexed differently from X; align it (same index) or pass "
                                "groups.to_numpy() to match rows by position")
            groups = groups.reindex(X.index)
        return groups, name
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1 or len(arr) != len(X):
        raise DataError(f"groups must hold one value per row of X ({len(X)}), got shape {arr.shape}")
    return pd.Series(arr, index=X.index), "group"


def _group_labels(series: pd.Series) -> tuple[np.ndarray, list, list | None, bool]:
    """Per row its group label (text, ``MISSING_GROUP`` when missing); the distinct values present, the
    categories of a categorical column (else None) and whether a value is missing — what the display order needs
    (:func:`_group_order`), mergeable across partitions."""
    missing = series.isna().to_numpy()
    present = series[~missing]
    values = list(pd.unique(present.astype(object)))
    categories = list(series.cat.categories) if isinstance(series.dtype, pd.CategoricalDtype) else None
    codes, uniques = pd.factorize(series.astype(object), use_na_sentinel=True)
    text = np.array([_label(v) for v in uniques] + [MISSING_GROUP], dtype=object)
    labels = text[codes]  # code -1 (missing) picks the last entry
    if missing.any():
        labels[missing] = MISSING_GROUP
    n_labels = len(set(text[:-1].tolist())) + bool(missing.any())
    if n_labels > MAX_GROUPS:  # checked per partition too: a column with many values fails early
        _too_many_groups(n_labels)
    return labels, values, categories, bool(missing.any())


def _label(v) -> str:
    return str(v.item() if isinstance(v, np.generic) else v)


def _too_many_groups(n) -> None:
    raise ParameterError(f"groups has {n} distinct values (at most {MAX_GROUPS}); a numeric column "
                         "should be binned first, e.g. pandas.cut(age, [0, 30, 50, 120])")


def _group_order(values, categories=None, has_missing=False) -> list:
    """Group labels in display order: a categorical's category order, else sorted values; missing last."""
    if categories is not None:
        seen = set(values)
        values = [c for c in categories if c in seen]
    else:
        try:
            values = sorted(values)
        except TypeError:
            values = sorted(values, key=lambda v: (type(v).__name__, str(v)))
    order = []
    for v in values:
        label = _label(v)
        if label not in order:
            order.append(label)
    if has_missing:
        order.append(MISSING_GROUP)
    if not order:
        raise DataError("groups is empty")
    if len(order) > MAX_GROUPS:
        _too_many_groups(len(order))
    return order


def _resolve_target(explainer, target):
    check_fitted(explainer)
    spec = target if target is not None else explainer.target
    if spec is None:
        classes = getattr(explainer, "classes_", [])
        hint = (f"the favourable class, e.g. target={classes[-1]!r} (classes: {classes})" if classes else
                "the favourable interval, e.g. target=(threshold, None)")
        raise ParameterError("the audit needs to know which outcome is favourable (who needs recourse), but the "
                             f"explainer was fitted with the default targets; pass target= {hint}")
    wanted = targets_from_spec(spec, explainer.task_, np.zeros(1), explainer.classes_)
    if len(wanted) != 1:
        raise ParameterError(f"target {spec!r} names {len(wanted)} outcomes in both directions; for regression "
                             "pass an interval, e.g. target=(threshold, None) for 'above the threshold'")
    return spec


def _describe_target(explainer, spec, class_names=None) -> str:
    return targets_from_spec(spec, explainer.task_, np.zeros(1), explainer.classes_)[0].describe(class_names)


def _resolve_reference(reference, order, table) -> str:
    if reference is None:
        usable = table[table["n"] > 0]
        pool = usable if len(usable) else table
        return str(pool.loc[pool["n_total"].idxmax(), "group"])  # idxmax: first of equal maxima
    label = str(reference)
    if label in order:
        return label
    if label == REST:
        return REST
    raise ParameterError(f"reference {reference!r} is not a group; groups are {order} (or use 'rest')")


def _distances(explainer, X, y, target_spec, has) -> tuple[np.ndarray, bool]:
    """Total percentile shift from each row with recourse to its counterfactual point (NaN elsewhere).

    Percentiles come from the fit data (``TCREx.percentile_distance``); a categorical change counts 1.
    """
    dist = np.full(len(X), np.nan)
    if not explainer.has_fit_data:  # restored from JSON: no fit data, no percentiles
        return dist, False
    if not has.any():
        return dist, True
    cf = explainer.counterfactuals(X, y_pred=y, target=target_spec, verify=False)
    pos = np.flatnonzero(has)
    dist[pos] = explainer.percentile_distance(X.iloc[pos], cf.iloc[pos])
    return dist, True


def _works(explainer, X, y, model, target_spec, need, reference_rows=None) -> tuple[np.ndarray, bool]:
    """1.0 where an individual needing recourse has a counterfactual point the model confirms (verified point,
    see ``TCREx.counterfactuals(verify=True)``), 0.0 where not (no rule included); NaN without a model."""
    works = np.full(len(X), np.nan)
    model = model if model is not None else getattr(explainer, "model_", None)
    if model is None:
        return works, False
    if need.any():
        cf = explainer.counterfactuals(X, y_pred=y, target=target_spec, model=model, verify=True,
                                       reference=reference_rows, text=False)
        works[need] = is_verified(cf)[need]  # the one definition of "works" (issue #24)
    return works, True


def _rules_text(explainer) -> dict:
    return {(int(r.target), int(r.rule)): r.conditions for r in explainer.rules_frame().itertuples()}


def _top_rules(rec: pd.DataFrame, rules_text, n_rec) -> pd.DataFrame:
    """Rules by how many of the group's individuals with recourse get them (``rec``: their count cells)."""
    cols = ["target", "rule", "conditions", "n", "share"]
    if not n_rec:
        return pd.DataFrame(columns=cols)
    per = rec.groupby(["target", "rule"], sort=True)["n"].sum()
    pairs = np.array(list(per.index), dtype=np.int64).reshape(-1, 2)
    counts = per.to_numpy(dtype=np.int64)
    order = np.lexsort((pairs[:, 1], pairs[:, 0], -counts))
    return pd.DataFrame([{"target": int(pairs[i, 0]), "rule": int(pairs[i, 1]),
                          "conditions": rules_text.get((int(pairs[i, 0]), int(pairs[i, 1])), ""),
                          "n": int(counts[i]), "share": counts[i] / n_rec} for i in order], columns=cols)


# ---------------------------------------------------------------------------------------------------- statistics
_MEANS = {"mean_changes": "changes", "mean_distance": "distance", "mean_feasibility": "feasibility",
          "mean_accuracy": "accuracy"}


def _ratio(a, b) -> float:
    return a / b if b else np.nan


@dataclass
class _Group:
    """A group's individuals needing recourse, as counts: everything its point values and bootstrap need.

    ``combos``: the distinct (has recourse, changes, feasibility, accuracy, verified) rows among them, sorted
    (no recourse: zeros, with the verified flag), ``weights`` how many individuals have each; ``distances`` the
    distinct distances of those with recourse, sorted, ``dist_n`` how many have each.
    """

    n: int
    combos: np.ndarray
    weights: np.ndarray
    distances: np.ndarray
    dist_n: np.ndarray
    works_known: bool

    @classmethod
    def build(cls, combos, weights, distances, dist_n, works_known) -> "_Group":
        combos = np.asarray(combos, dtype=np.float64).reshape(-1, 5)
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
    def from_values(cls, vals: dict) -> "_Group":
        """From per-individual arrays (``has``, ``changes``, ``distance``, ``feasibility``, ``accuracy``, optional
        ``works``), as counted from rows."""
        h = np.asarray(vals["has"], dtype=bool)
        works = np.asarray(vals.get("works", np.full(len(h), np.nan)), dtype=np.float64)
        combos = np.column_stack([h.astype(np.float64)] + [np.where(h, vals[c], 0.0) for c in
                                                           ("changes", "feasibility", "accuracy")]
                                 + [np.nan_to_num(works)])
        dist = np.asarray(vals["distance"], dtype=np.float64)[h]
        return cls.build(combos, np.ones(len(h), np.int64), dist, np.ones(len(dist), np.int64),
                         not np.isnan(works).any())

    @classmethod
    def from_cells(cls, need: pd.DataFrame, dist: pd.DataFrame, works_known: bool) -> "_Group":
        """From count cells of individuals needing recourse and their distance counts (:class:`AuditCounts`)."""
        h = need["has_recourse"].to_numpy(dtype=bool)
        combos = np.column_stack([h.astype(np.float64),
                                  np.where(h, need["changes"].to_numpy(dtype=np.float64), 0.0),
                                  np.where(h, need["feasibility"].to_numpy(dtype=np.float64), 0.0),
                                  np.where(h, need["accuracy"].to_numpy(dtype=np.float64), 0.0),
                                  np.maximum(need["works"].to_numpy(dtype=np.float64), 0.0)])
        return cls.build(combos, need["n"].to_numpy(), dist["distance"].to_numpy(), dist["n"].to_numpy(),
                         works_known)

    @classmethod
    def pool(cls, parts) -> "_Group":
        return cls.build(np.concatenate([p.combos for p in parts]), np.concatenate([p.weights for p in parts]),
                         np.concatenate([p.distances for p in parts]), np.concatenate([p.dist_n for p in parts]),
                         all(p.works_known for p in parts))

    @property
    def sums(self) -> np.ndarray:
        """(with recourse, sum of changes, of feasibility, of accuracy, verified) over the individuals."""
        return self.weights.astype(np.float64) @ self.combos if len(self.combos) else np.zeros(5)

    @property
    def n_rec(self) -> int:
        return int(self.weights[self.combos[:, 0] == 1].sum()) if len(self.combos) else 0

    @property
    def n_works(self) -> float:
        return float(self.sums[4]) if self.works_known else np.nan


def _metric_n(grp: _Group, metric) -> int:
    return grp.n if metric in ("recourse_share", "effectiveness") else grp.n_rec


def _stats_point(grp: _Group, distance_available=True) -> dict:
    if isinstance(grp, dict):
        grp = _Group.from_values(grp)
    n_rec, sums = grp.n_rec, grp.sums
    out = {"recourse_share": _ratio(float(n_rec), grp.n)}
    for k, (metric, col) in enumerate(_MEANS.items()):
        if col == "distance":
            out[metric] = _ratio(float(grp.dist_n.astype(np.float64) @ grp.distances), n_rec) \
                if distance_available and n_rec else np.nan
        else:
            out[metric] = _ratio(float(sums[{"changes": 1, "feasibility": 2, "accuracy": 3}[col]]), n_rec)
    out["effectiveness"] = _ratio(grp.n_works, grp.n) if grp.works_known else np.nan  # NaN without a model
    return out


def _pool(parts) -> _Group:
    return _Group.pool(parts)


def _bootstrap_group(rng, grp, n_boot, distance_available) -> dict:
    """Bootstrap sums of one group (a :class:`_Group`, or per-individual arrays): per resample the number with
    recourse and the sums of each metric.

    Exact and vectorised, from counts alone. Resampling n individuals with replacement gives Multinomial(n, p)
    counts over the distinct (has recourse, changes, feasibility, accuracy, verified) combinations, so those
    metrics need only B x K draws (K distinct combinations, a few dozen). Given the number with recourse in a
    resample, its distances are that many draws with replacement from the group's distances with recourse (drawn
    from their distinct values and counts: the same as drawing from the sorted list of all of them).
    Returns per-resample metric values (NaN where a resample has nobody with recourse) and the raw sums, so
    that pooled references ("rest") can be formed.
    """
    if isinstance(grp, dict):
        grp = _Group.from_values(grp)
    n = grp.n
    nan = np.full(n_boot, np.nan)
    if n == 0:
        return {"n": np.zeros(n_boot), "n_rec": np.zeros(n_boot), "n_works": np.zeros(n_boot),
                **{f"sum_{c}": np.zeros(n_boot) for c in _MEANS},
                **{m: nan.copy() for m in METRICS}}
    p = grp.weights / n
    counts = rng.multinomial(n, p, size=n_boot).astype(np.float64)  # (B, K)
    sums = counts @ grp.combos  # (B, 5): n_rec, sum changes, sum feasibility, sum accuracy, n verified
    n_rec = sums[:, 0]
    out = {"n": np.full(n_boot, float(n)), "n_rec": n_rec, "sum_changes": sums[:, 1],
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
            out[metric] = np.where(n_rec > 0, out[f"sum_{col}"] / np.maximum(n_rec, 1), np.nan)
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
    cum = np.cumsum(counts)
    dtype = np.int32 if total < 2**31 else np.int64
    step = max(1, max_chunk // int(sizes.max()))
    for s in range(0, len(sizes), step):
        sz = sizes[s:s + step]
        idx = rng.integers(0, total, size=int(sz.sum()), dtype=dtype)
        starts = np.concatenate([[0], np.cumsum(sz)[:-1]])
        nonempty = sz > 0
        if nonempty.any():  # reduceat needs valid start offsets: only resamples that drew something
            drawn = values[np.searchsorted(cum, idx, side="right")]
            out[s:s + step][nonempty] = np.add.reduceat(drawn, starts[nonempty])
    return out


def _pool_boot(parts, metric) -> np.ndarray:
    """Per-resample value of ``metric`` for several groups pooled (their resamples are independent)."""
    n = sum(p["n"] for p in parts)
    n_rec = sum(p["n_rec"] for p in parts)
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == "recourse_share":
            return np.where(n > 0, n_rec / np.maximum(n, 1), np.nan)
        if metric == "effectiveness":
            return np.where(n > 0, sum(p["n_works"] for p in parts) / np.maximum(n, 1), np.nan)
        total = sum(p[f"sum_{_MEANS[metric]}"] for p in parts)
        return np.where(n_rec > 0, total / np.maximum(n_rec, 1), np.nan)


def _snap(x, tol=1e-12):
    """Rounding noise to exact zero: equal means computed over different counts differ by ~1e-17, which must
    neither look like a gap nor make an interval exclude zero."""
    if np.ndim(x) == 0:
        return 0.0 if abs(x) < tol else float(x)
    x = np.array(x, dtype=np.float64)
    x[np.abs(x) < tol] = 0.0
    return x


def _quantiles(x, alpha) -> tuple[float, float]:
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if not len(x):
        return np.nan, np.nan
    lo, hi = np.quantile(x, [alpha, 1 - alpha])
    return float(lo), float(hi)


# ---------------------------------------------------------------------------------------------------- findings
def _fmt_conf(c) -> str:
    return f"{c * 100:g}%"


def _amount(metric, v) -> str:
    """A difference in its unit: percentage points for shares, plain numbers for means."""
    if METRICS[metric][2] == "share":
        return f"{abs(v) * 100:.1f} percentage points"
    return f"{abs(v):.2f}"


def _signed(metric, v, unit=True) -> str:
    share = METRICS[metric][2] == "share"
    text = f"{v * 100:+.1f}" if share else f"{v:+.2f}"
    if float(text) == 0:  # no "-0.0" / "+0.00": zero has no sign
        text = text[1:]
    return text + (" points" if share and unit else "")


def _level(metric, v) -> str:
    if METRICS[metric][2] == "share":
        return f"{v:.0%}" if metric == "recourse_share" else f"{v:.1%}"
    return f"{v:.2f}"


#: The sentence of a clear gap, per metric: a template and its words for a higher / a lower value.
_GAP_SENTENCES = {
    "recourse_share": ("Individuals with {g} who need recourse have it {word} often than {r}: {vals}, {amount} "
                       "{direction} {ci}.", ("more", "less")),
    "mean_changes": ("Individuals with {g} need on average {amount} {word} changes than {r} {ci}; {vals} changes.",
                     ("more", "fewer")),
    "mean_distance": ("Individuals with {g} have to move on average {amount} {word} (total percentile shift) than "
                      "{r} to reach their rule {ci}; {vals}.", ("further", "less far")),
    "mean_feasibility": ("The rules given to individuals with {g} cover on average {amount} {word} of the fit data "
                         "(feasibility) than those given to {r} {ci}; {vals}.", ("more", "less")),
    "mean_accuracy": ("The rules given to individuals with {g} are on average {amount} {word} accurate than those "
                      "given to {r} {ci}; {vals}.", ("more", "less")),
    "effectiveness": ("Individuals with {g} who need recourse get a point the model confirms {word} often than {r}: "
                      "{vals}, {amount} {direction} {ci}.", ("more", "less")),
}


def _gap_sentence(res: AuditResult, row) -> str:
    m, d = row.metric, row.difference
    more = d > 0
    lo, hi = (row.ci_low, row.ci_high) if more else (-row.ci_high, -row.ci_low)
    if METRICS[m][2] == "share":
        ci = f"({_fmt_conf(res.confidence)} CI {lo * 100:.1f} to {hi * 100:.1f})"
    else:
        ci = f"({_fmt_conf(res.confidence)} CI {lo:.2f} to {hi:.2f})"
    template, words = _GAP_SENTENCES[m]
    return template.format(g=res.display(row.group), r=res.reference_display, word=words[0 if more else 1],
                           direction="higher" if more else "lower", amount=_amount(m, d), ci=ci,
                           vals=f"{_level(m, row.value)} against {_level(m, row.reference_value)}")


def _findings(res: AuditResult) -> list[str]:
    table, gaps = res._table, res._gaps
    conf = _fmt_conf(res.confidence)
    n_need, n_all = int(table["n"].sum()), int(table["n_total"].sum())
    ref_note = " (the largest group)" if _is_largest(res) else ""
    out = [f"Audit of {pluralise(n_need, 'individual')} who need{'s' if n_need == 1 else ''} recourse (target: "
           f"{res.target}) out of {n_all:,}, in "
           f"{len(res.groups)} groups of {res.group_column}; each group is compared with "
           f"{res.reference_display}{ref_note}."]
    if n_need == 0:
        out.append("No individual needs recourse: every model output is already in the target.")
        return out
    if len(res.groups) < 2:
        out.append("There is only one group, so nothing to compare.")
    by_group = {g: table.set_index("group").loc[g] for g in res.groups}
    empty = [g for g in res.groups if by_group[g]["n"] == 0]
    for g in empty:
        out.append(f"No individual with {res.display(g)} needs recourse, so the group is not compared.")
    clear = gaps[gaps["significant"]]
    for row in clear.itertuples():
        out.append(_gap_sentence(res, row))
    # groups with no clear difference, one sentence each; metrics equal for everyone apart
    for g in res.groups:
        part = gaps[(gaps["group"] == g) & ~gaps["significant"] & ~gaps["small_group"]
                    & np.isfinite(gaps["ci_low"]) & np.isfinite(gaps["difference"])]
        same = (part["difference"] == 0) & (part["ci_low"] == 0) & (part["ci_high"] == 0)
        unclear = [f"{METRICS[r.metric][0]} ({_signed(r.metric, r.difference)}, {conf} CI "
                   f"{_signed(r.metric, r.ci_low, unit=False)} to {_signed(r.metric, r.ci_high, unit=False)})"
                   for r in part[~same].itertuples()]
        if unclear:
            out.append(f"No clear difference between {res.display(g)} and {res.reference_display} in "
                       f"{_join(unclear)}: each {conf} confidence interval covers zero.")
        equal = [f"{METRICS[r.metric][0]} ({_level(r.metric, r.value)})" for r in part[same].itertuples()]
        if equal:
            out.append(f"Exactly the same {_join(equal, 'and')} for {res.display(g)} as for {res.reference_display}.")
    # small groups and metrics that cannot be compared
    for g in res.groups:
        if g in empty:
            continue
        row = by_group[g]
        if row["n"] < res.min_group_size:
            n_g = int(row['n'])
            out.append(f"Small group: only {pluralise(n_g, 'individual')} with {res.display(g)} "
                       f"need{'s' if n_g == 1 else ''} recourse (fewer "
                       f"than {res.min_group_size}), so its comparisons are too uncertain to draw conclusions.")
        elif row["n_recourse"] == 0:
            out.append(f"No individual with {res.display(g)} has recourse ({int(row['n_no_rule'])} without any "
                       f"valid rule, {int(row['n_no_actionable_rule'])} without an actionable one), so the cost "
                       "of recourse cannot be compared for this group.")
        elif row["n_recourse"] < res.min_group_size:
            n_r = int(row['n_recourse'])
            out.append(f"Only {pluralise(n_r, 'individual')} with {res.display(g)} {'has' if n_r == 1 else 'have'} "
                       "recourse (fewer than "
                       f"{res.min_group_size}), so their changes, distances and rule quality are too uncertain to "
                       "compare.")
    top = []
    for g in res.groups:
        shares = res._change_shares.loc[g].dropna().sort_values(ascending=False, kind="stable")
        shares = shares[shares > 0].head(3)
        if len(shares):
            top.append(f"{res.display(g)}: " + ", ".join(f"{f} ({v:.0%})" for f, v in shares.items()))
    if top:
        out.append("Features most often to change, among individuals with recourse — " + "; ".join(top) + ".")
    if res.group_is_feature:
        asked = res._change_shares[res.group_column] if res.group_column in res._change_shares else None
        n_rec = table.set_index("group")["n_recourse"]
        n_asked = int(round(float(np.nansum(asked.to_numpy() * n_rec.reindex(asked.index).to_numpy())))) \
            if asked is not None else 0
        if n_asked:
            out.append(f"{res.group_column} is one of the model's features and {pluralise(n_asked, 'individual')} "
                       f"{'is' if n_asked == 1 else 'are'} told to "
                       "change it; consider marking it immutable (an actionability constraint).")
    if not res.distance_available:
        out.append("Distances are not available: the explainer has no fit data (restored from JSON).")
    return out


def gap_direction(gaps: pd.DataFrame) -> np.ndarray:
    """Per row of :meth:`AuditResult.gaps`: "worse" when the group fares worse than the reference on the metric
    (less recourse, more changes, a longer distance, less feasible / accurate rules, fewer verified points),
    "better" when it fares better, "" for no difference or an unknown one (:data:`BETTER_WHEN`)."""
    if not len(gaps):
        return np.zeros(0, dtype=object)
    d = gaps["difference"].to_numpy(dtype=np.float64)
    higher = gaps["metric"].map(lambda m: BETTER_WHEN.get(m, "higher") == "higher").to_numpy(dtype=bool)
    good = np.where(higher, d > 0, d < 0)
    bad = np.where(higher, d < 0, d > 0)
    out = np.full(len(gaps), "", dtype=object)
    out[good & np.isfinite(d)] = "better"
    out[bad & np.isfinite(d)] = "worse"
    return out


def _is_largest(res) -> bool:
    if res.reference_is_rest or len(res.groups) < 2:
        return False
    t = res._table.set_index("group")
    return bool(t.loc[res.reference, "n_total"] == t["n_total"].max())


def _join(items, last="or") -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]


# ---------------------------------------------------------------------------------------------------- export
def _num(v):
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (numbers.Integral, np.integer)):
        return int(v)
    if isinstance(v, (numbers.Real, np.floating)):
        return float(v) if math.isfinite(float(v)) else None
    if v is pd.NA or v is pd.NaT:
        return None
    return v


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{str(k): _num(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
