"""Per person, what each model's explainer says and whether A's verified advice holds under B; per rule of A, its
rows and points re-checked under B; the count cells of both."""
from __future__ import annotations


import numpy as np
import pandas as pd

from .. import conform_dtypes
from ..vocabulary import is_verified, needs_recourse, recourse_outcome
from ._counts import _canonical
from ._models import _check_model, _outputs
from ._vocabulary import GAINED, KEPT, LOST, NEWLY_NEEDED, NOT_NEEDED, NO_LONGER_NEEDED, STILL_NONE, _CELL_KEYS, _CELL_SUMS, _RULE_KEYS, _RULE_SUMS


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
