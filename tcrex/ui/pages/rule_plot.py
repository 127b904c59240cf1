"""The Rule map page's widgets: the two axes and the individual to slice through, and the rule in focus."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from tcrex.vocabulary import OK
from tcrex.text import pluralise

from ..state import session
from ..widgets.components import current_individual, used_feature_counts, used_features
from ..state.active import FitResult, DataAndModel


#: Most points a scatter sends to the browser.
MAX_POINTS = 5000


def plane_controls(ws: DataAndModel, result: FitResult, target: int, key: str) -> tuple[str, str, Any]:
    """Two features (default: the two most used by the rules) and the individual to slice through."""
    feats = ws.features
    used = [f for f in used_features(result, target) if f in feats]
    defaults = (used + [f for f in feats if f not in used])[:2]
    if len(feats) < 2:
        st.warning("The 2-D map needs at least two features.")
        st.stop()
    c1, c2, c3 = st.columns([2, 2, 1])
    x = c1.selectbox("Horizontal axis", feats, index=feats.index(defaults[0]), key=f"{key}_x",
                     format_func=ws.feature_name)
    y_opts = [f for f in feats if f != x]
    y_default = defaults[1] if defaults[1] != x else y_opts[0]
    y = c2.selectbox("Vertical axis", y_opts, index=y_opts.index(y_default) if y_default in y_opts else 0,
                     key=f"{key}_y", format_func=ws.feature_name)
    titles = ws.data.titles
    st.caption(used_features_caption(result, target, name=lambda f: ws.feature_name(f) if f in titles else f"`{f}`"))
    current = current_individual(ws, result)
    lo, hi = int(ws.X.index.min()), int(ws.X.index.max())
    row = c3.number_input("Individual (row)", lo, hi, value=int(current), step=1, key=f"{key}_row_{current}",
                          help="The star; metarule regions are drawn through it. Also set on the Individual page.")
    if row != current and row in ws.X.index:
        session.choose_individual(row)
        current = row
    return x, y, current


def focus_controls(ws: DataAndModel, result: FitResult, target: int, key: str) -> tuple[int | None, pd.DataFrame]:
    """A rule of ``target`` and the individuals (test split first) it is recommended to."""
    ex = result.explainer
    sol = ex.targets_[target]
    if sol.n_rules == 0:
        st.info("This target has no valid rule.")
        return None, ws.X.iloc[:0]
    expl = result.explanations
    pool = ws.data.test_index if len(ws.data.test_index) else ws.X.index
    served = expl.loc[pool]
    served = served[(served["target"] == target) & (served["status"].astype(str) == OK)]
    counts = served["rule"].value_counts()
    rules = list(range(sol.n_rules))
    default = int(counts.index[0]) if len(counts) else 0
    c1, c2 = st.columns([3, 1])
    rule = c1.selectbox("Rule", rules, index=rules.index(default), key=f"{key}_rule",
                        format_func=lambda r: f"{ex.rule_id(target, r)}: {ex.conditions_text(sol.rules, r)}  "
                                              f"({pluralise(counts.get(r, 0), 'test individual')})")
    n = c2.number_input("Individuals shown", 1, 200, value=25, step=5, key=f"{key}_n")
    rows = served.index[served["rule"] == rule][: int(n)]
    if len(rows) == 0:
        st.caption("No test individual is recommended this rule; showing the rule alone.")
    return int(rule), ws.X.loc[rows]


def used_features_caption(result: FitResult, target: int, limit: int = 12, name=None) -> str:
    """"The rules use: income (4 rules), age (1 rule)" — a hint for choosing the Rule map's axes (``name``: how a
    feature is named, e.g. by its dictionary title; default its name as code)."""
    counts = used_feature_counts(result, target)
    n_rules = result.explainer.targets_[target].n_rules
    if not counts:
        return "No rule of this target constrains a feature; any two axes show the data."
    said = (lambda f: f"`{f}`") if name is None else name
    shown = [f"{said(f)} ({k} of {n_rules} rule{'s' if n_rules != 1 else ''})" for f, k in list(counts.items())[:limit]]
    more = f" and {len(counts) - limit} more" if len(counts) > limit else ""
    return ("**Features the rules use** (pick two of these as axes to see the rules as rectangles): "
            + ", ".join(shown) + more + ".")

