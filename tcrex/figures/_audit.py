"""Figures for a subgroup recourse audit (:func:`tcrex.audit.audit`).

Pure functions: each takes an :class:`~tcrex.audit.AuditResult` and returns a plotly ``go.Figure``,
deterministically. No Streamlit here; the dashboard calls these. Every figure names its basis in its subtitle:
"verified on the model" (with a model: verified recourse and the verified advice's changes) or "rules only — not
checked on a model" (the paper's rule-based audit).

>>> from tcrex.figures import gap_forest_plot               # doctest: +SKIP
>>> gap_forest_plot(result).show()                          # doctest: +SKIP
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..errors import ParameterError
from ..population import PRACTICAL_DEFAULT
from ..audit import METRICS, AuditResult, below_threshold_gaps, clear_gaps, gap_direction
from ._style import wrap

__all__ = ["group_comparison_bars", "gap_forest_plot", "gap_forest_svg", "changes_distribution_by_group", "feature_change_heatmap",
           "BAR_METRICS"]

GROUP_COLOR = "#4477AA"
REFERENCE_COLOR = "#888888"
SIGNIFICANT_COLOR = "#D55E00"
SMALL_COLOR = "#BBBBBB"
BELOW_COLOR = "#F2B28C"  # interval excludes zero, gap below the practical threshold
BETTER_COLOR = "#009E73"  # a clear gap in the group's favour (colour-blind safe bluish green)
BELOW_BETTER_COLOR = "#A6DCC9"
NEUTRAL_COLOR = UNCLEAR_COLOR = "#6F7F8F"  # no clear difference
#: Colour of a gap by kind: clear and worse for the group (vermillion), clear and better (green), the same two
#: below the practical threshold (pale), no clear difference (slate), small group (light grey). "clear" / "below"
#: are the worse-for-the-group colours, kept for callers of the earlier names.
KIND_COLORS = {"worse": SIGNIFICANT_COLOR, "better": BETTER_COLOR, "below_worse": BELOW_COLOR,
               "below_better": BELOW_BETTER_COLOR, "clear": SIGNIFICANT_COLOR, "below": BELOW_COLOR,
               "unclear": NEUTRAL_COLOR, "small": SMALL_COLOR}
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


#: The longest subtitle line, in characters: plotly never wraps a subtitle, and a longer line was cut at the chart's
#: right edge on the dashboard ("… Foreign_worker and 2", "slate: no cle").
SUBTITLE_WIDTH = 100


def _layout(fig: go.Figure, title: str, height: int, subtitle: str | None = None) -> go.Figure:
    """Shared look; a ``subtitle`` goes on its own smaller lines (wrapped at :data:`SUBTITLE_WIDTH`), so long titles
    fit narrow dashboard columns; the chart grows by the extra lines."""
    spec = dict(text=title, x=0.01, xanchor="left")
    extra = 0
    if subtitle:
        lines = wrap(subtitle, SUBTITLE_WIDTH)
        extra = 16 * (len(lines) - 1)
        spec["subtitle"] = dict(text="<br>".join(lines), font=dict(size=12, color="#555555"))
    fig.update_layout(template="plotly_white", font=FONT, height=height + extra,
                      margin=dict(l=10, r=10, t=(80 if subtitle else 60) + extra, b=40), title=spec)
    return fig


def _check(result) -> None:
    if not isinstance(result, AuditResult):
        raise ParameterError(f"expected the AuditResult returned by tcrex.audit.audit, got {type(result).__name__}")


def _label(result: AuditResult, metric: str) -> str:
    """A metric's short label in the words of the audit's basis (verified, or rules only)."""
    return result.metrics[metric][0] if metric in result.metrics else BAR_METRICS[metric]


def _with_basis(result: AuditResult, subtitle: str | None) -> str:
    """The subtitle led by the audit's basis, so no chart of a rules-only audit reads as checked on a model."""
    return result.basis.capitalize() + (f" · {subtitle}" if subtitle else "")


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
    label = _label(result, metric)
    fig = go.Figure(go.Bar(
        x=[_safe(g) for g in groups], y=np.where(np.isfinite(values), values, 0.0).tolist(), error_y=error,
        marker=dict(color=colors, pattern=dict(shape=["/" if s else "" for s in small])),
        text=text, textposition="outside", customdata=custom, name=label, showlegend=False,
        hovertemplate=("%{x}<br>" + label + ": %{y:" + (".1%" if _is_share(metric) else ".3f")
                       + "}<br>n = %{customdata[0]}" + ("<br>interval %{customdata[1]:.3g} to %{customdata[2]:.3g}"
                                                         if metric in METRICS else "") + "<extra></extra>")))
    fig.update_xaxes(title_text=_safe(result.group_column), type="category")
    fig.update_yaxes(title_text=label, tickformat=".0%" if _is_share(metric) else None,
                     rangemode="tozero")
    conf = f"{result.confidence * 100:g}%"
    sub = f"{conf} bootstrap intervals; grey: reference" if metric in METRICS else None
    return _layout(fig, f"{label[0].upper()}{label[1:]} by {_safe(result.group_column)}", 420,
                   _with_basis(result, sub))


# ---------------------------------------------------------------------------------------------------- forest
def _forest_parts(result: AuditResult, metrics, practical: float) -> list[dict]:
    """Per metric: title, group labels, gaps and interval ends (percentage points for shares) and each gap's kind:
    "clear" (:func:`tcrex.audit.clear_gaps`), "below" (interval excludes zero, gap under the practical
    threshold), "small" (a small group) or "unclear"."""
    metrics = list(METRICS) if metrics is None else list(metrics)
    for m in metrics:
        if m not in METRICS:
            raise ParameterError(f"unknown metric {m!r}; choose among {list(METRICS)}")
    gaps = result.gaps()
    clear = pd.Series(clear_gaps(gaps, practical), index=gaps.index, dtype=bool)
    below = pd.Series(below_threshold_gaps(gaps, practical), index=gaps.index, dtype=bool)
    worse = pd.Series(gap_direction(gaps) == "worse", index=gaps.index, dtype=bool)
    out = []
    for m in metrics:
        part = gaps[gaps["metric"] == m]
        scale = 100.0 if _is_share(m) else 1.0
        kinds = ["small" if s else ("worse" if w else "better") if c else ("below_worse" if w else "below_better")
                 if b else "unclear"
                 for s, c, b, w in zip(part["small_group"], clear[part.index], below[part.index], worse[part.index])]
        out.append(dict(metric=m, title=_label(result, m) + (" (percentage points)" if _is_share(m) else ""),
                        scale=scale, groups=[str(g) for g in part["group"]],
                        d=part["difference"].to_numpy(dtype=np.float64) * scale,
                        lo=part["ci_low"].to_numpy(dtype=np.float64) * scale,
                        hi=part["ci_high"].to_numpy(dtype=np.float64) * scale,
                        n=part["n_group"].to_numpy(), kinds=kinds))
    return out


def _forest_range(p: dict) -> tuple[float, float]:
    lo, hi, d = p["lo"], p["hi"], p["d"]
    ends = np.concatenate([[0.0], lo[np.isfinite(lo)], hi[np.isfinite(hi)], d[np.isfinite(d)]])
    low, high = float(ends.min()), float(ends.max())
    pad = 0.08 * (high - low) if high > low else (1.0 if p["scale"] > 1 else 0.1)
    return low - pad, high + pad


def _forest_subtitle(result: AuditResult, practical: float) -> str:
    return (f"clear gap (interval excludes 0, ≥ {practical:g} points or % of reference): vermillion = worse for the "
            "group, green = better · pale: excludes 0, below that · slate: no clear difference · grey: small group")


def gap_forest_plot(result: AuditResult, metrics=None, practical: float = PRACTICAL_DEFAULT) -> go.Figure:
    """Each group's difference from the reference, per metric, with its bootstrap interval as whiskers and a
    zero line. Coloured by direction (:func:`tcrex.audit.gap_direction`): a clear gap
    (:func:`tcrex.audit.clear_gaps`: the interval excludes zero and the gap reaches the ``practical``
    threshold) is vermillion when the group fares worse than the reference, green when it fares better; pale
    versions when the interval excludes zero but the gap is below the threshold; slate: no clear difference;
    grey: a small group. Share metrics are in percentage points."""
    _check(result)
    parts = _forest_parts(result, metrics, practical)
    fig = make_subplots(rows=len(parts), cols=1, subplot_titles=[p["title"] for p in parts],
                        vertical_spacing=min(0.3, 0.6 / len(parts)) if len(parts) > 1 else 0.0)
    for row, p in enumerate(parts, start=1):
        d, lo, hi = p["d"], p["lo"], p["hi"]
        labels = [_safe(g) for g in p["groups"]]
        fig.add_trace(go.Scatter(
            x=d.tolist(), y=labels, mode="markers", name=_label(result, p["metric"]), showlegend=False,
            marker=dict(color=[KIND_COLORS[k] for k in p["kinds"]], size=10, symbol="diamond"),
            error_x=dict(type="data", symmetric=False, array=np.nan_to_num(hi - d).tolist(),
                         arrayminus=np.nan_to_num(d - lo).tolist(), color="#333333", thickness=1.5),
            customdata=np.column_stack([lo, hi, p["n"]]).tolist(),
            hovertemplate="%{y}: %{x:+.3g}<br>interval %{customdata[0]:+.3g} to %{customdata[1]:+.3g}"
                          "<br>n = %{customdata[2]}<extra></extra>"), row=row, col=1)
        fig.add_vline(x=0, line=dict(color="#333333", width=1, dash="dash"), row=row, col=1)
        for label, value in zip(labels, d):
            if not np.isfinite(value):  # e.g. nobody in the group (or the reference) has recourse
                fig.add_annotation(x=0, y=label, text=" not comparable", showarrow=False, xanchor="left",
                                   font=dict(size=11, color="#777777"), row=row, col=1)
        fig.update_xaxes(range=list(_forest_range(p)), zeroline=False, row=row, col=1)
        fig.update_yaxes(type="category", autorange="reversed", row=row, col=1)
    conf = f"{result.confidence * 100:g}%"
    title = f"Gaps vs {_safe(result.reference_display)} ({conf} bootstrap intervals)"
    n_groups = max(1, max((len(p["groups"]) for p in parts), default=1))
    if not any(len(p["groups"]) for p in parts):
        fig.add_annotation(text="Only one group: nothing to compare", showarrow=False, xref="paper", yref="paper",
                           x=0.5, y=0.5)
    fig = _layout(fig, title, 150 + len(parts) * (90 + 28 * n_groups),
                  _with_basis(result, _forest_subtitle(result, practical)))
    fig.update_layout(margin=dict(t=115))  # the subtitle sits clear of the first panel's title
    return fig


def gap_forest_svg(result: AuditResult, metrics=None, practical: float = PRACTICAL_DEFAULT,
                   width: int = 900) -> str:
    """The same forest plot as :func:`gap_forest_plot`, as static SVG text (no scripts): for reports that must
    open instantly and print. One panel per metric; every user string is escaped."""
    _check(result)
    parts = _forest_parts(result, metrics, practical)
    label_w, right_pad, row_h, head_h, gap_h = 230, 24, 26, 44, 18
    plot_w = width - label_w - right_pad
    conf = f"{result.confidence * 100:g}%"
    heading = f"Gaps vs {result.reference_display} ({conf} bootstrap intervals) · {result.basis}"
    out = [f'<text x="4" y="18" font-size="14" fill="#555555">{_safe(heading)}</text>']
    y = 30
    for p in parts:
        n = max(1, len(p["groups"]))
        low, high = _forest_range(p)
        span = (high - low) or 1.0

        def x_of(v, low=low, span=span):
            return label_w + (float(v) - low) / span * plot_w

        out.append(f'<text x="4" y="{y + 18}" font-weight="bold" font-size="15">{_safe(p["title"])}</text>')
        top, bottom = y + head_h - 10, y + head_h + n * row_h
        out.append(f'<rect x="{label_w}" y="{top}" width="{plot_w}" height="{bottom - top}" fill="#fafafa" '
                   'stroke="#dddddd"/>')
        for t in _ticks(low, high):
            xt = x_of(t)
            out.append(f'<line x1="{xt:.1f}" y1="{top}" x2="{xt:.1f}" y2="{bottom}" stroke="#e6e6e6"/>'
                       f'<text x="{xt:.1f}" y="{bottom + 14}" font-size="11" text-anchor="middle" '
                       f'fill="#555555">{_tick_text(t)}</text>')
        x0 = x_of(0.0)
        out.append(f'<line x1="{x0:.1f}" y1="{top}" x2="{x0:.1f}" y2="{bottom}" stroke="#333333" '
                   'stroke-dasharray="4 3"/>')
        for i, g in enumerate(p["groups"]):
            cy = y + head_h + i * row_h + row_h / 2
            name = g if len(g) <= 30 else g[:29] + "…"
            out.append(f'<text x="{label_w - 8}" y="{cy + 4:.1f}" font-size="13" text-anchor="end">'
                       f'<title>{_safe(g)}</title>{_safe(name)}</text>')
            d, lo, hi = p["d"][i], p["lo"][i], p["hi"][i]
            if not np.isfinite(d):
                out.append(f'<text x="{x0 + 6:.1f}" y="{cy + 4:.1f}" font-size="12" fill="#777777">not comparable'
                           '</text>')
                continue
            if np.isfinite(lo) and np.isfinite(hi):
                out.append(f'<line x1="{x_of(lo):.1f}" y1="{cy:.1f}" x2="{x_of(hi):.1f}" y2="{cy:.1f}" '
                           'stroke="#333333" stroke-width="1.5"/>')
                for e in (lo, hi):
                    out.append(f'<line x1="{x_of(e):.1f}" y1="{cy - 5:.1f}" x2="{x_of(e):.1f}" y2="{cy + 5:.1f}" '
                               'stroke="#333333" stroke-width="1.5"/>')
            xd = x_of(d)
            tip = (f"{g}: {d:+.3g} (interval {lo:+.3g} to {hi:+.3g}; n = {int(p['n'][i])})" if np.isfinite(lo)
                   else f"{g}: {d:+.3g}")
            out.append(f'<path d="M{xd:.1f} {cy - 7:.1f} L{xd + 7:.1f} {cy:.1f} L{xd:.1f} {cy + 7:.1f} '
                       f'L{xd - 7:.1f} {cy:.1f} Z" fill="{KIND_COLORS[p["kinds"][i]]}" stroke="#333333" '
                       f'stroke-width="0.6"><title>{_safe(tip)}</title></path>')
        y = bottom + 22 + gap_h
    if not any(len(p["groups"]) for p in parts):
        out.append(f'<text x="{width / 2:.0f}" y="{y + 10}" text-anchor="middle" fill="#555555">Only one group: '
                   'nothing to compare</text>')
        y += 30
    legend = [("worse", "clear gap, worse for the group"), ("better", "clear gap, better for the group"),
              ("below_worse", "excludes zero, below threshold"), ("unclear", "no clear difference"),
              ("small", "small group")]
    lx = 4
    for kind, text in legend:
        out.append(f'<rect x="{lx}" y="{y}" width="12" height="12" fill="{KIND_COLORS[kind]}" stroke="#333333" '
                   f'stroke-width="0.6"/><text x="{lx + 17}" y="{y + 11}" font-size="12">{text}</text>')
        lx += 34 + 7 * len(text)
    height = y + 24
    label = html.escape(heading, quote=True)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{label}" font-family="Arial, Helvetica, sans-serif">'
            f'{"".join(out)}</svg>')


def _ticks(low: float, high: float, target: int = 6) -> list[float]:
    """Round tick values between ``low`` and ``high``."""
    span = high - low
    if not np.isfinite(span) or span <= 0:
        return []
    raw = span / target
    mag = 10 ** np.floor(np.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = np.ceil(low / step) * step
    return [float(round(v, 10)) for v in np.arange(first, high + step * 1e-9, step)]


def _tick_text(v: float) -> str:
    return f"{v:+g}" if v else "0"


# ---------------------------------------------------------------------------------------------------- changes
def changes_distribution_by_group(result: AuditResult, normalize: bool = True) -> go.Figure:
    """Grouped bars: for each number of changes, the share (or count) of each group's individuals with recourse
    who need that many changes. With a model these are the changes of the verified advice (never 0 for someone the
    model rejects); without one, the rule's own changes (0 for someone already inside the rule)."""
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
            hovertemplate="%{fullData.name}: %{customdata[0]} individuals (%{customdata[1]:.1%}); changes needed: "
                          "%{x}<extra></extra>"))
    fig.update_layout(barmode="group", legend=dict(title=dict(text=_safe(result.group_column))))
    who = "with verified recourse" if result.verified else "with a rule"
    fig.update_xaxes(title_text="number of changes", type="category")
    fig.update_yaxes(title_text=f"share of individuals {who}" if normalize else f"individuals {who}",
                     tickformat=".0%" if normalize else None)
    what = "features the verified advice changes" if result.verified else "features the rule asks to change"
    return _layout(fig, f"Number of changes by {_safe(result.group_column)}", 420, _with_basis(result, what))


# ---------------------------------------------------------------------------------------------------- heatmap
def feature_change_heatmap(result: AuditResult, kind: str = "change") -> go.Figure:
    """Groups x features: the share of each group's individuals with recourse whose advice changes (or keeps) each
    feature (with a model the verified advice). Empty cells: the group has nobody with recourse. Features no group is asked to change (or keep) are
    left out and named in the subtitle, so the columns that differ stay readable."""
    _check(result)
    shares = result.feature_change_shares(kind).loc[result.groups]
    values = shares.to_numpy(dtype=np.float64)
    used = (np.nan_to_num(values, nan=0.0) > 0).any(axis=0)
    dropped = [str(f) for f, u in zip(shares.columns, used) if not u]
    shares = shares.loc[:, used]
    z = shares.to_numpy(dtype=np.float64)
    text = [["" if not np.isfinite(v) else f"{v:.0%}" for v in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=np.where(np.isfinite(z), z, None).tolist(), x=[_safe(f) for f in shares.columns],
        y=[_safe(g) for g in result.groups], zmin=0.0, zmax=1.0, colorscale=HEAT_SCALE, text=text,
        texttemplate="%{text}", xgap=2, ygap=2, colorbar=dict(title=dict(text="share"), tickformat=".0%"),
        hovertemplate="%{y} · %{x}: %{z:.1%}<extra></extra>", meta={"kind": "heatmap", "dropped": dropped}))
    fig.update_xaxes(type="category", side="bottom")
    # the grouping goes in the title, not up the y axis: a long column name ran past the short plot into the subtitle
    fig.update_yaxes(type="category", autorange="reversed")
    verb = "change" if kind == "change" else "keep"
    subtitle = None
    if dropped:
        names = ", ".join(_safe(f) for f in dropped[:6]) + (f" and {len(dropped) - 6} more" if len(dropped) > 6 else "")
        subtitle = f"not shown: {len(dropped)} feature{'s' if len(dropped) != 1 else ''} no group is asked to {verb} ({names})"
    who = "with verified recourse" if result.verified else "with a rule"
    return _layout(fig, f"Share of individuals {who} asked to {verb} each feature, by {_safe(result.group_column)}",
                   160 + 40 * len(result.groups), _with_basis(result, subtitle))
