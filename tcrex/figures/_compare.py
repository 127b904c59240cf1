"""Figures for a comparison of recourse across two models (:func:`tcrex.compare.compare_models`).

Pure functions: each takes a :class:`~tcrex.compare.ComparisonResult` and returns a plotly ``go.Figure``,
deterministically. No Streamlit here; the dashboard and the report call these.
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from ..compare import (CHANGES, COMPARE_METRICS, GAINED, KEPT, LOST, NEWLY_NEEDED, NO_LONGER_NEEDED, NOT_NEEDED,
                       STILL_NONE, ComparisonResult)
from ..errors import ParameterError
from ..population import clear_gaps
from ._audit import _layout  # the audit's figure frame: the comparison reads as its sibling

__all__ = ["recourse_flow", "comparison_gap_plot", "rule_accuracy_shift", "CHANGE_COLORS"]

#: One colour per change (colour-blind safe): losses stand out, kept recourse is calm.
CHANGE_COLORS = {LOST: "#D55E00", KEPT: "#0072B2", GAINED: "#009E73", STILL_NONE: "#999999",
                 NEWLY_NEEDED: "#E69F00", NO_LONGER_NEEDED: "#56B4E9", NOT_NEEDED: "#DDDDDD"}
SIGNIFICANT_COLOR = "#D55E00"
UNCLEAR_COLOR = "#4477AA"
SMALL_COLOR = "#BBBBBB"

# Each person's state under one model: needs recourse and has verified recourse / needs it without / does not need
_VERIFIED, _UNVERIFIED, _FAVOURABLE = 0, 1, 2
_STATE_TEXT = ("verified recourse", "no verified recourse", "favourable outcome")
#: Where each change goes: (state under A, state under B).
_FLOWS = {KEPT: (_VERIFIED, _VERIFIED), LOST: (_VERIFIED, _UNVERIFIED), GAINED: (_UNVERIFIED, _VERIFIED),
          STILL_NONE: (_UNVERIFIED, _UNVERIFIED), NO_LONGER_NEEDED: (None, _FAVOURABLE),
          NEWLY_NEEDED: (_FAVOURABLE, None), NOT_NEEDED: (_FAVOURABLE, _FAVOURABLE)}


def _check(result) -> None:
    if not isinstance(result, ComparisonResult):
        raise ParameterError(f"expected the ComparisonResult returned by tcrex.compare.compare_models, got "
                             f"{type(result).__name__}")


def _flow_counts(result: ComparisonResult) -> list[tuple[str, int, int, int]]:
    """(change, state under A, state under B, people) for every change with people in it; the people who need
    recourse under one model only are split by whether they are verified under it."""
    cells = result.counts.cells
    acc = {}
    for row in cells.itertuples():
        a, b = _FLOWS[row.change]
        sa = a if a is not None else (_VERIFIED if row.verified_a else _UNVERIFIED)
        sb = b if b is not None else (_VERIFIED if row.verified_b else _UNVERIFIED)
        acc[(row.change, sa, sb)] = acc.get((row.change, sa, sb), 0) + int(row.n)
    return [(ch, a, b, n) for ch in CHANGES for (c, a, b), n in sorted(acc.items(), key=lambda kv: kv[0][1:])
            if c == ch and n]


#: The flow's frame in px: its height, the margins above (title, subtitle, column headings) and below, the gap
#: between a column's nodes, and the horizontal share its bands take (the labels sit outside it, never on a band).
#: The title sits below a band kept for plotly's toolbar (``FLOW_TOOLBAR`` px, as the dashboard's charts keep it),
#: so the dashboard never moves it and the labels stay at the bars they name.
FLOW_HEIGHT, FLOW_TOP, FLOW_BOTTOM, FLOW_PAD, FLOW_TOOLBAR = 420, 136, 16, 26, 34
FLOW_DOMAIN = (0.25, 0.75)


def _flow_centres(totals) -> list:
    """Each node's centre as a share of the plot's height from the top, stacked in order with ``FLOW_PAD`` between
    them the way plotly.js sizes them (one px per person scale for both columns): the labels are placed there."""
    h = FLOW_HEIGHT - FLOW_TOP - FLOW_BOTTOM
    scale = (h - (len(totals) - 1) * FLOW_PAD) / max(int(sum(totals)), 1)
    out, top = [], 0.0
    for n in totals:
        out.append((top + n * scale / 2) / h)
        top += n * scale + FLOW_PAD
    return out


def recourse_flow(result: ComparisonResult) -> go.Figure:
    """Who keeps, loses or gains verified recourse: a flow from each person's state under model A (left) to their
    state under model B (right), coloured by change (lost, kept, gained, ...). Widths are people. The states are
    named beside their bars, outside the bands (a label on a band hid it), under a heading per model."""
    _check(result)
    flows = _flow_counts(result)
    totals_a = np.zeros(3, dtype=np.int64)
    totals_b = np.zeros(3, dtype=np.int64)
    for _, a, b, n in flows:
        totals_a[a] += n
        totals_b[b] += n
    labels = [f"{_STATE_TEXT[i]} ({totals_a[i]:,})" for i in range(3)] + \
        [f"{_STATE_TEXT[i]} ({totals_b[i]:,})" for i in range(3)]
    ys = _flow_centres(totals_a) + _flow_centres(totals_b)
    left, right = FLOW_DOMAIN
    fig = go.Figure(go.Sankey(
        arrangement="fixed", domain=dict(x=list(FLOW_DOMAIN), y=[0, 1]),
        node=dict(label=[""] * 6, pad=FLOW_PAD, thickness=16, color=["#0072B2", "#999999", "#DDDDDD"] * 2,
                  x=[0.001] * 3 + [0.999] * 3, y=ys,
                  customdata=[("Model A: " if i < 3 else "Model B: ") + html.escape(t, quote=False)
                              for i, t in enumerate(labels)],
                  hovertemplate="%{customdata}<extra></extra>"),
        link=dict(source=[a for _, a, _, _ in flows], target=[3 + b for _, _, b, _ in flows],
                  value=[n for *_, n in flows], color=[_alpha(CHANGE_COLORS[ch], 0.55) for ch, *_ in flows],
                  label=[ch for ch, *_ in flows],
                  hovertemplate="%{label}: %{value:,} people<extra></extra>")))
    for i, (text, y) in enumerate(zip(labels, ys)):
        if (totals_a if i < 3 else totals_b)[i % 3]:
            fig.add_annotation(text=html.escape(text, quote=False), x=left - 0.005 if i < 3 else right + 0.005,
                               xanchor="right" if i < 3 else "left", y=1 - y, yanchor="middle", xref="paper",
                               yref="paper", showarrow=False)
    for x, text in ((left, "Model A (active)"), (right, "Model B")):
        fig.add_annotation(text=f"<b>{text}</b>", x=x, xanchor="center", y=1, yanchor="bottom", yshift=6,
                           xref="paper", yref="paper", showarrow=False)
    s = result.summary
    fig = _layout(fig, "Who keeps, loses or gains verified recourse", FLOW_HEIGHT,
                  subtitle=f"{s['changes'][LOST]:,} lose it, {s['changes'][GAINED]:,} gain it, "
                           f"{s['changes'][KEPT]:,} keep it (target: {html.escape(result.target, quote=False)})")
    fig.update_layout(margin=dict(t=FLOW_TOP, b=FLOW_BOTTOM),
                      title=dict(pad=dict(t=FLOW_TOOLBAR), y=1.0, yref="container", yanchor="top"))
    return fig


def _alpha(color: str, a: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{a})"


def comparison_gap_plot(result: ComparisonResult, metrics=None) -> go.Figure:
    """Per group and metric, the difference from the reference group with its bootstrap interval (a forest
    plot): red where the gap is clear (:func:`tcrex.population.clear_gaps`: the interval excludes zero, both
    groups are large enough and the gap reaches the practical threshold), grey for small groups."""
    _check(result)
    if result.gaps is None:
        raise ParameterError("this comparison has no groups; run compare_models with groups= to compare groups")
    metrics = list(metrics or COMPARE_METRICS)
    unknown = [m for m in metrics if m not in COMPARE_METRICS]
    if unknown:
        raise ParameterError(f"unknown metric(s) {unknown}; choose among {list(COMPARE_METRICS)}")
    gaps = result.gaps[result.gaps["metric"].isin(metrics)]
    gaps = gaps.assign(clear=clear_gaps(gaps))  # the audit's rule of a clear gap (the practical threshold too)
    fig = go.Figure()
    labels = []
    for m in metrics:
        part = gaps[gaps["metric"] == m]
        for row in part.itertuples():
            label = f"{COMPARE_METRICS[m][0]} · {html.escape(str(row.group), quote=False)}"
            labels.append(label)
            color = SMALL_COLOR if row.small_group else SIGNIFICANT_COLOR if row.clear else UNCLEAR_COLOR
            d = row.difference * 100
            lo, hi = row.ci_low * 100, row.ci_high * 100
            fig.add_trace(go.Scatter(
                x=[d], y=[label], mode="markers", marker=dict(color=color, size=10), showlegend=False,
                error_x=dict(type="data", symmetric=False, array=[max(hi - d, 0) if np.isfinite(hi) else 0],
                             arrayminus=[max(d - lo, 0) if np.isfinite(lo) else 0], color=color),
                hovertemplate=(f"{label}<br>{row.value:.1%} against {row.reference_value:.1%}<br>difference "
                               f"{d:+.1f} points ({result.confidence:.0%} CI {lo:.1f} to {hi:.1f})<extra></extra>")))
    fig.add_vline(x=0, line=dict(color="#555555", width=1))
    fig.update_yaxes(autorange="reversed", categoryorder="array", categoryarray=labels)
    fig.update_xaxes(title="difference from the reference group (percentage points)", zeroline=False)
    return _layout(fig, "Gaps between groups", max(260, 28 * len(labels) + 140),
                   subtitle=f"each group against {html.escape(result.reference_display, quote=False)}; "
                            f"{result.confidence:.0%} bootstrap intervals ({result.n_boot} resamples)")


def rule_accuracy_shift(result: ComparisonResult) -> go.Figure:
    """Each rule of model A: its accuracy under A (on its fit rows) and under B (on the rows it is re-checked
    on), with the tau line; rules falling below tau under B are red."""
    _check(result)
    r = result.rules
    if not len(r):
        raise ParameterError("model A has no rule for this target to re-check")
    tau = result.counts.tau
    ids = [str(x) for x in r["rule_id"]]
    below = [not bool(v) if v is not None and v == v else False for v in r["holds_tau_b"].astype(object)]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=ids, y=r["accuracy_a"], name="under model A", marker_color="#BBBBBB"))
    fig.add_trace(go.Bar(x=ids, y=r["accuracy_b"], name="under model B",
                         marker_color=[SIGNIFICANT_COLOR if b else "#0072B2" for b in below]))
    fig.add_hline(y=tau, line=dict(color="#555555", dash="dash"), annotation_text=f"τ = {tau:g}")
    fig.update_yaxes(title="accuracy", tickformat=".0%",
                     range=[max(0.0, float(np.nanmin(np.r_[r["accuracy_b"].to_numpy(dtype=float), tau])) - 0.1),
                            1.0])
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.2))
    return _layout(fig, "Rules of model A re-checked under model B", 380,
                   subtitle=f"red: below τ under model B; measured on {result.rules_measured_on}")
