"""Figures and tables for a fitted :class:`tcrex.TCREx` (paper Figures 1, 2, 7 and 8).

Every function is pure: it takes a fitted explainer and plain data and returns a plotly ``go.Figure``, a
DataFrame or DOT text, deterministically, with what reaches the browser capped (sampled points, pre-binned counts,
all rectangles set in one layout update). No Streamlit here; the dashboard calls these.

>>> from tcrex.figures import metarule_tree_dot, rule_plot       # doctest: +SKIP
>>> st.graphviz_chart(metarule_tree_dot(ex, target=0))          # doctest: +SKIP
"""
from ._plane import RulePlotOptions, rule_focus_plot, rule_plot
from ._style import RULE_PALETTE, rule_color, rule_colors, rule_dash
from ._summary import change_keep_bars, change_keep_counts, changes_histogram, rules_overview
from ._tables import individual_table, metacounterfactual_figure, metacounterfactual_table
from ._svg import DotError, dot_to_svg, parse_dot
from ._outline import metarule_outline, metarule_tree_html
from ._tree import metarule_icicle, metarule_tree_dot, metarule_tree_svg

__all__ = ["metarule_outline", "metarule_tree_html", "rule_colors", "rule_color", "rule_dash", "RULE_PALETTE", "metarule_tree_dot", "metarule_tree_svg",
           "metarule_icicle", "dot_to_svg", "parse_dot", "DotError", "rule_plot", "RulePlotOptions", "rule_focus_plot",
           "change_keep_bars", "change_keep_counts", "changes_histogram", "rules_overview", "individual_table",
           "metacounterfactual_table", "metacounterfactual_figure"]

# audit figures (moved from tcrex._figures_audit)
from ._audit import (BAR_METRICS, changes_distribution_by_group, feature_change_heatmap,  # noqa: E402
                     gap_forest_plot, gap_forest_svg, group_comparison_bars)
__all__ += ["group_comparison_bars", "gap_forest_plot", "gap_forest_svg", "changes_distribution_by_group", "feature_change_heatmap",
            "BAR_METRICS"]

# the model's own performance (the dashboard's Model panel)
from ._model import confusion_matrix_figure, pr_curve_figure, residual_plot, roc_curve_figure  # noqa: E402
__all__ += ["confusion_matrix_figure", "roc_curve_figure", "pr_curve_figure", "residual_plot"]

# recourse across two models
from ._compare import CHANGE_COLORS, comparison_gap_plot, recourse_flow, rule_accuracy_shift  # noqa: E402
__all__ += ["recourse_flow", "comparison_gap_plot", "rule_accuracy_shift", "CHANGE_COLORS"]

# recourse monitored across model versions (tcrex.monitor)
from ._monitor import monitor_group_shares, monitor_timeline  # noqa: E402
__all__ += ["monitor_timeline", "monitor_group_shares"]
