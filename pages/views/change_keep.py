"""Change & keep: for a population, how often each feature must change or be kept, and changes per individual."""

import streamlit as st

from tcrex.figures import change_keep_bars, changes_histogram

from tcrex.vocabulary import ALREADY_IN_TARGET, NO_ACTIONABLE_RULE, NO_RULE
from tcrex.ui.state import active, verification
from tcrex.ui.widgets import page
from tcrex.ui.widgets import components as ui
from tcrex.ui.pages import change_keep

st.title("Change & keep")
ws, result = page.require_result()

pop = ui.population(ws, key="ck", default="test" if len(ws.data.test_index) else "all")
explanations = result.explanations.loc[pop.index]
actions = result.actions(ws).loc[pop.index]

m = change_keep.population_metrics(explanations)
blocked = m[NO_ACTIONABLE_RULE] or active.constraints_summary(result) != "none"
cols = st.columns(7 if blocked else 6)
cols[0].metric("Individuals", f"{m['rows']:,}", help=pop.label)
cols[1].metric("Need recourse", f"{m['need_recourse']:,}",
               help=f"Not in the favourable outcome; {m['need_change']:,} of them have a change to make")
cols[2].metric("Already favourable", f"{m[ALREADY_IN_TARGET]:,}")
cols[3].metric("No valid rule", f"{m[NO_RULE]:,}")
cols[4].metric("Mean changes", "–" if m["mean_changes"] != m["mean_changes"] else f"{m['mean_changes']:.2f}")
verification.headline(ws, result, pop.index, column=cols[5])
if blocked:
    cols[6].metric("No actionable rule", f"{m[NO_ACTIONABLE_RULE]:,}",
                   help="Every rule would need a change the constraints forbid")

if m["rows"]:
    left, right = st.columns(2)
    with left:
        ui.chart(change_keep_bars, actions, title=f"Change or keep, per feature — {pop.label}", height=460)
    with right:
        ui.chart(changes_histogram, explanations, title=f"Changes per individual — {pop.label}", height=460)

st.subheader("Recourse by subgroup")
st.caption("For auditors: does one group need more changes than another to reach the target?")
group_by = change_keep.group_feature(ws, key="ck_group")
if group_by is not None and m["rows"]:
    table = change_keep.subgroup_table(explanations, actions, ui.group_values(ws, group_by))
    st.dataframe(table, hide_index=True, width="stretch", column_config=change_keep.SUBGROUP_COLUMNS)
