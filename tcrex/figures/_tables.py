"""Tables and a figure for one individual: the side-by-side view and the metacounterfactuals (paper §6.2)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ..constraints import constraint_parts
from ..errors import ParameterError
from ..text import value_text
from ._style import NEUTRAL, base_layout, esc, rule_color, wrap

INDIVIDUAL_COLUMNS = ["feature", "current value", "counterfactual value", "real example value", "action",
                      "rule condition"]
#: The paper's counterfactual (nearest point of the rule), shown beside the verified point when they differ.
BOUNDARY_COLUMN = "nearest point of the rule"
#: Label of the first row of a verified table: the model's output at each point.
OUTPUT_ROW = "⟨model output⟩"
_ACTION_ORDER = {"change": 0, "keep": 1, "free": 2, "immutable": 3}
#: Columns of :func:`metacounterfactual_table`, as a reader sees them.
META_COLUMNS = ["alternative", "metarule", "rule", "if", "features that would differ", "then change", "then keep",
                "changes needed there", "difference from now", "checked on the model", "text"]
#: What "checked on the model" says of an alternative: confirmed, not confirmed, or not checked (no model).
CHECK_MARKS = {True: "✓ the model confirms it", False: "✗ the model does not confirm it", None: "not checked"}


def individual_table(exp, x, *, changes_first: bool = False, outcome_name=None, constraints=None,
                     value_labels=None) -> pd.DataFrame:
    """One row per feature of ``x``: current value, counterfactual value, the real example's value, the action
    ("change" / "keep" / "free" / "immutable") and the rule's condition on it (empty when the rule leaves it free).
    A feature the rule does not name is "free", unless ``constraints`` (the explainer's ``constraints_``, or a
    ``{feature: spec}`` dict) mark it immutable: then it says "immutable", never "free".

    ``exp`` is ``ex.explain_one(x, ...)``; ``x`` the same individual as a dict or Series. Without a rule (already
    in the target, or no valid rule) the counterfactual and example columns are empty and every action is "free".

    When ``exp`` was checked on the model (``explain_one(..., model=...)``), the counterfactual column holds the
    verified point, a column "nearest point of the rule" holds the paper's point where it differs, and a first row
    ``⟨model output⟩`` gives the model's output at each point, so whether the advice works is read off the table.
    ``changes_first`` orders the features changed, kept, then free (else in ``x``'s order); ``outcome_name``
    turns a model output into words for that row (e.g. ``1`` -> ``"approved"``); ``value_labels`` (the
    explainer's codebook, ``ex.schema_.value_labels``) shows a labelled value as "no checking account (A14)".
    """
    name = outcome_name or str
    if isinstance(x, pd.DataFrame):
        if len(x) != 1:
            raise ParameterError(f"x must be one row, got {len(x)}")
        x = x.iloc[0]
    values = dict(x.items()) if isinstance(x, pd.Series) else dict(x)
    change = {c["feature"] for c in exp.changes}
    keep = {k["feature"] for k in exp.keeps}
    cf = exp.counterfactual or {}
    example = exp.example or {}
    boundary = getattr(exp, "boundary_point", None)
    verified = getattr(exp, "counterfactual_valid", None) is not None
    show_boundary = verified and boundary is not None and boundary != cf
    columns = list(INDIVIDUAL_COLUMNS)
    if show_boundary:
        columns.insert(3, BOUNDARY_COLUMN)
    # the conditions of the rule the verified point follows (none for a change beyond the rules)
    source = getattr(exp, "counterfactual_source", None)
    conditions = ({} if source == "minimal_change" else
                  getattr(exp, "recommended_rule_conditions", None) or exp.rule_conditions)
    rows = []
    fixed = _immutable(constraints)
    for f, v in values.items():
        action = "change" if f in change else "keep" if f in keep else "immutable" if f in fixed else "free"
        cond = conditions.get(f, {}).get("text", "")
        labels = (value_labels or {}).get(f)

        def said(value, labels=labels):
            return value if not labels or value is None else value_text(value, labels)
        row = [str(f), said(v), said(cf.get(f)) if exp.counterfactual else None]
        if show_boundary:
            row.append(said(boundary.get(f)))
        rows.append(row + [said(example.get(f)) if exp.example else None, action, cond])
    if changes_first:
        rows.sort(key=lambda r: _ACTION_ORDER[r[-2]])  # stable: features keep their order within an action
    if verified:
        outputs = [OUTPUT_ROW, name(exp.output), _verdict(exp.counterfactual_output, exp.counterfactual_valid, name)]
        if show_boundary:
            outputs.append(_verdict(exp.boundary_output, exp.boundary_valid, name))
        outputs += [_verdict(exp.example_output, exp.example_valid, name) if exp.example else None, "", ""]
        rows.insert(0, outputs)
    out = pd.DataFrame(rows, columns=columns)
    for col in columns[1:-2]:
        out[col] = out[col].astype(object)
    return out


def _immutable(constraints) -> set:
    """The names of the features ``constraints`` mark immutable (a ``Constraints`` or a ``{feature: spec}``)."""
    if constraints is None:
        return set()
    if hasattr(constraints, "features") and hasattr(constraints, "schema"):
        return {n for n, c in zip(constraints.schema.names, constraints.features) if c.kind == "immutable"}
    return {str(f) for f, spec in dict(constraints).items() if constraint_parts(spec)[0] == "immutable"}


def _verdict(output, valid, name=str) -> str | None:
    """The model's output at a point with a tick when it is the target outcome, a cross when not."""
    if valid is None:
        return None
    return f"{'✓' if valid else '✗'} {name(output)}"


def _conds_text(items) -> str:
    return ", ".join(f"{c['feature']} {c['condition']}" for c in items)


def metacounterfactual_table(exp) -> pd.DataFrame:
    """The nearest alternative metarules, as given (nearest first): what would have to differ to fall into each
    ("if", "features that would differ") and the recourse there ("then change", "then keep", "changes needed
    there"), with the difference in number of changes from the current recourse ("difference from now", e.g.
    +1). "rule" is the rule's id ("R2", as everywhere; "none" where no rule is actionable). "checked on the
    model" is ✓ where the model confirms a point of the alternative (``explain_one(..., model=...)``), ✗ where it
    confirms none ("then change" then says what the rule would ask, not what works), "not checked" without a
    model."""
    rows = []
    for k, a in enumerate(exp.alternatives, start=1):
        rows.append([k, _metarule_name(a.get("metarule_id"), a["metarule"]), _rule_name(a), _conds_text(a["metachanges"]), a["n_metachanges"],
                     _conds_text(a["changes"]), _conds_text(a["keeps"]), a["n_changes"],
                     a["n_changes"] - exp.n_changes, CHECK_MARKS[a.get("verified")], a["text"]])
    return pd.DataFrame(rows, columns=META_COLUMNS)


def _metarule_name(metarule_id, metarule) -> str:
    """A metarule by its public id ("M4"); explanations made before ids existed show the per-target index."""
    return str(metarule_id) if metarule_id else str(metarule)


def _rule_name(alternative: dict) -> str:
    """An alternative's rule by its public id (explanations made before ids existed: "rule <index>")."""
    if alternative.get("rule", -1) is None or alternative.get("rule", -1) < 0:
        return "none"
    return alternative.get("rule_id") or f"rule {alternative['rule']}"


def metacounterfactual_figure(exp, *, title: str | None = None) -> go.Figure:
    """For the current metarule and each alternative (top to bottom, as given): how many features would have to
    differ to fall into it, and how many changes the recourse there needs, against the current recourse."""
    fig = go.Figure()
    if exp.rule is None:
        fig.add_annotation(text=esc(exp.text), showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5,
                           font=dict(size=16))
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return base_layout(fig, "Metacounterfactuals", height=260)
    t = exp.target
    labels = [f"<b>now</b> (metarule {_metarule_name(exp.metarule_id, exp.metarule)})"]
    current_rule = getattr(exp, "rule_id", None) or f"rule {exp.rule}"
    hover = [f"<b>Current recourse</b> (metarule {_metarule_name(exp.metarule_id, exp.metarule)}, "
             f"{esc(current_rule)})<br>"
             + "<br>".join(esc(s) for s in wrap(exp.text, 70))]
    meta_n, change_n, rules = [0], [exp.n_changes], [exp.rule]
    names = {exp.rule: current_rule, **{a["rule"]: _rule_name(a) for a in exp.alternatives}}
    for k, a in enumerate(exp.alternatives, start=1):
        cond = "; ".join(f"{c['feature']} {c['condition']}" for c in a["metachanges"])
        mark = {True: "✓ ", False: "✗ "}.get(a.get("verified"), "")  # the model's verdict, when checked
        labels.append("<br>".join(esc(s) for s in wrap(f"{mark}{k}. if {cond}", 38)[:3]))
        hover.append(f"<b>Alternative {k}</b>: metarule {_metarule_name(a.get('metarule_id'), a['metarule'])} → "
                     f"{esc(_rule_name(a))}<br>"
                     + "<br>".join(esc(s) for s in wrap(a["text"], 70)))
        meta_n.append(a["n_metachanges"])
        change_n.append(a["n_changes"])
        rules.append(a["rule"])
    fig.add_trace(go.Bar(y=labels, x=meta_n, orientation="h", name="features that would have to differ",
                         marker=dict(color=NEUTRAL, pattern=dict(shape="/")), offsetgroup="differ",
                         text=[str(v) if k else "" for k, v in enumerate(meta_n)], textposition="outside",
                         cliponaxis=False, hovertext=hover, hoverinfo="text", meta={"kind": "metachanges"}))
    for r in sorted(set(rules)):
        sel = [k for k, rr in enumerate(rules) if rr == r]
        fig.add_trace(go.Bar(
            y=[labels[k] for k in sel], x=[change_n[k] for k in sel], orientation="h", offsetgroup="changes",
            name=f"changes needed there ({names[r]})" if r >= 0 else "no actionable rule there", marker=dict(color=rule_color(t, r), line=dict(color="#333333",
                                                                                                   width=1)),
            text=[f"{change_n[k]}" + ("" if k == 0 else f" ({change_n[k] - exp.n_changes:+d})") for k in sel],
            textposition="outside", cliponaxis=False, hovertext=[hover[k] for k in sel], hoverinfo="text",
            meta={"kind": "changes", "rule": int(r)}))
    fig.add_vline(x=exp.n_changes, line=dict(dash="dash", color="#333333"))
    head = esc(title) if title is not None else "Metacounterfactuals: if you were different, the recourse would be"
    note = "no alternative metarule (every metarule uses this rule)" if not exp.alternatives else \
        "nearest alternatives first; hover a bar for the recourse" + (
            "; ✓ the model confirms a point of the alternative, ✗ it confirms none (its bar is what the rule asks)"
            if any(a.get("verified") is not None for a in exp.alternatives) else "")
    rows = sum(max(lab.count("<br>") + 1, 2) for lab in labels)  # a row holds two bars or its label's lines
    base_layout(fig, head, [esc(note)], legend_top=True, height=210 + 26 * rows + 14 * len(labels),
                barmode="group", yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=labels),
                xaxis=dict(title=dict(text="number of features (dashed: changes needed now)"), dtick=1,
                           rangemode="tozero", range=[0, max(meta_n + change_n) + 0.6]),
                hoverlabel=dict(align="left"), bargap=0.3)
    fig.update_layout(margin=dict(l=20), meta={"kind": "metacounterfactual_figure"})
    return fig
