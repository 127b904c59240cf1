"""The Change & keep page's widgets: the feature to group by and the subgroup table's columns."""

from __future__ import annotations

import streamlit as st

from .components import is_groupable
from .state import Workspace


def group_feature(ws: Workspace, key: str) -> str | None:
    """The feature to group the population by (categorical or few-valued), or None when there is none."""
    groupable = [c for c in ws.features if is_groupable(ws, c)]
    if not groupable:
        st.caption("No categorical (or few-valued) feature to group by.")
        return None
    return st.selectbox("Group by", groupable, key=key)


SUBGROUP_COLUMNS = {
    "share needing a change": st.column_config.ProgressColumn("share needing a change", format="percent",
                                                              min_value=0.0, max_value=1.0),
    "mean changes (if any)": st.column_config.NumberColumn("mean changes (if any)", format="%.2f"),
}

