"""The result of a comparison (:class:`ComparisonResult`) and how it is summarised from counts: per group the
shares and means of both models, their bootstrap gaps, the headline summary, the table of A's rules under B;
its frames, its JSON form and its round trip."""
from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import SchemaError
from ..population import (GAP_COLUMNS, GAP_TYPES, REST_LABEL, bootstrap_rng, gap_row, group_display, is_rest,
                          json_records, json_value, percentile_interval, resample_sums,
                          resolve_reference)
from ..text import pluralise
from ._counts import ComparisonCounts, _frame, _order
from ._findings import _findings
from ._vocabulary import CHANGES, CHANGE_TEXT, COMPARE_METRICS, FORMAT, GAINED, KEPT, LOST, PEOPLE_COLUMNS, VERSION, _CELL_SUMS, _COUNT_COLS


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
