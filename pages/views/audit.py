"""Subgroup audit: does the recourse T-CREx offers differ between groups of people?"""

import streamlit as st

from tcrex.figures import (changes_distribution_by_group, feature_change_heatmap, gap_forest_plot,
                                  group_comparison_bars)
from tcrex.audit import basis_sentence
from tcrex.ui.state import verification
from tcrex.ui.widgets import page
from tcrex.ui.pages import audit

st.title("Subgroup audit")
st.caption("Compares, group by group, whether the individuals who do not get the favourable outcome have recourse "
           "and how costly it is (changes, distance, rule quality), each against a reference group, with confidence "
           "intervals.")
ws, result = page.require_result()
recourse = verification.sentence(ws, result)
if recourse:
    st.markdown(f"**Recourse checked on the model, everyone:** {recourse}")

settings = audit.controls(ws, result, key="audit")
run = audit.run(ws, result, settings) if settings is not None else None
if run is None:
    st.stop()
audit.reference_control(ws, run, key="audit")
res = run.result

st.subheader("Findings")
audit.findings(run, settings.practical)
audit.hints(ws, result, run, key="audit")

st.subheader("Groups compared")
metric = audit.metric_choice(key="audit_metric", res=res)
left, right = st.columns([3, 2])
with left:
    audit.audit_chart(group_comparison_bars, res, metric, height=420, key="audit_bars")
with right:
    audit.audit_chart(changes_distribution_by_group, res, height=420, key="audit_changes")
st.caption(basis_sentence(res))
st.dataframe(audit.table(run), hide_index=True, width="stretch", column_config=audit.TABLE_CONFIG)

st.subheader("Gaps from the reference group")
audit.audit_chart(gap_forest_plot, res, practical=settings.practical, key="audit_forest")

st.subheader("What each group is asked to change")
audit.audit_chart(feature_change_heatmap, res, key="audit_heatmap")
with st.expander("Most frequent rules per group"):
    st.dataframe(audit.top_rules_table(res, result, ws), hide_index=True, width="stretch")
st.caption("The last audit is included in the HTML report on the Export page.")
