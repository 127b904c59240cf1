"""The mergeable counts of a comparison (:class:`ComparisonCounts`): partitions' counts add up to the counts of all
rows at once."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..population import (group_order, json_records, json_value)
from ._vocabulary import _CELL_KEYS, _CELL_SUMS, _RULE_KEYS, _RULE_SUMS, _WHOLE_ROWS


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


def _frame(records, boolean=()) -> pd.DataFrame:
    frame = pd.DataFrame(records)
    for c in frame.columns:
        if c in boolean:
            frame[c] = pd.array(frame[c].tolist(), dtype="boolean")
        elif frame[c].dtype == object and frame[c].map(lambda v: v is None or isinstance(v, float)).all():
            frame[c] = frame[c].astype(float)
    return frame


def _order(counts: ComparisonCounts) -> list:
    if counts.group_column is None:
        return [""]
    return group_order(counts.group_values, counts.group_categories, counts.has_missing)
