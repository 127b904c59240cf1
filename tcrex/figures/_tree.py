"""The metarule tree (paper Figures 7 and 8a) as Graphviz DOT text, as an icicle chart, and as SVG.

``metarule_tree_dot`` is for ``st.graphviz_chart`` (rendered in the browser, nothing to install). ``dot_to_svg``
lays out any tree-shaped DOT graph of the simple form written here in pure Python, so a report can show the tree
offline without Graphviz.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import plotly.graph_objects as go

from ._style import (EMPTY_FILL, EMPTY_LINE, NEUTRAL, base_layout, clip_text, esc, population_counts, rule_color,
                     rule_dash, solution, tint, wrap)

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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _tree_graph(ex, target: int, population, collapse_empty: bool, max_label: int) -> _Graph:
    sol = solution(ex, target)
    counts, info = population_counts(ex, target, population)
    desc = sol.target.describe()
    title = [("b", f"Target {target}: {desc}"),
             ("", f"{_plural(sol.n_rules, 'rule')}, {_plural(len(sol.metarules), 'metarule')}")]
    if counts is not None:
        parts = [f"population {info['total']}", f"{info['here']} in this tree"]
        if info["already_in_target"]:
            parts.append(f"{info['already_in_target']} already in a target")
        if info["other_target"]:
            parts.append(f"{info['other_target']} served by another target")
        if info["no_rule"]:
            parts.append(f"{info['no_rule']} without a rule")
        title.append(("i", ", ".join(parts)))
    graph = _Graph(title=title)
    if sol.n_rules == 0 or sol.grid is None:
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
            graph.nodes.append(_Node(nid, "collapsed", [("i", f"({_plural(k, 'metarule')}, no one here)")],
                                     EMPTY_LINE, EMPTY_FILL, dashed=True, meta={"metarules": _leaves(node)}))
            return
        if "metarule" in node:
            m, r = node["metarule"], node["rule"]
            mrow = metas.loc[m]
            color = rule_color(target, r)
            if r is None or r < 0:  # constraints forbid every rule here
                lines = [("b", f"Metarule {m} → no actionable rule")]
                lines += [("", s) for s in wrap(mrow["text"], max_label)]
                if here is not None:
                    lines.append(("b", f"{here} here"))
                graph.nodes.append(_Node(nid, "leaf", lines, color, tint(color, 0.75), dashed=True,
                                         tooltip=f"If {mrow['conditions']}: no rule the constraints allow",
                                         meta={"metarule": m, "rule": -1, "here": here}))
                return
            rrow = rules.loc[r]
            lines = [("b", f"Metarule {m} → rule {r}")]
            lines += [("", s) for s in wrap(mrow["text"], max_label)]
            lines.append(("i", f"accuracy {rrow['accuracy']:.2f} · feasibility {rrow['feasibility']:.2f}"))
            lines.append(("i", f"complexity {int(rrow['complexity'])} · up to "
                               f"{_plural(int(node['sparsity']), 'change')}"))
            if here is not None:
                lines.append(("b", f"{here} here"))
            graph.nodes.append(_Node(nid, "leaf", lines, color, tint(color, 0.6),
                                     dashed=rule_dash(target, r) != "solid",
                                     tooltip=f"If {mrow['conditions']}: rule {r} ({rrow['conditions']})",
                                     meta={"metarule": m, "rule": r, "here": here}))
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


def metarule_tree_dot(ex, target: int = 0, population=None, collapse_empty: bool = True, max_label: int = 40) -> str:
    """Graphviz DOT text of the metarule tree of one target (paper Figure 7; with a population, Figure 8a).

    Internal nodes name the split feature, edges carry the condition, leaves are coloured by their rule and show
    the metarule's recourse ("Change … while keeping …"), the rule's accuracy, feasibility and complexity and the
    worst-case number of changes. ``population`` is an ``explain()`` DataFrame: every node then shows how many of
    its rows pass through it, and with ``collapse_empty`` a subtree none of them reaches becomes one grey node.
    ``max_label`` is the line width (characters) labels are wrapped to. Pass the result to
    ``st.graphviz_chart``.
    """
    return _to_dot(_tree_graph(ex, target, population, collapse_empty, max_label))


def metarule_tree_svg(ex, target: int = 0, population=None, collapse_empty: bool = True, max_label: int = 40) -> str:
    """The same tree as a self-contained SVG string, laid out in Python (no Graphviz needed)."""
    return dot_to_svg(metarule_tree_dot(ex, target, population, collapse_empty, max_label))


# ====================================================================== icicle
def metarule_icicle(ex, target: int = 0, population=None) -> go.Figure:
    """The metarule tree as an icicle chart: a coverage view, sized by grid cells or, with ``population`` (an
    ``explain()`` DataFrame), by how many of its rows fall in each branch. Leaves are coloured by rule."""
    sol = solution(ex, target)
    counts, info = population_counts(ex, target, population)
    desc = sol.target.describe()
    fig = go.Figure()
    if sol.n_rules == 0 or sol.grid is None:
        fig.add_annotation(text=esc(f"No valid rule for {desc} at tau={ex.tau}"), showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5, font=dict(size=18))
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return base_layout(fig, esc(f"Metarules of target {target}: {desc}"), height=300)
    tree = ex.metarule_tree(target)
    metas = ex.metarules_frame()
    metas = metas[metas.target == target].set_index("metarule")
    rules = ex.rules_frame()
    rules = rules[rules.target == target].set_index("rule")
    ids, labels, parents, values, colors, hover = [], [], [], [], [], []
    counter = iter(range(10 ** 9))

    def value(node) -> int:
        if counts is None:
            return int(node["n_cells"])
        return int(sum(counts[m] for m in _leaves(node)))

    def walk(node, parent: str, label: str) -> None:
        nid = f"n{next(counter)}"
        ids.append(nid)
        parents.append(parent)
        values.append(value(node))
        if "metarule" in node:
            m, r = node["metarule"], node["rule"]
            colors.append(rule_color(target, r))
            if r is None or r < 0:  # constraints forbid every rule here
                labels.append(f"{esc(label)}<br><b>M{m}: no actionable rule</b>")
                hover.append(f"<b>Metarule {m}: no actionable rule</b><br>If {esc(metas.loc[m, 'conditions'])}:"
                             f"<br>{esc(metas.loc[m, 'text'])}")
                return
            labels.append(f"{esc(label)}<br><b>M{m} → rule {r}</b>")
            rr = rules.loc[r]
            hover.append(f"<b>Metarule {m} → rule {r}</b><br>If {esc(metas.loc[m, 'conditions'])}:<br>"
                         f"{esc(metas.loc[m, 'text'])}<br><i>accuracy {rr['accuracy']:.2f}, feasibility "
                         f"{rr['feasibility']:.2f}, complexity {int(rr['complexity'])}, up to "
                         f"{int(node['sparsity'])} change(s)</i>")
            return
        labels.append(esc(label))
        colors.append(NEUTRAL if parent == "" else "#E0E0E0")
        hover.append(f"{esc(label)}<br>next split: <b>{esc(node['feature'])}</b>")
        walk(node["left"], nid, f"{node['feature']} {node['left_text']}")
        walk(node["right"], nid, f"{node['feature']} {node['right_text']}")

    walk(tree, "", f"all inputs → {desc}")
    unit = "grid cells" if counts is None else "individuals"
    fig.add_trace(go.Icicle(ids=ids, labels=labels, parents=parents, values=values, branchvalues="total",
                            marker=dict(colors=colors, line=dict(color="#FFFFFF", width=1)),
                            hovertext=hover, hoverinfo="text", texttemplate="%{label}<br>%{value} " + unit,
                            tiling=dict(orientation="v"), sort=False, root=dict(color=NEUTRAL),
                            meta={"kind": "metarule_icicle", "target": int(target)}))
    sub = "sized by grid cells" if counts is None else f"sized by individuals ({info['here']} of {info['total']})"
    if counts is not None and info["here"] == 0:
        fig.add_annotation(text="No one in this population is served by this target", showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5, font=dict(size=16))
    return base_layout(fig, esc(f"Metarules of target {target}: {desc}"), [sub], height=520,
                       margin=dict(l=10, r=10, b=10))


# ====================================================================== DOT -> SVG (tree-shaped graphs)
_TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/|^\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<arrow>->|--)
  | (?P<punct>[{}\[\];,=:])
  | (?P<id>[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*|-?(?:\.\d+|\d+(?:\.\d*)?))
""", re.VERBOSE | re.DOTALL | re.MULTILINE)


class DotError(ValueError):
    """The DOT text is outside the simple tree form :func:`dot_to_svg` lays out."""


def _tokens(text: str) -> list:
    out, i = [], 0
    while i < len(text):
        if text[i] == "<":  # an HTML-like string: balanced angle brackets
            depth, j = 0, i
            while j < len(text):
                depth += {"<": 1, ">": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            if depth:
                raise DotError("unbalanced <...> label")
            out.append(("html", text[i + 1:j - 1]))
            i = j
            continue
        m = _TOKEN.match(text, i)
        if not m:
            raise DotError(f"cannot read DOT near {text[i:i + 20]!r}")
        kind = m.lastgroup
        if kind == "str":
            raw = m.group()[1:-1]
            out.append(("str", re.sub(r"\\(.)", lambda g: {"n": "\n", "l": "\n", "r": "\n"}.get(g.group(1), g.group(1)),
                                      raw)))
        elif kind != "ws":
            out.append((kind, m.group()))
        i = m.end()
    return out


def parse_dot(text: str) -> dict:
    """A small parser for the DOT subset this module writes (no subgraphs or ports).

    Returns ``{"directed", "graph": attrs, "nodes": {id: attrs}, "edges": [(src, dst, attrs)]}``; attribute values
    are ``("str" | "id" | "html", text)`` pairs. Raises :class:`DotError` on anything else.
    """
    toks = _tokens(text)
    pos = 0

    def peek(k=0):
        return toks[pos + k] if pos + k < len(toks) else (None, None)

    def take(kind=None, value=None):
        nonlocal pos
        tok = peek()
        if tok[0] is None or (kind and tok[0] != kind) or (value and tok[1] != value):
            raise DotError(f"expected {value or kind}, found {tok[1]!r}")
        pos += 1
        return tok

    def attr_lists() -> dict:
        attrs = {}
        while peek() == ("punct", "["):
            take()
            while peek() != ("punct", "]"):
                key = take()[1]
                take("punct", "=")
                attrs[key] = take()
                if peek() in (("punct", ","), ("punct", ";")):
                    take()
            take("punct", "]")
        return attrs

    if peek()[1] == "strict":
        take()
    kw = take("id")[1].lower()
    if kw not in ("graph", "digraph"):
        raise DotError("a DOT graph starts with 'graph' or 'digraph'")
    if peek()[0] in ("id", "str"):
        take()
    take("punct", "{")
    result = {"directed": kw == "digraph", "graph": {}, "nodes": {}, "edges": []}
    defaults = {"node": {}, "edge": {}}
    while peek() != ("punct", "}"):
        kind, value = peek()
        if kind is None:
            raise DotError("missing closing brace")
        if value in ("subgraph",) or (kind == "punct" and value == "{"):
            raise DotError("subgraphs are not supported")
        if kind == "id" and value in ("graph", "node", "edge") and peek(1) == ("punct", "["):
            take()
            attrs = attr_lists()
            (result["graph"] if value == "graph" else defaults[value]).update(attrs)
        elif peek(1) == ("punct", "="):
            key = take()[1]
            take()
            result["graph"][key] = take()
        else:
            chain = [take()[1]]
            if peek() == ("punct", ":"):
                raise DotError("ports are not supported")
            while peek()[0] == "arrow":
                take()
                chain.append(take()[1])
            attrs = attr_lists()
            if len(chain) == 1:
                node = result["nodes"].setdefault(chain[0], dict(defaults["node"]))
                node.update(attrs)
            else:
                for a, b in zip(chain, chain[1:]):
                    for n in (a, b):
                        result["nodes"].setdefault(n, dict(defaults["node"]))
                    result["edges"].append((a, b, {**defaults["edge"], **attrs}))
        if peek() in (("punct", ";"), ("punct", ",")):
            take()
    take("punct", "}")
    return result


def _label_lines(value, node_id: str = "") -> list:
    """[(style, text)] from a DOT label value."""
    if value is None:
        return [("", node_id)]
    kind, text = value
    if kind != "html":
        text = text.replace("\\N", node_id)
        return [("", line) for line in text.split("\n")]
    lines = []
    for seg in re.split(r"<BR[^>]*>", text, flags=re.IGNORECASE):
        style = "b" if re.search(r"<B>", seg, re.I) else "i" if re.search(r"<I>", seg, re.I) else ""
        lines.append((style, html.unescape(re.sub(r"<[^>]+>", "", seg))))
    return lines


_FS, _EDGE_FS, _PAD, _GAP, _LEVEL_GAP = 13, 12, 8, 18, 58


def _text_width(text: str, size: float, bold: bool = False) -> float:
    return len(text) * size * (0.62 if bold else 0.57)


def dot_to_svg(dot: str) -> str | None:
    """Lay out a tree-shaped DOT graph (one root, one parent per node; as written by :func:`metarule_tree_dot`) as
    SVG. Returns None for a graph outside that form, so callers can fall back to showing the DOT text."""
    try:
        g = parse_dot(dot)
    except DotError:
        return None
    nodes = g["nodes"]
    children = {n: [] for n in nodes}
    parent = {}
    edge_label = {}
    for a, b, attrs in g["edges"]:
        if b in parent:
            return None
        parent[b] = a
        children[a].append(b)
        edge_label[b] = _label_lines(attrs.get("label"), "") if attrs.get("label") else []
    roots = [n for n in nodes if n not in parent]
    if len(roots) != 1:
        return None
    # box sizes
    info = {}
    for n, attrs in nodes.items():
        lines = _label_lines(attrs.get("label"), n)
        w = max(_text_width(t, _FS, s == "b") for s, t in lines) + 2 * _PAD
        h = len(lines) * _FS * 1.3 + 2 * _PAD
        style = attrs.get("style", ("str", ""))[1]
        info[n] = {"lines": lines, "w": w, "h": h, "color": attrs.get("color", ("str", "#333333"))[1],
                   "fill": attrs.get("fillcolor", ("str", "#FFFFFF"))[1] if "filled" in style else "#FFFFFF",
                   "dashed": "dashed" in style, "tooltip": attrs.get("tooltip", ("str", ""))[1]}
    # tidy layout: each subtree has a contour (leftmost, rightmost x per depth) relative to its root; siblings
    # are pushed apart only as far as their contours at shared depths require, and a parent sits midway between
    # its first and last child
    seen = set()
    offset = {}

    def contour(n, depth=0) -> dict:
        if n in seen or depth > 500:
            raise DotError("not a tree")
        seen.add(n)
        info[n]["depth"] = depth
        half = info[n]["w"] / 2
        kids = children[n]
        if not kids:
            return {depth: (-half, half)}
        conts = [contour(c, depth + 1) for c in kids]
        acc, pos = dict(conts[0]), [0.0]
        for cont in conts[1:]:
            shift = max(acc[d][1] - cont[d][0] + _GAP for d in cont if d in acc)
            pos.append(shift)
            for d, (lo, hi) in cont.items():
                a = acc.get(d)
                acc[d] = (lo + shift, hi + shift) if a is None else (min(a[0], lo + shift), max(a[1], hi + shift))
        mid = (pos[0] + pos[-1]) / 2
        for c, p in zip(kids, pos):
            offset[c] = p - mid
        out = {d: (lo - mid, hi - mid) for d, (lo, hi) in acc.items()}
        out[depth] = (-half, half)
        return out

    try:
        root_contour = contour(roots[0])
    except DotError:
        return None
    if len(seen) != len(nodes):
        return None
    margin = 16
    left = min(lo for lo, _ in root_contour.values())
    total_w = max(hi for _, hi in root_contour.values()) - left
    info[roots[0]]["cx"] = margin - left
    stack = [roots[0]]
    while stack:
        n = stack.pop()
        for c in children[n]:
            info[c]["cx"] = info[n]["cx"] + offset[c]
            stack.append(c)
    depth_h, gap_below = {}, {}
    for n in nodes:
        d = info[n]["depth"]
        depth_h[d] = max(depth_h.get(d, 0), info[n]["h"])
        if n in parent:
            need = 26 + len(edge_label.get(n, [])) * _EDGE_FS * 1.25
            gap_below[d - 1] = max(gap_below.get(d - 1, _LEVEL_GAP), need)
    title = _label_lines(g["graph"].get("label"), "") if g["graph"].get("label") else []
    top = 16 + len(title) * 15 * 1.35 + (12 if title else 0)
    level_y, y = {}, top
    for d in sorted(depth_h):
        level_y[d] = y
        y += depth_h[d] + gap_below.get(d, 0)
    height = y + 16
    W = max(total_w, max((_text_width(t, 15, st == "b") for st, t in title), default=0)) + 2 * margin
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W:.0f} {height:.0f}" width="{W:.0f}" '
           f'height="{height:.0f}" font-family="Arial, Helvetica, sans-serif" class="tcrex-tree" role="img">',
           '<rect width="100%" height="100%" fill="#FFFFFF"/>']
    ty = 16
    for style, text in title:
        ty += 15 * 1.35
        weight = ' font-weight="bold"' if style == "b" else ""
        italic = ' font-style="italic"' if style == "i" else ""
        out.append(f'<text x="{margin}" y="{ty:.1f}" font-size="15"{weight}{italic}>{html.escape(text)}</text>')
    # edges first, under the boxes: straight down to below the parent's level (clear of taller boxes beside the
    # parent), then across the gap to the child
    for n in nodes:
        p = parent.get(n)
        if p is None:
            continue
        x1, y1 = info[p]["cx"], level_y[info[p]["depth"]] + info[p]["h"]
        x2, y2 = info[n]["cx"], level_y[info[n]["depth"]]
        band = level_y[info[p]["depth"]] + depth_h[info[p]["depth"]] + 6
        out.append(f'<polyline points="{x1:.1f},{y1:.1f} {x1:.1f},{band:.1f} {x2:.1f},{y2:.1f}" fill="none" '
                   'stroke="#555555" stroke-width="1.4"/>')
        out.append(f'<polygon points="{x2:.1f},{y2:.1f} {x2 - 4:.1f},{y2 - 8:.1f} {x2 + 4:.1f},{y2 - 8:.1f}" '
                   'fill="#555555"/>')
        lines = edge_label.get(n, [])
        if lines:  # beside the middle of the slanted part: a first child's label to its left, others' to its right
            kids = children[p]
            anchor = "middle" if len(kids) == 1 else "end" if n == kids[0] else "start"
            ly = (band + y2) / 2 - (len(lines) - 1) * _EDGE_FS * 0.6 + _EDGE_FS * 0.35
            lx = (x1 + x2) / 2 + {"end": -5, "start": 5, "middle": 0}[anchor]
            lw = max(_text_width(t, _EDGE_FS) for _, t in lines) + 6
            bx = {"end": lx - lw + 3, "start": lx - 3, "middle": lx - lw / 2}[anchor]
            out.append(f'<rect x="{bx:.1f}" y="{ly - _EDGE_FS:.1f}" width="{lw:.1f}" '
                       f'height="{len(lines) * _EDGE_FS * 1.25 + 2:.1f}" fill="#FFFFFF" opacity="0.85"/>')
            for k, (_, t) in enumerate(lines):
                out.append(f'<text x="{lx:.1f}" y="{ly + k * _EDGE_FS * 1.25:.1f}" font-size="{_EDGE_FS}" '
                           f'text-anchor="{anchor}" fill="#333333">{html.escape(t)}</text>')
    for n in nodes:
        d = info[n]
        x, y0 = d["cx"] - d["w"] / 2, level_y[d["depth"]]
        dash = ' stroke-dasharray="5,3"' if d["dashed"] else ""
        tip = f"<title>{html.escape(d['tooltip'])}</title>" if d["tooltip"] else ""
        out.append(f'<g>{tip}<rect x="{x:.1f}" y="{y0:.1f}" width="{d["w"]:.1f}" height="{d["h"]:.1f}" rx="6" '
                   f'fill="{html.escape(d["fill"])}" stroke="{html.escape(d["color"])}" stroke-width="2"{dash}/>')
        for k, (style, t) in enumerate(d["lines"]):
            weight = ' font-weight="bold"' if style == "b" else ""
            italic = ' font-style="italic"' if style == "i" else ""
            ly = y0 + _PAD + (k + 1) * _FS * 1.3 - _FS * 0.3
            out.append(f'<text x="{d["cx"]:.1f}" y="{ly:.1f}" font-size="{_FS}" text-anchor="middle"'
                       f'{weight}{italic}>{html.escape(t)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)
