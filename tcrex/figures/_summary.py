"""Population summaries (paper Figure 8b and friends) and the rules overview. Everything is counted on the server;
the browser only receives the counts."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import ParameterError
from ..text import pluralise
from ..vocabulary import (ALREADY_IN_RULE, ALREADY_IN_TARGET, HAS_RECOURSE, NO_ACTIONABLE_RULE, NO_RULE, STATUS_LABELS,
                          has_recourse)
from ._style import (CHANGE_COLOR, KEEP_COLOR, STATUS_COLORS, TARGET_SYMBOLS, base_layout, clip_text, esc,
                     rule_color, solution)


def change_keep_counts(actions: pd.DataFrame) -> pd.DataFrame:
    """Per feature, how many rows must change it and how many must keep it (from ``ex.feature_actions``), sorted
    by total (then changes, then column order)."""
    if not isinstance(actions, pd.DataFrame):
        raise ParameterError("actions must be the DataFrame returned by ex.feature_actions(...)")
    rows = []
    for k, col in enumerate(actions.columns):
        v = actions[col].astype(str).to_numpy()
        rows.append({"feature": str(col), "change": int((v == "change").sum()), "keep": int((v == "keep").sum()),
                     "_order": k})
    out = pd.DataFrame(rows, columns=["feature", "change", "keep", "_order"])
    out["total"] = out["change"] + out["keep"]
    out = out.sort_values(["total", "change", "_order"], ascending=[False, False, True], kind="stable")
    return out.drop(columns="_order").reset_index(drop=True)


def change_keep_bars(actions: pd.DataFrame, *, stacked: bool = False, max_features: int = 30,
                     title: str | None = None) -> go.Figure:
    """Per feature, how many rows must change it ("change") and how many must keep it within the rule ("keep")
    (paper Figure 8b). Horizontal bars, most used feature on top; ``stacked`` stacks instead of side by side."""
    counts = change_keep_counts(actions)
    n_rows = len(actions)
    used = counts[counts["total"] > 0]
    shown = used.iloc[:max_features]
    labels = [esc(clip_text(f, 28)) for f in shown["feature"]]
    fig = go.Figure()
    for kind, color, pattern in (("change", CHANGE_COLOR, ""), ("keep", KEEP_COLOR, "/")):
        fig.add_trace(go.Bar(y=labels, x=shown[kind].tolist(), orientation="h", name=kind, marker_color=color,
                             marker_pattern_shape=pattern, text=shown[kind].tolist(),
                             textposition="inside" if stacked else "outside", cliponaxis=False,
                             hovertext=[f"{esc(f)}: {kind} for {c} of {n_rows}" for f, c in
                                        zip(shown["feature"], shown[kind])], hoverinfo="text",
                             meta={"kind": kind}))
    notes = [pluralise(n_rows, "individual")]
    if len(shown) < len(used):
        notes.append(f"top {len(shown)} of {len(used)} features")
    unused = len(counts) - len(used)
    if unused:
        notes.append(f"{pluralise(unused, 'feature')} in no one's rule: "
                     + clip_text(", ".join(counts.loc[counts["total"] == 0, "feature"]), 80))
    if used.empty:
        fig.add_annotation(text="No one here has a rule", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    head = esc(title) if title is not None else "What the recourse asks: change or keep, per feature"
    height = max(320, 160 + (26 if stacked else 44) * len(shown))
    top = int((shown["change"] + shown["keep"]).max() if stacked else shown[["change", "keep"]].max().max()) \
        if len(shown) else 1
    base_layout(fig, head, [esc(n) for n in notes], legend_top=True, wrap_width=60, height=height,
                barmode="stack" if stacked else "group",
                yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=labels, title=None),
                xaxis=dict(title=dict(text="number of individuals"), range=[0, max(top, 1) * 1.14]),
                bargap=0.25)
    fig.update_layout(meta={"kind": "change_keep_bars", "n_rows": n_rows})
    return fig


def changes_histogram(explanations: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """How many features each individual must change (pre-binned bars), with rows already in the target and
    rows without a valid rule shown as their own bars. ``explanations`` is an ``explain()`` DataFrame."""
    if not {"changes", "status"} <= set(explanations.columns):
        raise ParameterError("explanations must be a DataFrame from explain() (columns changes and status)")
    status = explanations["status"].astype(str).to_numpy()
    changes = pd.to_numeric(explanations["changes"], errors="coerce").fillna(0).to_numpy(dtype=np.int64)
    with_rule = has_recourse(status)
    top = int(changes[with_rule].max()) if with_rule.any() else 1
    cats = [str(k) for k in range(0, max(top, 1) + 1)]
    extra = ["already<br>in target", "no valid<br>rule"]  # two lines: no slanted tick labels
    if (status == NO_ACTIONABLE_RULE).any():  # only under actionability constraints
        extra.append("no actionable<br>rule")
    fig = go.Figure()
    for st in HAS_RECOURSE:
        sel = status == st
        counts = np.bincount(changes[sel], minlength=len(cats))[: len(cats)] if sel.any() else np.zeros(len(cats), int)
        if st == ALREADY_IN_RULE and not sel.any():
            continue
        fig.add_trace(go.Bar(x=cats, y=counts.tolist(), name=STATUS_LABELS[st], marker_color=STATUS_COLORS[st],
                             text=[str(c) if c else "" for c in counts], textposition="outside", cliponaxis=False,
                             meta={"kind": "changes", "status": st}))
    without = (ALREADY_IN_TARGET, NO_RULE, NO_ACTIONABLE_RULE)  # the statuses drawn as bars of their own
    for st, label in zip(without, extra):
        n = int((status == st).sum())
        fig.add_trace(go.Bar(x=[label], y=[n], name=STATUS_LABELS[st], marker_color=STATUS_COLORS[st],
                             marker_pattern_shape="" if st == ALREADY_IN_TARGET else "x", text=[str(n)],
                             textposition="outside", cliponaxis=False, meta={"kind": "status", "status": st}))
    n_rule = int(with_rule.sum())
    mean = float(changes[with_rule].mean()) if n_rule else float("nan")
    sub = f"{pluralise(len(explanations), 'individual')}; {n_rule:,} with a rule" + (f", {mean:.2f} changes on average"
                                                                        if n_rule else "")
    head = esc(title) if title is not None else "Number of feature changes per individual"
    tallest = max([int(np.bincount(changes[with_rule]).max()) if with_rule.any() else 0]
                  + [int((status == s).sum()) for s in without])
    base_layout(fig, head, [esc(sub)], legend_top=True, wrap_width=60, height=460, barmode="stack",
                xaxis=dict(type="category", categoryorder="array", categoryarray=cats + extra, tickangle=0,
                           title=dict(text="features to change")),
                yaxis=dict(title=dict(text="individuals"), range=[0, max(tallest, 1) * 1.15]))
    fig.update_layout(meta={"kind": "changes_histogram", "n_rows": int(len(explanations))})
    return fig


def _label_color(fill: str) -> str:
    """Black or white text, whichever reads better on ``fill`` (``#RRGGBB``)."""
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "#111111" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#FFFFFF"


def rules_overview(ex, target: int | None = None, *, title: str | None = None, class_names=None) -> go.Figure:
    """Accuracy against feasibility of every rule (of one target, or all): marker size = number of metarules
    using the rule, colour = the rule's colour, symbol = target; dashed lines at tau and rho (the validity
    thresholds). Markers carry the rules' ids (``rule_id``: "R1", "R2", …, unique across targets);
    ``class_names`` (``{label: name}``) names the targets in the legend ("approved", not "output = 1")."""
    if target is not None:
        solution(ex, target)
    rules = ex.rules_frame()
    if target is not None:
        rules = rules[rules.target == target]
    fig = go.Figure()
    for t, part in rules.groupby("target", sort=True):
        t = int(t)
        outcome = ex.solution(t).target.describe(class_names)
        hover = [f"<b>{esc(r.rule_id)}</b> → {esc(outcome)}<br>{esc(r.conditions)}<br>accuracy {r.accuracy:.3f} · "
                 f"feasibility {r.feasibility:.3f} (n = {int(r.n)})<br>complexity {int(r.complexity)} · "
                 f"{pluralise(r.n_metarules, 'metarule')}" for r in part.itertuples()]
        fig.add_trace(go.Scatter(
            x=part.feasibility.tolist(), y=part.accuracy.tolist(), mode="markers+text",
            # labels inside the markers, so labels of neighbouring rules never collide
            text=[esc(r) for r in part.rule_id], textposition="middle center",
            textfont=dict(size=12, color=[_label_color(rule_color(t, int(r))) for r in part.rule]), cliponaxis=False,
            marker=dict(size=[22 + 6 * min(int(m), 8) for m in part.n_metarules],
                        color=[rule_color(t, int(r)) for r in part.rule],
                        symbol=TARGET_SYMBOLS[t % len(TARGET_SYMBOLS)],
                        line=dict(color="#333333", width=1), opacity=0.9),
            name=esc(f"toward {outcome}"), hovertext=hover, hoverinfo="text",
            showlegend=False, meta={"kind": "rules", "target": t, "rules": [int(r) for r in part.rule],
                                    "rule_ids": list(part.rule_id)}))
        # legend entry in neutral grey: the colours belong to the rules, the symbol to the target
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=esc(f"toward {outcome}"),
                                 marker=dict(size=12, color="#888888", symbol=TARGET_SYMBOLS[t % len(TARGET_SYMBOLS)]),
                                 hoverinfo="skip", meta={"kind": "legend", "target": t}))
    n_rows = getattr(ex, "n_fit_rows_", None)
    fig.add_hline(y=ex.tau, line=dict(dash="dash", color="#888888"), annotation_text=f"τ = {ex.tau}",
                  annotation_position="bottom right")
    if n_rows:
        fig.add_vline(x=ex.rho, line=dict(dash="dash", color="#888888"), annotation_text=f"ρ = {ex.rho}",
                      annotation_position="top right")
    acc_lo = min([ex.tau] + rules.accuracy.tolist())
    head = esc(title) if title is not None else "Rules: accuracy vs feasibility"
    base_layout(fig, head, ["marker size: number of metarules using the rule; symbol: target"], height=480,
                xaxis=dict(title=dict(text="feasibility (share of fit rows in the rule)"), rangemode="tozero"),
                yaxis=dict(title=dict(text="accuracy<br>(share reaching the target)"),
                           range=[acc_lo - 0.15 * (1.0 - acc_lo + 0.02), 1.0 + 0.03]),
                legend=dict(orientation="h", x=0, y=-0.2))
    if rules.empty:
        fig.add_annotation(text="No valid rules", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    fig.update_layout(meta={"kind": "rules_overview"})
    return fig
