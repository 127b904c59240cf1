"""Recourse across models (issue #26): who keeps, loses or gains recourse when model A is retrained or replaced by B.

>>> from tcrex.compare import compare_models
>>> cmp = compare_models(explainer_a, X, model_b, target=1, groups="sex")       # doctest: +SKIP
>>> cmp.headline()                                                             # doctest: +SKIP

Every number reads the engine's one definition of "works": a person has verified recourse under a model when
``tcrex.vocabulary.is_verified`` holds on that model's explainer's ``counterfactuals(X, model=model)`` frame; who
needs recourse is ``tcrex.vocabulary.needs_recourse`` of ``explain()``'s status. Model A's advice *holds under B* when
model B's output at A's verified point (the feature columns of A's counterfactuals frame) lies in A's target for that
person (:meth:`tcrex.TCREx.in_target`, the engine's own containment).

Like the subgroup audit, everything comes from mergeable counts (:class:`ComparisonCounts`): :func:`compare_counts`
of partitions, added, give :func:`compare_from_counts` the same summary, groups and rules as :func:`compare_models`
on all rows at once (files, a process pool, Dask: ``tcrex compare``). The per-group bootstrap, the reference group,
the group labels and the findings' wording are the audit's (:mod:`tcrex.audit`).
"""
from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._data import as_frame, conform_dtypes
from .errors import CellLimitError, DataError, ModelError, NoValidRuleError, ParameterError, SchemaError
from ._outputs import detect_task
from ._params import check_fitted
from ._targets import targets_from_spec
from .vocabulary import CLASSIFICATION, is_verified, needs_recourse, recourse_outcome
from .audit import (GAP_COLUMNS, GAP_TYPES, REST_LABEL, bootstrap_rng, check_bootstrap_params, confidence_text,
                    gap_row, group_display, group_labels, group_order, group_series, is_rest, join_words, json_records, json_value,
                    named_groups, percentile_interval, resample_sums, resolve_reference)
from .text import pluralise

__all__ = ["compare_models", "compare_counts", "compare_from_counts", "favourable_target", "check_models",
           "ComparisonResult", "ComparisonCounts", "CHANGES", "CHANGE_TEXT", "COMPARE_METRICS", "PEOPLE_COLUMNS",
           "FORMAT", "VERSION", "KEPT", "LOST", "GAINED", "STILL_NONE", "NEWLY_NEEDED", "NO_LONGER_NEEDED",
           "NOT_NEEDED", "FIT_ROWS_A", "COMPARED_ROWS", "REFERENCE_ROWS", "GIVEN"]

FORMAT = "tcrex-comparison"
VERSION = 1

# ------------------------------------------------------------------------------------------------ vocabulary
#: Needs recourse under both models; verified under both.
KEPT = "kept"
#: Needs recourse under both; verified under A, not under B.
LOST = "lost"
#: Needs recourse under both; not verified under A, verified under B.
GAINED = "gained"
#: Needs recourse under both; verified under neither.
STILL_NONE = "still none"
#: Has the favourable outcome under A, needs recourse under B (``verified_b`` says whether B's explainer helps).
NEWLY_NEEDED = "newly needed"
#: Needs recourse under A, has the favourable outcome under B.
NO_LONGER_NEEDED = "no longer needed"
#: Has the favourable outcome under both models.
NOT_NEEDED = "not needed"
#: Every change, in display order (the categories of ``people['change']``); each person has exactly one.
CHANGES = (LOST, KEPT, GAINED, STILL_NONE, NEWLY_NEEDED, NO_LONGER_NEEDED, NOT_NEEDED)
CHANGE_TEXT = {
    LOST: "needs recourse under both models; verified under A, not under B",
    KEPT: "needs recourse under both models; verified under both",
    GAINED: "needs recourse under both models; verified under B only",
    STILL_NONE: "needs recourse under both models; verified under neither",
    NEWLY_NEEDED: "favourable outcome under A, needs recourse under B",
    NO_LONGER_NEEDED: "needs recourse under A, favourable outcome under B",
    NOT_NEEDED: "favourable outcome under both models",
}

#: Metrics compared between groups: name -> (short label, description, numerator, denominator) over count columns.
COMPARE_METRICS = {
    "lost_share": ("share losing recourse",
                   "share of the individuals needing recourse under model A who lose verified recourse under model "
                   "B (they still need it and model B's explainer has no verified point for them)", "n_lost",
                   "n_need_a"),
    "gained_share": ("share gaining recourse",
                     "share of the individuals needing recourse under model A who had no verified recourse under A "
                     "and have it under B", "n_gained", "n_need_a"),
    "invalidation_rate": ("A's advice invalidated by B",
                          "share of model A's verified points that model B does not send to the favourable outcome",
                          "n_invalidated", "n_verified_a"),
    "verified_share_a": ("verified recourse under A",
                         "share of the individuals needing recourse under A with verified recourse under A",
                         "n_verified_a", "n_need_a"),
    "verified_share_b": ("verified recourse under B",
                         "share of the individuals needing recourse under B with verified recourse under B",
                         "n_verified_b", "n_need_b"),
}
#: Count columns every metric is a ratio of (also the per-group table's counts).
_COUNT_COLS = ["n", "n_need_a", "n_need_b", "n_verified_a", "n_verified_b", "n_lost", "n_gained", "n_invalidated",
               "n_holds"]
_CELL_KEYS = ["group", "change", "needs_a", "needs_b", "verified_a", "verified_b", "holds"]
_CELL_SUMS = ["sum_changes_a", "sum_changes_b", "sum_cost_a", "sum_cost_b"]
_RULE_KEYS = ["target", "rule"]
_RULE_SUMS = ["n_rows", "n_rows_in_target_b", "n_points", "n_points_hold"]

FIT_ROWS_A = "the fit rows of explainer A"
COMPARED_ROWS = "the compared rows X"
#: The rows given as ``reference_rows=`` (``--reference-rows``): A's fit rows for an explainer restored from JSON.
REFERENCE_ROWS = "the reference rows (reference_rows=)"
#: Rows every partition measures A's rules on in full (their counts are not added across partitions).
_WHOLE_ROWS = (FIT_ROWS_A, REFERENCE_ROWS)
GIVEN = "given (explainer_b=)"

#: Columns of :attr:`ComparisonResult.people` and their dtypes (the JSON round trip restores them).
PEOPLE_COLUMNS = {
    "output_a": object, "output_b": object, "status_a": "string", "status_b": "string",
    "needs_recourse_a": bool, "needs_recourse_b": bool, "recourse_a": "string", "recourse_b": "string",
    "verified_a": bool, "verified_b": bool, "advice_a_holds_under_b": "boolean", "change": "string",
    "n_changes_a": "Int64", "n_changes_b": "Int64", "cost_a": float, "cost_b": float,
    "rule_a": "string", "rule_b": "string", "recommended_rule_a": "string", "recommended_rule_b": "string",
}


# ---------------------------------------------------------------------------------------------------- counts
@dataclass
class ComparisonCounts:
    """Everything a comparison reports, as counts that add up across partitions of the rows.

    ``cells``: individuals per (group, change, needs recourse under A / B, verified under A / B, A's advice holds
    under B: 1, 0 or -1 where A has no verified point) with the sums of their changes and costs under each model.
    ``rules``: per rule of A (target, rule index), the rows it is measured on inside its box, those model B sends
    to the target, A's verified points recommending it and those B confirms. When the rules are measured on A's
    fit rows (``rules_measured_on``) those two row counts are the same in every partition and are not added.
    """

    group_column: str | None
    features: list
    target: str
    target_id: int | None
    tau: float
    distance_available: bool
    explainer_b_fit_on: str
    rules_measured_on: str
    cells: pd.DataFrame
    rules: pd.DataFrame
    group_values: list
    group_categories: tuple | None = None
    has_missing: bool = False
    rules_text: pd.DataFrame | None = field(repr=False, default=None)  # rule, rule_id, conditions, accuracy, n

    @property
    def n_rows(self) -> int:
        return int(self.cells["n"].sum())

    def __add__(self, other: "ComparisonCounts") -> "ComparisonCounts":
        same = ("group_column", "features", "target", "target_id", "tau", "distance_available",
                "explainer_b_fit_on", "rules_measured_on")
        if any(getattr(self, k) != getattr(other, k) for k in same):
            raise ParameterError("comparison counts of different comparisons (grouping, explainers, target or "
                                 "models) cannot be added")
        values = list(pd.unique(pd.Series(list(self.group_values) + list(other.group_values), dtype=object)))
        cats = self.group_categories if self.group_categories == other.group_categories else None
        rules = pd.concat([self.rules, other.rules], ignore_index=True)
        if self.rules_measured_on in _WHOLE_ROWS:  # the fit rows' counts are whole in each part: not added
            fit = self.rules.set_index(_RULE_KEYS)[["n_rows", "n_rows_in_target_b"]]
            pts = rules.groupby(_RULE_KEYS, sort=True)[["n_points", "n_points_hold"]].sum()
            merged = fit.join(pts, how="outer").fillna(0).astype(np.int64).reset_index()
        else:
            merged = _canonical(rules, _RULE_KEYS, _RULE_SUMS)
        return ComparisonCounts(
            self.group_column, self.features, self.target, self.target_id, self.tau, self.distance_available,
            self.explainer_b_fit_on, self.rules_measured_on,
            _canonical(pd.concat([self.cells, other.cells], ignore_index=True), _CELL_KEYS, ["n"] + _CELL_SUMS),
            merged[_RULE_KEYS + _RULE_SUMS], values, cats, self.has_missing or other.has_missing,
            self.rules_text if self.rules_text is not None else other.rules_text)

    __radd__ = lambda self, other: self if other == 0 else self.__add__(other)  # noqa: E731  (sum())

    def to_dict(self) -> dict:
        return {"group_column": self.group_column, "features": list(self.features), "target": self.target,
                "target_id": self.target_id, "tau": self.tau, "distance_available": self.distance_available,
                "explainer_b_fit_on": self.explainer_b_fit_on, "rules_measured_on": self.rules_measured_on,
                "cells": json_records(self.cells), "rules": json_records(self.rules),
                "group_values": [json_value(v) for v in self.group_values],
                "group_categories": None if self.group_categories is None else [json_value(v) for v in
                                                                                self.group_categories],
                "has_missing": self.has_missing,
                "rules_text": None if self.rules_text is None else json_records(self.rules_text)}

    @classmethod
    def from_dict(cls, d: dict) -> "ComparisonCounts":
        cells = pd.DataFrame(d["cells"], columns=_CELL_KEYS + ["n"] + _CELL_SUMS)
        cells = cells.astype({"group": object, "change": object, "needs_a": bool, "needs_b": bool,
                              "verified_a": bool, "verified_b": bool, "holds": np.int64, "n": np.int64})
        cells[_CELL_SUMS] = cells[_CELL_SUMS].astype(float)
        rules = pd.DataFrame(d["rules"], columns=_RULE_KEYS + _RULE_SUMS).astype(np.int64)
        cats = d.get("group_categories")
        return cls(d["group_column"], list(d["features"]), d["target"], d["target_id"], float(d["tau"]),
                   bool(d["distance_available"]), d["explainer_b_fit_on"], d["rules_measured_on"], cells, rules,
                   list(d["group_values"]), None if cats is None else tuple(cats), bool(d["has_missing"]),
                   None if d.get("rules_text") is None else _frame(d["rules_text"]))


def _canonical(frame: pd.DataFrame, keys: list, sums: list) -> pd.DataFrame:
    """Sums per key, sorted by key: the same counts give the same frame whatever the partitioning."""
    if not len(frame):
        return frame.reset_index(drop=True)
    out = frame.groupby(keys, sort=True, dropna=False)[sums].sum().reset_index()
    for c in sums:
        if c.startswith("n"):
            out[c] = out[c].astype(np.int64)
    return out


# ---------------------------------------------------------------------------------------------------- inputs
def resolve_target(explainer, target):
    """The favourable outcome: ``target`` or the explainer's; one outcome (who needs recourse depends on it)."""
    spec = target if target is not None else explainer.target
    if spec is None:
        classes = getattr(explainer, "classes_", [])
        hint = (f"the favourable class, e.g. target={classes[-1]!r} (classes: {classes})" if classes else
                "the favourable interval, e.g. target=(threshold, None)")
        raise ParameterError("comparing models needs to know which outcome is favourable (who needs recourse), but "
                             f"explainer A was fitted with the default targets; pass target= {hint}")
    wanted = targets_from_spec(spec, explainer.task_, np.zeros(1), explainer.classes_)
    if len(wanted) != 1:
        raise ParameterError(f"target {spec!r} names {len(wanted)} outcomes in both directions; for regression "
                             "pass an interval, e.g. target=(threshold, None) for 'above the threshold'")
    return spec, wanted[0]


def _model_features(model):
    for attr in ("feature_names_in_", "feature_names"):
        names = getattr(model, attr, None)
        if names is not None and not callable(names):
            try:
                return [str(n) for n in list(names)]
            except TypeError:
                continue
    return None


def _check_model(name: str, model, names: list, explainer, y) -> None:
    """Model ``name`` must take A's features and solve A's task (clear messages, never a traceback)."""
    task = getattr(model, "task", None) if isinstance(getattr(model, "task", None), str) else None
    task = task or detect_task(y, model)
    if task != explainer.task_:
        raise ModelError(f"model {name} solves a {task} task but explainer A explains a {explainer.task_} model; "
                         "compare models of the same task (both classifiers or both regressors)")
    if task == CLASSIFICATION:
        known = set(map(_key, explainer.classes_))
        unknown = sorted({_key(v) for v in pd.unique(np.asarray(y, dtype=object))} - known, key=str)
        if unknown:
            raise ModelError(f"model {name} predicts class(es) {unknown[:10]} that model A never predicted "
                             f"(A's classes: {list(explainer.classes_)}); compare models with the same labels")


def _key(v):
    return v.item() if isinstance(v, np.generic) else v


def _check_features(name: str, model, names: list) -> None:
    feats = _model_features(model)
    if feats is None:
        return
    missing, extra = [f for f in feats if f not in names], [f for f in names if f not in feats]
    if missing or extra:
        parts = ([f"needs {missing[:20]}, which explainer A does not explain"] if missing else []) + \
            ([f"does not take {extra[:20]}"] if extra else [])
        raise DataError(f"model {name} {' and '.join(parts)}; compare models trained on the same features "
                        f"(explainer A's features: {names})")


def _outputs(name: str, explainer, X, model) -> np.ndarray:
    try:
        return explainer.outputs(X, model=model)
    except ModelError as exc:
        raise ModelError(f"model {name}: {exc}") from None


def target_id_of(explainer, wanted) -> int | None:
    """Id of the explainer's target equal to ``wanted`` (its rules are the ones re-checked): a fitted one, else one
    derived on demand by ``explain(..., target=...)`` (ids continue after the fitted ones); None when there is
    none (a restored explainer asked about a target it was not fitted with)."""
    t = 0
    while True:
        try:
            sol = explainer.solution(t)
        except IndexError:
            return None
        if sol.target == wanted:
            return t
        t += 1


#: The parameters of explainer B a comparison may set apart from A's (``params_b=``); everything else (target,
#: constraints, features, codebook, grower) stays A's so that both explainers answer the same question.
PARAMS_B = ("rho", "tau", "n_trees", "max_cells")


def _default_explainer_b(explainer_a, rows, y_rows_b, on, params_b=None):
    """An explainer with A's parameters (those of ``params_b`` overridden), constraints and task fitted on model
    B's outputs ``y_rows_b`` over ``rows`` (A's fit rows, or X): model B is asked once about those rows, and the
    same outputs serve the re-check of A's rules."""
    from ._explainer import TCREx  # noqa: PLC0415 - _explainer imports _reach, which the comparison shares
    unknown = sorted(set(params_b or {}) - set(PARAMS_B))
    if unknown:
        raise ParameterError(f"params_b may set {list(PARAMS_B)} only, not {unknown}")
    # A's codebook speaks of the same features; class names are given to the comparison itself (B may not output
    # every class A names)
    params = {**explainer_a.get_params(), **(params_b or {}), "task": explainer_a.task_, "class_names": None}
    whose = "A's parameters" if not params_b else "its own parameters " + ", ".join(
        f"{k}={params[k]}" for k in PARAMS_B)
    try:
        fitted = TCREx(**params).fit(rows, y_pred=y_rows_b)
        if not explainer_a.has_fit_data:  # verify B's points exactly as A's: without fit rows (no in-box search)
            fitted = TCREx.from_json(fitted.to_json())
        return fitted
    except (NoValidRuleError, CellLimitError) as exc:
        raise type(exc)(f"could not fit explainer B ({whose}, model B, {on}): {exc}; give explainer B other "
                        "parameters (params_b=) or pass explainer_b= fitted with other parameters") from None


# ---------------------------------------------------------------------------------------------------- people
def _people(ex_a, ex_b, X, model_a, model_b, spec, distance, y_a, y_b=None, reference=None) -> tuple[pd.DataFrame, dict]:
    """Per row: what each model's explainer says and whether A's verified point holds under B (``y_a``, ``y_b``:
    the models' outputs on X; without ``y_b``, model B is asked about X and A's verified points in one call).
    ``reference``: rows for both searches beyond the rules and for the distances (None: the explainers' own)."""
    exp_a = ex_a.explain(X, y_pred=y_a, target=spec)
    cf_a = ex_a.counterfactuals(X, model=model_a, y_pred=y_a, target=spec, reference=reference)
    ver_a = is_verified(cf_a)
    names = list(ex_a.schema_.names)
    pts = conform_dtypes(cf_a.loc[ver_a, names], X[names])
    if y_b is None:
        both = _outputs("B", ex_a, pd.concat([X[names], pts], ignore_index=True), model_b)
        y_b, y_b_at_a = both[:len(X)], both[len(X):]
    else:
        y_b_at_a = _outputs("B", ex_a, pts, model_b) if len(pts) else np.zeros(0)
    _check_model("B", model_b, names, ex_a, y_b)  # another task or unknown classes: said before B is explained
    exp_b = ex_b.explain(X, y_pred=y_b, target=spec)
    cf_b = ex_b.counterfactuals(X, model=model_b, y_pred=y_b, target=spec, reference=reference)
    need_a, need_b = needs_recourse(exp_a["status"]), needs_recourse(exp_b["status"])
    ver_b = is_verified(cf_b)
    holds = np.zeros(len(X), dtype=bool)
    if ver_a.any():
        holds[ver_a] = ex_a.in_target(y_b_at_a, exp_a["target"][ver_a])
    change = np.select(
        [need_a & need_b & ver_a & ver_b, need_a & need_b & ver_a & ~ver_b, need_a & need_b & ~ver_a & ver_b,
         need_a & need_b, ~need_a & need_b, need_a & ~need_b],
        [KEPT, LOST, GAINED, STILL_NONE, NEWLY_NEEDED, NO_LONGER_NEEDED], default=NOT_NEEDED)

    def n_changes(cf, ver):
        n = np.array([len(c) for c in cf["changed"]], dtype=np.int64)
        return pd.arrays.IntegerArray(np.where(ver, n, 0), ~ver)

    def cost(cf, ver):
        out = np.full(len(X), np.nan)
        if distance and ver.any():
            out[ver] = ex_a.percentile_distance(X.loc[ver, names], cf.loc[ver, names], reference=reference)
        return out

    def ids(ex, targets, rules):
        t = targets.to_numpy(dtype=np.float64, na_value=np.nan)
        r = rules.to_numpy(dtype=np.float64, na_value=np.nan)
        out = [ex.rule_id(int(a), int(b)) if a == a and b == b else None for a, b in zip(t, r)]
        return pd.array(out, dtype="string")

    people = pd.DataFrame({
        "output_a": pd.Series(list(y_a), index=X.index, dtype=object),
        "output_b": pd.Series(list(y_b), index=X.index, dtype=object),
        "status_a": exp_a["status"].astype(str).astype("string"),
        "status_b": exp_b["status"].astype(str).astype("string"),
        "needs_recourse_a": need_a, "needs_recourse_b": need_b,
        "recourse_a": recourse_outcome(cf_a).astype(object).astype("string"),
        "recourse_b": recourse_outcome(cf_b).astype(object).astype("string"),
        "verified_a": ver_a, "verified_b": ver_b,
        "advice_a_holds_under_b": pd.arrays.BooleanArray(holds, ~ver_a),
        "change": pd.array(change, dtype="string"),
        "n_changes_a": n_changes(cf_a, ver_a), "n_changes_b": n_changes(cf_b, ver_b),
        "cost_a": cost(cf_a, ver_a), "cost_b": cost(cf_b, ver_b),
        "rule_a": ids(ex_a, exp_a["target"], exp_a["rule"]), "rule_b": ids(ex_b, exp_b["target"], exp_b["rule"]),
        "recommended_rule_a": ids(ex_a, exp_a["target"], cf_a["recommended_rule"]),
        "recommended_rule_b": ids(ex_b, exp_b["target"], cf_b["recommended_rule"]),
    }, index=X.index)
    extra = {"target_a": exp_a["target"].to_numpy(dtype=np.float64, na_value=np.nan),
             "recommended_a": cf_a["recommended_rule"].to_numpy(dtype=np.float64, na_value=np.nan),
             "y_b": y_b}
    return people, extra


def _rule_counts(ex_a, target_id, people, extra, rows_on, y_b_rows) -> pd.DataFrame:
    """Per rule of A's target: rows inside its box (of ``rows_on``) and those B sends to the target; A's verified
    points recommending it and those B confirms."""
    cols = _RULE_KEYS + _RULE_SUMS
    if target_id is None:
        return pd.DataFrame(columns=cols).astype(np.int64)
    sol = ex_a.solution(target_id)
    n_rules = sol.n_rules
    n_rows = np.zeros(n_rules, dtype=np.int64)
    n_rows_b = np.zeros(n_rules, dtype=np.int64)
    if rows_on is not None and len(rows_on) and n_rules:
        inside = sol.rules.contains(ex_a.schema_.encode(rows_on[list(ex_a.schema_.names)]))
        ok = ex_a.in_target(y_b_rows, np.full(len(rows_on), target_id))
        n_rows = inside.sum(axis=0).astype(np.int64)
        n_rows_b = inside[ok].sum(axis=0).astype(np.int64)
    ver = people["verified_a"].to_numpy(dtype=bool)
    rec = extra["recommended_a"]
    mine = ver & (extra["target_a"] == target_id) & ~np.isnan(rec)
    r = rec[mine].astype(np.int64)
    hold = people["advice_a_holds_under_b"].to_numpy(dtype=bool, na_value=False)[mine]
    n_points = np.bincount(r, minlength=n_rules)[:n_rules]
    n_hold = np.bincount(r, weights=hold, minlength=n_rules)[:n_rules]
    return pd.DataFrame({"target": np.full(n_rules, target_id, dtype=np.int64),
                         "rule": np.arange(n_rules, dtype=np.int64), "n_rows": n_rows, "n_rows_in_target_b": n_rows_b,
                         "n_points": n_points.astype(np.int64), "n_points_hold": np.rint(n_hold).astype(np.int64)},
                        columns=cols)


def _cells(people: pd.DataFrame, labels) -> pd.DataFrame:
    holds = people["advice_a_holds_under_b"]
    frame = pd.DataFrame({
        "group": np.asarray(labels, dtype=object), "change": people["change"].astype(object).to_numpy(),
        "needs_a": people["needs_recourse_a"].to_numpy(dtype=bool),
        "needs_b": people["needs_recourse_b"].to_numpy(dtype=bool),
        "verified_a": people["verified_a"].to_numpy(dtype=bool),
        "verified_b": people["verified_b"].to_numpy(dtype=bool),
        "holds": np.where(holds.isna().to_numpy(), -1, holds.fillna(False).to_numpy(dtype=bool).astype(np.int64)),
        "n": np.ones(len(people), dtype=np.int64),
        "sum_changes_a": people["n_changes_a"].to_numpy(dtype=np.float64, na_value=0.0),
        "sum_changes_b": people["n_changes_b"].to_numpy(dtype=np.float64, na_value=0.0),
        "sum_cost_a": np.nan_to_num(people["cost_a"].to_numpy(dtype=np.float64)),
        "sum_cost_b": np.nan_to_num(people["cost_b"].to_numpy(dtype=np.float64))})
    return _canonical(frame, _CELL_KEYS, ["n"] + _CELL_SUMS)


# ---------------------------------------------------------------------------------------------------- public API
def compare_models(explainer_a, X, model_b, *, model_a=None, target=None, groups=None, explainer_b=None,
                   n_boot=1000, confidence=0.95, random_state=0, reference=None, min_group_size=30,
                   class_names=None, reference_rows=None, params_b=None) -> "ComparisonResult":
    """Compare recourse under model A (explained by ``explainer_a``) and model B on the people ``X``.

    Parameters
    ----------
    explainer_a : fitted (or restored) TCREx explaining model A.
    X : DataFrame of the people to compare (it may hold extra columns, e.g. the grouping column).
    model_b : the new model (anything with ``predict`` or a callable), on A's features and task.
    model_a : model A (default: the explainer's own model); needed to verify A's points.
    target : the favourable outcome (defaults to the explainer's ``target``; required with default targets).
    groups : optional grouping (a column name of X, or values aligned with X), as for :func:`tcrex.audit.audit`.
    explainer_b : B's explainer; default an explainer with A's parameters and constraints fitted on model B over
        A's fit rows, or over X when A was restored from JSON (``explainer_b_fit_on`` says which). In the latter
        case B's explainer keeps only its JSON form, like A's, so both models' points are verified the same way.
    params_b : the default explainer B's own ``rho``, ``tau``, ``n_trees`` and/or ``max_cells`` (a dict; the rest
        stays A's): model B may need a larger rho or fewer trees to stay within the cell limit.
    n_boot, confidence, random_state, reference, min_group_size : the per-group bootstrap, as in the audit.
    class_names : readable class names for the findings (``{1: "approved"}``).
    reference_rows : the rows explainer A was fitted on, for an explainer restored from JSON (which holds no rows):
        both models' searches beyond the rules, the distances and the re-check of A's rules use them, and the
        default explainer B is fitted on them; with A's fit rows this gives the answer of the explainer before
        its export. ``tcrex compare --reference-rows`` passes them.
    """
    check_fitted(explainer_a)
    check_bootstrap_params(n_boot, confidence, min_group_size)
    X = as_frame(X)
    model_a = model_a if model_a is not None else getattr(explainer_a, "model_", None)
    if model_a is None:
        raise ModelError("explainer A holds no model (restored from JSON, or fitted on y_pred); pass model_a= so "
                         "that A's points can be verified")
    known = {}  # model B's outputs already asked for: on X, or on A's fit rows
    if explainer_b is None:
        names, Xf = _features(explainer_a, X)
        resolve_target(explainer_a, target)
        _check_features("B", model_b, names)
        if reference_rows is not None:
            rows, fit_on = _features(explainer_a, as_frame(reference_rows))[1], REFERENCE_ROWS
        elif explainer_a.has_fit_data:
            rows, fit_on = explainer_a.fit_rows(), FIT_ROWS_A
        else:
            rows, fit_on = Xf, COMPARED_ROWS
        y_rows_b = _outputs("B", explainer_a, conform_dtypes(rows, Xf), model_b)
        _check_model("B", model_b, names, explainer_a, y_rows_b)
        known["X" if fit_on == COMPARED_ROWS else "fit_rows"] = y_rows_b
        known["rows"] = rows
        explainer_b = _default_explainer_b(explainer_a, rows, y_rows_b, fit_on, params_b)
    else:
        if params_b:
            raise ParameterError("params_b sets the default explainer B's parameters; with explainer_b= given, "
                                 "fit it with those parameters instead")
        fit_on = GIVEN
    counts, people = _counts(explainer_a, X, model_b, model_a=model_a, target=target, groups=groups,
                             explainer_b=explainer_b, fit_on=fit_on, class_names=class_names, known=known,
                             reference_rows=reference_rows)
    labels = people.pop("group").astype(object).to_numpy() if "group" in people else None
    order = _order(counts)
    result = _summarise(counts, order, n_boot=n_boot, confidence=confidence, reference=reference,
                        random_state=random_state, min_group_size=min_group_size)
    if labels is not None:
        people.insert(0, "group", pd.Categorical(labels, categories=order))
    result.people = people
    result.explainer_b = explainer_b
    return result


def compare_counts(explainer_a, X, model_b, *, explainer_b, model_a=None, target=None, groups=None,
                   class_names=None, explainer_b_fit_on: str = GIVEN, return_people: bool = False,
                   reference_rows=None):
    """The comparison's mergeable counts for the rows X (one partition, file or batch).

    ``explainer_b`` is required: every partition must be compared with the same explainer of model B. Counts of
    several partitions add up (``a + b``, ``sum(parts)``) and :func:`compare_from_counts` turns them into what
    :func:`compare_models` computes on all rows at once with the same explainers. ``explainer_b_fit_on`` says
    in words which rows explainer B was fitted on (reported with the result). ``return_people=True`` returns
    ``(counts, people)``: the people-level frame of these rows too (with a ``group`` column when grouped).
    ``reference_rows``: as for :func:`compare_models` (the same rows for every partition).
    """
    check_fitted(explainer_a)
    X = as_frame(X)
    model_a = model_a if model_a is not None else getattr(explainer_a, "model_", None)
    if model_a is None:
        raise ModelError("explainer A holds no model; pass model_a= so that A's points can be verified")
    counts, people = _counts(explainer_a, X, model_b, model_a=model_a, target=target, groups=groups,
                             explainer_b=explainer_b, fit_on=str(explainer_b_fit_on), class_names=class_names,
                             reference_rows=reference_rows)
    return (counts, people) if return_people else counts


def favourable_target(explainer_a, target=None):
    """The target spec a comparison measures recourse towards (``target`` or the explainer's own), checked: one
    favourable outcome, or a clear message naming what to pass."""
    check_fitted(explainer_a)
    return resolve_target(explainer_a, target)[0]


def check_models(explainer_a, X, model_b, model_a=None) -> None:
    """Clear messages, before any work, when model B (or A) takes other features than explainer A explains, solves
    another task or predicts classes A never predicted (checked on the first rows of ``X``)."""
    check_fitted(explainer_a)
    names, Xf = _features(explainer_a, as_frame(X))
    for name, model in (("A", model_a), ("B", model_b)):
        if model is None:
            continue
        _check_features(name, model, names)
        if len(Xf):
            _check_model(name, model, names, explainer_a, _outputs(name, explainer_a, Xf.head(256), model))


def compare_from_counts(counts: ComparisonCounts, *, n_boot=1000, confidence=0.95, reference=None, random_state=0,
                        min_group_size=30) -> "ComparisonResult":
    """The comparison of all rows whose :func:`compare_counts` were summed into ``counts`` (no ``people``)."""
    check_bootstrap_params(n_boot, confidence, min_group_size)
    return _summarise(counts, _order(counts), n_boot=n_boot, confidence=confidence, reference=reference,
                      random_state=random_state, min_group_size=min_group_size)


def _features(explainer_a, X) -> tuple[list, pd.DataFrame]:
    names = list(explainer_a.schema_.names)
    missing = [n for n in names if n not in X.columns]
    if missing:
        raise DataError(f"X lacks column(s) {missing[:20]} that explainer A explains; give the people's features "
                        f"({names})")
    return names, X[names]


def _order(counts: ComparisonCounts) -> list:
    if counts.group_column is None:
        return [""]
    return group_order(counts.group_values, counts.group_categories, counts.has_missing)


def _counts(explainer_a, X, model_b, *, model_a, target, groups, explainer_b, fit_on, class_names, known=None,
            reference_rows=None):
    check_fitted(explainer_b)
    names, Xf = _features(explainer_a, X)
    if list(explainer_b.schema_.names) != names:
        raise DataError(f"explainer B explains the features {list(explainer_b.schema_.names)[:20]} but explainer A "
                        f"explains {names[:20]}; both must explain the same features")
    if explainer_b.task_ != explainer_a.task_:
        raise ModelError(f"explainer B explains a {explainer_b.task_} model but explainer A a {explainer_a.task_} "
                         "model; compare models of the same task")
    spec, wanted = resolve_target(explainer_a, target)
    _check_features("B", model_b, names)
    if groups is not None:
        series, group_column = group_series(X, named_groups(explainer_a, X, groups))
        labels, values, categories, missing = group_labels(series)
    else:
        labels, values, categories, missing, group_column = np.full(len(X), "", dtype=object), [""], None, False, None
    known = known or {}
    y_a = _outputs("A", explainer_a, Xf, model_a)
    ref = None if reference_rows is None else conform_dtypes(_features(explainer_a, as_frame(reference_rows))[1], Xf)
    distance = explainer_a.has_fit_data or ref is not None
    people, extra = _people(explainer_a, explainer_b, Xf, model_a, model_b, spec, distance, y_a, known.get("X"),
                            reference=ref)
    target_id = target_id_of(explainer_a, wanted)
    if ref is not None:
        rows_on, measured, y_rows = ref, REFERENCE_ROWS, known.get("fit_rows")
        if y_rows is None and target_id is not None:
            y_rows = _outputs("B", explainer_a, ref, model_b)
    elif explainer_a.has_fit_data:
        rows_on, measured = known["rows"] if "rows" in known else explainer_a.fit_rows(), FIT_ROWS_A
        y_rows = known.get("fit_rows")
        if y_rows is None and target_id is not None:
            y_rows = _outputs("B", explainer_a, conform_dtypes(rows_on, Xf), model_b)
    else:
        rows_on, measured, y_rows = Xf, COMPARED_ROWS, extra["y_b"]
    rules = _rule_counts(explainer_a, target_id, people, extra, rows_on, y_rows)
    counts = ComparisonCounts(
        group_column=group_column, features=names, target=wanted.describe(class_names), target_id=target_id,
        tau=float(explainer_a.tau), distance_available=distance, explainer_b_fit_on=fit_on,
        rules_measured_on=measured, cells=_cells(people, labels), rules=rules, group_values=list(values),
        group_categories=None if categories is None else tuple(categories), has_missing=bool(missing),
        rules_text=rules_of_target(explainer_a, target_id))
    if groups is not None:
        people.insert(0, "group", labels)
    return counts, people


def rules_of_target(ex, target_id) -> pd.DataFrame | None:
    """Per rule of the target: its id, conditions, accuracy and rows as fitted (targets derived on demand too)."""
    if target_id is None:
        return None
    sol = ex.solution(target_id)
    return pd.DataFrame({"rule": np.arange(sol.n_rules, dtype=np.int64),
                         "rule_id": [ex.rule_id(target_id, r) for r in range(sol.n_rules)],
                         "conditions": [ex.conditions_text(sol.rules, r) for r in range(sol.n_rules)],
                         "accuracy": np.asarray(sol.accuracy, dtype=np.float64)[:sol.n_rules],
                         "n": np.asarray(sol.rule_n, dtype=np.int64)[:sol.n_rules]})


# ---------------------------------------------------------------------------------------------------- summary
def _group_sums(cells: pd.DataFrame) -> np.ndarray:
    """Per cell the count columns (``_COUNT_COLS``) it adds to, for one individual."""
    ch = cells["change"].to_numpy(dtype=object)
    holds = cells["holds"].to_numpy(dtype=np.int64)
    ver_a = cells["verified_a"].to_numpy(dtype=bool)
    return np.column_stack([
        np.ones(len(cells)), cells["needs_a"].to_numpy(dtype=bool), cells["needs_b"].to_numpy(dtype=bool),
        ver_a, cells["verified_b"].to_numpy(dtype=bool), ch == LOST, ch == GAINED, ver_a & (holds == 0),
        ver_a & (holds == 1)]).astype(np.float64)


def _ratio(a, b) -> float:
    return float(a) / float(b) if b else np.nan


def _metric_values(sums: np.ndarray) -> dict:
    """Metric values from count sums (last axis: ``_COUNT_COLS``); works on (B, k) resamples too."""
    col = {c: sums[..., i] for i, c in enumerate(_COUNT_COLS)}
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for m, (_, _, num, den) in COMPARE_METRICS.items():
            out[m] = np.where(col[den] > 0, col[num] / np.maximum(col[den], 1), np.nan)
    return out


def _summarise(c: ComparisonCounts, order, *, n_boot, confidence, reference, random_state,
               min_group_size) -> "ComparisonResult":
    cells = c.cells
    weights = cells["n"].to_numpy(dtype=np.float64)
    ind = _group_sums(cells)
    totals = weights @ ind if len(cells) else np.zeros(len(_COUNT_COLS))
    summary = _summary_dict(c, cells, totals)
    rules = _rules_table(c)
    res = ComparisonResult(target=c.target, group_column=c.group_column, confidence=float(confidence),
                           n_boot=int(n_boot), min_group_size=int(min_group_size), random_state=random_state,
                           explainer_b_fit_on=c.explainer_b_fit_on, rules_measured_on=c.rules_measured_on,
                           distance_available=c.distance_available, summary=summary, rules=rules, counts=c)
    if c.group_column is None:
        return res
    gcodes = cells["group"].to_numpy(dtype=object)
    change = cells["change"].to_numpy(dtype=object)
    per = {}
    rows = []
    for g in order:
        sel = gcodes == g
        w, m = weights[sel], ind[sel]
        s = w @ m if sel.any() else np.zeros(len(_COUNT_COLS))
        per[g] = (w, m, s)
        point = _metric_values(s)
        by_change = {ch: int(w[change[sel] == ch].sum()) for ch in CHANGES}
        rows.append({"group": g, **{k: int(v) for k, v in zip(_COUNT_COLS, s)},
                     **{f"n_{ch.replace(' ', '_')}": by_change[ch] for ch in CHANGES},
                     **{m_: float(point[m_]) for m_ in COMPARE_METRICS}})
    table = pd.DataFrame(rows)
    table["n_total"] = table["n"]
    table_for_ref = table.assign(n=table["n_need_a"])  # the audit's rule: the largest group with someone to compare
    ref = resolve_reference(reference, order, table_for_ref)
    table = table.drop(columns=["n_total"])
    table["small_group"] = table["n_need_a"] < min_group_size
    table["is_reference"] = table["group"] == ref
    rng = bootstrap_rng(random_state)
    # every group resampled independently, in display order, from one seeded generator (the audit's bootstrap)
    boot = {g: resample_sums(rng, per[g][0], per[g][1], n_boot) for g in order}
    alpha = (1 - confidence) / 2
    intervals, gaps = [], []
    den = {m: COMPARE_METRICS[m][3] for m in COMPARE_METRICS}
    boot_values = {g: _metric_values(boot[g]) for g in order}  # per group, per metric: the resampled values
    point_values = {g: _metric_values(per[g][2]) for g in order}
    for g in order:
        values = boot_values[g]
        point = point_values[g]
        for m in COMPARE_METRICS:
            lo, hi = percentile_interval(values[m], alpha)
            intervals.append({"group": g, "metric": m, "value": float(point[m]), "ci_low": lo, "ci_high": hi,
                              "n": int(per[g][2][_COUNT_COLS.index(den[m])])})
    pooled = is_rest(ref, order)
    compared = list(order) if pooled else [g for g in order if g != ref]
    refs = {}  # compared group -> (reference sums, the reference's resampled metric values)
    for g in compared:
        if pooled:
            others = [o for o in order if o != g]
            if others:
                sums = sum(per[o][2] for o in others)
                refs[g] = (sums, _metric_values(sums), _metric_values(sum(boot[o] for o in others)))
        else:
            refs[g] = (per[ref][2], point_values[ref], boot_values[ref])
    for m in COMPARE_METRICS:
        k = _COUNT_COLS.index(den[m])
        for g in compared:
            if g not in refs:
                continue
            ref_sums, ref_point, ref_boot = refs[g]
            gaps.append(gap_row(m, g, ref, float(point_values[g][m]), float(ref_point[m]), boot_values[g][m],
                                ref_boot[m], alpha=alpha, n_group=int(per[g][2][k]), n_reference=int(ref_sums[k]),
                                min_group_size=min_group_size))
    res.groups = table
    res.reference = ref
    res.group_labels = list(order)
    res.gaps = pd.DataFrame(gaps, columns=GAP_COLUMNS).astype(GAP_TYPES)
    res.intervals = pd.DataFrame(intervals, columns=["group", "metric", "value", "ci_low", "ci_high", "n"])
    return res


def _summary_dict(c: ComparisonCounts, cells: pd.DataFrame, totals: np.ndarray) -> dict:
    t = {k: int(v) for k, v in zip(_COUNT_COLS, totals)}
    ch = cells["change"].to_numpy(dtype=object)
    w = cells["n"].to_numpy(dtype=np.float64)
    by_change = {k: int(w[ch == k].sum()) for k in CHANGES}
    kept = ch == KEPT
    sums = {s: cells[s].to_numpy(dtype=np.float64) for s in _CELL_SUMS}
    n_kept = by_change[KEPT]
    metrics = _metric_values(totals)
    out = {
        **t, "changes": by_change,
        "shares": {k: _ratio(v, t["n"]) for k, v in by_change.items()},
        "recourse_share_a": float(metrics["verified_share_a"]), "recourse_share_b": float(metrics["verified_share_b"]),
        "lost_share": float(metrics["lost_share"]), "gained_share": float(metrics["gained_share"]),
        "invalidation_rate": float(metrics["invalidation_rate"]),
        "advice_holds_share": _ratio(t["n_holds"], t["n_verified_a"]),
        "mean_changes_a": _ratio(sums["sum_changes_a"].sum(), t["n_verified_a"]),
        "mean_changes_b": _ratio(sums["sum_changes_b"].sum(), t["n_verified_b"]),
        "mean_changes_change": _ratio(sums["sum_changes_b"][kept].sum() - sums["sum_changes_a"][kept].sum(), n_kept),
        "mean_cost_a": _ratio(sums["sum_cost_a"].sum(), t["n_verified_a"]) if c.distance_available else np.nan,
        "mean_cost_b": _ratio(sums["sum_cost_b"].sum(), t["n_verified_b"]) if c.distance_available else np.nan,
        "mean_cost_change": _ratio(sums["sum_cost_b"][kept].sum() - sums["sum_cost_a"][kept].sum(), n_kept)
        if c.distance_available else np.nan,
    }
    return out


def _rules_table(c: ComparisonCounts) -> pd.DataFrame:
    cols = ["target", "rule", "rule_id", "conditions", "accuracy_a", "n_rows", "accuracy_b", "holds_tau_b",
            "n_points", "n_points_hold", "points_hold_share"]
    r = c.rules
    if not len(r):
        return pd.DataFrame(columns=cols)
    text = c.rules_text
    n_rows, n_points = r["n_rows"].to_numpy(dtype=np.float64), r["n_points"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_b = np.where(n_rows > 0, r["n_rows_in_target_b"].to_numpy(dtype=np.float64) / n_rows, np.nan)
        share = np.where(n_points > 0, r["n_points_hold"].to_numpy(dtype=np.float64) / n_points, np.nan)
    rule = r["rule"].to_numpy(dtype=np.int64)
    if text is not None:
        pos = {int(k): i for i, k in enumerate(text["rule"])}
        at = [pos.get(int(k), -1) for k in rule]
        ids = [text["rule_id"].iloc[i] if i >= 0 else None for i in at]
        conds = [text["conditions"].iloc[i] if i >= 0 else None for i in at]
        acc_a = np.array([float(text["accuracy"].iloc[i]) if i >= 0 else np.nan for i in at], dtype=np.float64)
    else:
        ids, conds, acc_a = [None] * len(r), [None] * len(r), np.full(len(r), np.nan)
    return pd.DataFrame({
        "target": r["target"].to_numpy(dtype=np.int64), "rule": rule, "rule_id": ids, "conditions": conds,
        "accuracy_a": acc_a, "n_rows": r["n_rows"].to_numpy(dtype=np.int64), "accuracy_b": acc_b,
        "holds_tau_b": pd.arrays.BooleanArray(np.nan_to_num(acc_b) >= c.tau - 1e-12, np.isnan(acc_b)),
        "n_points": r["n_points"].to_numpy(dtype=np.int64), "n_points_hold": r["n_points_hold"].to_numpy(dtype=np.int64),
        "points_hold_share": share}, columns=cols)


# ---------------------------------------------------------------------------------------------------- result
@dataclass
class ComparisonResult:
    """What :func:`compare_models` found, as plain data (``to_json`` / ``from_json``).

    ``people``: one row per row of X (same index; None for a result built from counts alone), columns in
    ``PEOPLE_COLUMNS`` plus ``group``; ``summary``: counts, shares, the invalidation rate of A's advice under B
    and the mean change of cost; ``groups`` (with ``groups=``): per group the counts and metrics, ``gaps`` against
    the reference with bootstrap intervals, ``intervals`` per group; ``rules``: each rule of A re-checked under B.
    """

    target: str
    group_column: str | None
    confidence: float
    n_boot: int
    min_group_size: int
    random_state: object
    explainer_b_fit_on: str
    rules_measured_on: str
    distance_available: bool
    summary: dict
    rules: pd.DataFrame
    counts: ComparisonCounts = field(repr=False, default=None)
    people: pd.DataFrame | None = field(repr=False, default=None)
    groups: pd.DataFrame | None = field(repr=False, default=None)
    gaps: pd.DataFrame | None = field(repr=False, default=None)
    intervals: pd.DataFrame | None = field(repr=False, default=None)
    reference: str | None = None
    group_labels: list = field(default_factory=list)
    #: explainer B of :func:`compare_models` (in memory only, never in the JSON: explanations hold no model)
    explainer_b: object = field(repr=False, default=None, compare=False)

    # ------------------------------------------------------------------ text
    def headline(self) -> str:
        """"N people lose recourse, M gain it; your advice holds for K % under the new model"."""
        s = self.summary
        n_lost, n_gained = s["changes"][LOST], s["changes"][GAINED]
        holds = s["advice_holds_share"]
        held = (f"your advice holds for {holds:.0%} under the new model" if holds == holds else
                "no verified advice under model A to re-check")
        return (f"{pluralise(n_lost, 'person', 'people')} lose{'s' if n_lost == 1 else ''} recourse, "
                f"{n_gained:,} gain{'s' if n_gained == 1 else ''} it; {held}.")

    def display(self, group) -> str:
        return group_display(self.group_column, group)

    @property
    def reference_is_rest(self) -> bool:
        return is_rest(self.reference, self.group_labels)

    @property
    def reference_display(self) -> str:
        return REST_LABEL if self.reference_is_rest else self.display(self.reference)

    def findings(self) -> list[str]:
        """Plain-language findings in the audit's wording: the overview, clear gaps, no clear difference, small
        groups, and the rules of A that break under B."""
        return _findings(self)

    def broken_rules(self) -> pd.DataFrame:
        """Rules of A that no longer reach tau under B on their rows, or whose verified points B rejects."""
        r = self.rules
        if not len(r):
            return r
        broken = (r["holds_tau_b"].fillna(True) == False) | (r["points_hold_share"] < 1)  # noqa: E712
        return r[broken.to_numpy(dtype=bool)].reset_index(drop=True)

    def regroup(self, *, reference=None, n_boot=None, confidence=None, random_state=None,
                min_group_size=None) -> "ComparisonResult":
        """The same comparison with another reference group (or bootstrap settings), from the counts."""
        res = _summarise(self.counts, _order(self.counts),
                         n_boot=self.n_boot if n_boot is None else n_boot,
                         confidence=self.confidence if confidence is None else confidence,
                         reference=reference, random_state=self.random_state if random_state is None
                         else random_state, min_group_size=self.min_group_size if min_group_size is None
                         else min_group_size)
        res.people, res.explainer_b = self.people, self.explainer_b
        return res

    # ------------------------------------------------------------------ export
    def to_dict(self, *, people: bool = True) -> dict:
        doc = {"format": FORMAT, "version": VERSION, "target": self.target, "group_column": self.group_column,
               "confidence": self.confidence, "n_boot": self.n_boot, "min_group_size": self.min_group_size,
               "random_state": int(self.random_state) if isinstance(self.random_state, numbers.Integral) else None,
               "explainer_b_fit_on": self.explainer_b_fit_on, "rules_measured_on": self.rules_measured_on,
               "distance_available": self.distance_available, "changes": {k: CHANGE_TEXT[k] for k in CHANGES},
               "metrics": {k: {"label": v[0], "description": v[1]} for k, v in COMPARE_METRICS.items()},
               "headline": self.headline(), "summary": _plain(self.summary), "rules": json_records(self.rules),
               "reference": self.reference, "group_labels": list(self.group_labels),
               "groups": None if self.groups is None else json_records(self.groups),
               "gaps": None if self.gaps is None else json_records(self.gaps),
               "intervals": None if self.intervals is None else json_records(self.intervals),
               "findings": self.findings(), "counts": self.counts.to_dict() if self.counts is not None else None,
               "people": None}
        if people and self.people is not None:
            doc["people"] = {"index": [json_value(v) for v in self.people.index],
                             "columns": {str(c): [json_value(v) for v in self.people[c].astype(object)]
                                         for c in self.people.columns}}
        return doc

    def to_json(self, indent=None, *, people: bool = True) -> str:
        """Versioned JSON (``format`` ``tcrex-comparison``, ``version`` 1); ``people=False`` leaves people out."""
        return json.dumps(self.to_dict(people=people), indent=indent, allow_nan=False, default=str)

    @classmethod
    def from_json(cls, text) -> "ComparisonResult":
        try:
            doc = json.loads(text) if isinstance(text, (str, bytes)) else text
        except ValueError as exc:
            raise SchemaError(f"not a comparison JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise SchemaError(f"not a comparison JSON (expected format {FORMAT!r})")
        if doc.get("version") != VERSION:
            raise SchemaError(f"comparison JSON version {doc.get('version')!r} is not supported (this tcrex reads "
                              f"version {VERSION})")
        try:
            counts = ComparisonCounts.from_dict(doc["counts"]) if doc.get("counts") else None
            res = cls(target=doc["target"], group_column=doc["group_column"], confidence=doc["confidence"],
                      n_boot=doc["n_boot"], min_group_size=doc["min_group_size"], random_state=doc["random_state"],
                      explainer_b_fit_on=doc["explainer_b_fit_on"], rules_measured_on=doc["rules_measured_on"],
                      distance_available=doc["distance_available"], summary=_unplain(doc["summary"]),
                      rules=_frame(doc["rules"], ["holds_tau_b"]), counts=counts, reference=doc.get("reference"),
                      group_labels=list(doc.get("group_labels") or []))
            if doc.get("groups") is not None:
                res.groups = _frame(doc["groups"])
                res.gaps = pd.DataFrame(doc["gaps"], columns=GAP_COLUMNS).astype(
                    {k: v for k, v in GAP_TYPES.items() if k not in ("value", "reference_value", "difference",
                                                                      "ci_low", "ci_high")})
                for col in ("value", "reference_value", "difference", "ci_low", "ci_high"):
                    res.gaps[col] = pd.to_numeric(res.gaps[col], errors="coerce").astype(float)
                res.intervals = _frame(doc["intervals"])
            if doc.get("people") is not None:
                res.people = _people_from(doc["people"], res.group_labels)
        except (KeyError, TypeError, ValueError) as exc:
            raise SchemaError(f"comparison JSON is incomplete or damaged ({type(exc).__name__}: {exc})") from None
        return res


def _frame(records, boolean=()) -> pd.DataFrame:
    frame = pd.DataFrame(records)
    for c in frame.columns:
        if c in boolean:
            frame[c] = pd.array(frame[c].tolist(), dtype="boolean")
        elif frame[c].dtype == object and frame[c].map(lambda v: v is None or isinstance(v, float)).all():
            frame[c] = frame[c].astype(float)
    return frame


def _people_from(d: dict, group_labels: list) -> pd.DataFrame:
    cols = d["columns"]
    frame = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in cols.items()})
    frame.index = pd.Index(d["index"])
    for c, dtype in PEOPLE_COLUMNS.items():
        if c not in frame:
            continue
        if dtype is float:
            frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(float)
        elif dtype is bool:
            frame[c] = frame[c].astype(bool)
        elif dtype is not object:
            frame[c] = frame[c].astype(dtype)
    if "group" in frame:
        frame["group"] = pd.Categorical(frame["group"].astype(object), categories=list(group_labels))
    return frame


def _plain(d):
    if isinstance(d, dict):
        return {str(k): _plain(v) for k, v in d.items()}
    return json_value(d)


def _unplain(d):
    if isinstance(d, dict):
        return {k: _unplain(v) for k, v in d.items()}
    return np.nan if d is None else d


# ---------------------------------------------------------------------------------------------------- findings
#: The sentence of a clear gap, per metric (the audit's wording: a template and its words for higher / lower).
_GAP_SENTENCES = {
    "lost_share": ("Individuals with {g} who need recourse under model A lose verified recourse under model B {word} "
                   "often than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "gained_share": ("Individuals with {g} who need recourse under model A gain verified recourse under model B "
                     "{word} often than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "invalidation_rate": ("Model A's verified advice to individuals with {g} is invalidated by model B {word} often "
                          "than for {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "verified_share_a": ("Individuals with {g} who need recourse have verified recourse under model A {word} often "
                         "than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "verified_share_b": ("Individuals with {g} who need recourse have verified recourse under model B {word} often "
                         "than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
}


def _pts(v, unit=True) -> str:
    text = f"{v * 100:+.1f}"
    if float(text) == 0:
        text = text[1:]
    return text + (" points" if unit else "")


def _gap_sentence(res: ComparisonResult, row) -> str:
    d = row.difference
    more = d > 0
    lo, hi = (row.ci_low, row.ci_high) if more else (-row.ci_high, -row.ci_low)
    ci = f"({confidence_text(res.confidence)} CI {lo * 100:.1f} to {hi * 100:.1f})"
    template, words = _GAP_SENTENCES[row.metric]
    return template.format(g=res.display(row.group), r=res.reference_display, word=words[0 if more else 1],
                           direction="higher" if more else "lower", amount=f"{abs(d) * 100:.1f} percentage points",
                           ci=ci, vals=f"{row.value:.1%} against {row.reference_value:.1%}")


def _findings(res: ComparisonResult) -> list[str]:
    s = res.summary
    out = [f"Comparison of model A and model B on {pluralise(s['n'], 'individual')} (target: {res.target}): "
           f"{res.headline()}"]
    inv = s["invalidation_rate"]
    if inv == inv:
        out.append(f"Model B does not confirm {s['n_invalidated']:,} of model A's {s['n_verified_a']:,} verified "
                   f"points: an invalidation rate of {inv:.1%}.")
    nn, nl = s["changes"][NEWLY_NEEDED], s["changes"][NO_LONGER_NEEDED]
    if nn or nl:
        out.append(f"{pluralise(nn, 'individual')} with the favourable outcome under A need recourse under B; "
                   f"{nl:,} who needed it under A no longer do.")
    out.append(f"Explainer B was fitted on {res.explainer_b_fit_on}; A's rules are re-checked on "
               f"{res.rules_measured_on}.")
    broken = res.broken_rules()
    if len(broken):
        below = broken[broken["holds_tau_b"].fillna(True) == False]  # noqa: E712
        if len(below):
            out.append(f"{pluralise(len(below), 'rule')} of A no longer reach{'es' if len(below) == 1 else ''} "
                       f"accuracy tau under B: " + ", ".join(
                           f"{r.rule_id} ({r.accuracy_b:.0%})" for r in below.head(10).itertuples()) + ".")
    if res.groups is None:
        return out
    conf = confidence_text(res.confidence)
    table, gaps = res.groups, res.gaps
    largest = (not res.reference_is_rest and len(res.group_labels) > 1
               and int(table.set_index("group").loc[res.reference, "n"]) == int(table["n"].max()))
    out.append(f"{len(res.group_labels)} groups of {res.group_column}; each group is compared with "
               f"{res.reference_display}{' (the largest group)' if largest else ''}.")
    if len(res.group_labels) < 2:
        out.append("There is only one group, so nothing to compare.")
    for row in gaps[gaps["significant"]].itertuples():
        out.append(_gap_sentence(res, row))
    for g in res.group_labels:
        part = gaps[(gaps["group"] == g) & ~gaps["significant"] & ~gaps["small_group"]
                    & np.isfinite(gaps["ci_low"]) & np.isfinite(gaps["difference"])]
        same = (part["difference"] == 0) & (part["ci_low"] == 0) & (part["ci_high"] == 0)
        unclear = [f"{COMPARE_METRICS[r.metric][0]} ({_pts(r.difference)}, {conf} CI {_pts(r.ci_low, False)} to "
                   f"{_pts(r.ci_high, False)})" for r in part[~same].itertuples()]
        if unclear:
            out.append(f"No clear difference between {res.display(g)} and {res.reference_display} in "
                       f"{join_words(unclear)}: each {conf} confidence interval covers zero.")
        equal = [f"{COMPARE_METRICS[r.metric][0]} ({r.value:.1%})" for r in part[same].itertuples()]
        if equal:
            out.append(f"Exactly the same {join_words(equal, 'and')} for {res.display(g)} as for "
                       f"{res.reference_display}.")
    for row in table.itertuples():
        if row.n_need_a < res.min_group_size:
            out.append(f"Small group: only {pluralise(int(row.n_need_a), 'individual')} with {res.display(row.group)} "
                       f"need{'s' if row.n_need_a == 1 else ''} recourse under model A (fewer than "
                       f"{res.min_group_size}), so its comparisons are too uncertain to draw conclusions.")
    return out
