"""Figures of a monitor's history (:meth:`tcrex.monitor.Monitor.history`): the versions on a timeline, and each
group's verified-recourse share with its interval across versions.

Pure functions: each takes a :class:`~tcrex.monitor.History` and returns a plotly ``go.Figure``, deterministically.
No Streamlit here; the dashboard and notebooks call these.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import ParameterError
from ..monitor import History
from ._style import FONT, RULE_PALETTE, TEMPLATE, rgba

__all__ = ["monitor_timeline", "monitor_group_shares"]

ALERT_COLOR = "#D55E00"
CALM_COLOR = "#0072B2"


def _check(history) -> None:
    if not isinstance(history, History):
        raise ParameterError(f"expected the History returned by tcrex.monitor.Monitor.history, got "
                             f"{type(history).__name__}")


def monitor_timeline(history: History) -> go.Figure:
    """The versions on a time axis, each marked at its registration (red when its run raised an alert), with the
    whole population's verified-recourse share and its interval; hovering a version names its model and counts."""
    _check(history)
    t = history.timeline()
    when = t["registered"].dt.tz_convert(None)
    alerted = t["n_alerts"] > 0
    hover = [f"<b>{html.escape(str(r.version))}</b><br>registered {w:%Y-%m-%d %H:%M} UTC<br>"
             f"model {r.model_sha256[:12]}… ({html.escape(str(r.origin))})<br>verified recourse "
             f"{r.verified_share:.1%} of {r.n_needing:,} needing<br>kept {r.n_kept:,}, invalidated "
             f"{r.n_invalidated:,}, newly needing {r.n_newly_needing:,}<br>"
             f"{r.n_alerts} alert{'s' if r.n_alerts != 1 else ''}"
             for r, w in zip(t.itertuples(), when)]
    share = t["verified_share"].to_numpy(dtype=float)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=when, y=share, mode="lines+markers+text", text=list(t["version"].astype(str)), textposition="top center",
        line=dict(color=CALM_COLOR, width=2), hovertext=hover, hoverinfo="text", name="everyone",
        marker=dict(size=14, color=[ALERT_COLOR if a else CALM_COLOR for a in alerted],
                    symbol=["diamond" if a else "circle" for a in alerted], line=dict(color="white", width=1)),
        error_y=dict(type="data", symmetric=False, array=t["ci_high"].to_numpy(dtype=float) - share,
                     arrayminus=share - t["ci_low"].to_numpy(dtype=float), color=rgba(CALM_COLOR, 0.5), width=4)))
    n_alerts = int(alerted.sum())
    fig.update_layout(
        template=TEMPLATE, font=FONT, height=360, margin=dict(l=70, r=30, t=80, b=50), showlegend=False,
        title=dict(text=f"Model versions of {html.escape(history.monitor)}<br><sup>verified-recourse share of "
                        f"everyone needing recourse, with its interval; "
                        f"{'◆ marks a version that raised an alert' if n_alerts else 'no version raised an alert'}"
                        "</sup>", x=0.01),
        yaxis=dict(title="verified recourse", tickformat=".0%", range=_share_range(t)),
        xaxis=dict(title="registered (UTC)"))
    return fig


def _share_range(frame) -> list:
    lo = np.nanmin(frame["ci_low"].to_numpy(dtype=float)) if len(frame) else 0.0
    hi = np.nanmax(frame["ci_high"].to_numpy(dtype=float)) if len(frame) else 1.0
    lo = 0.0 if not np.isfinite(lo) else max(0.0, lo - 0.08)
    hi = 1.0 if not np.isfinite(hi) else min(1.05, hi + 0.08)
    return [lo, hi]


def monitor_group_shares(history: History, feature: str | None = None) -> go.Figure:
    """One line per group of the grouping ``feature`` (default the first): its verified-recourse share at every
    version with its bootstrap interval; a group's marker is a diamond where an alert named it."""
    _check(history)
    frame = history.to_frame()
    features = [f for f in pd.unique(frame["feature"].dropna())]
    if not features:
        feature = None
    elif feature is None:
        feature = features[0]
    elif feature not in features:
        raise ParameterError(f"the monitor has no grouping {feature!r}; its groupings are {features}")
    rows = frame[frame["feature"].isna()] if feature is None else frame[frame["feature"] == feature]
    order = [r.version.label for r in history.runs]
    alerts = history.alerts()
    named = set(zip(alerts["version"], alerts["value"])) if len(alerts) else set()
    fig = go.Figure()
    for i, (value, g) in enumerate(rows.groupby("value", sort=False)):
        g = g.set_index("version").reindex(order)
        color = RULE_PALETTE[i % len(RULE_PALETTE)]
        share = g["verified_share"].to_numpy(dtype=float)
        hit = [(v, value) in named for v in order]
        fig.add_trace(go.Scatter(
            x=order, y=share, mode="lines+markers", name=html.escape(str(value)), line=dict(color=color, width=2),
            marker=dict(size=[13 if h else 8 for h in hit], symbol=["diamond" if h else "circle" for h in hit],
                        color=[ALERT_COLOR if h else color for h in hit]),
            error_y=dict(type="data", symmetric=False, array=g["ci_high"].to_numpy(dtype=float) - share,
                         arrayminus=share - g["ci_low"].to_numpy(dtype=float), color=rgba(color, 0.45), width=3),
            customdata=np.column_stack([g["n_needing"].fillna(0).to_numpy(), g["ci_low"].to_numpy(dtype=float),
                                        g["ci_high"].to_numpy(dtype=float)]),
            hovertemplate=(f"<b>{html.escape(str(value))}</b> at %{{x}}<br>verified recourse %{{y:.1%}} "
                           "(CI %{customdata[1]:.1%} to %{customdata[2]:.1%})<br>%{customdata[0]:,} needing recourse"
                           "<extra></extra>")))
    name = "everyone" if feature is None else feature
    fig.update_layout(
        template=TEMPLATE, font=FONT, height=420, margin=dict(l=70, r=30, t=80, b=50),
        title=dict(text=f"Verified recourse by {html.escape(name)} across versions<br><sup>each group's share of "
                        "its people needing recourse, with its bootstrap interval; ◆ where an alert named the group"
                        "</sup>", x=0.01),
        yaxis=dict(title="verified recourse", tickformat=".0%", range=_share_range(rows)),
        xaxis=dict(title="version", type="category", categoryorder="array", categoryarray=order),
        legend=dict(title=html.escape(name), orientation="v"))
    return fig
