"""Per group, what a run found: every figure an aggregate of the run's per-person frame, computed by its owner.

* the verified-recourse share, the mean number of changes and the mean distance of the verified advice, each with
  its bootstrap interval, and each group's gap from the reference group: :func:`tcrex.audit.audit` of the
  frame (``counterfactuals=frame``: the audit aggregates the very frame the run wrote, it does not search again),
  regrouped per grouping (:meth:`tcrex.audit.AuditResult.regroup`);
* the invalidation rate of the advice held (and its interval): :func:`tcrex.compare.compare_from_counts` of the
  comparison's counts of the previous version's frame against this one (the previous advice is model A's, this
  version's the model B's);
* the change of a group's verified-recourse share since the previous version, with a **paired** percentile
  bootstrap (the same people resampled under both versions) from :mod:`tcrex.population`'s count resampling.

Groupings are the audit's: a column, or several intersected (``["sex", "education"]`` gives "sex × education"),
named by the codebook as everywhere ("label (code)").
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..audit import audit
from ..compare import (GAINED, KEPT, LOST, NEWLY_NEEDED, NO_LONGER_NEEDED, NOT_NEEDED, STILL_NONE, ComparisonCounts,
                       compare_from_counts)
from ..population import (COLUMN_JOIN, bootstrap_rng, clear_gaps, group_display, named_groups,
                          percentile_interval, resample_sums)
from ._vocabulary import (EVERYONE, GAINED as M_GAINED, INVALIDATED, KEPT as M_KEPT, NO_LONGER_NEEDING,
                          PERSON_COLUMNS, STATUSES, STILL_NONE as M_NONE)

#: The columns of a run's per-group table (``RunResult.groups``), in order.
GROUP_COLUMNS = [
    "feature", "value", "group", "n_people", "n_needing", "n_verified", "verified_share", "ci_low", "ci_high",
    "mean_changes", "mean_changes_ci_low", "mean_changes_ci_high", "mean_distance", "mean_distance_ci_low",
    "mean_distance_ci_high", "small_group", "is_reference", "gap", "gap_ci_low", "gap_ci_high", "gap_clear",
    "previous_share", "share_change", "change_ci_low", "change_ci_high", "n_previous_needing",
    "n_previous_verified", "n_advice_rechecked", "n_advice_rejected", "invalidation_rate", "invalidation_ci_low",
    "invalidation_ci_high", *[f"n_{s}" for s in STATUSES]]


def grouping_name(spec) -> str:
    """How the audit names a grouping: the column, or the columns intersected ("sex × education")."""
    return COLUMN_JOIN.join(map(str, spec)) if isinstance(spec, (list, tuple)) else str(spec)


def grouping_values(ex, X: pd.DataFrame, spec):
    """The grouping ``spec`` as values aligned with X, each column named by the codebook (the audit's rule)."""
    def one(col):
        g = named_groups(ex, X, col)
        return X[col].rename(col) if isinstance(g, str) else g.rename(col)
    if isinstance(spec, (list, tuple)):
        if len(spec) == 1:
            return one(spec[0])
        return pd.DataFrame({c: one(c) for c in spec}, index=X.index)
    return one(spec)


def figures(ex, X: pd.DataFrame, frame: pd.DataFrame, y, spec, *, reference_rows, groupings, references: dict,
            previous: pd.DataFrame | None, n_boot: int, confidence: float, random_state, min_group_size: int,
            class_names=None) -> tuple[pd.DataFrame, dict, dict]:
    """``(table, references, audits)``: one row per group (everyone first, then each grouping's groups in the
    audit's display order), the reference group used per grouping, and the audit result per grouping name
    (``""`` for everyone). ``previous``: the previous version's frame (None at the baseline)."""
    cf = frame[[c for c in frame.columns if c not in PERSON_COLUMNS]]
    everyone = pd.Series(np.full(len(X), EVERYONE, dtype=object), index=X.index, name=EVERYONE)
    base = audit(ex, X, everyone, y_pred=y, target=spec, counterfactuals=cf, reference_rows=reference_rows,
                 n_boot=n_boot, confidence=confidence, random_state=random_state, min_group_size=min_group_size,
                 class_names=class_names)
    audits, used, parts = {"": base}, {}, []
    parts.append(_rows(base, None, frame, previous, n_boot, confidence, random_state, min_group_size, ex, spec))
    for g in groupings:
        name = grouping_name(g)
        values = grouping_values(ex, X, g)
        res = base.regroup(values, reference=references.get(name))
        audits[name], used[name] = res, res.reference
        parts.append(_rows(res, name, frame, previous, n_boot, confidence, random_state, min_group_size, ex, spec))
    table = pd.concat(parts, ignore_index=True)[GROUP_COLUMNS]
    return table, used, audits


def _rows(res, name, frame, previous, n_boot, confidence, random_state, min_group_size, ex, spec) -> pd.DataFrame:
    """The groups of one grouping (``name`` None: everyone) from its audit, plus the comparison's invalidation
    rate and the paired change of the share."""
    t = res.table().set_index("group")
    iv = {(g, m): np.array([v, lo, hi], dtype=np.float64) for g, m, v, lo, hi in
          res.metric_intervals()[["group", "metric", "value", "ci_low", "ci_high"]].itertuples(index=False)}
    gaps = res.gaps()
    share_gaps = gaps[gaps["metric"] == "recourse_share"].reset_index(drop=True)
    clear = pd.Series(clear_gaps(share_gaps), index=share_gaps["group"].to_numpy()) if len(share_gaps) else \
        pd.Series(dtype=bool)
    share_gaps = share_gaps.set_index("group")
    labels = res.individuals["group"].astype(object).to_numpy()
    status = frame["status"].astype(object).to_numpy()
    by_status = pd.crosstab(labels, status).reindex(columns=list(STATUSES), fill_value=0)
    compared = _compared(frame, previous, labels, res, n_boot, confidence, random_state, min_group_size, ex, spec) \
        if previous is not None else None
    change = _share_change(frame, previous, labels, list(res.groups), n_boot, confidence, random_state) \
        if previous is not None else {}
    rows = []
    for g in res.groups:
        r = t.loc[g]

        def ci(metric):
            return iv.get((g, metric), np.full(3, np.nan))
        share, changes, dist = ci("recourse_share"), ci("mean_changes"), ci("mean_distance")
        gap = share_gaps.loc[g] if g in share_gaps.index else None
        cmp_row = compared.get(g) if compared is not None else None
        ch = change.get(g)
        rows.append({
            "feature": name, "value": g, "group": "everyone" if name is None else group_display(name, g),
            "n_people": int(r["n_total"]), "n_needing": int(r["n"]), "n_verified": int(r["n_recourse"]),
            "verified_share": share[0], "ci_low": share[1], "ci_high": share[2],
            "mean_changes": changes[0], "mean_changes_ci_low": changes[1], "mean_changes_ci_high": changes[2],
            "mean_distance": dist[0], "mean_distance_ci_low": dist[1], "mean_distance_ci_high": dist[2],
            "small_group": bool(r["small_group"]), "is_reference": bool(r["is_reference"]) and name is not None,
            "gap": np.nan if gap is None else float(gap["difference"]),
            "gap_ci_low": np.nan if gap is None else float(gap["ci_low"]),
            "gap_ci_high": np.nan if gap is None else float(gap["ci_high"]),
            "gap_clear": bool(clear.get(g, False)),
            "previous_share": np.nan if ch is None else ch[0], "share_change": np.nan if ch is None else ch[1],
            "change_ci_low": np.nan if ch is None else ch[2], "change_ci_high": np.nan if ch is None else ch[3],
            "n_previous_needing": 0 if ch is None else int(ch[4]),
            "n_previous_verified": 0 if cmp_row is None else int(cmp_row["n_verified_a"]),
            "n_advice_rechecked": 0 if cmp_row is None else int(cmp_row["n_verified_a"]),
            "n_advice_rejected": 0 if cmp_row is None else int(cmp_row["n_invalidated"]),
            "invalidation_rate": np.nan if cmp_row is None else float(cmp_row["invalidation_rate"]),
            "invalidation_ci_low": np.nan if cmp_row is None else float(cmp_row["ci_low"]),
            "invalidation_ci_high": np.nan if cmp_row is None else float(cmp_row["ci_high"]),
            **{f"n_{s}": int(by_status.loc[g, s]) if g in by_status.index else 0 for s in STATUSES}})
    return pd.DataFrame(rows)


def _previous_needs(frame) -> np.ndarray:
    """Who needed recourse under the previous version, read off this run's statuses (their one owner)."""
    status = frame["status"].astype(object).to_numpy()
    return np.isin(status, [M_KEPT, INVALIDATED, M_GAINED, NO_LONGER_NEEDING, M_NONE])


def _compared(frame, previous, labels, res, n_boot, confidence, random_state, min_group_size, ex, spec) -> dict:
    """Per group: the comparison's counts and invalidation rate (with its interval) of the previous version's
    advice (model A's) under this version (model B's), from :func:`tcrex.compare.compare_from_counts`."""
    need_a = _previous_needs(frame)
    need_b = frame["needs_recourse"].to_numpy(dtype=bool)
    ver_a = frame["previous_verified"].to_numpy(dtype=bool)
    ver_b = frame["verified"].to_numpy(dtype=bool)
    holds = frame["advice_holds"]
    holds = np.where(holds.isna().to_numpy(), -1, holds.fillna(False).to_numpy(dtype=bool).astype(np.int64))
    change = np.select(
        [need_a & need_b & ver_a & ver_b, need_a & need_b & ver_a & ~ver_b, need_a & need_b & ~ver_a & ver_b,
         need_a & need_b, ~need_a & need_b, need_a & ~need_b],
        [KEPT, LOST, GAINED, STILL_NONE, NEWLY_NEEDED, NO_LONGER_NEEDED], default=NOT_NEEDED)
    prev_changes = previous["n_changes"].to_numpy(dtype=np.float64)
    cells = pd.DataFrame({
        "group": np.asarray(labels, dtype=object), "change": change, "needs_a": need_a, "needs_b": need_b,
        "verified_a": ver_a, "verified_b": ver_b, "holds": holds, "n": np.ones(len(frame), dtype=np.int64),
        "sum_changes_a": np.where(ver_a, prev_changes, 0.0),
        "sum_changes_b": np.where(ver_b, frame["n_changes"].to_numpy(dtype=np.float64), 0.0),
        "sum_cost_a": 0.0, "sum_cost_b": 0.0})
    keys = ["group", "change", "needs_a", "needs_b", "verified_a", "verified_b", "holds"]
    cells = cells.groupby(keys, sort=True).sum().reset_index()
    cells["n"] = cells["n"].astype(np.int64)
    counts = ComparisonCounts(
        group_column=str(res.group_column), features=list(ex.schema_.names), target=str(res.target), target_id=None,
        tau=float(ex.tau), distance_available=False, explainer_b_fit_on="the same rules (the monitor's)",
        rules_measured_on="the monitored people", cells=cells,
        rules=pd.DataFrame(columns=["target", "rule", "n_rows", "n_rows_in_target_b", "n_points", "n_points_hold"]),
        group_values=list(res.groups), group_categories=None, has_missing=False)
    cmp = compare_from_counts(counts, n_boot=n_boot, confidence=confidence, random_state=random_state,
                              reference=res.reference if res.reference in res.groups else None,
                              min_group_size=min_group_size)
    table = cmp.groups.set_index("group")
    iv = cmp.intervals[cmp.intervals["metric"] == "invalidation_rate"].set_index("group")
    out = {}
    for g in res.groups:
        if g not in table.index:
            continue
        row = table.loc[g].to_dict()
        row["ci_low"] = float(iv.loc[g, "ci_low"]) if g in iv.index else np.nan
        row["ci_high"] = float(iv.loc[g, "ci_high"]) if g in iv.index else np.nan
        out[g] = row
    return out


def _share_change(frame, previous, labels, order, n_boot, confidence, random_state) -> dict:
    """Per group ``(before, change, ci_low, ci_high, n_before)``: the verified-recourse share under the previous
    version, the change to this one, and its paired percentile bootstrap interval (the group's people resampled
    with replacement, each resample measured under both versions: :func:`tcrex.population.resample_sums`)."""
    need_a = _previous_needs(frame).astype(np.float64)
    ver_a = frame["previous_verified"].to_numpy(dtype=np.float64)
    need_b = frame["needs_recourse"].to_numpy(dtype=np.float64)
    ver_b = frame["verified"].to_numpy(dtype=np.float64)
    rows = np.column_stack([need_a, ver_a, need_b, ver_b])
    codes = rows @ np.array([1.0, 2.0, 4.0, 8.0])
    rng = bootstrap_rng(random_state)
    alpha = (1 - confidence) / 2
    labels = np.asarray(labels, dtype=object)
    out = {}
    for g in order:  # groups in display order, from one seeded generator (the audit's way)
        sel = labels == g
        kinds, weights = np.unique(codes[sel], return_counts=True)
        matrix = np.array([[(k // b) % 2 for b in (1, 2, 4, 8)] for k in kinds.astype(np.int64)], dtype=np.float64) \
            if len(kinds) else np.zeros((0, 4))
        sums = weights @ matrix if len(kinds) else np.zeros(4)
        before = sums[1] / sums[0] if sums[0] else np.nan
        after = sums[3] / sums[2] if sums[2] else np.nan
        boot = resample_sums(rng, weights.astype(np.float64), matrix, n_boot) if len(kinds) else np.zeros((n_boot, 4))
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = np.where((boot[:, 0] > 0) & (boot[:, 2] > 0), boot[:, 3] / np.maximum(boot[:, 2], 1)
                            - boot[:, 1] / np.maximum(boot[:, 0], 1), np.nan)
        lo, hi = percentile_interval(diff, alpha)
        out[g] = (before, after - before if before == before and after == after else np.nan, lo, hi, int(sums[0]))
    return out

