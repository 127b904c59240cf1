"""Counting: what the explainer says about every row, the mergeable per-group counts (:class:`AuditCounts`), and
the result (:class:`AuditResult`) computed from them — rates and means per group, their bootstrap intervals
(:mod:`tcrex.audit._bootstrap` over :mod:`tcrex.population`'s) and the gaps to the reference.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import as_frame, check_fitted
from ..errors import ParameterError
from ..population import (GAP_COLUMNS, GAP_TYPES, REST_LABEL, bootstrap_rng, check_bootstrap_params, favourable_outcome,
                          gap_row, group_display, group_labels, group_order, group_series, is_rest, json_records,
                          json_value, named_groups, percentile_interval, ratio, resolve_groups, resolve_reference)
from ..vocabulary import (ALREADY_IN_RULE, BOUNDARY, EXAMPLE, MINIMAL_CHANGE, NEEDS_RECOURSE, NEXT_RULE,
                          NO_ACTIONABLE_RULE, NO_RULE, OK, SEARCHED, SOURCES, has_recourse, is_verified,
                          needs_recourse, recourse_outcome)
from ._bootstrap import CountedGroup, bootstrap_group, metric_n, point_values, pool_groups, pooled_resamples
from ._metrics import METRICS, RULES_ONLY, VERIFIED_ON_MODEL, metric_labels
from ._wording import findings_text

_STATUS_COUNTS = NEEDS_RECOURSE

_SAME = object()  # "keep the current value" for regroup()


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

    # ------------------------------------------------------------------ basis
    @property
    def verified(self) -> bool:
        """True when a model was known: "recourse" is verified recourse and every cost describes the verified
        advice (``counterfactuals(verify=True)``). False: the paper's rule-based audit, not checked on a model."""
        return bool(self.counts is not None and self.counts.verified)

    @property
    def basis(self) -> str:
        """"verified on the model", or "rules only — not checked on a model" (shown wherever the audit is)."""
        return VERIFIED_ON_MODEL if self.verified else RULES_ONLY

    @property
    def metrics(self) -> dict:
        """The compared metrics' (label, description, kind) in the words of this audit's basis."""
        return metric_labels(self.verified)

    # ------------------------------------------------------------------ frames
    def table(self) -> pd.DataFrame:
        """One row per group: counts per status, recourse share and the mean cost metrics (among those with
        recourse), the split by verified outcome (with a model), ``small_group`` and ``is_reference``.
        ``attrs["basis"]`` says whether the numbers are verified on the model or rules only."""
        out = self._table.copy()
        out.attrs["basis"] = self.basis
        return out

    def gaps(self) -> pd.DataFrame:
        """One row per (metric, group): ``difference`` = group value - reference value, its percentile-bootstrap
        interval (``ci_low``, ``ci_high``), and ``significant`` (the interval excludes 0 and neither side is a
        small group). ``n_group`` / ``n_reference`` are the numbers of individuals the metric averages over."""
        return self._gaps.copy()

    def metric_intervals(self) -> pd.DataFrame:
        """One row per (group, metric): the group's own value and its bootstrap interval (for error bars)."""
        return self._intervals.copy()

    def feature_change_shares(self, kind: str = "change") -> pd.DataFrame:
        """Groups x features: share of the group's individuals with recourse whose advice changes
        (``kind="change"``) or keeps (``kind="keep"``: its rule constrains the feature, which they already satisfy)
        the feature. With a model, the verified advice (its ``changed`` features and its recommended rule)."""
        if kind == "change":
            return self._change_shares.copy()
        if kind == "keep":
            return self._keep_shares.copy()
        raise ParameterError(f"kind must be 'change' or 'keep', got {kind!r}")

    def changes_distribution(self, normalize: bool = False) -> pd.DataFrame:
        """Groups x number of changes: how many individuals with recourse need that many changes
        (``normalize=True``: as a share of the group's individuals with recourse). A rules-only audit starts at 0
        (already inside the rule); verified advice changes at least one feature, so its columns start at 1."""
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
        """How a group is named in sentences (:func:`group_display`)."""
        return group_display(self.group_column, group)

    @property
    def reference_is_rest(self) -> bool:
        """The reference is everyone outside the compared group (``reference="rest"``)."""
        return is_rest(self.reference, self.groups)

    @property
    def reference_display(self) -> str:
        return REST_LABEL if self.reference_is_rest else self.display(self.reference)

    def findings(self) -> list[str]:
        """Plain-language findings: the overview, clear gaps, groups with no clear difference, small groups."""
        return findings_text(self)

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
        check_bootstrap_params(n_boot, confidence, min_group_size)
        index = self.individuals.index
        if groups is None:
            labels = self.individuals["group"].astype(object).to_numpy()
            order, name = list(self.groups), self.group_column
        else:
            labels, order, name = resolve_groups(pd.DataFrame(index=index), groups)
        counts = _count(self._outcomes, labels, name, order)
        return _summarise(counts, order, n_boot=n_boot, confidence=confidence, reference=reference,
                          random_state=random_state, min_group_size=min_group_size, outcomes=self._outcomes,
                          labels=labels)

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict:
        """JSON-friendly summary (no NaN: missing numbers are None) for reports."""
        def shares(frame):
            return {str(g): {str(f): json_value(v) for f, v in row.items()} for g, row in frame.iterrows()}

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
            "verified": self.verified,
            "basis": self.basis,
            "metrics": {k: {"label": v[0], "description": v[1], "kind": v[2]} for k, v in self.metrics.items()},
            "table": json_records(self._table),
            "gaps": json_records(self._gaps),
            "metric_intervals": json_records(self._intervals),
            "feature_change_shares": shares(self._change_shares),
            "feature_keep_shares": shares(self._keep_shares),
            "changes_distribution": {str(g): {str(k): int(v) for k, v in row.items()}
                                     for g, row in self._changes_dist.iterrows()},
            "top_rules": {g: json_records(self._top_rules[g].head(10)) for g in self.groups},
            "findings": self.findings(),
        }


def audit(explainer, X, groups, *, y_pred=None, model=None, target=None, n_boot=1000, confidence=0.95,
          reference=None, random_state=0, min_group_size=30, class_names=None, reference_rows=None,
          counterfactuals=None) -> AuditResult:
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
        "(target: approved)" instead of "(target: output = 1)"; default the explainer's own (``TCREx(class_names=)``).
    reference_rows : rows for the search beyond the rules when verifying recourse (``counterfactuals(...,
        reference=)``); default the explainer's fit rows. An explainer restored from JSON needs them to count the
        same verified recourse as the one it was exported from, and takes the distances' percentiles from them.
    counterfactuals : the verified frame of these rows, already computed (``explainer.counterfactuals(X,
        verify=True, ...)`` with the same outputs and target; every row of X in its index), e.g. once per fit by a
        dashboard: the audit then aggregates it instead of asking the model again. Checked against the rows: a
        frame of other rows or another target is refused.
    """
    check_bootstrap_params(n_boot, confidence, min_group_size)
    X = as_frame(X)
    labels, order, group_column = resolve_groups(X, named_groups(explainer, X, groups))
    outcomes = _outcomes(explainer, X, y_pred, model, target, class_names, reference_rows, counterfactuals)
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
    series, name = group_series(X, named_groups(explainer, X, groups))
    labels, values, categories, missing = group_labels(series)
    outcomes = _outcomes(explainer, X, y_pred, model, target, reference_rows=reference_rows)
    return _count(outcomes, labels, name, None, values=values, categories=categories, has_missing=missing)


def audit_from_counts(counts: "AuditCounts", *, n_boot=1000, confidence=0.95, reference=None, random_state=0,
                      min_group_size=30) -> AuditResult:
    """The audit of all rows whose :func:`audit_counts` were summed into ``counts`` (arguments as for
    :func:`audit`). No row is needed: the bootstrap resamples the per-group counts (see ``docs/audit.md``)."""
    check_bootstrap_params(n_boot, confidence, min_group_size)
    order = group_order(counts.group_values, counts.group_categories, counts.has_missing)
    return _summarise(counts, order, n_boot=n_boot, confidence=confidence, reference=reference,
                      random_state=random_state, min_group_size=min_group_size)


#: The key of a count cell: individuals with equal values of all of these are counted together.
_CELL_KEYS = ["group", "status", "needs_recourse", "has_recourse", "target", "rule", "changes", "feasibility",
              "accuracy", "works", "source"]


@dataclass
class AuditCounts:
    """Everything the audit reports, as counts that add up across partitions of the rows.

    ``cells``: individuals per (group, the paper's status, needs/has recourse, target, the rule the counted advice
    follows, its number of changes, the rule's feasibility and accuracy, verified by the model 1/0/-1 unknown, the
    verified frame's source as an index of :data:`tcrex.vocabulary.SOURCES` or -1); rule, changes, feasibility and
    accuracy are -1, -1, 0, 0 without recourse (rule -1 and 0, 0 for verified advice beyond the rules).
    ``distances``: individuals with recourse per (group, exact distance) — one bin per distinct value, so sums and
    resamples are exact. ``change`` / ``keep``: per group and feature, individuals with recourse whose advice
    changes / keeps it. The rest describes the grouping (raw values seen, categories, missing) and the audit
    (features, target, rule conditions, what is available). With a model (``verified``) "recourse" is verified
    recourse and the advice is the verified advice; without one it is the paper's rule.
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

    @property
    def verified(self) -> bool:
        """The counts are of verified recourse (a model was known), not of the paper's rules alone."""
        return self.effectiveness_available

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
    """What the explainer says about every row, independent of the grouping (so a result can be regrouped).

    ``frame`` has one row per input row: the paper's ``status``, ``needs_recourse``, ``has_recourse`` (with a
    model: verified recourse), ``target``, the paper's optimal ``rule``, ``recommended_rule`` (the rule the counted
    advice follows; missing for a minimal change beyond the rules), ``changes``, ``distance``, ``feasibility``,
    ``accuracy``, ``recourse_works`` and, with a model, ``recourse``, ``source`` and ``changed`` (the verified
    frame's columns)."""

    frame: pd.DataFrame
    change: np.ndarray  # (n, n_features) bool: the counted advice changes the feature
    keep: np.ndarray  # (n, n_features) bool: the counted advice's rule constrains it and it is kept
    features: list
    rules_text: dict  # (target, rule) -> conditions
    target: str
    distance_available: bool
    effectiveness_available: bool = False  # a model was known: the audit counts verified recourse

    @property
    def verified(self) -> bool:
        return self.effectiveness_available


def _outcomes(explainer, X, y_pred, model, target, class_names=None, reference_rows=None,
              counterfactuals=None) -> _Outcomes:
    """Per row, the advice the audit counts: with a model the verified advice of ``counterfactuals(verify=True)``
    (the one per-person frame every population figure aggregates), without one the paper's rule."""
    target_spec = _resolve_target(explainer, target)
    if class_names is None:  # the explainer's own (TCREx(class_names=...), kept in its JSON), as the report's
        class_names = getattr(explainer, "class_names", None) or None
    y = explainer.outputs(X, y_pred=y_pred, model=model)  # once, for every call below
    model = model if model is not None else getattr(explainer, "model_", None)
    if counterfactuals is not None and model is None:
        model = _GIVEN  # the verification was done by the caller
    exp = explainer.explain(X, y_pred=y, target=target_spec)
    n = len(X)
    status = exp["status"].astype(str).to_numpy()
    need = needs_recourse(status)
    tgt = exp["target"].fillna(-1).to_numpy(dtype=np.int64)
    paper_rule = exp["rule"].fillna(-1).to_numpy(dtype=np.int64)
    features = list(explainer.schema_.names)
    # percentiles of the fit data, or of the reference rows for an explainer restored from JSON
    scale_rows = None if explainer.has_fit_data else reference_rows
    distance_available = explainer.has_fit_data or reference_rows is not None
    if model is None:
        advice = _rule_advice(explainer, X, y, target_spec, exp, status, features)
    else:
        cf = _given_frame(counterfactuals, X, exp, need) if counterfactuals is not None else \
            explainer.counterfactuals(X, y_pred=y, target=target_spec, model=model, verify=True,
                                      reference=reference_rows, text=False)
        advice = _verified_advice(explainer, cf, need, tgt, features)
    has, rule, changes, points = advice["has"], advice["rule"], advice["changes"], advice["points"]
    feas = np.full(n, np.nan)
    acc = np.full(n, np.nan)
    with_rule = has & (rule >= 0)
    for t in np.unique(tgt[with_rule]):
        rows = np.flatnonzero(with_rule & (tgt == t))
        sol = explainer.solution(t)
        feas[rows] = np.asarray(sol.feasibility, dtype=np.float64)[rule[rows]]
        acc[rows] = np.asarray(sol.accuracy, dtype=np.float64)[rule[rows]]
    dist = np.full(n, np.nan)
    if distance_available and has.any():
        pos = np.flatnonzero(has)
        dist[pos] = explainer.percentile_distance(X.iloc[pos], points.iloc[pos], reference=scale_rows)
    frame = pd.DataFrame({
        "status": status, "needs_recourse": need, "has_recourse": has,
        "target": pd.array(np.where(tgt >= 0, tgt, None), dtype="Int64"),
        "rule": pd.array(np.where(need & (paper_rule >= 0), paper_rule, None), dtype="Int64"),
        "recommended_rule": pd.array(np.where(with_rule, rule, None), dtype="Int64"),
        "changes": changes, "distance": dist, "feasibility": feas, "accuracy": acc,
        "recourse_works": advice["works"],
        **{k: pd.Series(v, dtype=v.dtype if isinstance(v, pd.Categorical) else object, index=X.index)
           for k, v in advice.get("extra", {}).items()}}, index=X.index)
    target_desc = explainer.solution(int(tgt[need][0])).target.describe(class_names) if need.any() else \
        _describe_target(explainer, target_spec, class_names)
    return _Outcomes(frame, advice["change"], advice["keep"], features, _rules_text(explainer), target_desc,
                     distance_available, model is not None)


def _rule_advice(explainer, X, y, target_spec, exp, status, features) -> dict:
    """The paper's rule-based advice (no model): a rule applies (status ``ok`` or ``already_in_rule``), its own
    change count, its change / keep features and its nearest point."""
    has = has_recourse(status)
    rule = np.where(has, exp["rule"].fillna(-1).to_numpy(dtype=np.int64), -1)
    actions = explainer.feature_actions(X, y_pred=y, target=target_spec)
    empty = np.zeros((len(X), 0), dtype=bool)
    change = np.column_stack([(actions[f] == "change").to_numpy() for f in features]) if features else empty
    keep = np.column_stack([(actions[f] == "keep").to_numpy() for f in features]) if features else empty
    points = explainer.counterfactuals(X, y_pred=y, target=target_spec, verify=False) if has.any() else None
    return {"has": has, "rule": rule, "changes": np.where(has, exp["changes"].to_numpy(dtype=np.float64), np.nan),
            "change": change, "keep": keep, "points": points, "works": np.full(len(X), np.nan)}


#: Stands for "a model": the caller verified the rows and passed the frame (``counterfactuals=``).
_GIVEN = object()


def _given_frame(cf, X, exp, need) -> pd.DataFrame:
    """A caller's verified frame for the rows X, checked: it must hold every row, come from
    ``counterfactuals(verify=True)`` and describe the same people (who needs recourse, their paper rule)."""
    missing = [c for c in ("recourse", "source", "changed", "n_changes", "rule", "recommended_rule")
               if c not in getattr(cf, "columns", ())]
    if missing:
        raise ParameterError(f"counterfactuals must be a frame from counterfactuals(verify=True); it lacks {missing}")
    if not X.index.isin(cf.index).all() or cf.index.has_duplicates:
        raise ParameterError("counterfactuals must hold every row of X once (matched on the index)")
    cf = cf.loc[X.index]
    paper = exp["rule"].fillna(-1).to_numpy(dtype=np.int64)
    theirs = cf["rule"].fillna(-1).to_numpy(dtype=np.int64)
    if not np.array_equal(cf["recourse"].notna().to_numpy(), need) or not np.array_equal(paper[need], theirs[need]):
        raise ParameterError("counterfactuals describe other people than X with these outputs and this target "
                             "(who needs recourse, or their rule, differs): compute them with the same y_pred and "
                             "target")
    return cf


def _verified_advice(explainer, cf, need, tgt, features) -> dict:
    """The verified advice (``counterfactuals(verify=True)``): who has it (:func:`tcrex.vocabulary.is_verified`),
    the features it changes (``changed``), the features its recommended rule constrains and it keeps, the rule
    (``recommended_rule``; none for a minimal change beyond the rules) and the point."""
    n = len(cf)
    has = is_verified(cf) & need  # the one definition of "works"
    rule = np.where(has, cf["recommended_rule"].fillna(-1).to_numpy(dtype=np.int64), -1)
    index = {f: i for i, f in enumerate(features)}
    change = np.zeros((n, len(features)), dtype=bool)
    codes, patterns = pd.factorize(cf["changed"].to_numpy(dtype=object))
    for k, names in enumerate(patterns):  # a few dozen distinct patterns
        rows = np.flatnonzero((codes == k) & has)
        if len(rows) and len(names):
            change[np.ix_(rows, [index[f] for f in names])] = True
    keep = np.zeros((n, len(features)), dtype=bool)
    with_rule = has & (rule >= 0)
    pair = tgt * (int(rule.max()) + 2) + rule  # one code per (target, rule)
    for code in np.unique(pair[with_rule]):
        rows = np.flatnonzero(with_rule & (pair == code))
        t, r = int(tgt[rows[0]]), int(rule[rows[0]])
        constrained = np.zeros(len(features), dtype=bool)
        constrained[[index[f] for f in explainer.rule_conditions(t, r)]] = True
        keep[rows] = constrained & ~change[rows]
    works = np.full(n, np.nan)
    works[need] = has[need]
    source = np.asarray(pd.Categorical(cf["source"].astype(object), categories=list(SOURCES)).codes, np.int64)
    return {"has": has, "rule": rule, "changes": np.where(has, cf["n_changes"].to_numpy(dtype=np.float64), np.nan),
            "change": change, "keep": keep, "points": cf[features], "works": works,
            "extra": {"recourse": recourse_outcome(cf).array,
                      "source": pd.Categorical.from_codes(np.where(need, source, -1), categories=list(SOURCES)),
                      "changed": cf["changed"].to_numpy(dtype=object)}}


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
    rule = np.where(has, f["recommended_rule"].fillna(-1).to_numpy(dtype=np.int64), -1)
    changes = np.where(has, np.nan_to_num(f["changes"].to_numpy(dtype=np.float64), nan=-1), -1).astype(np.int64)
    works = f["recourse_works"].to_numpy(dtype=np.float64) if "recourse_works" in f else np.full(n, np.nan)
    works = np.where(np.isnan(works), -1, works).astype(np.int64)
    source = np.asarray(f["source"].cat.codes, dtype=np.int64) if "source" in f else np.full(n, -1, np.int64)
    key = np.zeros(n, dtype=np.int64)
    for part, size in ((gcode, len(gnames)), (scode, len(snames)), (need, 2), (has, 2), (target + 1, None),
                       (rule + 1, None), (changes + 1, None), (works + 1, 3), (source + 1, len(SOURCES) + 1)):
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
        "feasibility": np.where(rule[first] >= 0, f["feasibility"].to_numpy(dtype=np.float64)[first], 0.0),
        "accuracy": np.where(rule[first] >= 0, f["accuracy"].to_numpy(dtype=np.float64)[first], 0.0),
        "works": works[first], "source": source[first],
        "n": np.bincount(inv, minlength=len(uniq)).astype(np.int64)})
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
    # a rules-only audit counts 0 changes for people already inside their rule; verified advice changes at least
    # one feature (the model rejects the person as they are), so 0 is shown only if it occurs
    min_changes = 0 if not c.verified or not len(with_recourse) else min(1, int(with_recourse["changes"].min()))
    metrics = list(METRICS)

    # ---- per group
    rows, change_sh, keep_sh, dist_rows, top = [], {}, {}, {}, {}
    values = {}  # group -> CountedGroup: its individuals needing recourse, as counts
    for g in order:
        gc = by_group.get(g, empty_cells)
        need = gc[gc["needs_recourse"]]
        rec = need[need["has_recourse"]]
        n_total, n_need, n_rec = int(gc["n"].sum()), int(need["n"].sum()), int(rec["n"].sum())
        by_status = need.groupby("status")["n"].sum()
        counts = {s: int(by_status.get(s, 0)) for s in _STATUS_COUNTS}
        by_source = need.groupby("source")["n"].sum() if c.verified else None
        grp = values[g] = CountedGroup.from_cells(need, dist_by_group.get(g, empty_dist), c.effectiveness_available)
        point = point_values(grp, distance_available)
        rows.append({
            "group": g, "n_total": n_total, "n_already_in_target": n_total - n_need,
            "n": n_need, "n_recourse": n_rec, "recourse_share": ratio(n_rec, n_need),
            "n_ok": counts[OK], "n_already_in_rule": counts[ALREADY_IN_RULE],
            "n_no_rule": counts[NO_RULE], "no_rule_share": ratio(counts[NO_RULE], n_need),
            "n_no_actionable_rule": counts[NO_ACTIONABLE_RULE],
            "no_actionable_rule_share": ratio(counts[NO_ACTIONABLE_RULE], n_need),
            "mean_changes": point["mean_changes"], "mean_distance": point["mean_distance"],
            "mean_feasibility": point["mean_feasibility"], "mean_accuracy": point["mean_accuracy"],
            "n_verified": grp.n_works, "effectiveness": point["effectiveness"],
            **_source_counts(by_source)})
        change_sh[g] = _shares(c.change, g, features, n_rec)
        keep_sh[g] = _shares(c.keep, g, features, n_rec)
        dist_rows[g] = np.rint(np.bincount(rec["changes"].to_numpy(dtype=np.int64), weights=rec["n"].to_numpy(),
                                           minlength=max_changes + 1)).astype(np.int64)[min_changes:] if n_rec \
            else np.zeros(max_changes + 1 - min_changes, dtype=np.int64)
        top[g] = _top_rules(rec, c.rules_text, n_rec)
    table = pd.DataFrame(rows)
    ref = resolve_reference(reference, order, table)
    table["small_group"] = table["n"] < min_group_size
    table["is_reference"] = table["group"] == ref

    # ---- bootstrap: every group resampled independently, in display order, from one seeded generator
    rng = bootstrap_rng(random_state)
    boot = {g: bootstrap_group(rng, values[g], n_boot, distance_available) for g in order}
    points = {g: point_values(values[g], distance_available) for g in order}
    sizes = {g: {mt: metric_n(values[g], mt) for mt in metrics} for g in order}
    alpha = (1 - confidence) / 2
    intervals, gaps = [], []
    for g in order:
        for metric in metrics:
            lo, hi = percentile_interval(boot[g][metric], alpha)
            intervals.append({"group": g, "metric": metric, "value": points[g][metric], "ci_low": lo,
                              "ci_high": hi, "n": sizes[g][metric]})
    pooled = is_rest(ref, order)
    compared = list(order) if pooled else [g for g in order if g != ref]
    for metric in metrics:
        for g in compared:
            if pooled:
                others = [o for o in order if o != g]
                if not others:
                    continue
                ref_point = point_values(pool_groups([values[o] for o in others]), distance_available)[metric]
                ref_boot = pooled_resamples([boot[o] for o in others], metric)
                n_ref = sum(sizes[o][metric] for o in others)
            else:
                ref_point, ref_boot, n_ref = points[ref][metric], boot[ref][metric], sizes[ref][metric]
            gaps.append(gap_row(metric, g, ref, points[g][metric], ref_point, boot[g][metric], ref_boot,
                                alpha=alpha, n_group=sizes[g][metric], n_reference=n_ref,
                                min_group_size=min_group_size))

    change_frame = pd.DataFrame.from_dict(change_sh, orient="index", columns=features)
    keep_frame = pd.DataFrame.from_dict(keep_sh, orient="index", columns=features)
    dist_frame = pd.DataFrame.from_dict(dist_rows, orient="index", columns=list(range(min_changes, max_changes + 1)))
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
        individuals=individuals, _table=table, _gaps=pd.DataFrame(gaps, columns=GAP_COLUMNS).astype(GAP_TYPES),
        _intervals=pd.DataFrame(intervals, columns=["group", "metric", "value", "ci_low", "ci_high", "n"]),
        _change_shares=change_frame, _keep_shares=keep_frame, _changes_dist=dist_frame, _top_rules=top,
        group_is_feature=group_column in features, distance_available=distance_available, _outcomes=outcomes,
        counts=c)


#: The table's split of the individuals needing recourse by the verified frame's outcome (columns named as in
#: :class:`tcrex.Effectiveness`): verified through the paper's optimal rule, the next rule, a minimal change beyond
#: the rules; a similar real case only; none. Missing (None) in a rules-only audit.
SOURCE_COLUMNS = ("n_optimal_rule", "n_next_rule", "n_minimal_change", "n_similar", "n_none")


def _source_counts(by_source) -> dict:
    if by_source is None:
        return dict.fromkeys(SOURCE_COLUMNS)
    code = {s: i for i, s in enumerate(SOURCES)}

    def n(*sources):
        return int(sum(int(by_source.get(code[s], 0)) for s in sources))
    return {"n_optimal_rule": n(BOUNDARY, SEARCHED), "n_next_rule": n(NEXT_RULE),
            "n_minimal_change": n(MINIMAL_CHANGE), "n_similar": n(EXAMPLE), "n_none": int(by_source.get(-1, 0))}


def _shares(frame: pd.DataFrame, g, features, n_rec) -> np.ndarray:
    """Per feature, the share of the group's individuals with recourse counted in ``frame``."""
    if not n_rec:
        return np.full(len(features), np.nan)
    row = frame.loc[g].to_numpy(dtype=np.float64) if g in frame.index else np.zeros(len(features))
    return row / n_rec


def _resolve_target(explainer, target):
    check_fitted(explainer)
    return favourable_outcome(explainer, target, needs="the audit needs", fitted="the explainer")[0]


def _describe_target(explainer, spec, class_names=None) -> str:
    return favourable_outcome(explainer, spec, needs="the audit needs", fitted="the explainer")[1].describe(class_names)


def _rules_text(explainer) -> dict:
    return {(int(r.target), int(r.rule)): r.conditions for r in explainer.rules_frame().itertuples()}


def _top_rules(rec: pd.DataFrame, rules_text, n_rec) -> pd.DataFrame:
    """Rules by how many of the group's individuals with recourse get them (``rec``: their count cells); the share
    is of all of them, so verified advice beyond the rules (no rule) is the shares' remainder."""
    cols = ["target", "rule", "conditions", "n", "share"]
    rec = rec[rec["rule"] >= 0]
    if not n_rec or not len(rec):
        return pd.DataFrame(columns=cols)
    per = rec.groupby(["target", "rule"], sort=True)["n"].sum()
    pairs = np.array(list(per.index), dtype=np.int64).reshape(-1, 2)
    counts = per.to_numpy(dtype=np.int64)
    order = np.lexsort((pairs[:, 1], pairs[:, 0], -counts))
    return pd.DataFrame([{"target": int(pairs[i, 0]), "rule": int(pairs[i, 1]),
                          "conditions": rules_text.get((int(pairs[i, 0]), int(pairs[i, 1])), ""),
                          "n": int(counts[i]), "share": counts[i] / n_rec} for i in order], columns=cols)
