"""Compare models: who keeps, loses or gains recourse when the active model is retrained or replaced?"""

import streamlit as st

from tcrex.figures import comparison_gap_plot, recourse_flow, rule_accuracy_shift
from tcrex.ui.state import verification
from tcrex.ui.widgets import downloads, page
from tcrex.ui.widgets import components as ui
from tcrex.ui.pages import audit, compare

st.title("Compare models")
st.caption("Models are retrained and replaced. Compares the recourse the active model (A) gives with what a new "
           "model (B) would give: who loses or gains verified recourse, whether the advice already given still "
           "works under B, whether a group loses more than others, and which rules break.")
ws, result = page.require_result()
if not verification.model_available(ws):
    st.warning("The active model is a column of outputs: there is no model A to check points on. Choose a model on "
               "the Data & model page to compare models.", icon=":material/warning:")
    st.stop()

model_b = compare.model_b_controls(ws, key="compare")
left, right = st.columns([3, 2])
with left:
    column = compare.group_choice(ws, key="compare")
with right:
    target, target_label = audit.target_controls(ws, result, key="compare")
pop = ui.population(ws, key="compare_pop", choices=("all", "test", "filter"),
                    default="test" if len(ws.data.test_index) else "all", label="People compared")
params_b = compare.explainer_b_params(result, key="compare")
if model_b is None:
    st.stop()
run = compare.run(ws, result, model_b, column, target, target_label, pop, params_b)
if run is None:
    st.stop()
res = run.result

compare.headline(run)
ui.chart(recourse_flow, res, height=420, key="compare_flow")
st.subheader("Findings")
compare.findings(run)

if res.groups is not None:
    st.subheader("Groups")
    shown = compare.reference_choice(run, key="compare")
    ui.chart(comparison_gap_plot, shown, key="compare_gaps")
    st.dataframe(compare.groups_table(shown), hide_index=True, width="stretch",
                 column_config=compare.GROUPS_CONFIG)

st.subheader("Rules of model A under model B")
ui.chart(rule_accuracy_shift, res, key="compare_rules")
broken = res.broken_rules()
if len(broken):
    st.dataframe(broken[["rule_id", "conditions", "accuracy_a", "accuracy_b", "holds_tau_b", "n_points",
                         "points_hold_share"]], hide_index=True, width="stretch")
else:
    st.success("Every rule of model A still holds τ under model B, and B confirms all its verified points.")

st.subheader("People")
compare.people_section(ws, result, run, target, key="compare")

c1, c2 = st.columns(2)
with c1:
    downloads.button("Download the comparison (JSON)", compare.comparison_json(run), file_name="tcrex-comparison.json",
                     mime="application/json", icon=":material/data_object:", key="compare_dl_json")
with c2:
    downloads.button("Download people (CSV)", compare.people_csv(run), file_name="tcrex-comparison-people.csv",
                     mime="text/csv", icon=":material/table:", key="compare_dl_csv")
st.caption("The last comparison is included in the HTML report on the Export page.")
