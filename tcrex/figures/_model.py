"""The model's own performance on labelled rows (the dashboard's Model panel): a confusion matrix, ROC and
precision-recall curves for binary classifiers, and residuals for regressors. Each takes a
:class:`tcrex.performance.ModelPerformance` (from :func:`tcrex.performance.model_performance`)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..errors import ParameterError
from ._style import base_layout, clip_text, esc

#: Points of a curve or a residual plot sent to the browser at most (curves keep their end points).
MAX_CURVE_POINTS = 1000
CURVE_COLOR = "#0072B2"
CHANCE_COLOR = "#999999"


def _where(perf) -> str:
    """Short enough for a half-width chart: the row count and how honest it is (``perf.rows`` says the rest)."""
    caveat = {True: "held out from training", False: "training rows: optimistic",
              None: "the model may have seen them"}.get(perf.holdout, "")
    return f"{perf.n_rows:,} rows" + (f" ({caveat})" if caveat else "")


def _thin(*arrays, limit: int = MAX_CURVE_POINTS):
    """Evenly spaced points of equally long arrays (the first and last kept), at most ``limit``."""
    n = len(arrays[0])
    if n <= limit:
        return arrays
    idx = np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))
    return tuple(np.asarray(a)[idx] for a in arrays)


def _need(perf, task: str, what: str) -> None:
    if getattr(perf, "task", None) != task:
        raise ParameterError(f"{what} needs the performance of a {task} model (from tcrex.performance."
                             f"model_performance), got {getattr(perf, 'task', type(perf).__name__)!r}")


def confusion_matrix_figure(perf, *, title: str | None = None) -> go.Figure:
    """Counts of true class (rows) against predicted class (columns), by class name; each cell also shows its
    share of the true class (the diagonal shares are the per-class recall)."""
    _need(perf, "classification", "confusion_matrix_figure")
    cm = perf.confusion
    counts = cm.to_numpy()
    totals = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(totals > 0, counts / np.maximum(totals, 1), 0.0)
    names = [esc(clip_text(str(n), 24)) for n in cm.index]
    text = [[f"{counts[i, j]:,}<br>{share[i, j]:.0%}" for j in range(counts.shape[1])] for i in range(counts.shape[0])]
    fig = go.Figure(go.Heatmap(
        z=share, x=names, y=names, text=text, texttemplate="%{text}", colorscale="Blues", zmin=0, zmax=1,
        showscale=False, hovertemplate="true %{y}, predicted %{x}: %{text}<extra></extra>",
        meta={"kind": "confusion", "counts": counts.tolist()}))
    head = esc(title) if title is not None else "Confusion matrix"
    size = max(300, 160 + 70 * len(names))
    base_layout(fig, head, [esc(_where(perf)), "cell: rows, and share of the true class"], height=size,
                xaxis=dict(title=dict(text="predicted class"), side="bottom", type="category"),
                yaxis=dict(title=dict(text="true class"), autorange="reversed", type="category"))
    fig.update_layout(meta={"kind": "confusion_matrix_figure"})
    return fig


def roc_curve_figure(perf, *, title: str | None = None) -> go.Figure:
    """The ROC curve of the positive class (true-positive rate against false-positive rate) with its AUC; the
    dashed diagonal is a model that guesses."""
    _need(perf, "classification", "roc_curve_figure")
    if perf.roc is None:
        raise ParameterError("no ROC curve: it needs a binary classifier with class scores and both classes "
                             "among the labels")
    fpr, tpr = _thin(perf.roc["fpr"], perf.roc["tpr"])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance", hoverinfo="skip",
                             line=dict(dash="dash", color=CHANCE_COLOR), meta={"kind": "chance"}))
    fig.add_trace(go.Scatter(x=fpr, y=tpr, mode="lines", name=f"AUC {perf.roc['auc']:.3f}",
                             line=dict(color=CURVE_COLOR, width=3),
                             hovertemplate="false-positive rate %{x:.3f}<br>true-positive rate %{y:.3f}<extra></extra>",
                             meta={"kind": "roc", "auc": perf.roc["auc"]}))
    head = esc(title) if title is not None else f"ROC curve: {esc(perf.positive_name)} (AUC {perf.roc['auc']:.3f})"
    base_layout(fig, head, [esc(_where(perf))], height=380,
                xaxis=dict(title=dict(text="false-positive rate"), range=[0, 1]),
                yaxis=dict(title=dict(text="true-positive rate"), range=[0, 1.02]),
                legend=dict(x=0.98, y=0.04, xanchor="right", yanchor="bottom"))
    fig.update_layout(meta={"kind": "roc_curve_figure"})
    return fig


def pr_curve_figure(perf, *, title: str | None = None) -> go.Figure:
    """The precision-recall curve of the positive class with its average precision (the curve's area); the
    dashed line is the share of positives (a model that guesses)."""
    _need(perf, "classification", "pr_curve_figure")
    if perf.pr is None:
        raise ParameterError("no precision-recall curve: it needs a binary classifier with class scores and both "
                             "classes among the labels")
    recall, precision = _thin(perf.pr["recall"], perf.pr["precision"])
    ap, base = perf.pr["average_precision"], perf.pr["base_rate"]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[base, base], mode="lines", name=f"chance ({base:.2f})", hoverinfo="skip",
                             line=dict(dash="dash", color=CHANCE_COLOR), meta={"kind": "chance"}))
    fig.add_trace(go.Scatter(x=recall, y=precision, mode="lines", name=f"average precision {ap:.3f}",
                             line=dict(color=CURVE_COLOR, width=3, shape="hv"),
                             hovertemplate="recall %{x:.3f}<br>precision %{y:.3f}<extra></extra>",
                             meta={"kind": "pr", "average_precision": ap}))
    head = esc(title) if title is not None else \
        f"Precision-recall: {esc(perf.positive_name)} (average precision {ap:.3f})"
    base_layout(fig, head, [esc(_where(perf))], height=380,
                xaxis=dict(title=dict(text="recall"), range=[0, 1]),
                yaxis=dict(title=dict(text="precision"), range=[0, 1.02]),
                legend=dict(x=0.02, y=0.04, xanchor="left", yanchor="bottom"))
    fig.update_layout(meta={"kind": "pr_curve_figure"})
    return fig


def residual_plot(perf, *, max_points: int = 5000, random_state: int = 0, title: str | None = None) -> go.Figure:
    """Residuals (true − predicted) against the predictions, with a zero line; at most ``max_points`` points
    (a deterministic sample, stated under the title)."""
    _need(perf, "regression", "residual_plot")
    pred, res = np.asarray(perf.predicted, dtype=float), np.asarray(perf.residual, dtype=float)
    notes = [_where(perf)]
    idx = np.arange(len(pred))
    if len(idx) > max_points:
        idx = np.sort(np.random.default_rng(random_state).choice(len(idx), max_points, replace=False))
        notes.append(f"random sample of {len(idx):,} points (seed {random_state})")
    Trace = go.Scattergl if len(idx) > 1000 else go.Scatter
    fig = go.Figure(Trace(x=pred[idx], y=res[idx], mode="markers", name="rows",
                          marker=dict(size=5 if len(idx) > 1000 else 7, color=CURVE_COLOR, opacity=0.55),
                          hovertemplate="predicted %{x:.4g}<br>residual %{y:.4g}<extra></extra>",
                          meta={"kind": "residuals", "n": int(len(idx))}))
    fig.add_hline(y=0, line=dict(dash="dash", color="#333333"))
    head = esc(title) if title is not None else "Residuals: true − predicted, against the prediction"
    base_layout(fig, head, [esc(n) for n in notes], height=400, showlegend=False,
                xaxis=dict(title=dict(text="predicted")), yaxis=dict(title=dict(text="residual (true − predicted)")))
    fig.update_layout(meta={"kind": "residual_plot", "n_points": int(len(idx)), "n_rows": int(len(pred))})
    return fig
