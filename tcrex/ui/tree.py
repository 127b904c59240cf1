"""The navigable metarule tree on the Global rules page: a collapsible outline that opens at the root, with "zoom to
the chosen individual's path" and "zoom to a leaf"; drawn in a fragment so zooming reruns only this panel."""

from __future__ import annotations

import streamlit as st

from tcrex.figures import metarule_outline, metarule_tree_html

from .components import current_individual
from .state import FitResult, Workspace

#: About this many leaves are drawn in the dashboard outline; branches beyond it are drawn collapsed, with counts.
UI_MAX_LEAVES = 400

ROOT = "root"
INDIVIDUAL = "individual"


def _zoom_label(choice, row, ex=None, target: int = 0) -> str:
    if choice == ROOT:
        return "Root (all branches collapsed)"
    if choice == INDIVIDUAL:
        return f"The chosen individual's path (row {row})"
    if ex is None:
        return f"Leaf: metarule {choice}"
    rule = ex.rule_id(target, int(ex.targets_[target].metarule_rule[choice]))
    return f"Leaf: metarule {ex.metarule_id(target, choice)}" + (f" → {rule}" if rule else "")


@st.fragment
def metarule_tree_panel(ws: Workspace, result: FitResult, target: int, population=None,
                        key: str = "tree_outline") -> None:
    """The outline of ``target``'s metarule tree with its zoom selector."""
    ex = result.explainer
    sol = ex.targets_[target]
    n = len(sol.metarules)
    row = current_individual(ws, result)
    choices = [ROOT, INDIVIDUAL] + list(range(n))
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    zoom = c1.selectbox("Zoom to", choices, format_func=lambda c: _zoom_label(c, row, ex, target), key=f"{key}_zoom",
                        help="Open the branches leading to the chosen individual (set on the Individual page) "
                             "or to one metarule; every other branch stays collapsed.")
    open_all = c2.toggle("Open every branch", value=False, key=f"{key}_open",
                         disabled=n > UI_MAX_LEAVES, help="Opens the whole outline (small trees only).")
    kwargs = {"population": population, "max_leaves": UI_MAX_LEAVES}
    if zoom == INDIVIDUAL:
        kwargs["highlight_row"] = ws.X.loc[[row]]
    elif zoom != ROOT:
        kwargs["highlight_metarule"] = int(zoom)
    trees = result.cache.setdefault("metarule_trees", {})  # the split tree is the costly part; zooming reuses it
    try:
        if target not in trees:
            trees[target] = ex.metarule_tree(target) if sol.n_rules and sol.grid is not None else None
        outline = metarule_outline(ex, target, tree=trees[target], class_names=ws.class_names, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a figure problem must not blank the page
        st.warning(f"The tree outline could not be built ({type(exc).__name__}: {exc}).", icon=":material/warning:")
        return
    if outline["hidden_leaves"]:
        st.caption(f"This tree has {n:,} metarules; the outline draws {outline['shown_leaves']:,} of them (and "
                   "always the zoomed path). Every branch is listed; the larger ones are drawn collapsed with their "
                   "counts: zoom to a leaf to open one.")
    if zoom == INDIVIDUAL and outline["path_metarule"] is not None:
        st.caption(f"Row {row} falls in metarule {ex.metarule_id(target, outline['path_metarule'])} of this target; "
                   "its path is opened and marked in red.")
    html = metarule_tree_html(ex, target, outline=outline, open_all=open_all and n <= UI_MAX_LEAVES)
    st.html(f'<div style="max-height:900px;overflow:auto;border:1px solid #ddd;border-radius:8px;padding:8px 12px;'
            f'background:#fff">{html}</div>')
