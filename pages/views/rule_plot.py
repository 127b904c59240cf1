"""Rule map: two features, data coloured by model output, rules as rectangles, metarules through an individual."""

import streamlit as st

from tcrex.figures import RulePlotOptions, rule_focus_plot, rule_plot

from tcrex.ui.widgets import page
from tcrex.ui.widgets import components as ui
from tcrex.ui.pages import rule_plot as rule_plot_page

st.title("Rule map (2-D)")
ws, result = page.require_result()
ex = result.explainer

target = ui.target_choice(ws, result, key="plot_target")
x, y, row = rule_plot_page.plane_controls(ws, result, target, key="plot")
c1, c2 = st.columns(2)
show_rules = c1.toggle("Show rules", value=True, key="plot_rules")
show_metarules = c2.toggle("Show metarule regions through the individual", value=True, key="plot_metarules")
ui.chart(rule_plot, ex, target, x, y, ws.X, ws.y_pred,
         RulePlotOptions(individual=row, show_rules=show_rules, show_metarules=show_metarules,
                         max_points=rule_plot_page.MAX_POINTS, class_names=ws.class_names),
         height=680, key="rule_plot", legend_below=True,
         caption="Metarule regions are an exact slice through the individual (its other features held fixed).")

st.subheader("One rule in focus")
st.caption("The paper's Figure 8c: one rule, and the individuals it is recommended to, each with an arrow to the "
           "nearest point of the rule.")
rule, individuals = rule_plot_page.focus_controls(ws, result, target, key="focus")
if rule is not None:
    ui.chart(rule_focus_plot, ex, target, rule, ws.X, ws.y_pred, individuals, height=640, key="focus_plot",
             class_names=ws.class_names,
             legend_below=True)
