"""A pure-Python parser for the simple DOT subset :mod:`tcrex.figures._tree` writes, and a tidy SVG layout of
tree-shaped graphs, so a report can draw a tree offline without Graphviz."""
from __future__ import annotations

import html
import re

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
    SVG. Returns None for a graph outside that form, so callers can fall back to showing the DOT text.

    The ``<svg>`` element carries ``data-root-x`` and ``data-root-y``: where the root box is (its centre, its
    top), so a viewer showing the tree at full size can open centred on the root."""
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
           f'height="{height:.0f}" font-family="Arial, Helvetica, sans-serif" class="tcrex-tree" role="img" '
           f'data-root-x="{info[roots[0]]["cx"]:.0f}" data-root-y="{level_y[0]:.0f}">',
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
