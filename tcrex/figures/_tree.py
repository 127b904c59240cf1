"""The metarule tree (paper Figures 7 and 8a) as Graphviz DOT text, as an icicle chart, and as SVG.

``metarule_tree_dot`` is for ``st.graphviz_chart`` (rendered in the browser, nothing to install). ``dot_to_svg``
lays out any tree-shaped DOT graph of the simple form written here in pure Python, so a report can show the tree
offline without Graphviz.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import plotly.graph_objects as go

from ..text import pluralise, rule_changes_text
from ..vocabulary import ALREADY_IN_TARGET, NO_RULE
from ._svg import DotError, dot_to_svg, parse_dot  # noqa: F401 (re-exported)
from ._style import (EMPTY_FILL, EMPTY_LINE, NEUTRAL, base_layout, breakdown_text, clip_text, esc, population_counts,
                     rule_color, rule_dash, solution, tint, verified_breakdown, wrap)

SPLIT_FILL = "#F2F2F2"
SPLIT_LINE = "#666666"


# ====================================================================== graph model
@dataclass
class _Node:
    id: str
    kind: str  # "split", "leaf", "collapsed" or "empty"
    lines: list  # [(style, text)] with style "" | "b" | "i"
    color: str
    fill: str
    dashed: bool = False
    tooltip: str = ""
    meta: dict = field(default_factory=dict)


@dataclass
class _Graph:
    title: list  # [(style, text)]
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)  # (src, dst, [text lines])


def _leaves(node) -> list:
    if "metarule" in node:
        return [node["metarule"]]
    return _leaves(node["left"]) + _leaves(node["right"])


def _tree_graph(ex, target: int, population, collapse_empty: bool, max_label: int, class_names=None) -> _Graph:
    sol = solution(ex, target)
    counts, info = population_counts(ex, target, population)
    checked = verified_breakdown(ex, target, population)
    desc = sol.target.describe(class_names)
    title = [("b", f"Toward {desc}"),
             ("", f"{pluralise(sol.n_rules, 'rule')}, {pluralise(len(sol.metarules), 'metarule')}")]
    if counts is not None:
        parts = [f"population {info['total']}", f"{info['here']} in this tree"]
        if info[ALREADY_IN_TARGET]:
            parts.append(f"{info[ALREADY_IN_TARGET]} already in a target")
        if info["other_target"]:
            parts.append(f"{info['other_target']} served by another target")
        if info[NO_RULE]:
            parts.append(f"{info[NO_RULE]} without a rule")
        title.append(("i", ", ".join(parts)))
    graph = _Graph(title=title)
    if sol.n_rules == 0:
        graph.nodes.append(_Node("n0", "empty", [("b", "No valid rule"),
                                                 *[("", s) for s in wrap(f"for {desc} at tau={ex.tau}; lower tau "
                                                                         "or rho to find recourse", max_label)]],
                                 EMPTY_LINE, EMPTY_FILL, dashed=True))
        return graph
    tree = ex.metarule_tree(target)
    rules = ex.rules_frame()
    rules = rules[rules.target == target].set_index("rule")
    metas = ex.metarules_frame()
    metas = metas[metas.target == target].set_index("metarule")
    counter = iter(range(10 ** 9))

    def n_here(node) -> int | None:
        return None if counts is None else int(sum(counts[m] for m in _leaves(node)))

    def walk(node, parent: str | None, edge_text: str | None) -> None:
        nid = f"n{next(counter)}"
        if parent is not None:
            graph.edges.append((parent, nid, wrap(edge_text, max_label)))
        here = n_here(node)
        if here == 0 and collapse_empty:
            k = len(_leaves(node))
            graph.nodes.append(_Node(nid, "collapsed", [("i", f"({pluralise(k, 'metarule')}, no one here)")],
                                     EMPTY_LINE, EMPTY_FILL, dashed=True, meta={"metarules": _leaves(node)}))
            return
        if "metarule" in node:
            m, r = node["metarule"], node["rule"]
            mrow = metas.loc[m]
            color = rule_color(target, r)
            if r is None or r < 0:  # constraints forbid every rule here
                lines = [("b", f"Metarule {ex.metarule_id(target, m)} → no actionable rule")]
                lines += [("", s) for s in wrap(mrow["text"], max_label)]
                if here is not None:
                    lines.append(("b", f"{here} here"))
                graph.nodes.append(_Node(nid, "leaf", lines, color, tint(color, 0.75), dashed=True,
                                         tooltip=f"If {mrow['conditions']}: no rule the constraints allow",
                                         meta={"metarule": m, "rule": -1, "here": here}))
                return
            rrow = rules.loc[r]
            lines = [("b", f"Metarule {ex.metarule_id(target, m)} → {rrow['rule_id']}")]
            lines += [("", s) for s in wrap(mrow["text"], max_label)]
            lines.append(("i", f"accuracy {rrow['accuracy']:.2f} · feasibility {rrow['feasibility']:.2f}"))
            lines.append(("i", f"complexity {int(rrow['complexity'])} · {rule_changes_text(node['sparsity'])}"))
            if here is not None:
                lines.append(("b", f"{here} here"))
            if checked is not None and checked.get(m):  # what verifies the people it serves
                lines += [("i", s) for s in wrap(breakdown_text(checked[m]), max_label)]
            graph.nodes.append(_Node(nid, "leaf", lines, color, tint(color, 0.6),
                                     dashed=rule_dash(target, r) != "solid",
                                     tooltip=f"If {mrow['conditions']}: {rrow['rule_id']} ({rrow['conditions']})",
                                     meta={"metarule": m, "rule": r, "rule_id": rrow["rule_id"], "here": here}))
            return
        lines = [("b", clip_text(node["feature"], max_label))]
        if here is not None:
            lines.append(("", f"{here} here"))
        graph.nodes.append(_Node(nid, "split", lines, SPLIT_LINE, SPLIT_FILL, tooltip=str(node["feature"]),
                                 meta={"feature": node["feature"], "here": here}))
        walk(node["left"], nid, node["left_text"])
        walk(node["right"], nid, node["right_text"])

    walk(tree, None, None)
    return graph


# ====================================================================== DOT
def _html_label(lines) -> str:
    parts = []
    for style, text in lines:
        t = html.escape(str(text), quote=True)
        if style == "b":
            t = f"<B>{t}</B>"
        elif style == "i":
            t = f"<I>{t}</I>"
        parts.append(t)
    return "<" + "<BR/>".join(parts) + ">"


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _to_dot(graph: _Graph) -> str:
    out = ["digraph metarules {",
           f"  graph [rankdir=TB, ordering=out, nodesep=0.25, ranksep=0.5, fontname=\"Helvetica\", fontsize=14, "
           f"labelloc=t, label={_html_label(graph.title)}];",
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=12, penwidth=1.5];',
           '  edge [fontname="Helvetica", fontsize=11, color="#555555", arrowsize=0.7];']
    for n in graph.nodes:
        style = "rounded,filled,dashed" if n.dashed else "rounded,filled"
        penwidth = 2.5 if n.kind == "leaf" else 1.5
        attrs = [f"label={_html_label(n.lines)}", f"color={_quote(n.color)}", f"fillcolor={_quote(n.fill)}",
                 f"style={_quote(style)}", f"penwidth={penwidth}"]
        if n.tooltip:
            attrs.append(f"tooltip={_quote(n.tooltip)}")
        out.append(f"  {n.id} [{', '.join(attrs)}];")
    for src, dst, label in graph.edges:
        out.append(f"  {src} -> {dst} [label={_quote(chr(10).join(label))}];")
    out.append("}")
    return "\n".join(out) + "\n"


def metarule_tree_dot(ex, target: int = 0, population=None, collapse_empty: bool = True, max_label: int = 40,
                      class_names=None) -> str:
    """Graphviz DOT text of the metarule tree of one target (paper Figure 7; with a population, Figure 8a).

    Internal nodes name the split feature, edges carry the condition, leaves are coloured by their rule and show
    the metarule's recourse ("Change … while keeping …"), the rule's accuracy, feasibility and complexity and the
    worst-case number of changes. ``population`` is an ``explain()`` DataFrame: every node then shows how many of
    its rows pass through it, and with ``collapse_empty`` a subtree none of them reaches becomes one grey node.
    ``max_label`` is the line width (characters) labels are wrapped to. Leaves name their rule by its id
    ("Metarule 3 → R4", as in the rules table); ``class_names`` (``{label: name}``) names the target in the title
    ("approved", not "output = 1"). Pass the result to ``st.graphviz_chart``.
    """
    return _to_dot(_tree_graph(ex, target, population, collapse_empty, max_label, class_names))


def metarule_tree_svg(ex, target: int = 0, population=None, collapse_empty: bool = True, max_label: int = 40,
                      class_names=None) -> str:
    """The same tree as a self-contained SVG string, laid out in Python (no Graphviz needed)."""
    return dot_to_svg(metarule_tree_dot(ex, target, population, collapse_empty, max_label, class_names))


# ====================================================================== icicle
#: Nodes an icicle sends to the browser at most; deeper levels are folded into their ancestors.
ICICLE_MAX_NODES = 800


def _depth_limit(tree, max_nodes: int) -> int:
    """The deepest level such that the nodes down to it number at most ``max_nodes`` (at least the root's
    children)."""
    per_level, level = [], [tree]
    while level:
        per_level.append(len(level))
        level = [c for n in level if "metarule" not in n for c in (n["left"], n["right"])]
    total, limit = 0, 0
    for d, k in enumerate(per_level):
        total += k
        if total > max_nodes and d > 1:
            break
        limit = d
    return limit


def metarule_icicle(ex, target: int = 0, population=None, max_nodes: int = ICICLE_MAX_NODES, *,
                    class_names=None) -> go.Figure:
    """The metarule tree as an icicle chart: a coverage view, sized by grid cells or, with ``population`` (an
    ``explain()`` DataFrame), by how many of its rows fall in each branch. Leaves are coloured by rule.

    At most ``max_nodes`` nodes are drawn: below the deepest level that fits, a branch is one grey block saying
    how many metarules it holds (the outline view shows them all). ``class_names`` names the target."""
    sol = solution(ex, target)
    counts, info = population_counts(ex, target, population)
    checked = verified_breakdown(ex, target, population)
    desc = sol.target.describe(class_names)
    fig = go.Figure()
    if sol.n_rules == 0:
        fig.add_annotation(text=esc(f"No valid rule for {desc} at tau={ex.tau}"), showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5, font=dict(size=18))
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return base_layout(fig, esc(f"Metarules toward {desc}"), height=300)
    tree = ex.metarule_tree(target)
    metas = ex.metarules_frame()
    metas = metas[metas.target == target].set_index("metarule")
    rules = ex.rules_frame()
    rules = rules[rules.target == target].set_index("rule")
    ids, labels, parents, values, colors, hover = [], [], [], [], [], []
    counter = iter(range(10 ** 9))
    limit = _depth_limit(tree, max(int(max_nodes), 3))
    folded = [0]

    def value(node) -> int:
        if counts is None:
            return int(node["n_cells"])
        return int(sum(counts[m] for m in _leaves(node)))

    def walk(node, parent: str, label: str, depth: int = 0) -> None:
        nid = f"n{next(counter)}"
        ids.append(nid)
        parents.append(parent)
        values.append(value(node))
        if "metarule" not in node and depth >= limit:
            k = len(_leaves(node))
            folded[0] += 1
            labels.append(f"{esc(label)}<br><i>{pluralise(k, 'metarule')} below</i>")
            colors.append("#D5D5D5")
            hover.append(f"{esc(label)}<br>{pluralise(k, 'metarule')} below (folded to keep the chart light; "
                         f"see the tree outline)")
            return
        if "metarule" in node:
            m, r = node["metarule"], node["rule"]
            colors.append(rule_color(target, r))
            if r is None or r < 0:  # constraints forbid every rule here
                labels.append(f"{esc(label)}<br><b>{ex.metarule_id(target, m)}: no actionable rule</b>")
                hover.append(f"<b>Metarule {ex.metarule_id(target, m)}: no actionable rule</b><br>If {esc(metas.loc[m, 'conditions'])}:"
                             f"<br>{esc(metas.loc[m, 'text'])}")
                return
            rr = rules.loc[r]
            labels.append(f"{esc(label)}<br><b>{ex.metarule_id(target, m)} → {esc(rr['rule_id'])}</b>")
            hover.append(f"<b>Metarule {ex.metarule_id(target, m)} → {esc(rr['rule_id'])}</b><br>If {esc(metas.loc[m, 'conditions'])}:<br>"
                         f"{esc(metas.loc[m, 'text'])}<br><i>accuracy {rr['accuracy']:.2f}, feasibility "
                         f"{rr['feasibility']:.2f}, complexity {int(rr['complexity'])}, "
                         f"{rule_changes_text(node['sparsity'])}</i>"
                         + (f"<br>{esc(breakdown_text(checked[m]))}" if checked is not None and checked.get(m) else ""))
            return
        labels.append(esc(label))
        colors.append(NEUTRAL if parent == "" else "#E0E0E0")
        hover.append(f"{esc(label)}<br>next split: <b>{esc(node['feature'])}</b>")
        walk(node["left"], nid, f"{node['feature']} {node['left_text']}", depth + 1)
        walk(node["right"], nid, f"{node['feature']} {node['right_text']}", depth + 1)

    walk(tree, "", f"all inputs → {desc}")
    unit = "grid cells" if counts is None else "individuals"
    fig.add_trace(go.Icicle(ids=ids, labels=labels, parents=parents, values=values, branchvalues="total",
                            marker=dict(colors=colors, line=dict(color="#FFFFFF", width=1)),
                            hovertext=hover, hoverinfo="text", texttemplate="%{label}<br>%{value} " + unit,
                            tiling=dict(orientation="v"), sort=False, root=dict(color=NEUTRAL),
                            meta={"kind": "metarule_icicle", "target": int(target)}))
    sub = "sized by grid cells" if counts is None else f"sized by individuals ({info['here']} of {info['total']})"
    if folded[0]:
        sub += f" · {pluralise(folded[0], 'deep branch')} folded (grey) to stay under {max_nodes} blocks"
    if counts is not None and info["here"] == 0:
        fig.add_annotation(text="No one in this population is served by this target", showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5, font=dict(size=16))
    return base_layout(fig, esc(f"Metarules toward {desc}"), [sub], height=520,
                       margin=dict(l=10, r=10, b=10))
