"""The Global rules page's widgets: the rules table (with how often their advice works on the model), the
scrollable metarule tree diagram and the navigable metarule tree: a collapsible outline that opens at the root, with
"zoom to the chosen individual's path" and "zoom to a leaf"; drawn in a fragment so zooming reruns only that
panel."""

from __future__ import annotations

import base64
import re

import pandas as pd
import streamlit as st

from tcrex.figures import metarule_outline, metarule_tree_html
from tcrex.text import NO_CONDITION, is_trivial_rule, trivial_rule_note

from ..state import session, shared, verification
from ..state.active import FitResult, DataAndModel, set_params
from ..widgets.components import current_individual


def rules_table(result: FitResult, target: int | None = None, ws: DataAndModel | None = None) -> pd.DataFrame:
    """The rules (of one target, or all) with their id (``rule_id``: the one the tree, the overview and the
    report show), the target outcome (by class name when ``ws`` knows it), metrics and rows."""
    ex = result.explainer
    frame = ex.rules_frame()
    if target is not None:
        frame = frame[frame.target == target]
    out = frame.rename(columns={"target_description": "target outcome", "n": "rows",
                                "n_metarules": "metarules"})
    if ws is not None:
        out["target outcome"] = [ws.target_name(ex.solution(int(t)).target) for t in out["target"]]
    return out[["target", "target outcome", "rule", "rule_id", "conditions", "accuracy", "feasibility",
                "complexity", "rows", "metarules"]]


RULE_COLUMNS = {
    "accuracy": st.column_config.ProgressColumn("accuracy", format="%.3f", min_value=0.0, max_value=1.0,
                                                help="Share of the rule's fit rows whose output is in the target"),
    "feasibility": st.column_config.NumberColumn("feasibility", format="%.3f",
                                                 help="Share of fit rows inside the rule"),
    "conditions": st.column_config.TextColumn("conditions", width="large"),
    "works at nearest point": st.column_config.ProgressColumn("at nearest point", format="percent",
                                                              min_value=0.0, max_value=1.0, width="small",
                                                              help="works at nearest point"),
    verification.OWN_ADVICE: st.column_config.ProgressColumn("own advice", format="percent", width="small",
                                                             min_value=0.0, max_value=1.0,
                                                             help=verification.OWN_ADVICE),
    # the counts beside them stay narrow, so the table fits a 1280-px window without a sideways scroll
    **{c: st.column_config.NumberColumn(short, width="small", help=c) for c, short in (
        ("serves", "serves"), ("verified via next rule", "via next"),
        ("verified by minimal change", "by min. change"), ("not verified", "not verified"),
        ("rows", "rows"), ("metarules", "metarules"), ("complexity", "conditions #"))},
}


#: The static table's headers (the caption below the table says what each counts, in full).
STATIC_HEADERS = {"works at nearest point": "at nearest point", verification.OWN_ADVICE: "own advice",
                  "verified via next rule": "via next rule", "verified by minimal change": "by minimal change"}


#: The sidebar's ρ slider's lowest value: a suggestion below it is said, not offered as a button.
RHO_WIDGET_MIN = 0.005


def _apply_suggestion(suggestion: dict) -> None:
    """Button callback (runs before the script): the suggested parameters applied, and the sidebar's widgets
    showing them (so the form has nothing "not applied yet")."""
    set_params(**suggestion)
    if "rho" in suggestion:
        session.set_widget(session.PARAM_RHO, float(suggestion["rho"]))
    if "n_trees" in suggestion:
        session.set_widget(session.PARAM_TREES, int(suggestion["n_trees"]))


def findings_panel(result: FitResult, class_names: dict | None = None, key: str = "findings") -> None:
    """What this fit says too little about (:meth:`TCREx.fit_findings`, outcomes named by ``class_names``), each
    sentence once, with its checked suggestion and one button that applies it."""
    if result.fit_findings is not None and result.findings_names == dict(class_names or {}):
        findings = result.findings(class_names)
    else:  # a degenerate fit tries a few settings (at most FINDINGS_BUDGET seconds), once per fit
        with st.spinner("Checking whether these settings say enough ..."):
            findings = result.findings(class_names)
    if not findings:
        return
    text = " ".join(dict.fromkeys(f.text for f in findings))
    suggestion = findings[0].suggestion
    with st.container(border=True):
        st.warning(f"**These settings say little.** {text} {findings[0].suggestion_text()}",
                   icon=":material/lightbulb:")
        if suggestion and float(suggestion.get("rho", RHO_WIDGET_MIN)) >= RHO_WIDGET_MIN:
            words = findings[0].suggestion_text().split(":")[0].removeprefix("Try ")
            st.button(f"Apply {words}", key=f"{key}_apply", type="primary", on_click=_apply_suggestion,
                      args=(dict(suggestion),), icon=":material/tune:")


def rules_list(ws: DataAndModel, result: FitResult, target: int, max_static: int = 30) -> None:
    """The rules of one target with accuracy, feasibility, complexity and, where a model can check them, how often
    their recommended points work; wrapped text when few (projector)."""
    table = rules_table(result, target, ws)
    table = verification.rules_with_effectiveness(ws, result, table).drop(columns=["target", "target outcome",
                                                                                  "rule"])
    table = table.rename(columns={"rule_id": "rule"})  # the id the tree, the overview and the report use
    trivial = table["complexity"].map(is_trivial_rule).astype(bool)
    if trivial.any():  # flagged in the table and explained: a rule without conditions is not advice
        outcome = ws.target_name(result.explainer.targets_[target].target)
        table = table.assign(conditions=table["conditions"].where(~trivial, "⚠ " + NO_CONDITION
                                                                  + " (no condition: not advice)"))
        for _, r in table[trivial].iterrows():
            st.warning(f"**Rule {r['rule']}** — {trivial_rule_note(outcome, r['accuracy'])}.",
                       icon=":material/info:")
    shares = [c for c in ("works at nearest point", verification.OWN_ADVICE) if c in table.columns]
    if len(table) <= max_static:
        shown = table.assign(accuracy=table["accuracy"].map("{:.3f}".format),
                             feasibility=table["feasibility"].map("{:.3f}".format),
                             **{c: table[c].map(lambda v: "–" if v != v else f"{v:.0%}") for c in shares})
        counts = [c for c in ("serves", "verified via next rule", "verified by minimal change", "not verified")
                  if c in shown.columns]
        shown[counts] = shown[counts].fillna(0).astype(int)
        # short headers and no complexity column (the conditions are on the row): the table fits a 1280-px window
        st.table(shown.drop(columns=["complexity"]).rename(columns=STATIC_HEADERS).set_index("rule"))
    else:
        st.dataframe(table, hide_index=True, width="stretch", column_config=RULE_COLUMNS, height=420)
    if shares:
        st.caption("Each figure counts the individuals needing recourse for whom the rule is the paper's optimal "
                   "rule (*serves*). *at nearest point*: share of them for whom the model gives the "
                   "favourable outcome at the rule's nearest point; *own advice*: share whose verified "
                   "point follows this rule's own advice; the others are counted by what verifies them instead "
                   "(verified *via next rule*, verified *by minimal change*) or as *not verified*. The headline's "
                   "verified share counts everyone verified by any of these, so a rule at 0 % may still leave "
                   "everyone it serves with verified recourse.")


def scrolling_svg(svg: str | None, max_height: int = 900) -> None:
    """An SVG at its natural size inside a scrollable frame (large trees stay readable on a projector), opened
    centred on the tree's root (``data-root-x`` of :func:`tcrex.figures.dot_to_svg`): a tree tens of thousands
    of pixels wide would otherwise open at its left edge with the root off-screen."""
    if not svg:
        return

    uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
    width = re.search(r'width="([0-9.]+)"', svg)
    height = re.search(r'height="([0-9.]+)"', svg)
    root = re.search(r'data-root-x="([0-9.]+)"', svg)
    style = f"width:{float(width.group(1)):.0f}px;max-width:none;" if width else ""
    frame_h = min(max_height, int(float(height.group(1))) + 24) if height else max_height
    # centred once the frame has a width: it has none while its tab is hidden, so also on the first resize
    centre = (f"const f=document.getElementById('f');let done=false;const go=()=>{{if(done||!f.clientWidth)return;"
              f"f.scrollLeft=Math.max(0,{float(root.group(1)):.0f}-f.clientWidth/2);done=f.scrollLeft>0||"
              f"f.scrollWidth<=f.clientWidth;}};document.getElementById('t').addEventListener('load',go);"
              f"window.addEventListener('resize',go);go();") if root else ""
    # a script runs only in an iframe; the tree is an <img> (an SVG image never runs scripts), its text escaped
    st.iframe(f'<div id="f" class="tcrex-svg" data-root-x="{float(root.group(1)) if root else 0:.0f}" style="overflow:auto;height:{frame_h - 4}px;border:1px solid #ddd;'
                f'border-radius:8px;background:#fff;box-sizing:border-box"><img id="t" alt="metarule tree" '
                f'src="{uri}" style="{style}"></div><script>{centre}</script>', height=frame_h)


# ============================================================================================ the navigable tree
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
def metarule_tree_panel(ws: DataAndModel, result: FitResult, target: int, population=None,
                        key: str = "tree_outline", share=None) -> None:
    """The outline of ``target``'s metarule tree with its zoom selector. ``share``: what the population depends
    on when it is the same for every session (:func:`tcrex.ui.widgets.components.shared_chart`); the split tree, and
    the outline opened at the root, are then built once per server for the shared fit."""
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
    trees = result.metarule_trees  # the split tree is the costly part; zooming reuses it
    every_session = share is not None and zoom == ROOT and shared.is_shared_result(result)
    try:
        if target not in trees:
            trees[target] = shared.view(result, "metarule_tree", target, lambda: (
                ex.metarule_tree(target) if sol.n_rules and sol.grid is not None else None))
        if every_session:  # the outline as it opens, the same for every session of the shared fit
            outline, html = shared.view(result, "metarule_outline", (target, share, open_all), lambda: _outline(
                ex, target, trees[target], ws.class_names, kwargs, open_all and n <= UI_MAX_LEAVES))
        else:
            outline, html = _outline(ex, target, trees[target], ws.class_names, kwargs,
                                     open_all and n <= UI_MAX_LEAVES)
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
    st.html(f'<div style="max-height:900px;overflow:auto;border:1px solid #ddd;border-radius:8px;padding:8px 12px;'
            f'background:#fff">{html}</div>')


def _outline(ex, target: int, tree, class_names, kwargs: dict, open_all: bool) -> tuple[dict, str]:
    """The outline of ``target``'s tree and its HTML."""
    outline = metarule_outline(ex, target, tree=tree, class_names=class_names, **kwargs)
    return outline, metarule_tree_html(ex, target, outline=outline, open_all=open_all)
