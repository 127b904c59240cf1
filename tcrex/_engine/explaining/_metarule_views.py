"""Structured views of one target's metarules for figures: the metarule tree and exact 2-D slices.

Both work in grid-state space, so they are exact and also available for explainers restored from JSON.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..base._data import Encoded, FeatureSchema
from ..fitting._solution import Solution
from ...text import categorical_condition, numeric_condition


def metarule_tree(sol: Solution, schema: FeatureSchema) -> dict:
    """The metarules as a binary tree of splits (paper Figure 7).

    Rebuilt from the metarule regions themselves (each a product of grid-state sets), choosing at every node the
    split that separates the regions most evenly; leaves are metarules. Internal nodes:
    ``{"feature", "kind", "left_text", "right_text", "threshold" | "left_categories", "left", "right",
    "n_cells"}``; leaves: ``{"metarule", "rule", "sparsity", "n_cells"}``.
    """
    if sol.grid is None:
        return {"empty": True}
    masks = [sol.state_masks(sol.metarules, m) for m in range(len(sol.metarules))]
    return _build(sol, schema, list(range(len(masks))), masks)


def _build(sol, schema, ids, masks) -> dict:
    if len(ids) == 1:
        m = ids[0]
        return {"metarule": m, "rule": int(sol.metarule_rule[m]), "sparsity": int(sol.metarule_sparsity[m]),
                "n_cells": int(sol.metarule_cells[m])}
    best = None
    for i, k in enumerate(sol.grid.dims):
        if k == 1:
            continue
        for left in _candidate_splits(schema.features[i].is_categorical, [masks[m][i] for m in ids], k):
            goes_left = [bool((masks[m][i] & left).any()) for m in ids]
            n_left = sum(goes_left)
            if 0 < n_left < len(ids) and all(not (masks[m][i] & ~left).any() if gl else not (masks[m][i] & left).any()
                                              for m, gl in zip(ids, goes_left)):
                score = min(n_left, len(ids) - n_left)
                if best is None or score > best[0]:
                    best = (score, i, left, goes_left)
    if best is None:  # cannot happen for a partition from a tree; fail loudly rather than draw nonsense
        raise RuntimeError("metarules do not form a tree")
    _, i, left, goes_left = best
    left_ids = [m for m, g in zip(ids, goes_left) if g]
    right_ids = [m for m, g in zip(ids, goes_left) if not g]
    f = schema.features[i]
    node = {"feature": f.name, "kind": f.kind}
    slot = schema.slot[i]
    if f.is_categorical:
        soc = sol.grid.state_of_category[slot]
        left_cat = left[soc]
        node["left_categories"] = [c for c, a in zip(f.categories, left_cat) if a]
        node["left_text"] = categorical_condition(left_cat, f.categories, f.labels)
        node["right_text"] = categorical_condition(~left_cat, f.categories, f.labels)
    else:
        last = int(np.flatnonzero(left)[-1])
        low, high = sol.grid.interval(i, 0, last)
        node["threshold"] = high
        node["left_text"] = numeric_condition(-np.inf, high, f.integer, f.labels, f.special_codes)
        node["right_text"] = numeric_condition(high, np.inf, f.integer, f.labels, f.special_codes)
    node["left"] = _build(sol, schema, left_ids, masks)
    node["right"] = _build(sol, schema, right_ids, masks)
    node["n_cells"] = node["left"]["n_cells"] + node["right"]["n_cells"]
    return node


def _candidate_splits(categorical: bool, region_masks: list, k: int):
    if categorical:  # a region's own state set, as the left group
        seen = set()
        for mask in region_masks:
            key = mask.tobytes()
            if key not in seen and 0 < mask.sum() < k:
                seen.add(key)
                yield mask
    else:  # numeric states: left is states 0..s
        for s in range(k - 1):
            left = np.zeros(k, dtype=bool)
            left[: s + 1] = True
            yield left


def metarule_slice(sol: Solution, schema: FeatureSchema, x: int, y: int, individual: Encoded) -> pd.DataFrame:
    """The metarules on the plane of features x and y through one individual (other features fixed): one row per
    pair of grid states, with its real extent, metarule, rule and changes. Exact (no sampling)."""
    if sol.grid is None:
        return pd.DataFrame(columns=["x_low", "x_high", "x_categories", "y_low", "y_high", "y_categories",
                                     "metarule", "rule", "changes"])
    base = sol.grid.states(individual)[0]
    kx, ky = sol.grid.dims[x], sol.grid.dims[y]
    sx, sy = np.meshgrid(np.arange(kx), np.arange(ky), indexing="ij")
    states = np.tile(base, (kx * ky, 1))
    states[:, x], states[:, y] = sx.ravel(), sy.ravel()
    cell = sol.grid.flat(states)
    rows = {"metarule": sol.cell_metarule[cell], "rule": sol.cell_rule[cell], "changes": sol.cell_changes[cell]}
    for name, i, s in (("x", x, sx.ravel()), ("y", y, sy.ravel())):
        f, slot = schema.features[i], schema.slot[i]
        if f.is_categorical:
            soc = sol.grid.state_of_category[slot]
            rows[f"{name}_categories"] = [[c for c, st in zip(f.categories, soc) if st == v] for v in s]
            rows[f"{name}_low"] = rows[f"{name}_high"] = np.full(len(s), np.nan)
        else:
            b = np.concatenate([[-np.inf], sol.grid.bounds[slot], [np.inf]])
            rows[f"{name}_low"], rows[f"{name}_high"] = b[s], b[s + 1]
            rows[f"{name}_categories"] = [None] * len(s)
    return pd.DataFrame(rows)[["x_low", "x_high", "x_categories", "y_low", "y_high", "y_categories",
                               "metarule", "rule", "changes"]]
