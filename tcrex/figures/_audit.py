"""Figures for a subgroup recourse audit (:func:`tcrex.audit.audit`).

Pure functions: each takes an :class:`~tcrex.audit.AuditResult` and returns a plotly ``go.Figure``,
deterministically. No Streamlit here; the dashboard calls these.

>>> from tcrex.figures import gap_forest_plot               # doctest: +SKIP
>>> gap_forest_plot(result).show()                          # doctest: +SKIP
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..errors import ParameterError
from ..audit import METRICS, AuditResult

__all__ = ["group_comparison_bars", "gap_forest_plot", "changes_distribution_by_group", "feature_change_heatmap",
           "BAR_METRICS"]

GROUP_COLOR = "#4477AA"
REFERENCE_COLOR = "#888888"
SIGNIFICANT_COLOR = "#D55E00"
UNCLEAR_COLOR = "#4477AA"
SMALL_COLOR = "#BBBBBB"
GROUP_PALETTE = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB")
HEAT_SCALE = [[0.0, "#FFF7EC"], [0.5, "#FC8D59"], [1.0, "#B30000"]]
FONT = dict(family="sans-serif", size=13)

#: Metrics :func:`group_comparison_bars` accepts: the compared ones (with intervals) and table shares (without).
BAR_METRICS = {**{k: v[0] for k, v in METRICS.items()},
               "no_rule_share": "share with no valid rule",
               "no_actionable_rule_share": "share with no actionable rule"}


def _safe(text) -> str:
    """User text (group and feature names) shown as text, never as plotly's HTML-like markup."""
    return html.escape(str(text), quote=False)


def _is_share(metric: str) -> bool:
    return metric not in METRICS or METRICS[metric][2] == "share"


def _layout(fig: go.Figure, title: str, height: int, subtitle: str | None = None) -> go.Figure:
    """Shared look; a ``subtitle`` goes on its own smaller line, so long titles fit narrow dashboard columns."""
    spec = dict(text=title, x=0.01, xanchor="left")
    if subtitle:
        spec["subtitle"] = dict(text=subtitle, font=dict(size=12, color="#555555"))
    fig.update_layout(template="plotly_white", font=FONT, height=height,
                      margin=dict(l=10, r=10, t=80 if subtitle else 60, b=40), title=spec)
    return fig


def _check(result) -> None:
    if not isinstance(result, AuditResult):
        raise ParameterError(f"expected the AuditResult returned by tcrex.audit.audit, got {type(result).__name__}")


# ---------------------------------------------------------------------------------------------------- bars
def group_comparison_bars(result: AuditResult, metric: str = "recourse_share") -> go.Figure:
    """One bar per group for ``metric``, with the group's own bootstrap interval as error bars (compared
    metrics only). The reference group is grey; groups below ``min_group_size`` are hatched and labelled."""
    _check(result)
    if metric not in BAR_METRICS:
        raise ParameterError(f"unknown metric {metric!r}; choose one of {list(BAR_METRICS)}")
    table = result.table().set_index("group")
    groups = list(result.groups)
    values = table.loc[groups, metric].to_numpy(dtype=np.float64)
    if metric in METRICS:
        iv = result.metric_intervals()
        iv = iv[iv["metric"] == metric].set_index("group").loc[groups]
        lo, hi = iv["ci_low"].to_numpy(dtype=np.float64), iv["ci_high"].to_numpy(dtype=np.float64)
        n = iv["n"].to_numpy()
        error = dict(type="data", symmetric=False, array=np.nan_to_num(hi - values).tolist(),
                     arrayminus=np.nan_to_num(values - lo).tolist(), color="#333333", thickness=1.2)
    else:
        lo = hi = np.full(len(groups), np.nan)
        n = table.loc[groups, "n"].to_numpy()
        error = None
    small = n < result.min_group_size
    colors = [REFERENCE_COLOR if g == result.reference else GROUP_COLOR for g in groups]
    fmt = (lambda v: f"{v:.0%}") if _is_share(metric) else (lambda v: f"{v:.2f}")
    text = ["–" if not np.isfinite(v) else fmt(v) + (" (small)" if s else "") for v, s in zip(values, small)]
    custom = np.column_stack([n, lo, hi]).tolist()
    fig = go.Figure(go.Bar(
        x=[_safe(g) for g in groups], y=np.where(np.isfinite(values), values, 0.0).tolist(), error_y=error,
        marker=dict(color=colors, pattern=dict(shape=["/" if s else "" for s in small])),
        text=text, textposition="outside", customdata=custom, name=BAR_METRICS[metric], showlegend=False,
        hovertemplate=("%{x}<br>" + BAR_METRICS[metric] + ": %{y:" + (".1%" if _is_share(metric) else ".3f")
                       + "}<br>n = %{customdata[0]}" + ("<br>interval %{customdata[1]:.3g} to %{customdata[2]:.3g}"
                                                         if metric in METRICS else "") + "<extra></extra>")))
    fig.update_xaxes(title_text=_safe(result.group_column), type="category")
    fig.update_yaxes(title_text=BAR_METRICS[metric], tickformat=".0%" if _is_share(metric) else None,
                     rangemode="tozero")
    conf = f"{result.confidence * 100:g}%"
    sub = f"{conf} bootstrap intervals; grey: reference" if metric in METRICS else None
    return _layout(fig, f"{BAR_METRICS[metric].capitalize()} by {_safe(result.group_column)}", 420, sub)


# ---------------------------------------------------------------------------------------------------- forest
def gap_forest_plot(result: AuditResult, metrics=None) -> go.Figure:
    """Each group's difference from the reference, per metric, with its bootstrap interval as whiskers and a
    zero line. Vermillion: the interval excludes zero; blue: no clear difference; grey: a small group.
    Share metrics are in percentage points."""
    _check(result)
    metrics = list(METRICS) if metrics is None else list(metrics)
    for m in metrics:
        if m not in METRICS:
            raise ParameterError(f"unknown metric {m!r}; choose among {list(METRICS)}")
    gaps = result.gaps()
    titles = [METRICS[m][0] + (" (percentage points)" if _is_share(m) else "") for m in metrics]
    fig = make_subplots(rows=len(metrics), cols=1, subplot_titles=titles,
                        vertical_spacing=min(0.3, 0.6 / len(metrics)) if len(metrics) > 1 else 0.0)
    for row, m in enumerate(metrics, start=1):
        part = gaps[gaps["metric"] == m]
        scale = 100.0 if _is_share(m) else 1.0
        d = part["difference"].to_numpy(dtype=np.float64) * scale
        lo = part["ci_low"].to_numpy(dtype=np.float64) * scale
        hi = part["ci_high"].to_numpy(dtype=np.float64) * scale
        colors = [SMALL_COLOR if s else SIGNIFICANT_COLOR if sig else UNCLEAR_COLOR
                  for s, sig in zip(part["small_group"], part["significant"])]
        labels = [_safe(g) for g in part["group"]]
        fig.add_trace(go.Scatter(
            x=d.tolist(), y=labels, mode="markers", name=METRICS[m][0], showlegend=False,
            marker=dict(color=colors, size=10, symbol="diamond"),
            error_x=dict(type="data", symmetric=False, array=np.nan_to_num(hi - d).tolist(),
                         arrayminus=np.nan_to_num(d - lo).tolist(), color="#333333", thickness=1.5),
            customdata=np.column_stack([lo, hi, part["n_group"].to_numpy()]).tolist(),
            hovertemplate="%{y}: %{x:+.3g}<br>interval %{customdata[0]:+.3g} to %{customdata[1]:+.3g}"
                          "<br>n = %{customdata[2]}<extra></extra>"), row=row, col=1)
        fig.add_vline(x=0, line=dict(color="#333333", width=1, dash="dash"), row=row, col=1)
        for label, value in zip(labels, d):
            if not np.isfinite(value):  # e.g. nobody in the group (or the reference) has recourse
                fig.add_annotation(x=0, y=label, text=" not comparable", showarrow=False, xanchor="left",
                                   font=dict(size=11, color="#777777"), row=row, col=1)
        ends = np.concatenate([[0.0], lo[np.isfinite(lo)], hi[np.isfinite(hi)], d[np.isfinite(d)]])
        low, high = float(ends.min()), float(ends.max())
        pad = 0.08 * (high - low) if high > low else (1.0 if scale > 1 else 0.1)
        fig.update_xaxes(range=[low - pad, high + pad], zeroline=False, row=row, col=1)
        fig.update_yaxes(type="category", autorange="reversed", row=row, col=1)
    conf = f"{result.confidence * 100:g}%"
    title = f"Gaps vs {_safe(result.reference_display)} ({conf} bootstrap intervals)"
    if gaps.empty:
        fig.add_annotation(text="Only one group: nothing to compare", showarrow=False, xref="paper", yref="paper",
                           x=0.5, y=0.5)
    n_groups = max(1, len(set(gaps["group"])))
    return _layout(fig, title, 120 + len(metrics) * (90 + 28 * n_groups))


# ---------------------------------------------------------------------------------------------------- changes
def changes_distribution_by_group(result: AuditResult, normalize: bool = True) -> go.Figure:
    """Grouped bars: for each number of changes, the share (or count) of each group's individuals with recourse
    who need that many changes."""
    _check(result)
    counts = result.changes_distribution()
    shares = result.changes_distribution(normalize=True)
    shown = shares if normalize else counts
    fig = go.Figure()
    x = [str(k) for k in counts.columns]
    for i, g in enumerate(result.groups):
        y = shown.loc[g].to_numpy(dtype=np.float64)
        fig.add_trace(go.Bar(
            x=x, y=np.nan_to_num(y).tolist(), name=_safe(g), marker_color=GROUP_PALETTE[i % len(GROUP_PALETTE)],
            customdata=np.column_stack([counts.loc[g].to_numpy(), np.nan_to_num(shares.loc[g].to_numpy())]).tolist(),
            hovertemplate="%{fullData.name}: %{customdata[0]} individuals (%{customdata[1]:.1%}) need %{x} "
                          "change(s)<extra></extra>"))
    fig.update_layout(barmode="group", legend=dict(title=dict(text=_safe(result.group_column))))
    fig.update_xaxes(title_text="number of changes", type="category")
    fig.update_yaxes(title_text="share of individuals with recourse" if normalize else "individuals with recourse",
                     tickformat=".0%" if normalize else None)
    return _layout(fig, f"Number of changes by {_safe(result.group_column)}", 420)


# ---------------------------------------------------------------------------------------------------- heatmap
def feature_change_heatmap(result: AuditResult, kind: str = "change") -> go.Figure:
    """Groups x features: the share of each group's individuals with recourse asked to change (or keep) each
    feature. Empty cells: the group has nobody with recourse."""
    _check(result)
    shares = result.feature_change_shares(kind)
    z = shares.loc[result.groups].to_numpy(dtype=np.float64)
    text = [["" if not np.isfinite(v) else f"{v:.0%}" for v in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=np.where(np.isfinite(z), z, None).tolist(), x=[_safe(f) for f in shares.columns],
        y=[_safe(g) for g in result.groups], zmin=0.0, zmax=1.0, colorscale=HEAT_SCALE, text=text,
        texttemplate="%{text}", xgap=2, ygap=2, colorbar=dict(title=dict(text="share"), tickformat=".0%"),
        hovertemplate="%{y} · %{x}: %{z:.1%}<extra></extra>"))
    fig.update_xaxes(type="category", side="bottom")
    fig.update_yaxes(type="category", autorange="reversed", title_text=_safe(result.group_column))
    verb = "change" if kind == "change" else "keep"
    return _layout(fig, f"Share of individuals with recourse asked to {verb} each feature",
                   160 + 40 * len(result.groups))
