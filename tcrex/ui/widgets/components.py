"""Dashboard pieces several pages share: figure display, the population picker, the target choice, the chosen
individual, tables.

Pages call these so that they stay a short story ("pick a population, draw the bars").  Widgets that one page
uses live beside that page's helpers: :mod:`tcrex.ui.pages.individual`, :mod:`tcrex.ui.pages.rule_plot`,
:mod:`tcrex.ui.pages.global_rules` (and :mod:`tcrex.ui.pages.global_rules`), :mod:`tcrex.ui.pages.change_keep`, :mod:`tcrex.ui.pages.audit`,
:mod:`tcrex.ui.pages.compare`, :mod:`tcrex.ui.pages.data_model` (Data & model).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from tcrex.population import labelled_groups
from tcrex.errors import TCRExError
from tcrex.performance import ModelPerformance
from tcrex.vocabulary import OK, REGRESSION

from ..state import session, shared
from ..state.active import DataAndModel, FitResult, model_performance

log = logging.getLogger(__name__)

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


def shared_chart(result: FitResult, share: Hashable | None, builder: Callable[..., Any], *args, height: int | None = None,
                 key: str | None = None, legend_below: bool = False, dot_width: str = "stretch", **kwargs) -> None:
    """:func:`chart`, with the figure built once per server when ``result`` is the fit every session shares.

    ``share`` names what the figure depends on besides ``result`` and ``builder`` (the caller's choices: target,
    population, toggles); ``args``/``kwargs`` must follow from ``result`` and ``share``. The figure is built, its
    legend, height and toolbar room set (what :func:`show` does), then kept and drawn as it is by every session:
    drawing only reads it (``st.plotly_chart`` serialises a copy), so no session copies or changes it. Eight sessions
    opening a page at once built the same figures eight times on one interpreter. A private fit, or a builder that
    fails, takes :func:`chart`'s path (which shows the message); so does ``share=None`` (a view that is not the
    same for every session, such as a filtered population)."""
    if share is None or not shared.is_shared_result(result):
        chart(builder, *args, height=height, key=key, legend_below=legend_below, dot_width=dot_width, **kwargs)
        return
    name = (builder.__module__, builder.__qualname__, height, legend_below)
    try:
        out, drawn_height = shared.view(result, "figure", (name, share), lambda: prepare_figure(
            builder(*args, **kwargs), height, legend_below))
    except Exception:  # noqa: BLE001 - the plain path says what went wrong, as before
        chart(builder, *args, height=height, key=key, legend_below=legend_below, dot_width=dot_width, **kwargs)
        return
    draw_prepared(out, height=drawn_height, key=key, dot_width=dot_width)


def shared_build(result: FitResult, share: Hashable | None, builder: Callable[..., Any], *args, **kwargs) -> Any:
    """:func:`build` once per server for the shared fit (see :func:`shared_chart`); for values nobody changes
    (text such as an SVG)."""
    if share is None or not shared.is_shared_result(result):
        return build(builder, *args, **kwargs)
    try:
        return shared.view(result, "built", ((builder.__module__, builder.__qualname__), share),
                           lambda: builder(*args, **kwargs))
    except Exception:  # noqa: BLE001 - the plain path says what went wrong, as before
        return build(builder, *args, **kwargs)


def prepare_figure(out: Any, height: int | None, legend_below: bool) -> tuple[Any, int | None]:
    """A built figure as :func:`chart` and :func:`show` leave it before drawing: legend below, height, toolbar
    room (the same calls in the same order)."""
    if legend_below and hasattr(out, "update_layout"):
        margin = legend_below_plot(out)
        if height:
            height += max(margin - _ONE_LEGEND_ROW, 0)
    if hasattr(out, "to_plotly_json"):
        if height:
            out.update_layout(height=height)
        modebar_room(out)
    return out, height


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
    if hasattr(out, "to_plotly_json"):
        out, height = prepare_figure(out, height, legend_below=False)
    draw_prepared(out, height=height, key=key, dot_width=dot_width)


def draw_prepared(out: Any, height: int | None = None, key: str | None = None, dot_width: str = "stretch") -> None:
    """Draw a prepared figure (:func:`prepare_figure`) without changing it."""
    if out is None:
        return
    if isinstance(out, str):
        st.graphviz_chart(out, width=dot_width)
    elif isinstance(out, pd.DataFrame):
        st.dataframe(arrow_safe(out), hide_index=True, width="stretch", height=height or "auto")
    elif hasattr(out, "to_plotly_json"):
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
                out[c] = col.map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v)) else display_value(v))
    return out


# ============================================================================================ populations
@dataclass
class Population:
    label: str
    index: pd.Index  # row labels of ws.X
    #: How to choose the same rows again (plain JSON, kept in a workspace): ``{"mode": "all" | "fit" | "test"}``,
    #: a filter ``{"mode": "filter", "feature": f, "values": [...]}``, ``{..., "range": [low, high]}`` or
    #: ``{..., "constant": v}`` (a feature holding one value), a
    #: subgroup ``{"mode": "subgroup", "feature": f, "value": v}`` (:func:`population_from_spec`).
    spec: dict | None = None

    def frame(self, ws: DataAndModel) -> pd.DataFrame:
        return ws.X.loc[self.index]

    def outputs(self, ws: DataAndModel) -> np.ndarray:
        return ws.y_pred[ws.X.index.get_indexer(self.index)]


OUTPUT = "⟨model output⟩"


def _filter_column(ws: DataAndModel, name: str) -> pd.Series:
    if name == OUTPUT:
        return pd.Series(ws.y_pred, index=ws.X.index, name=OUTPUT)
    return ws.X[name]


def is_groupable(ws: DataAndModel, name: str) -> bool:
    """Whether a feature (or the model output) forms groups: categorical, or at most 12 distinct values."""
    if name == OUTPUT:
        return ws.task != REGRESSION
    return name in ws.data.categorical or ws.X[name].nunique() <= 12


#: A population's label and the selector's mode that gives it, for the modes saved settings can rebuild.
SIMPLE_POPULATIONS = {"all rows": "all", "fit rows": "fit", "test split": "test"}


def population_of(ws: DataAndModel, mode: str) -> Population | None:
    """The population of a selector mode that needs no further choice ("all", "fit", "test"; "test" without a test
    split is all rows, as the selector offers it), or None (a filter or a subgroup: its choices are widgets)."""
    if mode == "fit":
        return Population("fit rows", ws.data.fit_index, {"mode": "fit"})
    if mode == "test" and len(ws.data.test_index):
        return Population("test split", ws.data.test_index, {"mode": "test"})
    if mode in ("all", "test"):
        return Population("all rows", ws.X.index, {"mode": "all"})
    return None


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _kept_values(ws: DataAndModel, feature: str, chosen: list) -> Population:
    col = _filter_column(ws, feature)
    chosen = [_plain(v) for v in chosen]
    return Population(f"{feature} in {{{', '.join(map(str, chosen))}}}", ws.X.index[col.isin(chosen).to_numpy()],
                      {"mode": "filter", "feature": feature, "values": chosen})


def _kept_range(ws: DataAndModel, feature: str, low: float, high: float) -> Population:
    col = _filter_column(ws, feature)
    return Population(f"{low:.4g} ≤ {feature} ≤ {high:.4g}", ws.X.index[((col >= low) & (col <= high)).to_numpy()],
                      {"mode": "filter", "feature": feature, "range": [float(low), float(high)]})


def _constant(ws: DataAndModel, feature: str, value: float) -> Population:
    """A filter on a feature that holds one value: every row, named by that value."""
    return Population(f"{feature} = {value:g}", ws.X.index,
                      {"mode": "filter", "feature": feature, "constant": float(value)})


def _subgroup(ws: DataAndModel, feature: str, value) -> Population:
    col = _filter_column(ws, feature)
    value = _plain(value)
    return Population(f"{feature} = {value}", ws.X.index[(col == value).to_numpy()],
                      {"mode": "subgroup", "feature": feature, "value": value})


def population_from_spec(ws: DataAndModel, spec) -> Population | None:
    """The population a :attr:`Population.spec` describes, rebuilt on this data with the label the selector gave
    it; None when the spec is missing or no longer fits the data (its feature is gone)."""
    if not isinstance(spec, dict):
        return None
    mode, feature = spec.get("mode"), spec.get("feature")
    if mode in ("all", "fit", "test"):
        return population_of(ws, mode)
    if feature != OUTPUT and feature not in ws.features:
        return None
    if mode == "subgroup" and "value" in spec:
        return _subgroup(ws, feature, spec["value"])
    if mode == "filter" and isinstance(spec.get("values"), list):
        return _kept_values(ws, feature, spec["values"])
    if mode == "filter" and "constant" in spec:
        return _constant(ws, feature, float(spec["constant"]))
    if mode == "filter" and isinstance(spec.get("range"), list) and len(spec["range"]) == 2:
        return _kept_range(ws, feature, *map(float, spec["range"]))
    return None


def population(ws: DataAndModel, key: str, *, choices=("all", "fit", "test", "filter", "subgroup"),
               default: str = "fit", label: str = "Population") -> Population:
    """A population selector: all rows, the fit rows, the test split, a filter, or a subgroup."""
    names = {"all": "All rows", "fit": "Fit rows (used to fit the rules)", "test": "Test split (hold-out)",
             "filter": "A filter…", "subgroup": "A subgroup…"}
    choices = [c for c in choices if c != "test" or len(ws.data.test_index)]
    mode = st.segmented_control(label, choices, default=default if default in choices else choices[0],
                                format_func=names.get, key=f"{key}_mode", required=True)
    index = ws.X.index
    simple = population_of(ws, mode or "all")
    if simple is not None:
        return simple
    options = [OUTPUT, *ws.features]
    if mode == "subgroup":
        groupable = [c for c in options if is_groupable(ws, c)]
        if not groupable:
            st.caption("No categorical feature to form subgroups; showing all rows.")
            return Population("all rows", index, {"mode": "all"})
        c1, c2 = st.columns(2)
        feature = c1.selectbox("Subgroup feature", groupable, key=f"{key}_sub_feature",
                               index=min(1, len(groupable) - 1))
        col = _filter_column(ws, feature)
        values = sorted(col.dropna().unique().tolist(), key=str)
        value = c2.selectbox("Value", values, key=f"{key}_sub_value_{feature}", format_func=str)
        return _subgroup(ws, feature, value)
    c1, c2 = st.columns([1, 2])
    feature = c1.selectbox("Filter on", options, key=f"{key}_filter_feature")
    col = _filter_column(ws, feature)
    if is_groupable(ws, feature):
        values = sorted(col.dropna().unique().tolist(), key=str)
        chosen = c2.multiselect("Keep values", values, default=values[:1], key=f"{key}_filter_values_{feature}",
                                format_func=str)
        pop = _kept_values(ws, feature, chosen)
    else:
        lo, hi = float(col.min()), float(col.max())
        if lo == hi:
            return _constant(ws, feature, lo)
        low, high = c2.slider("Range", lo, hi, (lo, hi), key=f"{key}_filter_range_{feature}")
        pop = _kept_range(ws, feature, low, high)
    if not len(pop.index):
        st.warning("No row matches this filter; widen it.", icon=":material/filter_alt_off:")
    return pop


def group_values(ws: DataAndModel, feature: str) -> pd.Series:
    """A feature's values (or the model output's) on every row, to group rows by (a labelled feature's groups
    named by label and code, :func:`tcrex.population.labelled_groups`)."""
    return labelled_groups(_filter_column(ws, feature), ws.data.value_labels.get(feature))


# ============================================================================================ tables


def with_rule_ids(frame: pd.DataFrame, ex) -> pd.DataFrame:
    """A frame with ``target`` and per-target ``rule`` columns, its ``rule`` column replaced by the rule's public
    id (``TCREx.rule_id``: "R3"), as every other view names rules."""
    if not {"target", "rule"} <= set(frame.columns) or not len(frame):
        return frame
    out = frame.copy()
    out["rule"] = [ex.rule_id(int(t), int(r)) if pd.notna(t) and pd.notna(r) else None
                   for t, r in zip(out["target"], out["rule"])]
    return out


def target_choice(ws: DataAndModel, result: FitResult, key: str, label: str = "Target outcome") -> int:
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


# ============================================================================================ individuals
def default_individual(ws: DataAndModel, result: FitResult) -> Any:
    """The first test row that needs a change to reach the first target (a good demo), else the first row."""
    ok = (result.explanations["status"].astype(str) == OK) & (result.explanations["target"] == 0).fillna(False)
    pool = ws.data.test_index if len(ws.data.test_index) else ws.X.index
    candidates = ok.loc[pool]
    hits = candidates[candidates].index
    return hits[0] if len(hits) else ws.X.index[0]


def current_individual(ws: DataAndModel, result: FitResult) -> Any:
    """The chosen individual (a row label; the Individual, Rule map and Global rules pages and the report share
    it), else :func:`default_individual`."""
    row = session.individual()
    if row is None or row not in ws.X.index:
        row = default_individual(ws, result)
        session.set_individual(row)
    return row


def display_value(v):
    """A cell value as a table shows it: floats to 4 significant digits, numbers and booleans as text."""
    if isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    if isinstance(v, (int, np.integer)):
        return str(v)
    return v


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




#: How each kind of rows qualifies a performance figure (``ModelPerformance.holdout``).
_ROWS_CAVEAT = {True: "on hold-out rows", False: "on training rows: optimistic",
                None: "on rows that may include training rows"}


def model_score(ws: DataAndModel) -> tuple[str, float, object] | None:
    """The model's headline figure, one owner for the Overview's metric, the sidebar and the Data & model page:
    ``(name, value, performance)`` from :func:`tcrex.ui.state.active.model_performance` (accuracy, or R² for
    regression), None when there is none."""
    name = "R²" if ws.task == REGRESSION else "accuracy"
    perf = model_performance(ws)
    if not isinstance(perf, ModelPerformance) or name not in perf.metrics:
        return None
    return name, float(perf.metrics[name]), perf


def model_score_text(ws: DataAndModel) -> str:
    """The headline figure in a few words: "accuracy 92.0% (on hold-out rows)"; "" when none (the rows it was
    measured on are in the Overview metric's help and the Data & model page's panel)."""
    score = model_score(ws)
    if score is None:
        return ""
    name, value, perf = score
    return (f"{name} {value:.3f}" if name == "R²" else f"{name} {value:.1%}") + f" ({_ROWS_CAVEAT[perf.holdout]})"


def model_score_metric(column, ws: DataAndModel) -> None:
    """The model's headline figure (accuracy, or R² for regression) as a metric that says on which rows it was
    measured, with a caption under it when those may be training rows: the same measurement as the Data & model
    page's panel (:func:`tcrex.ui.state.active.model_performance`), so the two never disagree."""
    name = "R²" if ws.task == REGRESSION else "accuracy"
    score = model_score(ws)
    if score is None:
        perf = model_performance(ws)
        column.metric(f"Model {name}", "n/a", help=perf if isinstance(perf, str) else None)
        return
    name, value, perf = score
    column.metric(f"Model {name}", f"{value:.3f}" if name == "R²" else f"{value:.1%}",
                  help=f"{ws.model.label}, measured on {perf.rows} ({_ROWS_CAVEAT[perf.holdout]}).")
    caveat = _ROWS_CAVEAT[perf.holdout]
    column.caption(caveat[0].upper() + caveat[1:] if perf.holdout else f":material/warning: {caveat.capitalize()}")


def example_rule_sentence(ws: DataAndModel, result: FitResult) -> str | None:
    """One rule of the current fit in words, to show what a counterfactual rule is on *this* data (the Overview
    quoted the bundled sample's rule on any data): the rule serving the most rows, toward the favourable outcome
    when one is chosen. None when the fit has no rule."""
    ex = result.explainer
    rules = ex.rules_frame()
    if rules.empty:
        return None
    best = rules.sort_values(["n", "accuracy"], ascending=False).iloc[0]
    outcome = ws.target_name(ex.targets_[int(best["target"])].target)
    return (f"on this data, *“with {best['conditions']}, the model gives {outcome}”* — rule {best['rule_id']}: "
            f"{float(best['accuracy']):.0%} of the {int(best['n']):,} fit rows it covers get that outcome")
