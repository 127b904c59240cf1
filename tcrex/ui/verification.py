"""Recourse checked on the model: every row's recommended point verified once per fit, summarised for any
population the pages show (the share of people needing recourse whose recourse works, per-rule effectiveness).

The engine does the work (:meth:`tcrex.TCREx.counterfactuals` with ``verify=True`` and
:meth:`tcrex.TCREx.effectiveness`); this module only decides which rows to verify, caches the result with the fit
and draws the headline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import TCRExError

from .state import FitResult, Workspace

#: Above this many rows the points of a uniform random sample of rows are verified (the shares are then
#: estimates, and say so); each verified row can cost a few model calls' worth of candidates.
MAX_VERIFY_ROWS = 20_000
_CACHE = "verified"


@dataclass
class VerifiedRows:
    """``counterfactuals(verify=True)`` of the rows checked, and whether they are a sample."""

    frame: pd.DataFrame  # valid, source and the verified point, indexed like ws.X (a subset when sampled)
    sampled: bool
    n_rows: int  # rows of the workspace


def model_available(ws: Workspace) -> bool:
    """Whether there is a model to check points on (not for a column of precomputed outputs)."""
    return ws.model.predict is not None and ws.model.output_column is None


def checker(ws: Workspace):
    """The model to check recommended points on, or None (outputs from a column: nothing to check with)."""
    return ws.model.predict if model_available(ws) else None


def verified_rows(ws: Workspace, result: FitResult) -> VerifiedRows | None:
    """Every row's point checked on the model (computed once per fit); None without a model or on failure."""
    if not model_available(ws):
        return None
    if _CACHE not in result.cache:
        index = ws.X.index
        sampled = len(index) > MAX_VERIFY_ROWS
        if sampled:
            pos = np.sort(np.random.default_rng(0).choice(len(index), MAX_VERIFY_ROWS, replace=False))
        else:
            pos = np.arange(len(index))
        X = ws.X.iloc[pos]
        try:
            with st.spinner("Checking the recommended points on the model ..."):
                frame = result.explainer.counterfactuals(X, y_pred=ws.y_pred[pos], model=ws.model.predict,
                                                         verify=True, class_names=ws.class_names)
        except TCRExError as exc:
            st.warning(f"The recommended points could not be checked on the model: {exc}", icon=":material/warning:")
            result.cache[_CACHE] = None
        else:
            result.cache[_CACHE] = VerifiedRows(frame=frame, sampled=sampled, n_rows=len(index))
    return result.cache[_CACHE]


def effectiveness(ws: Workspace, result: FitResult, index: pd.Index | None = None):
    """The engine's :class:`Effectiveness` of the rows in ``index`` (default: every row) that were verified."""
    rows = verified_rows(ws, result)
    if rows is None:
        return None
    idx = rows.frame.index if index is None else rows.frame.index.intersection(index, sort=False)
    return result.explainer.effectiveness(explanations=result.explanations.loc[idx],
                                          counterfactuals=rows.frame.loc[idx])


def headline(ws: Workspace, result: FitResult, index: pd.Index | None = None, *, column=None) -> None:
    """A metric: "verified by a point that follows the advice N %", with the fall-backs counted apart, or why it
    cannot be said."""
    column = column if column is not None else st
    if not model_available(ws):
        column.metric("Verified on the model", "–",
                      help="The outputs come from a column of the data, so there is no model to check the "
                           "recommended points on.")
        return
    eff = effectiveness(ws, result, index)
    if eff is None:
        column.metric("Verified on the model", "–")
        return
    rows = verified_rows(ws, result)
    share = eff.verified_share
    sample = (f" Estimated on a uniform sample of {len(rows.frame):,} of {rows.n_rows:,} rows."
              if rows.sampled else "")
    column.metric("Verified by a point that follows the advice", "–" if share != share else f"{share:.0%}",
                  help=f"{eff.headline()}. {eff.n_verified:,} of the {eff.n_needing:,} individuals who need "
                       "recourse get a point that changes exactly the features their advice names, to the values "
                       "it states, and that the model sends to the favourable outcome: "
                       f"{eff.n_optimal_rule:,} through their optimal rule, {eff.n_next_rule:,} through the next "
                       f"rule, {eff.n_minimal_change:,} by a minimal change beyond the rules. "
                       f"{eff.n_similar:,} have only a similar real case (not counted as verified), "
                       f"{eff.n_none:,} none." + sample)
    column.caption(eff.headline())


def sentence(ws: Workspace, result: FitResult, index: pd.Index | None = None) -> str | None:
    """The headline in words, for captions and reports: "verified by a point that follows the advice N % · a
    similar real case only M % · none K %"."""
    if not model_available(ws):
        return None
    eff = effectiveness(ws, result, index)
    if eff is None or not eff.n_needing:
        return None
    return f"Of the {eff.n_needing:,} who need recourse (checked on the model): {eff.headline()}."


def rules_with_effectiveness(ws: Workspace, result: FitResult, rules: pd.DataFrame) -> pd.DataFrame:
    """``rules`` (rows of ``rules_frame`` with target and rule) with each rule's effectiveness on every row it
    serves: ``works at nearest point`` and ``works (verified)`` (shares; empty where it serves no one)."""
    eff = effectiveness(ws, result)
    if eff is None:
        return rules
    table = eff.rules.rename(columns={"n_served": "serves", "boundary_effectiveness": "works at nearest point",
                                      "effectiveness": "works (verified)"})
    return rules.merge(table, on=["target", "rule"], how="left")
