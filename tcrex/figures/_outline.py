"""The metarule tree as a navigable outline: nested ``<details>``/``<summary>`` (no JavaScript), readable at 100+
leaves, safe for any label.

``metarule_outline`` is the plain-data structure (a dict tree) the HTML is built from; ``metarule_tree_html``
draws it. The outline opens at the root with its branches collapsed; a branch's summary says how many metarules it
holds and, when they all give the same advice, that advice. Leaves with identical advice share a group letter
and colour, so repeated advice is visible at a glance. With ``highlight_row`` (a row of features) the
individual's path is opened and its leaf marked. Conditions are the engine's own text (the same renderer as the
rules table and summary), and every label is HTML-escaped.
"""
from __future__ import annotations

import html
import string

import numpy as np
import pandas as pd

from ..text import pluralise, rule_changes_text
from ._style import breakdown_text, population_counts, rule_color, solution, tint, verified_breakdown

#: About this many leaves are drawn; branches beyond the budget are drawn collapsed, with their counts. Large
#: enough for any tree a person reads; the dashboard uses a smaller budget.
MAX_LEAVES = 2000

NO_RULE_TEXT = "No actionable recourse under the constraints"


def _group_name(k: int) -> str:
    letters = string.ascii_uppercase
    name = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        name = letters[r] + name
    return name


def _row_values(ex, row) -> dict | None:
    if row is None:
        return None
    if isinstance(row, pd.DataFrame):
        if len(row) != 1:
            raise ValueError(f"highlight_row must be one row, got {len(row)}")
        row = row.iloc[0]
    if isinstance(row, pd.Series):
        return row.to_dict()
    if isinstance(row, dict):
        return dict(row)
    return dict(zip(ex.schema_.names, list(row)))


def _goes_left(node: dict, value) -> bool:
    if "left_categories" in node:
        return value in node["left_categories"] or str(value) in {str(c) for c in node["left_categories"]}
    try:
        v = float(value)
    except (TypeError, ValueError):
        return False
    return bool(not np.isnan(v) and v <= node["threshold"])


def metarule_outline(ex, target: int = 0, population=None, highlight_row=None, highlight_metarule: int | None = None,
                     max_leaves: int = MAX_LEAVES, tree: dict | None = None, class_names=None) -> dict:
    """The metarule tree of one target as plain data for an outline view (``tree``: ``ex.metarule_tree(target)``
    when the caller already has it; it is the costly part). ``class_names`` (``{label: name}``) names the target
    in ``description`` ("approved" instead of "output = 1").

    Returns ``{"target", "description", "n_rules", "n_metarules", "groups", "root", "shown_leaves",
    "hidden_leaves", "path_metarule", "path_of"}`` (``path_of``: "individual" when ``highlight_row`` chose the marked
    leaf, "metarule" when ``highlight_metarule`` did, else None). Every node has ``kind`` ("split", "leaf", "cut" or "empty"), ``condition``
    (the edge text from its parent, None at the root), ``n_leaves``, ``here`` (rows of ``population`` passing
    through, or None) and ``on_path``. Splits add ``feature``, ``children`` and ``advice_group`` (the group
    letter when all their leaves share one advice, else None); leaves add ``metarule``, ``rule`` (None when no
    rule is actionable), ``metarule_id`` / ``rule_id`` (the public ids, "M4" / "R3"), ``conditions`` (the metarule's full box), ``advice``, ``sparsity``, ``group`` (a
    letter shared by the leaves with identical advice), ``color`` and ``checked`` (when ``population`` carries
    the ``source`` column of ``counterfactuals(verify=True)``: what verifies the people the metarule serves,
    "3 verified through this rule, 13 through the next rule"; else None). ``groups`` lists
    ``{"group", "advice", "n_leaves", "metarules", "color"}``, largest first.

    ``highlight_row`` (a Series, one-row DataFrame or dict of feature values) or ``highlight_metarule`` marks one
    leaf and every node above it ``on_path``. About ``max_leaves`` leaves are drawn: the budget is shared between
    the branches of every split by their sizes, so each branch near the root stays visible, and a branch out of
    budget becomes a ``cut`` node (drawn collapsed, with its condition, how many metarules it holds and, when they
    all give one advice, its ``advice_group``); the highlighted path is always drawn in full.
    """
    sol = solution(ex, target)
    desc = sol.target.describe(class_names)
    out = {"target": int(target), "description": desc, "n_rules": int(sol.n_rules),
           "n_metarules": int(len(sol.metarules)), "groups": [], "root": None, "shown_leaves": 0,
           "hidden_leaves": 0, "path_metarule": None, "path_of": None}
    if sol.n_rules == 0:
        out["root"] = {"kind": "empty", "condition": None, "n_leaves": 0, "here": None, "on_path": False,
                       "text": f"No valid rule for {desc} at tau={ex.tau}; lower tau or rho to find recourse"}
        return out
    tree = tree if tree is not None else ex.metarule_tree(target)
    counts, _ = population_counts(ex, target, population)
    checked = verified_breakdown(ex, target, population)
    metas = ex.metarules_frame()
    metas = metas[metas.target == target].set_index("metarule")

    # the individual's leaf
    values = _row_values(ex, highlight_row)
    path_leaf = highlight_metarule
    if values is not None:
        node = tree
        while "metarule" not in node:
            node = node["left"] if _goes_left(node, values.get(node["feature"])) else node["right"]
        path_leaf = node["metarule"]
    out["path_metarule"] = None if path_leaf is None else int(path_leaf)
    out["path_of"] = None if path_leaf is None else "individual" if values is not None else "metarule"

    # advice groups, numbered by size (then first appearance)
    advice_of = {int(m): (str(row["text"]) if pd.notna(row["rule"]) else NO_RULE_TEXT) for m, row in metas.iterrows()}
    order = {}
    for m in sorted(advice_of):
        order.setdefault(advice_of[m], []).append(m)
    ranked = sorted(order.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    group_of_advice = {}
    for k, (advice, ms) in enumerate(ranked):
        g = _group_name(k)
        group_of_advice[advice] = g
        r = metas.loc[ms[0], "rule"]
        out["groups"].append({"group": g, "advice": advice, "n_leaves": len(ms), "metarules": ms,
                              "color": rule_color(target, int(r)) if pd.notna(r) else "#9E9E9E"})

    def leaves(node) -> list:
        if "metarule" in node:
            return [node["metarule"]]
        return leaves(node["left"]) + leaves(node["right"])

    def build(node, condition, budget: int) -> dict:
        """``node`` with at most about ``budget`` leaves drawn. The budget is shared between the two branches of a
        split in proportion to their sizes (each at least one), so every branch near the root stays visible: a
        branch out of budget is drawn collapsed, with its condition and counts, never left out."""
        ms = leaves(node)
        here = None if counts is None else int(sum(counts[m] for m in ms))
        on_path = path_leaf is not None and path_leaf in ms
        base = {"condition": condition, "n_leaves": len(ms), "here": here, "on_path": on_path}
        groups = {group_of_advice[advice_of[m]] for m in ms}
        uniform = next(iter(groups)) if len(groups) == 1 else None
        if "metarule" not in node and budget < 2 and not on_path:
            out["hidden_leaves"] += len(ms)
            return {"kind": "cut", **base, "advice_group": uniform}
        if "metarule" in node:
            out["shown_leaves"] += 1
            m = int(node["metarule"])
            r = node["rule"]
            rule = None if r is None or r < 0 else int(r)
            advice = advice_of[m]
            return {"kind": "leaf", **base, "metarule": m, "metarule_id": ex.metarule_id(target, m), "rule": rule,
                    "rule_id": ex.rule_id(target, rule),
                    "conditions": str(metas.loc[m, "conditions"]), "advice": advice,
                    "sparsity": int(node["sparsity"]), "group": group_of_advice[advice],
                    "checked": breakdown_text(checked.get(m)) if checked is not None else None,
                    "color": rule_color(target, rule) if rule is not None else "#9E9E9E"}
        n_left = len(leaves(node["left"]))
        left = min(max(int(round(budget * n_left / len(ms))), 1), max(budget - 1, 1))
        children = [build(node["left"], f"{node['feature']} {node['left_text']}", left),
                    build(node["right"], f"{node['feature']} {node['right_text']}", max(budget - left, 1))]
        return {"kind": "split", **base, "feature": str(node["feature"]), "children": children,
                "advice_group": uniform}

    out["root"] = build(tree, None, max(int(max_leaves), 1))
    return out


# ====================================================================== HTML
_CSS = """
.tcrex-outline { font-family: Arial, Helvetica, sans-serif; font-size: 15px; line-height: 1.4; color: #1a1a1a; }
.tcrex-outline ul { list-style: none; margin: 0; padding-left: 1.3em; border-left: 1px dotted #bbb; }
.tcrex-outline li { margin: 2px 0; }
.tcrex-outline summary { cursor: pointer; padding: 1px 4px; border-radius: 4px; }
.tcrex-outline summary:hover { background: #f0f0f0; }
.tcrex-outline .cond { font-weight: bold; }
.tcrex-outline .count { color: #5a5a5a; font-size: 13px; }
.tcrex-outline .leaf { padding: 3px 6px; border-left: 4px solid var(--c); background: var(--t); border-radius: 3px; }
.tcrex-outline .badge { display: inline-block; min-width: 1.6em; text-align: center; font-size: 12px;
  font-weight: bold; padding: 0 4px; border-radius: 8px; background: var(--c); color: #fff; margin-right: 4px; }
.tcrex-outline .same { color: #5a5a5a; font-size: 13px; }
.tcrex-outline .box { color: #5a5a5a; font-size: 13px; }
.tcrex-outline .path > details > summary, .tcrex-outline .leaf.path { outline: 2px solid #d62728; }
.tcrex-outline .you { color: #d62728; font-weight: bold; }
.tcrex-outline .note { color: #5a5a5a; font-style: italic; }
.tcrex-outline .cut { color: #1a1a1a; padding: 1px 4px; }
.tcrex-outline .cut .closed { color: #5a5a5a; font-size: 12px; }
.tcrex-outline table.groups { border-collapse: collapse; font-size: 13px; margin: 6px 0 10px; }
.tcrex-outline table.groups td, .tcrex-outline table.groups th { border: 1px solid #ddd; padding: 2px 6px;
  text-align: left; vertical-align: top; }
"""


def _e(v) -> str:
    return html.escape(str(v), quote=True)


def _count(node) -> str:
    parts = [pluralise(node["n_leaves"], "metarule")]
    if node["here"] is not None:
        parts.append(f"{node['here']} here")
    return " · ".join(parts)


def metarule_tree_html(ex, target: int = 0, population=None, highlight_row=None, highlight_metarule: int | None = None,
                       max_leaves: int = MAX_LEAVES, open_all: bool = False, legend: bool = True,
                       outline: dict | None = None, class_names=None) -> str:
    """The metarule tree of one target as a collapsible HTML outline (``<details>``/``<summary>``, no JavaScript).

    Opens at the root with its branches collapsed (``open_all`` opens every branch, for paper); with
    ``highlight_row`` or ``highlight_metarule`` the path to that leaf is opened and marked ("this individual", or
    "zoomed leaf" when a metarule was chosen rather than a row).
    ``legend`` adds a table of the advice groups. Everything is escaped; see :func:`metarule_outline` for the
    parameters and the data (pass a ready ``outline`` to skip rebuilding it).
    """
    o = outline if outline is not None else metarule_outline(ex, target, population, highlight_row,
                                                              highlight_metarule, max_leaves,
                                                              class_names=class_names)
    colors = {g["group"]: g["color"] for g in o["groups"]}
    marker = "zoomed leaf" if o.get("path_of") == "metarule" else "this individual"
    sizes = {g["group"]: g["n_leaves"] for g in o["groups"]}
    advice = {g["group"]: g["advice"] for g in o["groups"]}
    parts = []

    def badge(g: str) -> str:
        return f'<span class="badge" style="--c:{_e(colors[g])}" title="advice group {_e(g)}">{_e(g)}</span>'

    def node_html(n, root=False) -> str:
        cond = "All inputs" if n["condition"] is None else n["condition"]
        path = " path" if n["on_path"] else ""
        if n["kind"] == "cut":  # a collapsed branch: its condition and counts, opened by zooming into it
            g = n.get("advice_group")
            same = f' <span class="same">— all: {badge(g)}{_e(advice[g])}</span>' if g is not None else ""
            return (f'<li class="cut"><span class="closed">▸</span> <span class="cond">{_e(cond)}</span> '
                    f'<span class="count">({_e(_count(n))}, collapsed)</span>{same}</li>')
        if n["kind"] == "leaf":
            g = n["group"]
            head = f"{n['metarule_id']} → {n['rule_id']}" if n["rule"] is not None else n["metarule_id"]
            same = sizes[g] - 1
            same_txt = ""
            if same:
                same_txt = f' <span class="same">(same advice as {same} other {"leaf" if same == 1 else "leaves"})</span>'
            you = f' <span class="you">◀ {marker}</span>' if n["on_path"] else ""
            here = f' <span class="count">{n["here"]} here</span>' if n["here"] is not None else ""
            if n.get("checked"):  # what verifies the people it serves
                here += f' <span class="count">({_e(n["checked"])})</span>'

            return (f'<li class="leaf{path}" style="--c:{_e(n["color"])};--t:{_e(tint(n["color"], 0.85))}" '
                    f'data-metarule="{n["metarule"]}" data-metarule-id="{_e(n["metarule_id"])}">{badge(g)}<span class="cond">{_e(cond)}</span> → '
                    f'{_e(n["advice"])}{same_txt}{you}{here}<br><span class="box">{_e(head)} · if '
                    f'{_e(n["conditions"])} · {_e(rule_changes_text(n["sparsity"]))}</span></li>')
        if n["kind"] == "empty":
            return f'<li class="note">{_e(n["text"])}</li>'
        opened = " open" if (root or open_all or n["on_path"]) else ""
        g = n["advice_group"]
        same = (f' <span class="same">— all: {badge(g)}{_e(advice[g])}</span>' if g is not None else "")
        kids = "".join(node_html(c) for c in n["children"])
        return (f'<li class="split{path}"><details{opened}><summary><span class="cond">{_e(cond)}</span> '
                f'<span class="count">({_e(_count(n))})</span>{same}</summary><ul>{kids}</ul></details></li>')

    head = (f'<p><b>Toward {_e(o["description"])}</b> — {_e(pluralise(o["n_rules"], "rule"))}, '
            f'{_e(pluralise(o["n_metarules"], "metarule"))}, {_e(pluralise(len(o["groups"]), "distinct recommendation"))}. '
            f'<span class="note">Click a branch to open it; leaves with the same letter give the same advice.'
            f'</span></p>')
    parts.append(head)
    if o["hidden_leaves"]:
        parts.append(f'<p class="note">Showing {o["shown_leaves"]} of {o["n_metarules"]} metarules; every branch '
                     f'is listed, and {o["hidden_leaves"]} metarules sit in branches drawn collapsed (with their '
                     'counts): zoom to a leaf to open one.</p>')
    parts.append(f'<ul class="root" style="border-left:none;padding-left:0">{node_html(o["root"], root=True)}</ul>')
    if legend and o["groups"]:
        rows = "".join(f'<tr><td>{badge(g["group"])}</td><td>{_e(g["advice"])}</td><td>{g["n_leaves"]}</td></tr>'
                       for g in o["groups"])
        parts.append(f'<details class="legend"><summary>Advice groups ({len(o["groups"])})</summary>'
                     f'<table class="groups"><tr><th>group</th><th>advice</th><th>leaves</th></tr>{rows}</table>'
                     f'</details>')
    return f'<div class="tcrex-outline"><style>{_CSS}</style>{"".join(parts)}</div>'
