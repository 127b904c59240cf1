"""The Change & keep page's helpers: the summaries of explanations over a population (pure pandas), the feature to
group by and the subgroup table's columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from tcrex.vocabulary import ALREADY_IN_TARGET, NO_ACTIONABLE_RULE, NO_RULE, OK, has_recourse, needs_recourse

from ..widgets.components import is_groupable
from ..state.active import DataAndModel


def group_feature(ws: DataAndModel, key: str) -> str | None:
    """The feature to group the population by (categorical or few-valued), or None when there is none."""
    groupable = [c for c in ws.features if is_groupable(ws, c)]
    if not groupable:
        st.caption("No categorical (or few-valued) feature to group by.")
        return None
    return st.selectbox("Group by", groupable, key=key, format_func=ws.feature_name)


SUBGROUP_COLUMNS = {
    "share needing a change": st.column_config.ProgressColumn("share needing a change", format="percent",
                                                              min_value=0.0, max_value=1.0),
    "mean changes (if any)": st.column_config.NumberColumn("mean changes (if any)", format="%.2f"),
}


# ============================================================================================ summaries

def population_metrics(explanations: pd.DataFrame) -> dict:
    """Counts of a population's statuses and its mean number of changes (rows that need a change)."""
    status = explanations["status"].astype(str)
    need = has_recourse(status)
    changes = pd.to_numeric(explanations["changes"], errors="coerce")
    return {
        "rows": int(len(explanations)),
        "need_recourse": int(needs_recourse(status).sum()),
        "need_change": int((status == OK).sum()),
        ALREADY_IN_TARGET: int((status == ALREADY_IN_TARGET).sum()),
        NO_RULE: int((status == NO_RULE).sum()),
        NO_ACTIONABLE_RULE: int((status == NO_ACTIONABLE_RULE).sum()),
        "mean_changes": float(changes[need].mean()) if need.any() else float("nan"),
    }


def subgroup_table(explanations: pd.DataFrame, actions: pd.DataFrame, groups: pd.Series,
                   max_groups: int = 20) -> pd.DataFrame:
    """Recourse per subgroup: how many rows, how many need a change, the mean and worst number of changes, how
    many have no valid rule or no actionable rule (under constraints), and the feature most often to change."""
    groups = groups.loc[explanations.index]
    status = explanations["status"].astype(str)
    changes = pd.to_numeric(explanations["changes"], errors="coerce").fillna(0)
    rows = []
    top = groups.value_counts().index[:max_groups]
    for g in top:
        m = (groups == g).to_numpy()
        st_g = status[m]
        need = st_g == OK
        acts = actions.loc[explanations.index[m]]
        change_counts = {c: int((acts[c].astype(str) == "change").sum()) for c in acts.columns}
        most = max(change_counts, key=change_counts.get) if change_counts and max(change_counts.values()) else ""
        rows.append({
            "group": str(g),
            "rows": int(m.sum()),
            "need a change": int(need.sum()),
            "share needing a change": float(need.mean()) if m.any() else np.nan,
            "mean changes (if any)": float(changes[m][need.to_numpy()].mean()) if need.any() else np.nan,
            "most changes": int(changes[m].max()) if m.any() else 0,
            "no valid rule": int((st_g == NO_RULE).sum()),
            "no actionable rule": int((st_g == NO_ACTIONABLE_RULE).sum()),
            "most often changed": most,
        })
    return pd.DataFrame(rows)
