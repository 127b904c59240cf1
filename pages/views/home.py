"""Overview: what T-CREx does, the active data and model, and the fitted rules at a glance."""

import streamlit as st

from tcrex.figures import rules_overview

from tcrex.vocabulary import NO_ACTIONABLE_RULE

from tcrex.ui.state import verification
from tcrex.ui.widgets import page
from tcrex.ui.widgets import components as ui

st.title("T-CREx — counterfactual rules and metarules")
lead = st.container()  # the one sentence: what the model needs from people (checked on it)
intro = st.empty()  # filled once the fit is known: its example rule is one of this data's own
ws, result = page.require_result()
ex = result.explainer
with lead:
    verification.summary_note(ws, result)
example = ui.example_rule_sentence(ws, result)
intro.markdown(
    "**Counterfactual rules** say what would have to be true for a group of inputs to get another outcome from "
    "the model" + (f" ({example})" if example else "") + ". "
    "**Metarules** say *which* rule applies where, so one compact rule set explains the model globally and every "
    "individual decision locally (Bewley et al., ICML 2024)."
)

cols = st.columns(6)
cols[0].metric("Rows", f"{ws.data.n_rows:,}")
cols[1].metric("Features", len(ws.features))
ui.model_score_metric(cols[2], ws)
cols[3].metric("Rules", result.n_rules)
cols[4].metric("Metarules", result.n_metarules)
cols[5].metric("Fit time", f"{result.fit_seconds:.2f} s", help=f"{result.n_cells:,} metarule grid cells")
verification.recourse_note(ws, result)  # drawn without waiting for the check (a placeholder meanwhile)

n_blocked = int((result.explanations["status"].astype(str) == NO_ACTIONABLE_RULE).sum())
if n_blocked:
    st.warning(f"Under the constraints, **{n_blocked:,} of {ws.data.n_rows:,} rows have no actionable rule**: "
               "every rule would need a change the constraints forbid.", icon=":material/block:")

st.subheader(f"{ws.data.label} · {ws.model.label}")
st.caption(ws.data.description)
ui.shared_chart(result, repr(ws.class_names), rules_overview, ex, height=420, class_names=ws.class_names)

st.subheader("Explore")
links = st.columns(3)
links[0].page_link("pages/views/global_rules.py", label="Every rule and the metarule tree", icon=":material/account_tree:")
links[1].page_link("pages/views/rule_plot.py", label="Rules on a 2-D map", icon=":material/scatter_plot:")
links[2].page_link("pages/views/change_keep.py", label="What must change, per group", icon=":material/bar_chart:")
links[0].page_link("pages/views/individual.py", label="One individual's recourse", icon=":material/person_search:")
links[1].page_link("pages/views/data_model.py", label="Upload data or a model", icon=":material/dataset:")
links[2].page_link("pages/views/export.py", label="Download rules and a report", icon=":material/download:")
links[0].page_link("pages/views/audit.py", label="Audit recourse by group", icon=":material/balance:")
links[1].page_link("pages/views/compare.py", label="Compare recourse across models", icon=":material/compare_arrows:")

with st.expander(f"The data ({ws.data.n_rows:,} rows; first {min(ws.data.n_rows, ui.MAX_TABLE_ROWS):,} shown)"):
    st.dataframe(ws.data.frame.head(ui.MAX_TABLE_ROWS), hide_index=True, height=300)
