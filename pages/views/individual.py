"""Individual: one person's recourse, its metarule, and how the recourse would differ in nearby metarules."""

import streamlit as st

from tcrex.vocabulary import NO_ACTIONABLE_RULE

from tcrex.ui.state import session
from tcrex.ui.widgets import page
from tcrex.ui.pages import compare, individual

st.title("Individual")
ws, result = page.require_result()
ex, model, model_b_label = compare.individual_view(ws, result)  # model A, model B (Compare), or a monitored version
if model_b_label:
    st.info(compare.view_banner(model_b_label), icon=":material/compare_arrows:")
    st.button("Back to model A (the active model)", key=session.widget_key(session.INDIVIDUAL_WIDGETS, "back_to_a"), on_click=compare.back_to_model_a)

ind = individual.individual_picker(ws, result, key=session.INDIVIDUAL_WIDGETS)
if ind is None:  # a search found nobody or could not be read: no stale individual under the message
    st.stop()
under_b = model_b_label is not None  # under model B, B's own output on this person
exp = individual.guard(lambda: individual.explain(ws, result, ex, ind, model, under_b))
if exp is not None:
    individual.recourse_headline(ws, result, ind, exp)
    st.subheader("Side by side")  # full width: its five to seven columns fit 1280 px without scrolling
    individual.side_by_side(ws, exp, ind.values, constraints=getattr(ex, "constraints_", None),
                            value_labels=ex.schema_.value_labels)
    individual.rule_and_metarule(exp, value_labels=ex.schema_.value_labels, titles=ws.data.titles)
    if exp.status == NO_ACTIONABLE_RULE:
        individual.no_actionable_alternatives(exp)
    elif exp.alternatives:
        st.subheader("Metacounterfactuals")
        individual.alternatives_section(ws, exp, result, share=individual.row_view(ws, ind, under_b))
