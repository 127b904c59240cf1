"""The report's rules and metarules tables (the first rows in the appendix, the rest collapsed), the limits of its
metarule trees and the glossary.
"""
from __future__ import annotations

import pandas as pd

from ..text import pluralise
from ._markup import _e, _full, _readable, _table
from ._recourse import _with_rule


MAX_REPORT_LEAVES = 300

#: Trees with at most this many metarules are printed fully opened; larger ones open at the root.
OPEN_ALL_LEAVES = 60


def _ids_first(frame: pd.DataFrame) -> pd.DataFrame:
    """A rules or metarules frame for readers: the public ids (``rule_id``, ``metarule_id``) in place of the
    per-target indices, which collide across targets."""
    out = frame
    for name in ("rule", "metarule"):
        if f"{name}_id" in out.columns:
            out = out.drop(columns=[name]).rename(columns={f"{name}_id": name})
    return out


#: Rules and metarules tables as a reader sees them: {frame column: heading}, in this order.
RULE_COLUMNS = {"rule_id": "rule", "target_description": "outcome it reaches", "conditions": "conditions",
                "n": "individuals inside", "feasibility": "share of the data", "accuracy": "reach the outcome",
                "complexity": "number of conditions", "n_metarules": "metarules using it",
                "n_served": "recommended to", "effectiveness": "its own advice verified (checked on the model)",
                "n_next_rule": "verified through the next rule", "n_minimal_change": "verified by a minimal change",
                "n_not_verified": "not verified",
                "boundary_effectiveness": "works at the rule's nearest point"}

METARULE_COLUMNS = {"metarule_id": "metarule", "conditions": "where (the region)", "rule_id": "recommended rule",
                    "text": "advice", "sparsity": "changes the rules alone ask, at most", "n_cells": "grid cells",
                    "n_served": "advised (individuals)", "n_this_rule": "verified through this rule",
                    "n_next_rule": "verified through the next rule", "n_minimal_change": "verified by a minimal change",
                    "n_not_verified": "not verified", "effectiveness": "its own advice verified (checked on the model)",
                    "boundary_effectiveness": "works at the rule's nearest point"}

_SHARES = ("feasibility", "accuracy", "effectiveness", "boundary_effectiveness")

#: Rules and metarules shown in the reading flow; the rest are in a collapsed full table.
SUMMARY_RULES = 12

SUMMARY_METARULES = 10

#: The metarule table's cell for a region inside its rule (the rules alone ask no change there).
INSIDE_RULE_CELL = "none: inside the rule"


def _rules_html(rules: pd.DataFrame, multi_target: bool) -> str:
    """The rules, most recommended first: all of them when few, else the first ``SUMMARY_RULES`` and the full
    table collapsed."""
    columns = {k: v for k, v in RULE_COLUMNS.items() if multi_target or k != "target_description"}
    order = [c for c in ("n_served", "n") if c in rules.columns]
    ranked = rules.sort_values(order, ascending=False, kind="stable") if order else rules
    widths = {"conditions": "34%"}
    intro = ('<p class="note">"Share of the data": the rows inside the rule; "reach the outcome": the share of '
             "them the model puts in the favourable outcome (the rule's accuracy)"
             + ('; "its own advice verified": of the individuals a rule is the optimal rule for (needing '
                "recourse), the share whose verified point follows this rule; the others are counted by what "
                "verifies them instead (the next rule in cost order, a minimal change) or as not verified. The "
                "headline's verified share counts everyone verified by any of these" if "effectiveness"
                in rules.columns else "") + ".</p>")
    if len(rules) <= SUMMARY_RULES:
        return intro + _table(_readable(rules, columns, _SHARES), widths=widths)
    head = _readable(ranked.head(SUMMARY_RULES), columns, _SHARES)
    return (intro + f"<p>The {SUMMARY_RULES} most recommended of {len(rules):,} rules:</p>" + _table(head, widths=widths)
            + _full(f"All {len(rules):,} rules", _table(_readable(rules, columns, _SHARES), widths=widths)))


def _advised(metas: pd.DataFrame, explanations: pd.DataFrame | None) -> pd.Series | None:
    """How many individuals each metarule advises: ``n_served`` (checked on the model) when present, else counted
    from ``explanations`` (those who need and have a recourse)."""
    if "n_served" in metas.columns:
        return metas["n_served"]
    if explanations is None or not len(explanations):
        return None
    sel = explanations[_with_rule(explanations)]
    counts = pd.Series(list(zip(pd.to_numeric(sel["target"]).astype(int), pd.to_numeric(sel["metarule"]).astype(int)))
                       ).value_counts() if len(sel) else pd.Series(dtype=int)
    return pd.Series([int(counts.get((int(t), int(m)), 0)) for t, m in zip(metas["target"], metas["metarule"])],
                     index=metas.index)


def _metarules_html(metas: pd.DataFrame, explanations: pd.DataFrame | None, multi_target: bool) -> str:
    """The metarules: how many, the ones that advise the most individuals, and the full table collapsed."""
    if not len(metas):
        return '<p class="note">No metarule: no rule is valid at these settings.</p>'
    advised = _advised(metas, explanations)
    frame = metas.assign(n_served=advised) if advised is not None else metas
    # the rules' own worst case: a region inside its rule is said so, never "0" (the model may reject people there)
    frame = frame.assign(sparsity=[INSIDE_RULE_CELL if int(v) <= 0 else str(int(v)) for v in frame["sparsity"]])
    widths = {"where (the region)": "30%", "advice": "30%"}
    intro = (f"<p>{pluralise(len(metas), 'metarule')} split the inputs into regions; in each region one rule is "
             "recommended, with the advice it gives there (the change and what to keep)."
             + (" Checked on the model, the counts say what happens to the individuals each metarule serves: "
                "verified through its rule, through the next rule in cost order, by a minimal change, or not "
                "verified." if "n_this_rule" in metas.columns else "") + "</p>")
    full_columns = dict(METARULE_COLUMNS)
    full_columns.update({"change": "change", "keep": "keep", "paper_text": "the paper's statement"})
    full = _table(_readable(frame, full_columns, _SHARES), widths={"where (the region)": "24%", "advice": "24%"})
    if len(metas) <= SUMMARY_METARULES:
        return intro + _table(_readable(frame, METARULE_COLUMNS, _SHARES), widths=widths)
    columns = {k: v for k, v in METARULE_COLUMNS.items() if k not in ("n_cells", "boundary_effectiveness")}
    if advised is not None:
        top = frame[advised > 0].sort_values("n_served", ascending=False, kind="stable").head(SUMMARY_METARULES)
        lead = (f"<p>The {len(top)} metarules that advise the most individuals "
                f"({int(top['n_served'].sum()):,} of {int(advised.sum()):,} advised):</p>")
    else:
        top = frame.sort_values("n_cells", ascending=False, kind="stable").head(SUMMARY_METARULES)
        lead = f"<p>The {len(top)} largest metarules (by grid cells):</p>"
    return (intro + lead + _table(_readable(top, columns, _SHARES), widths=widths)
            + _full(f"All {len(metas):,} metarules (also in the CSV export, one row per individual)", full))


#: The terms the report still uses, in one place (the appendix's glossary).
GLOSSARY = {
    "favourable outcome": "the model's decision a person wants (for example, approved).",
    "recourse": "a change a person can make to get the favourable outcome.",
    "verified": "we changed exactly the features the advice names, to the values it states, and the model then "
                "gave the favourable outcome.",
    "similar case": "a real person in the data who has the favourable outcome and resembles this one; shown for "
                    "context, never counted as verified advice.",
    "rule": "a region of the inputs (for example, income above 40,000 and no late payments) in which most people "
            "get the favourable outcome.",
    "reach the outcome (accuracy)": "the share of the people inside a rule whose model decision is favourable.",
    "share of the data (feasibility)": "the share of all rows that fall inside a rule.",
    "metarule": "which rule to recommend, depending on where a person starts.",
    "τ (tau) and ρ (rho)": "the least accuracy a rule needs and the least share of the data it must cover.",
    "reference group": "the group the others are compared with.",
    "interval": "the range the true difference lies in, with the stated confidence (bootstrap resampling).",
    "clear gap": "a difference of at least the practical threshold whose interval excludes zero.",
    "small group": "a group with too few people for a firm conclusion; its figures are marked.",
}


def _glossary() -> str:
    return ('<dl class="glossary">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in GLOSSARY.items())
            + "</dl>")
