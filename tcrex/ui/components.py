"""Reusable dashboard pieces: figure display, population and individual pickers, tables.

Pages call these so that they stay a short story ("pick a population, draw the bars").
"""

from __future__ import annotations

import base64
import logging
import re
from copy import copy as _copy
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import ALREADY_IN_TARGET, NO_ACTIONABLE_RULE, OK, REGRESSION

from tcrex import TCRExError
from tcrex.figures import metacounterfactual_table
from tcrex.text import NO_CONDITION, is_trivial_rule, pluralise, trivial_rule_note

from . import search, session
from .state import FitResult, Workspace

log = logging.getLogger(__name__)

#: Most points a scatter sends to the browser.
MAX_POINTS = 5000
#: Rows of a table sent to the browser.
MAX_TABLE_ROWS = 1000


# ============================================================================================ figures
def chart(builder: Callable[..., Any], *args, height: int | None = None, key: str | None = None,
          caption: str | None = None, legend_below: bool = False, dot_width: str = "stretch", **kwargs) -> Any:
    """Build a figure with ``builder(*args, **kwargs)`` (a figure builder the page imports from
    :mod:`tcrex.figures`) and draw it.

    Plotly figures go to ``st.plotly_chart``, DOT text to ``st.graphviz_chart``, frames to ``st.dataframe``.
    Anything that goes wrong becomes a short message on the page, never a traceback.
    """
    out = build(builder, *args, **kwargs)
    if out is None:
        return None
    if legend_below and hasattr(out, "update_layout"):
        margin = legend_below_plot(out)
        if height:  # the plot keeps its size; the legend's rows are added below it
            height += max(margin - _ONE_LEGEND_ROW, 0)
    show(out, height=height, key=key, dot_width=dot_width)
    if caption:
        st.caption(caption)
    return out


def legend_below_plot(fig, width_px: int = 1100) -> int:
    """Move a figure's legend to a horizontal block at the bottom of the figure, below the x-axis title, with a
    bottom margin sized to the legend's estimated rows (entries may span several lines: a rule's legend is the
    whole rule, wrapped), so it never overlaps the axis or its title. Returns the bottom margin in pixels."""
    entries = [re.sub(r"<(?!br)[^>]+>", "", str(t.name)).split("<br>") for t in fig.data
               if t.name and t.showlegend is not False]
    groups = {t.legendgroup for t in fig.data if t.legendgroup and t.legendgrouptitle and t.legendgrouptitle.text}
    legend_px, used, lines = 0, 0, 1
    for entry in entries:
        w = min(48 + 8 * max(len(line) for line in entry), width_px)
        if used and used + w > width_px:
            legend_px, used, lines = legend_px + 20 * lines + 6, 0, 1
        used += w
        lines = max(lines, len(entry))
    legend_px += 20 * lines + 6 + 26 * (len(groups) // 2)
    margin = 78 + legend_px
    fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", y=0, yref="container", yanchor="bottom",
                                  entrywidthmode="pixels"),
                      margin=dict(r=20, b=margin))
    return margin


#: Bottom margin of a one-line legend below a plot; figures grow by what a taller legend needs beyond it.
_ONE_LEGEND_ROW = 104


def show(out: Any, height: int | None = None, key: str | None = None, dot_width: str = "stretch") -> None:
    if out is None:
        return
    if isinstance(out, str):
        st.graphviz_chart(out, width=dot_width)
    elif isinstance(out, pd.DataFrame):
        st.dataframe(arrow_safe(out), hide_index=True, width="stretch", height=height or "auto")
    elif hasattr(out, "to_plotly_json"):
        if height:
            out.update_layout(height=height)
        modebar_room(out)
        st.plotly_chart(out, width="stretch", key=key, config=PLOTLY_CONFIG)
    else:
        st.write(out)


#: The plotly toolbar (zoom, download, …) appears only while the pointer is over a chart, in the chart's top
#: right corner; :func:`modebar_room` keeps titles out of its way.
PLOTLY_CONFIG = {"displaylogo": False, "displayModeBar": "hover"}
#: Height of the plotly toolbar band (pixels) that titles are drawn below.
MODEBAR_PX = 34
#: plotly anchors a multi-line title's *first* line at ``yanchor="top"``: each further line moves the text up by
#: about this much (measured in Chromium: 18 px for the 18 px title font), so the pad makes up for it.
TITLE_LINE_PX = 22


def modebar_room(fig) -> None:
    """Draw a figure's title below the plotly toolbar band, so the toolbar never covers it (the top margin grows by
    the same amount, so the title keeps its room above the plot). Idempotent."""
    title = fig.layout.title
    if title is None or not title.text:
        return
    want = MODEBAR_PX + TITLE_LINE_PX * str(title.text).count("<br>")
    pad = int(title.pad.t or 0) if title.pad is not None else 0
    if pad >= want:
        return
    top = fig.layout.margin.t if fig.layout.margin is not None and fig.layout.margin.t is not None else 80
    fig.update_layout(title=dict(pad=dict(t=want), y=1.0, yref="container", yanchor="top"),
                      margin=dict(t=int(top) + want - pad))


def arrow_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns that mix numbers and text become text (numbers formatted), so the browser table can show them."""
    out = frame
    for c in frame.columns:
        col = frame[c]
        if col.dtype == object:
            kinds = {type(v) for v in col.dropna().tolist()}
            if len(kinds) > 1 or (kinds and not kinds <= {str}):
                if out is frame:
                    out = frame.copy()
                out[c] = col.map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v)) else _fmt(v))
    return out


# ============================================================================================ populations
@dataclass
class Population:
    label: str
    index: pd.Index  # row labels of ws.X

    def frame(self, ws: Workspace) -> pd.DataFrame:
        return ws.X.loc[self.index]

    def outputs(self, ws: Workspace) -> np.ndarray:
        return ws.y_pred[ws.X.index.get_indexer(self.index)]


OUTPUT = "⟨model output⟩"


def _filter_column(ws: Workspace, name: str) -> pd.Series:
    if name == OUTPUT:
        return pd.Series(ws.y_pred, index=ws.X.index, name=OUTPUT)
    return ws.X[name]


def _is_categorical(ws: Workspace, name: str) -> bool:
    if name == OUTPUT:
        return ws.task != REGRESSION
    return name in ws.data.categorical or ws.X[name].nunique() <= 12


def population(ws: Workspace, key: str, *, choices=("all", "fit", "test", "filter", "subgroup"),
               default: str = "fit", label: str = "Population") -> Population:
    """A population selector: all rows, the fit rows, the test split, a filter, or a subgroup."""
    names = {"all": "All rows", "fit": "Fit rows (used to fit the rules)", "test": "Test split (hold-out)",
             "filter": "A filter…", "subgroup": "A subgroup…"}
    choices = [c for c in choices if c != "test" or len(ws.data.test_index)]
    mode = st.segmented_control(label, choices, default=default if default in choices else choices[0],
                                format_func=names.get, key=f"{key}_mode", required=True)
    index = ws.X.index
    if mode == "fit":
        return Population("fit rows", ws.data.fit_index)
    if mode == "test":
        return Population("test split", ws.data.test_index)
    if mode == "all" or mode is None:
        return Population("all rows", index)
    options = [OUTPUT, *ws.features]
    if mode == "subgroup":
        groupable = [c for c in options if _is_categorical(ws, c)]
        if not groupable:
            st.caption("No categorical feature to form subgroups; showing all rows.")
            return Population("all rows", index)
        c1, c2 = st.columns(2)
        feature = c1.selectbox("Subgroup feature", groupable, key=f"{key}_sub_feature",
                               index=min(1, len(groupable) - 1))
        col = _filter_column(ws, feature)
        values = sorted(col.dropna().unique().tolist(), key=str)
        value = c2.selectbox("Value", values, key=f"{key}_sub_value_{feature}", format_func=str)
        mask = (col == value).to_numpy()
        return Population(f"{feature} = {value}", index[mask])
    c1, c2 = st.columns([1, 2])
    feature = c1.selectbox("Filter on", options, key=f"{key}_filter_feature")
    col = _filter_column(ws, feature)
    if _is_categorical(ws, feature):
        values = sorted(col.dropna().unique().tolist(), key=str)
        chosen = c2.multiselect("Keep values", values, default=values[:1], key=f"{key}_filter_values_{feature}",
                                format_func=str)
        mask = col.isin(chosen).to_numpy()
        label = f"{feature} in {{{', '.join(map(str, chosen))}}}"
    else:
        lo, hi = float(col.min()), float(col.max())
        if lo == hi:
            return Population(f"{feature} = {lo:g}", index)
        low, high = c2.slider("Range", lo, hi, (lo, hi), key=f"{key}_filter_range_{feature}")
        mask = ((col >= low) & (col <= high)).to_numpy()
        label = f"{low:.4g} ≤ {feature} ≤ {high:.4g}"
    if not mask.any():
        st.warning("No row matches this filter; widen it.", icon=":material/filter_alt_off:")
    return Population(label, index[mask])


# ============================================================================================ tables
def rules_table(result: FitResult, target: int | None = None, ws: Workspace | None = None) -> pd.DataFrame:
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
    "complexity": st.column_config.NumberColumn("complexity", help="Number of conditions"),
    "conditions": st.column_config.TextColumn("conditions", width="large"),
    "works at nearest point": st.column_config.ProgressColumn("works at nearest point", format="percent",
                                                              min_value=0.0, max_value=1.0),
    "works (verified)": st.column_config.ProgressColumn("works (verified)", format="percent", min_value=0.0,
                                                        max_value=1.0),
}


def with_rule_ids(frame: pd.DataFrame, ex) -> pd.DataFrame:
    """A frame with ``target`` and per-target ``rule`` columns, its ``rule`` column replaced by the rule's public
    id (``TCREx.rule_id``: "R3"), as every other view names rules."""
    if not {"target", "rule"} <= set(frame.columns) or not len(frame):
        return frame
    out = frame.copy()
    out["rule"] = [ex.rule_id(int(t), int(r)) if pd.notna(t) and pd.notna(r) else None
                   for t, r in zip(out["target"], out["rule"])]
    return out


def target_choice(ws: Workspace, result: FitResult, key: str, label: str = "Target outcome") -> int:
    """Pick one of the explainer's targets (index into ``targets_``); one favourable outcome needs no choice."""
    targets = result.explainer.targets_
    if len(targets) == 1:
        return 0
    names = [f"Reach {ws.target_name(t.target)}" for t in targets]
    choice = st.selectbox(label, range(len(targets)), format_func=lambda i: names[i], key=key)
    return int(choice or 0)


def used_feature_counts(result: FitResult, target: int) -> dict[str, int]:
    """Per feature, how many rules of ``target`` constrain it, most used first."""
    ex = result.explainer
    counts: dict[str, int] = {}
    for r in range(ex.targets_[target].n_rules):
        for f in ex.rule_conditions(target, r):
            counts[f] = counts.get(f, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def used_features(result: FitResult, target: int) -> list[str]:
    """Features ordered by how many rules of ``target`` constrain them."""
    return list(used_feature_counts(result, target))


def used_features_caption(result: FitResult, target: int, limit: int = 12) -> str:
    """"The rules use: income (4 rules), age (1 rule)" — a hint for choosing the Rule map's axes."""
    counts = used_feature_counts(result, target)
    n_rules = result.explainer.targets_[target].n_rules
    if not counts:
        return "No rule of this target constrains a feature; any two axes show the data."
    shown = [f"`{f}` ({k} of {n_rules} rule{'s' if n_rules != 1 else ''})" for f, k in list(counts.items())[:limit]]
    more = f" and {len(counts) - limit} more" if len(counts) > limit else ""
    return ("**Features the rules use** (pick two of these as axes to see the rules as rectangles): "
            + ", ".join(shown) + more + ".")


# ============================================================================================ individuals
def default_individual(ws: Workspace, result: FitResult) -> Any:
    """The first test row that needs a change to reach the first target (a good demo), else the first row."""
    ok = (result.explanations["status"].astype(str) == OK) & (result.explanations["target"] == 0).fillna(False)
    pool = ws.data.test_index if len(ws.data.test_index) else ws.X.index
    candidates = ok.loc[pool]
    hits = candidates[candidates].index
    return hits[0] if len(hits) else ws.X.index[0]


def current_individual(ws: Workspace, result: FitResult) -> Any:
    """The chosen individual (a row label; the Individual, Rule map and Global rules pages and the report share
    it), else :func:`default_individual`."""
    row = session.individual()
    if row is None or row not in ws.X.index:
        row = default_individual(ws, result)
        session.set_individual(row)
    return row


def _set_individual(row) -> None:
    session.choose_individual(row)


def search_rows(ws: Workspace, query: str, limit: int = search.LIMIT) -> pd.Index:
    """Rows matching a text or an expression (:mod:`tcrex.ui.search`); raises :class:`~tcrex.ui.search.SearchError`
    with a message for the user when an expression cannot be read."""
    return search.search_rows(ws, query, limit)


@dataclass
class Individual:
    row: Any  # row label in ws.X, or None for an edited row
    values: pd.Series
    output: Any
    edited: bool = False

    @property
    def frame(self) -> pd.DataFrame:
        return self.values.to_frame().T.infer_objects()


def individual_picker(ws: Workspace, result: FitResult, key: str = session.INDIVIDUAL_WIDGETS,
                      allow_edit: bool = True) -> Individual | None:
    """Pick an individual by row, by search, or by editing its feature values. ``None`` when a search finds nobody
    or cannot be read: the page then shows no individual (the one chosen before stays chosen for other pages)."""
    current = current_individual(ws, result)
    modes = ["row", "search"] + (["edit"] if allow_edit else [])
    names = {"row": "By row", "search": "Search", "edit": "Edit values"}
    # no default once the key holds a value ("Try this advice" writes it): Streamlit warns about both at once
    mode = st.segmented_control("Choose an individual", modes,
                                                default=None if session.has_widget(f"{key}_mode") else "row",
                                format_func=names.get, key=f"{key}_mode", required=True)
    positions = ws.X.index
    if mode == "search":
        q = st.text_input("Search", key=f"{key}_query",
                          placeholder='e.g. Unemployed, or: income > 80 and age < 30, or: `model output` == "approved"',
                          help=SEARCH_HELP.format(label=search.LABEL, output=search.OUTPUT))
        try:
            hits = search_rows(ws, q)
        except search.SearchError as exc:
            st.error(f"**Search not understood:** {exc}.", icon=":material/search_off:")
            _stale_note(current)
            return None
        if len(hits) == 0:
            st.warning("No row matches this search; try another.", icon=":material/search_off:")
            _stale_note(current)
            return None
        else:
            pick = st.selectbox(f"{pluralise(len(hits), 'matching row')} (first 200)", list(hits), key=f"{key}_hit",
                                format_func=lambda r: f"row {r}: " + ", ".join(f"{v}" for v in ws.X.loc[r].tolist()[:5]))
            if pick is not None and pick != current:
                _set_individual(pick)
                current = pick
    elif mode == "row":
        lo, hi = int(positions.min()), int(positions.max())
        row = st.number_input(f"Row ({lo}–{hi})", lo, hi, value=int(current), step=1, key=f"{key}_row_{current}")
        if row != current and row in positions:
            _set_individual(row)
            current = row
    values = ws.X.loc[current]
    output = ws.y_pred[positions.get_loc(current)]
    if mode == "edit":
        edited = _edit_form(ws, values, key)
        if edited is not None:
            return edited
    return Individual(row=current, values=values, output=output)


SEARCH_HELP = ("Text (no = < > ! or backticks) finds rows containing it anywhere, label and model output "
               "included. An expression selects rows: comparisons == != < <= > >=, `in [..]`, joined by and / or / "
               "not, e.g. `income > 80 and age < 30`. Besides the features: `{label}` (the label column, also under "
               "its own name) and `` `{output}` `` (backticks for names with spaces); classes by value or name, e.g. "
               "`{label} == 1`, `` `{output}` == \"approved\" ``. Quote text values.")


def _stale_note(current) -> None:
    st.caption(f"No individual is shown. Row {current}, chosen before, stays selected for the other pages and the "
               "report until you pick another.")


def _edit_form(ws: Workspace, base: pd.Series, key: str) -> Individual | None:
    if ws.model.predict is None:
        st.info("Edited values need a model to score them; with a column of outputs only existing rows can be "
                "explained.", icon=":material/info:")
        return None
    stored = session.edited_individual()
    start = pd.Series(stored) if stored else base
    with st.form(f"{key}_edit_form"):
        cols = st.columns(3)
        new = {}
        for i, f in enumerate(ws.features):
            box = cols[i % 3]
            if f in ws.data.categorical:
                values = sorted(ws.X[f].dropna().unique().tolist(), key=str)
                cur = start[f]
                new[f] = box.selectbox(f, values, index=values.index(cur) if cur in values else 0, key=f"{key}_e_{f}")
            else:
                is_int = pd.api.types.is_integer_dtype(ws.X[f])
                v = start[f]
                new[f] = box.number_input(f, value=int(v) if is_int else float(v), step=1 if is_int else None,
                                          key=f"{key}_e_{f}", format=None if is_int else "%.4g")
        submitted = st.form_submit_button("Explain these values", type="primary")
    if submitted:
        session.set_edited_individual(new)
        stored = new
    if not stored:
        st.caption("Change values and press **Explain these values**.")
        return None
    row = pd.Series(stored)[ws.features]
    frame = row.to_frame().T.infer_objects()
    for f in ws.features:
        frame[f] = frame[f].astype(ws.X[f].dtype)
    try:
        output = np.asarray(ws.model.predict(frame))[0]
    except Exception as exc:  # noqa: BLE001
        st.error(f"The model could not score these values ({exc}).")
        return None
    return Individual(row=None, values=frame.iloc[0], output=output, edited=True)


def _fmt(v):
    if isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    if isinstance(v, (int, np.integer)):
        return str(v)
    return v


def guard(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; engine errors become a warning on the page."""
    try:
        return fn()
    except TCRExError as exc:
        st.warning(str(exc), icon=":material/warning:")
        return None


# ============================================================================================ page sections
def plane_controls(ws: Workspace, result: FitResult, target: int, key: str) -> tuple[str, str, Any]:
    """Two features (default: the two most used by the rules) and the individual to slice through."""
    feats = ws.features
    used = [f for f in used_features(result, target) if f in feats]
    defaults = (used + [f for f in feats if f not in used])[:2]
    if len(feats) < 2:
        st.warning("The 2-D map needs at least two features.")
        st.stop()
    c1, c2, c3 = st.columns([2, 2, 1])
    x = c1.selectbox("Horizontal axis", feats, index=feats.index(defaults[0]), key=f"{key}_x")
    y_opts = [f for f in feats if f != x]
    y_default = defaults[1] if defaults[1] != x else y_opts[0]
    y = c2.selectbox("Vertical axis", y_opts, index=y_opts.index(y_default) if y_default in y_opts else 0,
                     key=f"{key}_y")
    st.caption(used_features_caption(result, target))
    current = current_individual(ws, result)
    lo, hi = int(ws.X.index.min()), int(ws.X.index.max())
    row = c3.number_input("Individual (row)", lo, hi, value=int(current), step=1, key=f"{key}_row_{current}",
                          help="The star; metarule regions are drawn through it. Also set on the Individual page.")
    if row != current and row in ws.X.index:
        _set_individual(row)
        current = row
    return x, y, current


def focus_controls(ws: Workspace, result: FitResult, target: int, key: str) -> tuple[int | None, pd.DataFrame]:
    """A rule of ``target`` and the individuals (test split first) it is recommended to."""
    ex = result.explainer
    sol = ex.targets_[target]
    if sol.n_rules == 0:
        st.info("This target has no valid rule.")
        return None, ws.X.iloc[:0]
    expl = result.explanations
    pool = ws.data.test_index if len(ws.data.test_index) else ws.X.index
    served = expl.loc[pool]
    served = served[(served["target"] == target) & (served["status"].astype(str) == OK)]
    counts = served["rule"].value_counts()
    rules = list(range(sol.n_rules))
    default = int(counts.index[0]) if len(counts) else 0
    c1, c2 = st.columns([3, 1])
    rule = c1.selectbox("Rule", rules, index=rules.index(default), key=f"{key}_rule",
                        format_func=lambda r: f"{ex.rule_id(target, r)}: {ex.conditions_text(sol.rules, r)}  "
                                              f"({pluralise(counts.get(r, 0), 'test individual')})")
    n = c2.number_input("Individuals shown", 1, 200, value=25, step=5, key=f"{key}_n")
    rows = served.index[served["rule"] == rule][: int(n)]
    if len(rows) == 0:
        st.caption("No test individual is recommended this rule; showing the rule alone.")
    return int(rule), ws.X.loc[rows]


def group_feature(ws: Workspace, key: str) -> str | None:
    groupable = [c for c in ws.features if _is_categorical(ws, c)]
    if not groupable:
        st.caption("No categorical (or few-valued) feature to group by.")
        return None
    return st.selectbox("Group by", groupable, key=key)


def group_values(ws: Workspace, feature: str) -> pd.Series:
    return _filter_column(ws, feature)


SUBGROUP_COLUMNS = {
    "share needing a change": st.column_config.ProgressColumn("share needing a change", format="percent",
                                                              min_value=0.0, max_value=1.0),
    "mean changes (if any)": st.column_config.NumberColumn("mean changes (if any)", format="%.2f"),
}


def recourse_headline(ws: Workspace, result: FitResult, ind: Individual, exp) -> None:
    """The model's output, the one-sentence recourse and the model's verdict on it, big enough for a projector."""
    who = "Edited individual" if ind.edited else f"Row {ind.row}"
    split = ""
    if not ind.edited:
        split = " (test split)" if ind.row in ws.data.test_index else " (fit row)"
    outcome = ws.outcome_name(exp.output)
    target = ""
    if exp.target is not None:
        targets = result.explainer.targets_
        name = ws.target_name(targets[exp.target].target) if exp.target < len(targets) else exp.target_description
        target = f" → favourable outcome: **{name}**"
    st.markdown(f"#### {who}{split}: model output **{outcome}**{target}")
    status = exp.status
    if exp.recourse == "verified" or (exp.recourse is None and status == OK):
        st.success(f"**Recourse ({exp.n_changes} change{'s' if exp.n_changes != 1 else ''}):** {exp.text}",
                   icon=":material/alt_route:")
    elif status == ALREADY_IN_TARGET:
        st.info(exp.text, icon=":material/check_circle:")
    elif status == NO_ACTIONABLE_RULE:
        st.warning(exp.text, icon=":material/block:")
    else:
        st.warning(exp.text, icon=":material/warning:")
    verdict = model_verdict(ws, exp)
    if verdict:
        st.markdown(verdict)
    if exp.paper_text and exp.paper_text != exp.text and exp.status != ALREADY_IN_TARGET:
        st.caption(f"What the optimal rule alone says (before checking on the model): {exp.paper_text}")
    if exp.recourse == "verified" and exp.counterfactual:
        st.button("Try this advice in Edit values", key=session.widget_key(session.INDIVIDUAL_WIDGETS, "try_advice"), icon=":material/edit:",
                  on_click=_follow_advice, args=(ws, dict(exp.counterfactual)),
                  help="Opens Edit values with exactly the changes the sentence states (every other feature as it "
                       "is), so the model's answer can be seen, and the next step if it fails.")


def _follow_advice(ws: Workspace, point: dict) -> None:
    """Fill Edit values with the verified point (a callback: widget keys may be written before the rerun)."""
    prefix = session.INDIVIDUAL_WIDGETS
    session.set_edited_individual({f: point[f] for f in ws.features})
    session.set_widget(session.widget_key(prefix, "mode"), "edit")
    # the form's widgets start from the stored values, not from what they showed before
    session.clear_widgets(session.widget_key(prefix, "e_"))


def model_verdict(ws: Workspace, exp) -> str | None:
    """One honest line: does the model give the favourable outcome at the point the sentence states?"""
    if exp.recourse is None:
        if exp.rule is None:
            return None
        return ("*Not checked on a model: the outputs come from a column of the data. A rule holds for most "
                "individuals inside it, not necessarily for this one.*")
    if exp.recourse == "similar_case":
        return (f":orange[**No verified recourse.**] No point that follows a rule's advice, and no smaller change, "
                f"is confirmed by the model; the similar real case below gets "
                f"**{ws.outcome_name(exp.example_output)}** but is not advice to follow.")
    if exp.recourse != "verified":
        return (":red[**✗ No verified recourse:** no rule has a point the model confirms and no real case to "
                "start a smaller change from.]")
    out = ws.outcome_name(exp.counterfactual_output)
    check = f":green[**✓ Checked on the model:** making exactly the changes above gives **{out}**.]"
    if exp.counterfactual_source == "searched":
        return (check + f" At the rule's nearest values the model still gives {ws.outcome_name(exp.boundary_output)}, "
                "so the values stated lie further inside the rule.")
    if exp.counterfactual_source == "next_rule":
        return (check + f" The optimal rule {exp.rule_id} has no point the model confirms for this individual; "
                f"the recommendation follows the next rule in cost order, {exp.recommended_rule_id}.")
    if exp.counterfactual_source == "minimal_change":
        return (check + " No rule has a point the model confirms here: this is a minimal change found from the "
                "nearest real case with the favourable outcome, every other feature given back.")
    return check


def recourse_alternatives(exp) -> list[dict]:
    """Metacounterfactuals whose metarule has a rule the constraints allow (where recourse WOULD exist)."""
    return [a for a in (exp.alternatives or []) if a.get("rule", -1) is not None and a.get("rule", -1) >= 0]


def no_actionable_alternatives(exp) -> None:
    """For an individual without an actionable rule: the nearby metarules where there would be recourse."""
    alts = recourse_alternatives(exp)
    st.subheader("Where there would be recourse")
    if not alts:
        st.info("No nearby metarule offers an actionable rule under these constraints; relax a constraint (for "
                "example make a feature free, or lower its weight) to find recourse.", icon=":material/info:")
        return
    st.caption("The nearest metarules with a rule the constraints allow: if this individual's features were "
               "different in these ways, the rules would recommend this recourse.")
    for k, a in enumerate(alts, start=1):
        st.markdown(f"{k}. {a['text']}")

    shown = _copy(exp)
    shown.alternatives = alts
    show(metacounterfactual_table(shown).drop(columns=["difference from now"], errors="ignore"))


def side_by_side(ws: Workspace, exp, values: pd.Series, constraints=None) -> None:
    """Current values, the recommended (verified) point, the rule's nearest point and a real example, changes
    first and highlighted, with the model's output at each point in the first row (``constraints``: the
    explainer's, so an immutable feature reads "immutable", not "free")."""
    from tcrex.figures import individual_table  # noqa: PLC0415

    table = build(individual_table, exp, values, changes_first=True, outcome_name=ws.outcome_name,
                  constraints=constraints)
    if table is None:
        return
    table = arrow_safe(table.rename(columns={"counterfactual value": "recommended point"}))
    styled = table.style.apply(_highlight_row, axis=1)
    st.dataframe(styled, hide_index=True, width="stretch")
    st.caption("Highlighted: the features to change. First row: the model's output at each point (✓ = the "
               "favourable outcome).")


def _highlight_row(row: pd.Series) -> list[str]:
    if row.get("action") == "change":
        return ["background-color: #fde7d9; font-weight: 600"] * len(row)
    if str(row.get("feature")).startswith("⟨"):
        return ["background-color: #eef3f8; font-weight: 600"] * len(row)
    return [""] * len(row)


def _cond_lines(conds: dict) -> str:
    return "\n".join(f"- `{f}` {c['text']}" for f, c in conds.items()) or "- *(no condition)*"


def rule_and_metarule(exp) -> None:
    """The rule and the metarule side by side (two columns of condition lists)."""
    if exp.rule is None:
        return
    left, right = st.columns(2)
    with left:
        st.subheader(f"Rule {getattr(exp, 'rule_id', None) or exp.rule}")
        st.markdown(_cond_lines(exp.rule_conditions))
        if exp.changes:
            st.markdown("**Change:** " + ", ".join(
                f"`{c['feature']}` from {_fmt(c['current'])} to "
                + (f"{_fmt(c['value'])}" + (f" (the rule asks {c['condition']})" if c.get("condition") else "")
                   if "value" in c else str(c["condition"]))
                for c in exp.changes))
        if exp.keeps:
            st.markdown("**Keep:** " + ", ".join(f"`{k['feature']}` {k['condition']}" for k in exp.keeps))
    with right:
        st.subheader(f"Metarule {exp.metarule_id or exp.metarule}")
        st.caption("The region of inputs for which this rule is recommended:")
        st.markdown(_cond_lines(exp.metarule_conditions))


def rules_list(ws: Workspace, result: FitResult, target: int, max_static: int = 30) -> None:
    """The rules of one target with accuracy, feasibility, complexity and, where a model can check them, how often
    their recommended points work; wrapped text when few (projector)."""
    from . import verification  # noqa: PLC0415 - verification imports state, as this module does

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
    shares = [c for c in ("works at nearest point", "works (verified)") if c in table.columns]
    if len(table) <= max_static:
        shown = table.assign(accuracy=table["accuracy"].map("{:.3f}".format),
                             feasibility=table["feasibility"].map("{:.3f}".format),
                             **{c: table[c].map(lambda v: "–" if v != v else f"{v:.0%}") for c in shares})
        if "serves" in shown.columns:
            shown["serves"] = shown["serves"].fillna(0).astype(int)
        st.table(shown.set_index("rule"))
    else:
        st.dataframe(table, hide_index=True, width="stretch", column_config=RULE_COLUMNS, height=420)
    if shares:
        st.caption("*serves*: individuals needing recourse who are sent to the rule; *works at nearest point*: "
                   "share of them for whom the model gives the favourable outcome at the rule's nearest point; "
                   "*works (verified)*: share with a point inside the rule that the model confirms (without "
                   "falling back to a real example).")


def static_table(builder: Callable[..., Any], *args, drop: Sequence[str] = (), index: str | None = None,
                 **kwargs) -> pd.DataFrame | None:
    """Build a table with ``builder(*args, **kwargs)`` and draw it as a static table whose long texts wrap, so it
    fits the page at any width (a data grid of long texts scrolls sideways: the metacounterfactual table was
    2,290 px wide in an 818 px box). ``drop`` leaves columns out; ``index`` becomes the row labels."""
    table = build(builder, *args, **kwargs)
    if table is None:
        return None
    shown = table.drop(columns=[c for c in drop if c in table.columns])
    shown = shown.set_index(index) if index in shown.columns else shown.set_index(shown.columns[0])
    st.table(arrow_safe(shown))
    return table


def build(builder: Callable[..., Any], *args, **kwargs) -> Any:
    """Call the figure builder ``builder(*args, **kwargs)`` without drawing; problems become a message and
    ``None``."""
    try:
        return builder(*args, **kwargs)
    except TCRExError as exc:
        st.warning(str(exc), icon=":material/warning:")
    except Exception as exc:  # noqa: BLE001
        log.exception("figure %s failed", getattr(builder, "__name__", builder))
        st.error(f"This figure could not be drawn ({type(exc).__name__}: {exc}).", icon=":material/error:")
    return None


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
