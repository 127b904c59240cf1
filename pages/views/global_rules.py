"""Global rules: every rule with its accuracy, feasibility and complexity, the metarule tree and the summary."""

import streamlit as st

from tcrex.figures import metarule_icicle, metarule_tree_dot, metarule_tree_svg

from tcrex.ui.state import verification
from tcrex.ui.widgets import page
from tcrex.ui.widgets import components as ui
from tcrex.ui.pages import global_rules

st.title("Global rules")
ws, result = page.require_result()
ex = result.explainer

target = ui.target_choice(ws, result, key="global_target")
sol = ex.targets_[target]
cols = st.columns(5)
cols[0].metric("Target", ws.target_name(sol.target))
cols[1].metric("Rules", sol.n_rules)
cols[2].metric("Metarules", len(sol.metarules))
cols[3].metric("Grid cells", f"{sol.n_cells:,}")
verification.headline(ws, result, column=cols[4])

global_rules.findings_panel(result, ws.class_names)

st.subheader("Counterfactual rules")
st.caption("A rule holds at least ρ of the fit rows (feasibility) and at least τ of its rows reach the target "
           "(accuracy); complexity is its number of conditions.")
global_rules.rules_list(ws, result, target)

st.subheader("Metarule tree")
st.caption("Which rule applies where: each leaf is a metarule with its recommended rule. Choose a population to "
           "collapse the tree to the part where those rows live.")
c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
with c1:
    pop = ui.population(ws, key="tree_pop", choices=("all", "fit", "test", "filter"), default="all")
collapse = c2.toggle("Hide empty branches", value=True, key="tree_collapse")
population = None if pop.label == "all rows" and not collapse else \
    verification.with_sources(ws, result, result.explanations.loc[pop.index])
# every row (the default): the same figures for every session of a shared fit, built once per server (ui.shared_chart)
every = pop.index.equals(ws.X.index)
view = (target, collapse, repr(ws.class_names), None if population is None else tuple(population.columns)) \
    if every else None
# keyed: the browser keeps the chosen tab under the key, so a rerun that redraws the tabs (the model check ending,
# a toggle inside a tab) cannot send the reader back to the first tab
tab_outline, tab_tree, tab_icicle, tab_text = st.tabs(["Tree", "Diagram", "Coverage (icicle)", "Text summary"],
                                                      key="global_rules_tabs")
with tab_outline:
    global_rules.metarule_tree_panel(ws, result, target, population=population, share=view)
with tab_tree:
    full = st.toggle("Full size (scroll to pan)", value=len(sol.metarules) > 12, key="tree_full")
    if full:
        global_rules.scrolling_svg(ui.shared_build(result, view, metarule_tree_svg, ex, target,
                                                   population=population, collapse_empty=collapse,
                                                   class_names=ws.class_names))
    else:
        ui.shared_chart(result, view, metarule_tree_dot, ex, target, population=population, collapse_empty=collapse,
                        class_names=ws.class_names)
with tab_icicle:
    sourced = verification.with_sources(ws, result, result.explanations.loc[pop.index])
    ui.shared_chart(result, (target, repr(ws.class_names), tuple(sourced.columns)) if every else None,
                    metarule_icicle, ex, target, population=sourced, height=520, class_names=ws.class_names)
with tab_text:
    st.caption(f"The rules and metarules of the target chosen above ({ws.target_name(sol.target)}) in words.")
    st.code(ex.summary_text(ws.class_names, target=target), language=None, wrap_lines=True)
