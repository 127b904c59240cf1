"""Two-feature views: rules and metarule regions on a plane (paper Figures 1 and 2) and one rule in focus with
chosen individuals (paper Figure 8c).

Open rule sides extend to the plotted range, which is fixed from the data, the rules' finite bounds and the
marked points (plus a 5% margin), so every finite bound is visible. Categorical features are drawn at positions
0..k-1 in the explainer's category order, with the categories as tick labels and a small deterministic jitter for
the data points.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import ModelError, ParameterError, TCRExError
from ..text import class_label, format_difference, format_number, outcome_text, pluralise, value_text
from ..vocabulary import ALREADY_IN_TARGET, NO_RULE, REGRESSION
from ._style import (CLASS_SYMBOLS, base_layout, class_color, clip_text, esc, fmt, rgba, rule_color, rule_dash,
                     solution, target_spec, wrap)

GL_THRESHOLD = 1000  # Scattergl above this many points (one WebGL context per figure)
RULE_ALPHA = 0.28
#: Legend lines of a rule: the whole rule, wrapped at this many characters.
LEGEND_WIDTH = 44
#: Size of the counterfactual diamond; the arrow to it stops this far from its centre plus a gap (annotations are
#: drawn above traces, so an arrow that ran to the centre would hide the marker).
CF_MARKER_SIZE = 15
META_ALPHA = 0.13


def _tmpl(text: str) -> str:
    """A user string safe inside a plotly hovertemplate (no ``%{`` substitution, HTML-like tags escaped)."""
    return esc(text).replace("%{", "%\u200b{")


class _Axis:
    def __init__(self, ex, name: str):
        self.name = name
        self.index = ex.schema_.index(name)
        self.feature = ex.schema_.features[self.index]
        self.categorical = self.feature.is_categorical
        self.integer = getattr(self.feature, "integer", False)
        self.cats = list(self.feature.categories) if self.categorical else None
        self._pos = {c: i for i, c in enumerate(self.cats)} if self.categorical else None
        self._pos_str = {str(c): i for i, c in enumerate(self.cats)} if self.categorical else None
        self.lo = self.hi = None

    def position(self, value) -> float:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return float("nan")
        if self.categorical:
            p = self._pos.get(value, self._pos_str.get(str(value)))
            return float("nan") if p is None else float(p)
        return float(value)

    def positions(self, values) -> np.ndarray:
        if self.categorical:
            s = pd.Series(values, dtype=object)
            codes = pd.Index(self.cats, dtype=object).get_indexer(s.to_numpy())
            miss = codes < 0
            if miss.any():  # values read as other types (e.g. "1" vs 1): match by their text
                codes[miss] = [self._pos_str.get(str(v), -1) for v in s.to_numpy()[miss]]
            return np.where(codes >= 0, codes, np.nan).astype(float)
        return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)

    def set_range(self, finite_values) -> None:
        if self.categorical:
            self.lo, self.hi = -0.5, len(self.cats) - 0.5
            return
        v = np.asarray([x for x in finite_values if x is not None and np.isfinite(x)], dtype=float)
        if not len(v):
            v = np.array([0.0, 1.0])
        lo, hi = float(v.min()), float(v.max())
        span = hi - lo if hi > lo else (abs(lo) or 1.0)
        self.lo, self.hi = lo - 0.05 * span, hi + 0.05 * span

    def segments(self, cond: dict | None) -> list[tuple[float, float]]:
        """Extent of a rule condition on this axis: one (a, b) per contiguous piece, clipped to the range."""
        if cond is None:
            return [(self.lo, self.hi)]
        if self.categorical:
            return self.category_segments(cond.get("in", self.cats))
        low = cond.get("low")
        high = cond.get("high")
        return self.interval_segments(-np.inf if low is None else low, np.inf if high is None else high)

    def interval_segments(self, low: float, high: float) -> list[tuple[float, float]]:
        a, b = max(float(low), self.lo), min(float(high), self.hi)
        return [(a, b)] if b > a else []

    def category_segments(self, cats) -> list[tuple[float, float]]:
        pos = sorted({int(p) for p in (self.position(c) for c in cats) if not math.isnan(p)})
        runs, start = [], None
        for k, p in enumerate(pos):
            if start is None:
                start = p
            if k == len(pos) - 1 or pos[k + 1] != p + 1:
                runs.append((start - 0.5, p + 0.5))
                start = None
        return runs

    def layout(self) -> dict:
        out = dict(title=dict(text=esc(self.name)), range=[self.lo, self.hi], autorange=False, zeroline=False,
                   showline=True, linecolor="#444444", mirror=True)
        if self.categorical:
            out.update(tickmode="array", tickvals=list(range(len(self.cats))),
                       ticktext=[esc(clip_text(value_text(c, self.feature.labels), 28 if self.feature.labels else 18))
                                 for c in self.cats], showgrid=False)
        return out


def _rects_to_path(rects) -> tuple[list, list]:
    xs, ys = [], []
    for (x0, x1), (y0, y1) in rects:
        xs += [x0, x1, x1, x0, x0, None]
        ys += [y0, y0, y1, y1, y0, None]
    return xs, ys


def _sample(n: int, max_points: int, random_state) -> np.ndarray:
    if max_points is None or n <= max_points:
        return np.arange(n)
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n, size=int(max_points), replace=False))


def _check_axes(ex, x, y) -> tuple[_Axis, _Axis]:
    if x == y:
        raise ParameterError(f"x and y must be two different features, got {x!r} twice")
    return _Axis(ex, x), _Axis(ex, y)


def _plane(ex, x, y, X: pd.DataFrame, y_pred, max_points: int, random_state, what: str = "points"):
    """What both plane figures start from: the two axes, the checked outputs, the sampled rows and the note that
    says the points are a sample (``what`` names them)."""
    ax, ay = _check_axes(ex, x, y)
    yv = _check_outputs(X, y_pred)
    idx = _sample(len(X), max_points, random_state)
    notes = []
    if len(idx) < len(X):
        notes.append(f"random sample of {len(idx):,} of {len(X):,} {what} (seed {random_state})")
    return ax, ay, yv, idx, notes


def _check_outputs(X: pd.DataFrame, y_pred):
    if y_pred is None:
        return None
    y = np.asarray(y_pred, dtype=object) if not isinstance(y_pred, np.ndarray) else y_pred
    if len(y) != len(X):
        raise ParameterError(f"y_pred has {len(y)} values for {len(X)} rows of X")
    return y


def _jitter(n: int, random_state, on: bool) -> np.ndarray:
    if not on:
        return np.zeros(n)
    return np.random.default_rng(None if random_state is None else random_state + 1).uniform(-0.28, 0.28, n)


def _point_traces(ex, sol, X, y, ax: _Axis, ay: _Axis, idx, random_state, *, grey: bool, class_names=None) -> list:
    """Data points coloured by model output (classes: one trace each; regression: a colour scale)."""
    Xs = X.iloc[idx]
    px = ax.positions(Xs[ax.name].to_numpy()) + _jitter(len(idx), random_state, ax.categorical)
    py = ay.positions(Xs[ay.name].to_numpy()) + _jitter(len(idx), None if random_state is None else random_state + 7,
                                                          ay.categorical)
    Trace = go.Scattergl if len(idx) > GL_THRESHOLD else go.Scatter
    size = 4 if len(idx) > GL_THRESHOLD else 6
    custom = None
    hx, hy = "%{x}", "%{y}"
    if ax.categorical or ay.categorical:
        custom = np.stack([Xs[a.name].map(lambda v, a=a: esc(value_text(v, a.feature.labels))).to_numpy()
                           for a in (ax, ay)], axis=1)
        hx = "%{customdata[0]}" if ax.categorical else hx
        hy = "%{customdata[1]}" if ay.categorical else hy
    tmpl = f"{_tmpl(ax.name)}: {hx}<br>{_tmpl(ay.name)}: {hy}<extra>%{{fullData.name}}</extra>"
    traces = []
    if y is None:
        traces.append(Trace(x=px, y=py, mode="markers", name="data", customdata=custom, hovertemplate=tmpl,
                            marker=dict(size=size, color="#777777", opacity=0.6),
                            meta={"kind": "points", "n": int(len(idx))}))
        return traces
    ys = y[idx]
    if ex.task_ == REGRESSION:
        vals = pd.to_numeric(pd.Series(ys), errors="coerce").to_numpy(dtype=float)
        marker = dict(size=size, color=vals, colorscale="Viridis", opacity=0.75 if not grey else 0.45,
                      colorbar=dict(title=dict(text="model output", side="top"), orientation="h", thickness=12,
                                    len=0.5, x=0.5, xanchor="center", y=-0.16, yanchor="top"))
        traces.append(Trace(x=px, y=py, mode="markers", name="data (model output)", customdata=custom,
                            hovertemplate=tmpl.replace("<extra>", "<br>output: %{marker.color:.4g}<extra>"),
                            marker=marker, meta={"kind": "points", "n": int(len(idx))}))
        return traces
    in_target = sol.target.contains(ys)
    classes = list(getattr(ex, "classes_", [])) or sorted(pd.unique(ys), key=str)
    for k, c in enumerate(classes):
        sel = np.flatnonzero(pd.Series(ys).astype(str).to_numpy() == str(c))
        if not len(sel):
            continue
        reached = bool(in_target[sel[0]])
        name = outcome_text([c], class_names) + (" (target)" if reached else "")
        if grey:
            color = "#6E6E6E" if reached else "#C4C4C4"
            marker = dict(size=size, color=color, opacity=0.6, symbol=CLASS_SYMBOLS[k % len(CLASS_SYMBOLS)])
        else:
            marker = dict(size=size, color=class_color(k), opacity=0.7, symbol=CLASS_SYMBOLS[k % len(CLASS_SYMBOLS)])
        traces.append(Trace(x=px[sel], y=py[sel], mode="markers", name=esc(name),
                            customdata=None if custom is None else custom[sel], hovertemplate=tmpl, marker=marker,
                            meta={"kind": "points", "n": int(len(sel)), "class": str(c)}))
    return traces


def _rule_hover(ex, target, r, rules_row, conds, ax, ay, class_names=None) -> str:
    other = [f"{esc(f)} {esc(c['text'])}" for f, c in conds.items() if f not in (ax.name, ay.name)]
    text = (f"<b>{esc(rules_row['rule_id'])}</b> → {esc(ex.solution(target).target.describe(class_names))}<br>{esc(rules_row['conditions'])}<br>"
            f"accuracy {rules_row['accuracy']:.3f} · feasibility {rules_row['feasibility']:.3f} · "
            f"complexity {int(rules_row['complexity'])} · n = {int(rules_row['n'])}")
    if other:
        text += "<br><i>not shown on this plane: " + ", ".join(other) + "</i>"
    return text


def _rule_trace(ex, target, r, rules_row, conds, ax, ay, alpha=RULE_ALPHA, width=3.0,
                class_names=None) -> go.Scatter | None:
    rects = [(sx, sy) for sx in ax.segments(conds.get(ax.name)) for sy in ay.segments(conds.get(ay.name))]
    if not rects:
        return None
    xs, ys = _rects_to_path(rects)
    color = rule_color(target, r)
    # the whole rule, wrapped: a legend that cuts a rule off ("income > 43.05, credit_hi…") misleads
    label = "<br>".join(esc(line) for line in wrap(f"{rules_row['rule_id']}: {rules_row['conditions']}",
                                                   LEGEND_WIDTH))
    return go.Scatter(x=xs, y=ys, mode="lines", fill="toself", fillcolor=rgba(color, alpha),
                      line=dict(color=color, width=width, dash=rule_dash(target, r)), name=label,
                      hoveron="fills", hoverinfo="text",
                      text=_rule_hover(ex, target, r, rules_row, conds, ax, ay, class_names),
                      legendgroup="rules", legendgrouptitle=dict(text="Rules"),
                      meta={"kind": "rule", "target": int(target), "rule": int(r), "rule_id": rules_row["rule_id"],
                            "n_rectangles": len(rects),
                            "rectangles": [[float(a), float(b), float(c), float(d)] for (a, b), (c, d) in rects]})


def _resolve_individual(ex, individual, X, y, individual_y):
    """(row as a Series, its model output or None)."""
    if isinstance(individual, pd.DataFrame):
        if len(individual) != 1:
            raise ParameterError(f"individual must be one row, got {len(individual)}")
        row = individual.iloc[0]
    elif isinstance(individual, pd.Series):
        row = individual
    elif isinstance(individual, dict):
        row = pd.Series(individual, dtype=object)
    else:
        if individual not in X.index:
            raise ParameterError(f"individual {individual!r} is neither a row (dict / Series / one-row DataFrame) "
                                 "nor an index label of X")
        row = X.loc[individual]
        if isinstance(row, pd.DataFrame):
            row = row.iloc[0]
    missing = [n for n in ex.schema_.names if n not in row.index]
    if missing:
        raise ParameterError(f"individual lacks feature(s) {missing}")
    output = individual_y
    if output is None and y is not None and row.name is not None and row.name in X.index:
        loc = X.index.get_loc(row.name)
        if isinstance(loc, (int, np.integer)):
            same = all(str(X.iloc[loc][n]) == str(row[n]) for n in ex.schema_.names)
            output = y[loc] if same else None
    return row, output


def _explain_individual(ex, sol, row, output, explanation):
    if explanation is not None:
        return explanation, None
    if output is None and getattr(ex, "model_", None) is None:
        return None, "pass individual_y (the model's output for this individual) to show its counterfactual"
    try:
        exp = ex.explain_one(row.to_frame().T.infer_objects(), y_pred=None if output is None else [output],
                             target=target_spec(sol))
    except (ModelError, TCRExError) as exc:
        return None, str(exc)
    return exp, None


def _merged_cells(sl: pd.DataFrame) -> list[tuple]:
    """The slice's cells merged into maximal runs of one metarule (first along x, then identical runs along y):
    ``(x_states, y_states, metarule, rule)`` with state index ranges."""
    def states(prefix):
        keys = [(None if lo != lo else float(lo), None if hi != hi else float(hi),  # NaN (categorical) -> None
                 tuple(c) if c is not None else None)
                for lo, hi, c in zip(sl[f"{prefix}_low"], sl[f"{prefix}_high"], sl[f"{prefix}_categories"])]
        order = {}
        for k in keys:
            order.setdefault(k, len(order))
        return [order[k] for k in keys], list(order)

    ix, xkeys = states("x")
    iy, ykeys = states("y")
    grid = {(a, b): (int(m), int(r)) for a, b, m, r in zip(ix, iy, sl["metarule"], sl["rule"])}
    runs_by_row = []
    for b in range(len(ykeys)):
        runs, a = [], 0
        while a < len(xkeys):
            end = a
            while end + 1 < len(xkeys) and grid[(end + 1, b)] == grid[(a, b)]:
                end += 1
            runs.append((a, end, *grid[(a, b)]))
            a = end + 1
        runs_by_row.append(runs)
    done, open_ = [], {}
    for b, runs in enumerate(runs_by_row):
        nxt = {}
        for run in runs:
            start = open_.pop(run, b)
            nxt[run] = start
        for run, start in open_.items():
            done.append(((run[0], run[1]), (start, b - 1), run[2], run[3]))
        open_ = nxt
    for run, start in open_.items():
        done.append(((run[0], run[1]), (start, len(runs_by_row) - 1), run[2], run[3]))
    return [(xkeys[x0:x1 + 1], ykeys[y0:y1 + 1], m, r) for (x0, x1), (y0, y1), m, r in done]


def _state_segments(axis: _Axis, keys) -> list[tuple[float, float]]:
    if axis.categorical:
        return axis.category_segments([c for _, _, cats in keys for c in cats])
    return axis.interval_segments(keys[0][0], keys[-1][1])


def _metarule_shapes(ex, target, ax, ay, row) -> tuple[list, list]:
    """Translucent rectangles for the metarule regions on the plane (cells of one metarule merged where they form
    a rectangle, outlined with a dotted line), and one label per metarule at its largest piece."""
    sl = ex.metarule_slice(target, ax.name, ay.name, row)
    shapes, best = [], {}
    for xkeys, ykeys, m, r in _merged_cells(sl):
        color = rule_color(target, r)
        for x0, x1 in _state_segments(ax, xkeys):
            for y0, y1 in _state_segments(ay, ykeys):
                shapes.append(dict(type="rect", xref="x", yref="y", x0=x0, x1=x1, y0=y0, y1=y1, layer="below",
                                   fillcolor=rgba(color, META_ALPHA), line=dict(width=1, color=rgba(color, 0.7),
                                                                                dash="dot"),
                                   name=(f"metarule {ex.metarule_id(target, m)} ({ex.rule_id(target, r)})"
                                         if r >= 0 else f"metarule {ex.metarule_id(target, m)} (no actionable rule)")))
                area = (x1 - x0) / (ax.hi - ax.lo) * (y1 - y0) / (ay.hi - ay.lo)
                if area > best.get(m, (0,))[0]:
                    best[m] = (area, x0, y1, r)
    labels = [dict(x=x0, y=y1, xref="x", yref="y", text=ex.metarule_id(target, m), showarrow=False,
                   name="metarule label",
                   xanchor="left", yanchor="top", xshift=3, yshift=-3, font=dict(size=13, color=rule_color(target, r)),
                   bgcolor="rgba(255,255,255,0.7)")
              for m, (_, x0, y1, r) in sorted(best.items())]
    return shapes, labels


@dataclass(frozen=True, eq=False)
class RulePlotOptions:
    """What :func:`rule_plot` draws besides the data and the rules: all optional, the defaults draw every rule and
    (with an individual, or with exactly two features) the metarule regions over at most 5,000 points.

    >>> RulePlotOptions(individual=12, max_points=2000)  # doctest: +SKIP
    """

    #: The person to mark: a dict, Series, one-row DataFrame or an index label of ``X``. With one, the exact
    #: metarule regions through it are drawn (its other features fixed), with a star and an arrow to its
    #: counterfactual point.
    individual: object = None
    #: The individual's model output; else it comes from ``y_pred`` when the individual is a row of ``X``, else
    #: from the explainer's model.
    individual_y: object = None
    #: The individual's :class:`~tcrex.LocalExplanation`, to skip recomputing it.
    explanation: object = None
    #: Draw the rules as filled rectangles.
    show_rules: bool = True
    #: Shade the metarule regions (through the individual; with exactly two features, without one too).
    show_metarules: bool = True
    #: At most this many data points (a deterministic random sample, stated in the title).
    max_points: int = 5000
    #: Seed of that sample and of the categorical jitter.
    random_state: int = 0
    #: The figure's title; default "<target>: rules on <x> × <y>".
    title: str | None = None
    #: ``{label: name}``: names the classes in the legend and the title.
    class_names: dict | None = None


def rule_plot(ex, target: int, x: str, y: str, X: pd.DataFrame, y_pred=None,
              options: RulePlotOptions | None = None) -> go.Figure:
    """Rules of one target on the plane of features ``x`` and ``y`` (paper Figures 1 and 2).

    Data points (a deterministic random sample of at most ``options.max_points``, stated in the title) are
    coloured by model output; rules are filled rectangles with hover text (conditions, accuracy, feasibility).
    With ``options.individual`` the exact metarule regions through it are drawn (other features fixed at its
    values), with the individual as a large star and an arrow to its counterfactual point (see
    :class:`RulePlotOptions` for every option). With exactly two features the metarule regions are drawn even
    without an individual. Rules are named by their ids ("R2").
    """
    o = options if options is not None else RulePlotOptions()
    individual, show_rules, show_metarules = o.individual, o.show_rules, o.show_metarules
    max_points, random_state, individual_y = o.max_points, o.random_state, o.individual_y
    explanation, title, class_names = o.explanation, o.title, o.class_names
    sol = solution(ex, target)
    X = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X, columns=ex.schema_.names)
    ax, ay, yv, idx, notes = _plane(ex, x, y, X, y_pred, max_points, random_state)
    rules = ex.rules_frame()
    rules = rules[rules.target == target].set_index("rule")
    conds = {r: ex.rule_conditions(target, r) for r in range(sol.n_rules)}
    row = output = exp = None
    if individual is not None:
        row, output = _resolve_individual(ex, individual, X, yv, individual_y)
        exp, problem = _explain_individual(ex, sol, row, output, explanation)
        if problem:
            notes.append(problem)
    # axis ranges: data, finite rule bounds and the marked points
    for a in (ax, ay):
        vals = list(a.positions(X.iloc[idx][a.name].to_numpy())) if not a.categorical else []
        if not a.categorical:
            for c in conds.values():
                if a.name in c:
                    vals += [c[a.name].get("low"), c[a.name].get("high")]
            if row is not None:
                vals.append(a.position(row[a.name]))
            for pt in (exp.counterfactual if exp else None, exp.example if exp else None):
                if pt:
                    vals.append(a.position(pt.get(a.name)))
        a.set_range([v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))])
    fig = go.Figure()
    fig.add_traces(_point_traces(ex, sol, X, yv, ax, ay, idx, random_state, grey=False, class_names=class_names))
    if show_rules:
        for r in range(sol.n_rules):
            tr = _rule_trace(ex, target, r, rules.loc[r], conds[r], ax, ay, class_names=class_names)
            if tr is not None:
                fig.add_trace(tr)
    shapes, labels = [], []
    meta_row = row if row is not None else (X.iloc[0] if len(ex.schema_) == 2 and len(X) else None)
    if show_metarules and meta_row is not None and sol.n_rules:
        shapes, labels = _metarule_shapes(ex, target, ax, ay, meta_row)
        notes.append("shaded: metarule regions" + (" through the individual (its other features fixed)"
                                                    if len(ex.schema_) > 2 else ""))
    annotations = list(labels)
    if row is not None:
        ix, iy = ax.position(row[ax.name]), ay.position(row[ay.name])
        if exp is not None and exp.counterfactual:
            cx, cy = ax.position(exp.counterfactual[ax.name]), ay.position(exp.counterfactual[ay.name])
            color = rule_color(target, exp.rule) if exp.rule is not None else "#111111"
            fig.add_trace(go.Scatter(x=[cx], y=[cy], mode="markers", name="counterfactual",
                                     marker=dict(symbol="diamond", size=CF_MARKER_SIZE, color=color,
                                                 line=dict(color="#111111", width=2)),
                                     hovertext=[esc(exp.text)], hoverinfo="text", meta={"kind": "counterfactual"}))
            if (cx, cy) != (ix, iy):
                annotations.append(dict(x=cx, y=cy, ax=ix, ay=iy, xref="x", yref="y", axref="x", ayref="y",
                                        text="", showarrow=True, arrowhead=3, arrowsize=1.2, arrowwidth=2.5,
                                        arrowcolor="#111111", standoff=CF_MARKER_SIZE // 2 + 4,
                                        startstandoff=12, name="counterfactual arrow"))
            off = [c for c in exp.changes if c["feature"] not in (ax.name, ay.name)]
            if off:
                notes.append("also to change: " + ", ".join(f"{c['feature']} {c['condition']}" for c in off))
        if exp is not None and exp.example:
            ex_x, ex_y = ax.position(exp.example[ax.name]), ay.position(exp.example[ay.name])
            fig.add_trace(go.Scatter(x=[ex_x], y=[ex_y], mode="markers", name="nearest real example",
                                     marker=dict(symbol="square-open", size=14, color="#111111", line=dict(width=2)),
                                     hovertext=[f"fit row {esc(exp.example_index)}"], hoverinfo="text",
                                     meta={"kind": "example"}))
        fig.add_trace(go.Scatter(x=[ix], y=[iy], mode="markers", name="individual",
                                 marker=dict(symbol="star", size=22, color="#111111",
                                             line=dict(color="#FFFFFF", width=1.5)),
                                 hovertext=[_individual_hover(exp, row, ax, ay, class_names)], hoverinfo="text",
                                 meta={"kind": "individual"}))
        if exp is not None and exp.status in (ALREADY_IN_TARGET, NO_RULE):
            notes.append(exp.text)
    fig.update_layout(shapes=shapes, annotations=annotations)
    head = title if title is not None else f"{sol.target.describe(class_names)}: rules on {x} × {y}"
    base_layout(fig, esc(head), [esc(n) for n in notes], height=640, xaxis=ax.layout(),
                yaxis=ay.layout(), legend=dict(x=1.02, y=1, xanchor="left", groupclick="toggleitem"),
                hoverlabel=dict(align="left"))
    if ex.task_ == REGRESSION and yv is not None:  # room for the horizontal colour bar under the x axis
        fig.update_layout(margin=dict(b=130), height=fig.layout.height + 70)
    fig.update_layout(meta={"kind": "rule_plot", "target": int(target), "x": x, "y": y, "n_points": int(len(idx)),
                            "n_rows": int(len(X))})
    return fig


def _individual_hover(exp, row, ax, ay, class_names=None) -> str:
    head = (f"<b>individual</b><br>{esc(ax.name)} = {esc(fmt(row[ax.name]))}<br>"
            f"{esc(ay.name)} = {esc(fmt(row[ay.name]))}")
    if exp is None:
        return head
    return head + f"<br>output: {esc(class_label(exp.output, class_names) or exp.output)}<br>{esc(exp.text)}"


# ====================================================================== Figure 8c
def _violates(cond: dict, value) -> bool:
    if "in" in cond:
        return value not in cond["in"] and str(value) not in {str(c) for c in cond["in"]}
    v = float(value)
    low, high = cond.get("low"), cond.get("high")
    return (low is not None and v <= low) or (high is not None and v > high)


def _needed(feature, cond: dict, value) -> str:
    """What one feature must do to satisfy the condition, with the minimum numeric change (values and changes
    printed exactly, by :func:`tcrex.text.format_number`, so the text is true of them)."""
    if "in" in cond:
        return f"{esc(feature)}: {esc(fmt(value))} → {esc(cond['text'])}"
    v = float(value)
    low, high = cond.get("low"), cond.get("high")
    head = f"{esc(feature)}: {esc(format_number(v))} → {esc(cond['text'])}"
    if high is not None and v > high:
        return f"{head} (by ≥ {format_difference(v, high)} less)"
    return f"{head} (by > {format_difference(low, v)} more)"


def _project(axis: _Axis, cond: dict | None, value) -> float:
    """The nearest position inside a condition on one axis (for drawing; strict lower bounds drawn on the edge)."""
    p = axis.position(value)
    if cond is None or not _violates(cond, value):
        return p
    if axis.categorical:
        allowed = [axis.position(c) for c in cond["in"]]
        allowed = [a for a in allowed if not math.isnan(a)]
        return min(allowed, key=lambda a: (abs(a - p), a)) if allowed else p
    low, high = cond.get("low"), cond.get("high")
    if high is not None and p > high:
        return float(math.floor(high)) if axis.integer and math.floor(high) > (low if low is not None else -np.inf) \
            else float(high)
    if axis.integer and (high is None or math.floor(low) + 1 <= high):
        return float(math.floor(low) + 1)
    return float(low)


def _focus_axes(ex, target, rule, conds, X, individuals) -> tuple[str, str]:
    names = ex.schema_.names
    if len(names) < 2:
        raise ParameterError("a 2-D rule plot needs at least two features")
    sample = X.iloc[_sample(len(X), 2000, 0)]
    scored = []
    for f, c in conds.items():
        n_out = sum(_violates(c, v) for v in individuals[f]) if len(individuals) else 0
        share = float(np.mean([_violates(c, v) for v in sample[f]])) if len(sample) else 0.0
        scored.append((-n_out, -share, names.index(f), f))
    chosen = [f for *_, f in sorted(scored)[:2]]
    if len(chosen) < 2:  # fill up with the features the target's other rules use most
        sol = ex.solution(target)
        use = {n: 0 for n in names}
        for r in range(sol.n_rules):
            for f in ex.rule_conditions(target, r):
                use[f] += 1
        rest = sorted((n for n in names if n not in chosen), key=lambda n: (-use[n], names.index(n)))
        chosen += rest[: 2 - len(chosen)]
    return chosen[0], chosen[1]


def rule_focus_plot(ex, target: int, rule: int, X: pd.DataFrame, y_pred, individuals: pd.DataFrame,
                    x: str | None = None, y: str | None = None, max_points: int = 5000, *, random_state: int = 0,
                    max_individuals: int = 200, class_names=None) -> go.Figure:
    """One rule in focus (paper Figure 8c): the fit data small and grey, the rule as a rectangle, and the chosen
    ``individuals`` large, each with an arrow to its nearest point of the rule on this plane and a hover saying
    what it must change (with the minimum numeric change). Without ``x``/``y`` the plane is the rule's two most
    important features: those the individuals most often violate, then the most selective on X. ``rule`` is the
    rule's index within the target; the title names it by its id ("R2") and the target by ``class_names``."""
    sol = solution(ex, target)
    if isinstance(rule, bool) or not isinstance(rule, (int, np.integer)) or not 0 <= int(rule) < sol.n_rules:
        raise ParameterError(f"rule must be a rule id of target {target} (0..{sol.n_rules - 1}), got {rule!r}")
    rule = int(rule)
    X = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X, columns=ex.schema_.names)
    individuals = individuals if isinstance(individuals, pd.DataFrame) else pd.DataFrame(individuals)
    conds = ex.rule_conditions(target, rule)
    shown = individuals.iloc[:max_individuals]
    if x is None or y is None:
        fx, fy = _focus_axes(ex, target, rule, conds, X, shown)
        if x is None and y is None:
            x, y = fx, fy
        elif x is None:
            x = fx if fx != y else fy
        else:
            y = fy if fy != x else fx
    ax, ay, yv, idx, notes = _plane(ex, x, y, X, y_pred, max_points, random_state, what="fit points")
    if len(shown) < len(individuals):
        notes.append(f"first {len(shown)} of {len(individuals)} individuals")
    for a in (ax, ay):
        vals = []
        if not a.categorical:
            vals = list(a.positions(X.iloc[idx][a.name].to_numpy())) + list(a.positions(shown[a.name].to_numpy()))
            if a.name in conds:
                vals += [conds[a.name].get("low"), conds[a.name].get("high")]
        a.set_range([v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))])
    rules = ex.rules_frame()
    rrow = rules[(rules.target == target) & (rules.rule == rule)].iloc[0]
    fig = go.Figure()
    fig.add_traces(_point_traces(ex, sol, X, yv, ax, ay, idx, random_state, grey=True, class_names=class_names))
    tr = _rule_trace(ex, target, rule, rrow, conds, ax, ay, alpha=0.22, width=3.5, class_names=class_names)
    if tr is not None:
        fig.add_trace(tr)
    px = ax.positions(shown[ax.name].to_numpy())
    py = ay.positions(shown[ay.name].to_numpy())
    hover, n_changes, arrows, off_plane = [], [], [], 0
    color = rule_color(target, rule)
    for k, (label, r) in enumerate(shown.iterrows()):
        need = [_needed(f, c, r[f]) for f, c in conds.items() if _violates(c, r[f])]
        keep = [f"{esc(f)} {esc(c['text'])}" for f, c in conds.items() if not _violates(c, r[f])]
        n_changes.append(len(need))
        text = f"<b>row {esc(label)}</b>: {pluralise(len(need), 'change')}"
        if need:
            text += "<br>change " + "<br>change ".join(need)
        if keep:
            text += "<br>keep " + ", ".join(keep)
        hover.append(text)
        tx, ty = _project(ax, conds.get(ax.name), r[ax.name]), _project(ay, conds.get(ay.name), r[ay.name])
        moved = (tx, ty) != (px[k], py[k]) and not (math.isnan(tx) or math.isnan(ty))
        off_plane += bool(need) and not moved
        if moved:
            arrows.append(dict(x=tx, y=ty, ax=px[k], ay=py[k], xref="x", yref="y", axref="x", ayref="y", text="",
                               showarrow=True, arrowhead=3, arrowwidth=2, arrowcolor="#333333", standoff=3,
                               startstandoff=7, name="change arrow"))
    fig.add_trace(go.Scatter(x=px, y=py, mode="markers", name="chosen individuals", hovertext=hover,
                             hoverinfo="text",
                             marker=dict(size=15, color=[color if c == 0 else "#222222" for c in n_changes],
                                         line=dict(color="#FFFFFF", width=1.5)),
                             meta={"kind": "individuals", "n": int(len(shown)), "n_changes": n_changes}))
    fig.update_layout(annotations=arrows)
    notes.append("arrows: to the nearest point of the rule on this plane; hover a large point for its changes")
    if off_plane:
        notes.append(f"{pluralise(off_plane, 'individual')} inside the rectangle must still change features not "
                     "shown here")
    head = f"{rrow['rule_id']} → {sol.target.describe(class_names)}: {rrow['conditions']}"
    base_layout(fig, "<br>".join(esc(s) for s in _wrap_title(head)), [esc(n) for n in notes], height=660,
                xaxis=ax.layout(), yaxis=ay.layout(), legend=dict(x=1.02, y=1),
                hoverlabel=dict(align="left"))
    fig.update_layout(meta={"kind": "rule_focus_plot", "target": int(target), "rule": rule, "x": x, "y": y})
    return fig


def _wrap_title(text: str, width: int = 90) -> list[str]:
    lines = wrap(text, width)
    return lines[:3] if len(lines) <= 3 else lines[:2] + [clip_text(" ".join(lines[2:]), width)]
