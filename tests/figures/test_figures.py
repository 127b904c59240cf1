"""Figure specs of tcrex.figures on real fitted explainers (no rendering; plotly dicts, DOT text, SVG)."""
import html
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from tcrex import TCREx
from tcrex.errors import ParameterError
from tcrex.text import rule_changes_text
from tcrex import figures as F
from tcrex.figures import _tree

from tests.support.data import figure1, mixed

# ---------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def fig1():
    X, y = figure1()
    ex = TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y)
    blue = next(t for t, s in enumerate(ex.targets_) if s.target.classes == ("blue",))
    return ex, X, y, blue


@pytest.fixture(scope="module")
def mix():
    X, y = mixed()
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    return ex, X, y


@pytest.fixture(scope="module")
def lopsided():
    """Regression split at 2.5: "output > 2.5" has no valid rule, "output ≤ 2.5" a single rule and metarule."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 400), "b": rng.uniform(0, 10, 400)})
    y = np.where(rng.uniform(size=400) < 0.1, 5.0, 0.0) + rng.uniform(0, 0.01, 400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = TCREx(rho=0.05, tau=0.85, target=2.5, task="regression").fit(X, y_pred=y)
    assert ex.targets_[0].n_rules == 0 and len(ex.targets_[1].metarules) == 1
    return ex, X, y


def _kind(fig, kind):
    return [t for t in fig.data if t.meta and t.meta.get("kind") == kind]


def _rects(trace):
    """Rectangles (x0, x1, y0, y1) of a filled scatter trace drawn as closed 5-point paths separated by None."""
    xs, ys = list(trace.x), list(trace.y)
    out = []
    while xs:
        cut = xs.index(None) if None in xs else len(xs)
        px, py = xs[:cut], ys[:cut]
        out.append((min(px), max(px), min(py), max(py)))
        xs, ys = xs[cut + 1:], ys[cut + 1:]
    return out


# ---------------------------------------------------------------------- colours


def test_rule_colours_are_distinct_and_consistent():
    colors = F.rule_colors(30)
    assert len(set(colors)) == 30
    assert all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in colors)
    assert colors[:12] == list(F.RULE_PALETTE)
    assert [F.rule_color(0, r) for r in range(30)] == colors
    assert [F.rule_dash(0, r) for r in range(12)] == ["solid"] * 8 + ["dash"] * 4
    assert F.rule_dash(0, 12) not in ("solid", "dash") and F.rule_dash(0, -1) == "dot"
    assert F.rule_colors(0) == []


def _lab(color: str) -> np.ndarray:
    """CIELAB (D65) of an sRGB ``#RRGGBB``."""
    rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ lin
    f = np.cbrt(np.maximum(xyz / np.array([0.95047, 1.0, 1.08883]), 0.008856 ** 3))
    f = np.where(xyz / np.array([0.95047, 1.0, 1.08883]) > 0.008856, f,
                 7.787 * xyz / np.array([0.95047, 1.0, 1.08883]) + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _ciede2000(c1: str, c2: str) -> float:
    """The CIEDE2000 colour difference of two ``#RRGGBB`` colours."""
    return _delta_e(_lab(c1), _lab(c2))


def _delta_e(lab1, lab2) -> float:
    """CIEDE2000 (Sharma, Wu & Dalal 2005) of two CIELAB colours."""
    (L1, a1, b1), (L2, a2, b2) = lab1, lab2
    cbar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(cbar ** 7 / (cbar ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1, h2 = np.degrees(np.arctan2(b1, a1p)) % 360, np.degrees(np.arctan2(b2, a2p)) % 360
    dh = 0.0 if c1p * c2p == 0 else (h2 - h1 + 180) % 360 - 180
    dH = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    lbar, cbarp = (L1 + L2) / 2, (c1p + c2p) / 2
    hbar = h1 + h2 if c1p * c2p == 0 else (h1 + h2) / 2 if abs(h1 - h2) <= 180 else \
        (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * np.cos(np.radians(hbar - 30)) + 0.24 * np.cos(np.radians(2 * hbar))
         + 0.32 * np.cos(np.radians(3 * hbar + 6)) - 0.2 * np.cos(np.radians(4 * hbar - 63)))
    rt = (-np.sin(np.radians(60 * np.exp(-((hbar - 275) / 25) ** 2)))
          * 2 * np.sqrt(cbarp ** 7 / (cbarp ** 7 + 25 ** 7)))
    sl = 1 + 0.015 * (lbar - 50) ** 2 / np.sqrt(20 + (lbar - 50) ** 2)
    sc, sh = 1 + 0.045 * cbarp, 1 + 0.015 * cbarp * t
    dl, dc = (L2 - L1) / sl, (c2p - c1p) / sc
    return float(np.sqrt(dl ** 2 + dc ** 2 + (dH / sh) ** 2 + rt * dc * (dH / sh)))


def test_twelve_rule_colours_are_told_apart():
    """Any two of the first twelve rule colours differ clearly (CIEDE2000 >= 15; the first eight >= 23), so a
    rule map with 8 rules has no two similar oranges (the old palette's #E69F00 and #D55E00: 22)."""
    # pairs 1 and 7 of the CIEDE2000 paper's test data (Sharma et al. 2005): 2.0425 and 2.3669
    assert round(_delta_e((50, 2.6772, -79.7751), (50, 0, -82.7485)), 4) == 2.0425
    assert round(_delta_e((50, 0, 0), (50, -1, 2)), 4) == 2.3669
    colors = F.rule_colors(12)
    pairs = [(i, j) for i in range(12) for j in range(i + 1, 12)]
    worst = min(_ciede2000(colors[i], colors[j]) for i, j in pairs)
    worst8 = min(_ciede2000(colors[i], colors[j]) for i, j in pairs if j < 8)
    assert worst >= 15 and worst8 >= 23, (worst, worst8)
    oranges = [c for c in colors[:8] if 20 <= np.degrees(np.arctan2(_lab(c)[2], _lab(c)[1])) % 360 <= 75
               and np.hypot(*_lab(c)[1:]) > 40]
    assert len(oranges) <= 1, oranges


# ---------------------------------------------------------------------- rule plot (paper Figures 1 and 2)


def test_rule_plot_draws_the_two_blue_rules_with_exact_bounds(fig1):
    ex, X, y, blue = fig1
    fig = F.rule_plot(ex, blue, "x1", "x2", X, y, F.RulePlotOptions(show_metarules=False))
    rules = _kind(fig, "rule")
    assert len(rules) == 2 and all(t.meta["target"] == blue for t in rules)
    xlo, xhi = fig.layout.xaxis.range
    ylo, yhi = fig.layout.yaxis.range
    by_cond = {ex.rules_frame().set_index(["target", "rule"]).loc[(blue, t.meta["rule"]), "conditions"]: _rects(t)
               for t in rules}
    assert by_cond["x1 ≤ 1.125 and x2 ≤ 5.125"] == [(xlo, 1.125, ylo, 5.125)]
    assert by_cond["x1 > 3.125 and x2 > 5.125"] == [(3.125, xhi, 5.125, yhi)]
    assert xlo < 0.25 and xhi > 10 and ylo < 0.25 and yhi > 10  # open sides reach the plotted edge
    for t in rules:
        assert t.fill == "toself" and t.hoveron == "fills"
        assert "accuracy 1.000" in t.text and "feasibility" in t.text
        assert t.line.color == F.rule_color(blue, t.meta["rule"])
    assert not fig.layout.shapes  # metarules off


def test_metarule_regions_cover_the_plane_and_follow_the_slice(fig1):
    ex, X, y, blue = fig1
    person = {"x1": 2.0, "x2": 2.0}
    fig = F.rule_plot(ex, blue, "x1", "x2", X, y, F.RulePlotOptions(individual=person, individual_y="red"))
    shapes = fig.layout.shapes
    assert shapes and all(s.type == "rect" and s.xref == "x" and s.layer == "below" for s in shapes)
    xlo, xhi = fig.layout.xaxis.range
    ylo, yhi = fig.layout.yaxis.range
    area = sum((s.x1 - s.x0) * (s.y1 - s.y0) for s in shapes)
    assert area == pytest.approx((xhi - xlo) * (yhi - ylo))
    for a in shapes:  # disjoint
        for b in shapes:
            if a is not b:
                assert min(a.x1, b.x1) <= max(a.x0, b.x0) or min(a.y1, b.y1) <= max(a.y0, b.y0)
    # every shape point lies in the metarule the engine reports there, coloured by its rule
    sl = ex.metarule_slice(blue, "x1", "x2", person)
    for s in shapes:
        cx, cy = (s.x0 + s.x1) / 2, (s.y0 + s.y1) / 2
        row = sl[(sl.x_low < cx) & (cx <= sl.x_high) & (sl.y_low < cy) & (cy <= sl.y_high)].iloc[0]
        assert s.name == f"metarule {ex.metarule_id(blue, row.metarule)} ({ex.rule_id(blue, row.rule)})"
        assert s.fillcolor.startswith("rgba(") and F.rule_color(blue, row.rule) == _hex(s.fillcolor)
    labels = [a for a in fig.layout.annotations if a.name == "metarule label"]
    assert sorted(a.text for a in labels) == sorted(ex.metarule_id(blue, m) for m in range(3))


def _hex(rgba):
    r, g, b = (int(v) for v in re.findall(r"\d+", rgba)[:3])
    return f"#{r:02X}{g:02X}{b:02X}"


def test_individual_counterfactual_and_arrow(fig1):
    ex, X, y, blue = fig1
    fig = F.rule_plot(ex, blue, "x1", "x2", X, y, F.RulePlotOptions(individual={"x1": 2.0, "x2": 2.0},
                                                                    individual_y="red"))
    (ind,) = _kind(fig, "individual")
    (cf,) = _kind(fig, "counterfactual")
    assert (ind.x[0], ind.y[0]) == (2.0, 2.0) and ind.marker.size >= 18
    assert (cf.x[0], cf.y[0]) == (1.125, 2.0)  # the paper says <= 1.125: CART's midpoint, the surrogate's own node
    (arrow,) = [a for a in fig.layout.annotations if a.name == "counterfactual arrow"]
    assert (arrow.ax, arrow.ay, arrow.x, arrow.y) == (2.0, 2.0, 1.125, 2.0)
    assert arrow.axref == "x" and arrow.ayref == "y" and arrow.showarrow
    # annotations are drawn above traces: the arrow stops outside both markers, never on top of them
    assert arrow.standoff > cf.marker.size / 2 + cf.marker.line.width
    assert arrow.startstandoff > ind.marker.size / 2
    assert len(_kind(fig, "example")) == 1


def test_individual_by_index_label_takes_its_output_from_y_pred(fig1):
    ex, X, y, blue = fig1
    i = int(np.flatnonzero(y == "red")[0])
    fig = F.rule_plot(ex, blue, "x1", "x2", X, y, F.RulePlotOptions(individual=X.index[i]))
    assert len(_kind(fig, "counterfactual")) == 1
    # without any output the plot still draws the individual and says what is missing
    fig = F.rule_plot(ex, blue, "x1", "x2", X, None, F.RulePlotOptions(individual={"x1": 2.0, "x2": 2.0}))
    assert _kind(fig, "individual") and not _kind(fig, "counterfactual")
    assert "individual_y" in fig.layout.title.subtitle.text


def test_scattergl_above_1000_points_and_deterministic_sampling():
    X, y = mixed(n=3000, seed=1)
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    big = F.rule_plot(ex, 0, "age", "income", X, y, F.RulePlotOptions(max_points=2500))
    pts = _kind(big, "points")
    assert pts and all(isinstance(t, go.Scattergl) for t in pts)
    assert sum(len(t.x) for t in pts) == 2500 == big.layout.meta["n_points"]
    assert "2,500 of 3,000" in big.layout.title.subtitle.text
    again = F.rule_plot(ex, 0, "age", "income", X, y, F.RulePlotOptions(max_points=2500))
    assert big.to_json() == again.to_json()
    small = F.rule_plot(ex, 0, "age", "income", X, y, F.RulePlotOptions(max_points=800))
    pts = _kind(small, "points")
    assert all(isinstance(t, go.Scatter) for t in pts) and sum(len(t.x) for t in pts) == 800
    assert not any(isinstance(t, go.Scattergl) for t in small.data)
    other_seed = F.rule_plot(ex, 0, "age", "income", X, y, F.RulePlotOptions(max_points=800, random_state=5))
    assert other_seed.to_json() != small.to_json()


def test_categorical_axis_uses_positions_and_tick_labels(mix):
    ex, X, y = mix
    fig = F.rule_plot(ex, 1, "income", "job", X, y, F.RulePlotOptions(individual=X.iloc[0], individual_y=y[0]))
    cats = ex.schema_.features[ex.schema_.index("job")].categories
    assert list(fig.layout.yaxis.ticktext) == cats and list(fig.layout.yaxis.tickvals) == list(range(len(cats)))
    assert tuple(fig.layout.yaxis.range) == (-0.5, len(cats) - 0.5)
    # "job not in {manager, teacher}" = clerk, driver, nurse: two runs of positions (0-1 and 3)
    rule = next(r for r, c in enumerate(ex.rules_frame().query("target == 1").conditions)
                if "job not in {manager, teacher}" in c)
    (tr,) = [t for t in _kind(fig, "rule") if t.meta["rule"] == rule]
    assert sorted((y0, y1) for _, _, y0, y1 in _rects(tr)) == [(-0.5, 1.5), (2.5, 3.5)]
    pts = np.concatenate([np.asarray(t.y) for t in _kind(fig, "points")])
    assert np.all(np.abs(pts - np.round(pts)) < 0.3)  # jittered around the category positions
    area = sum((s.x1 - s.x0) * (s.y1 - s.y0) for s in fig.layout.shapes)
    (xlo, xhi), (ylo, yhi) = fig.layout.xaxis.range, fig.layout.yaxis.range
    assert area == pytest.approx((xhi - xlo) * (yhi - ylo))


def test_rule_plot_errors_are_clear(fig1):
    ex, X, y, blue = fig1
    with pytest.raises(ParameterError, match="target 7 does not exist"):
        F.rule_plot(ex, 7, "x1", "x2", X, y)
    with pytest.raises(ParameterError, match="two different features"):
        F.rule_plot(ex, blue, "x1", "x1", X, y)
    with pytest.raises(Exception, match="unknown feature"):
        F.rule_plot(ex, blue, "x1", "nope", X, y)
    with pytest.raises(ParameterError, match="y_pred has 3 values"):
        F.rule_plot(ex, blue, "x1", "x2", X, y[:3])


def test_user_strings_are_escaped_in_figures():
    X, y = mixed(n=300)
    X = X.rename(columns={"job": "<script>"})
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    fig = F.rule_plot(ex, 0, "income", "<script>", X, y)
    text = fig.to_json()
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "&lt;script&gt;" in fig.layout.yaxis.title.text


# ---------------------------------------------------------------------- rule focus (paper Figure 8c)


def test_rule_focus_plot_picks_the_rule_features_and_draws_arrows(mix):
    ex, X, y = mix
    out = ex.explain(X, y_pred=y)
    rule = int(out.loc[out.target == 1, "rule"].mode().iloc[0])
    chosen = X[((out.target == 1) & (out.rule == rule)).to_numpy()].iloc[:12]
    fig = F.rule_focus_plot(ex, 1, rule, X, y, chosen)
    conds = ex.rule_conditions(1, rule)
    assert {fig.layout.meta["x"], fig.layout.meta["y"]} <= set(conds) | set(ex.schema_.names)
    if len(conds) >= 2:
        assert {fig.layout.meta["x"], fig.layout.meta["y"]} <= set(conds)
    (ind,) = _kind(fig, "individuals")
    assert len(ind.x) == len(chosen) and ind.marker.size >= 14
    assert all(re.search(r"</b>: (1 change|\d+ changes)(<br>|$)", h) for h in ind.hovertext), ind.hovertext
    arrows = [a for a in fig.layout.annotations if a.name == "change arrow"]
    x, yname = fig.layout.meta["x"], fig.layout.meta["y"]
    outside = sum(any(f in conds and _outside(conds[f], r[f]) for f in (x, yname)) for _, r in chosen.iterrows())
    assert len(arrows) == outside
    (rt,) = _kind(fig, "rule")
    for a in arrows:  # every arrow ends on the rule's rectangle (its nearest point on this plane)
        assert any(x0 - 1e-9 <= a.x <= x1 + 1e-9 and y0 - 1e-9 <= a.y <= y1 + 1e-9 for x0, x1, y0, y1 in _rects(rt))
    pts = _kind(fig, "points")
    assert all(t.marker.size <= 6 for t in pts)


def _outside(cond, v):
    if "in" in cond:
        return v not in cond["in"]
    return (cond["low"] is not None and v <= cond["low"]) or (cond["high"] is not None and v > cond["high"])


def test_rule_focus_plot_with_given_axes_and_bad_rule(fig1):
    ex, X, y, blue = fig1
    fig = F.rule_focus_plot(ex, blue, 0, X, y, X.iloc[[0, 5, 700]], x="x2", y="x1")
    assert (fig.layout.meta["x"], fig.layout.meta["y"]) == ("x2", "x1")
    with pytest.raises(ParameterError, match="rule must be a rule id"):
        F.rule_focus_plot(ex, blue, 9, X, y, X.iloc[:2])


# ---------------------------------------------------------------------- population summaries (paper Figure 8b)


def test_change_keep_bars_match_feature_actions(mix):
    ex, X, y = mix
    actions = ex.feature_actions(X.iloc[:80], y_pred=y[:80])
    fig = F.change_keep_bars(actions)
    bars = {t.name: dict(zip(t.y, t.x)) for t in fig.data}
    for f in actions.columns:
        n_change = int((actions[f] == "change").sum())
        n_keep = int((actions[f] == "keep").sum())
        if n_change + n_keep:
            assert bars["change"][f] == n_change and bars["keep"][f] == n_keep
        else:
            assert f not in bars["change"]
    totals = [bars["change"][f] + bars["keep"][f] for f in fig.data[0].y]
    assert totals == sorted(totals, reverse=True)
    assert F.change_keep_bars(actions, stacked=True).layout.barmode == "stack"


def test_changes_histogram_is_prebinned_with_statuses(mix):
    ex, X, y = mix
    out = ex.explain(X, y_pred=y)
    out = pd.concat([out, ex.explain(X.iloc[:5], y_pred=y[:5], target=[1])])  # some already in the target
    fig = F.changes_histogram(out)
    ok = next(t for t in fig.data if t.meta["status"] == "ok")
    expected = out[out.status == "ok"].changes.value_counts()
    assert {int(k): v for k, v in zip(ok.x, ok.y) if v} == expected.to_dict()
    done = next(t for t in fig.data if t.meta["status"] == "already_in_target")
    assert done.y[0] == int((out.status == "already_in_target").sum()) > 0
    assert sum(sum(t.y) for t in fig.data) == len(out)
    assert max(len(t.y) for t in fig.data) <= 1 + int(out.changes.max())  # counts, not raw values


def test_rules_overview(mix):
    ex, X, y = mix
    fig = F.rules_overview(ex)
    rules = ex.rules_frame()
    assert sum(len(t.x) for t in _kind(fig, "rules")) == len(rules)
    for t in _kind(fig, "rules"):
        part = rules[rules.target == t.meta["target"]]
        assert list(t.x) == part.feasibility.tolist() and list(t.y) == part.accuracy.tolist()
        assert list(t.marker.color) == [F.rule_color(t.meta["target"], r) for r in part.rule]
    assert [t.meta["target"] for t in _kind(F.rules_overview(ex, target=1), "rules")] == [1]


# ---------------------------------------------------------------------- metarule tree (paper Figures 7, 8a)


def _tree_nodes(node):
    yield node
    if "metarule" not in node and "empty" not in node:
        yield from _tree_nodes(node["left"])
        yield from _tree_nodes(node["right"])


def _balanced(dot):
    """Braces and brackets balance outside quoted strings and <...> labels."""
    depth = {"{": 0, "[": 0}
    i, angle = 0, 0
    while i < len(dot):
        c = dot[i]
        if angle:
            angle += {"<": 1, ">": -1}.get(c, 0)
        elif c == '"':
            i += 1
            while dot[i] != '"':
                i += 2 if dot[i] == "\\" else 1
        elif c == "<":
            angle = 1
        elif c in "{[":
            depth[c] += 1
        elif c in "}]":
            depth["{" if c == "}" else "["] -= 1
            assert min(depth.values()) >= 0
        i += 1
    return depth == {"{": 0, "[": 0} and angle == 0


@pytest.mark.parametrize("which", ["fig1", "mix"])
def test_dot_has_one_node_per_tree_node_with_rule_colours(which, request):
    ex = request.getfixturevalue(which)[0]
    for t in range(len(ex.targets_)):
        dot = F.metarule_tree_dot(ex, t)
        assert dot.startswith("digraph") and _balanced(dot)
        g = F.parse_dot(dot)
        tree = list(_tree_nodes(ex.metarule_tree(t)))
        assert len(g["nodes"]) == len(tree) and len(g["edges"]) == len(tree) - 1
        leaves = [n for n in tree if "metarule" in n]
        leaf_nodes = [a for a in g["nodes"].values() if "Metarule" in a["label"][1]]
        assert len(leaf_nodes) == len(leaves)
        for node, attrs in zip([n for n in tree if "metarule" in n], leaf_nodes):  # both in pre-order
            assert f"Metarule {ex.metarule_id(t, node['metarule'])} → {ex.rule_id(t, node['rule'])}" in attrs["label"][1]
            assert attrs["color"][1] == F.rule_color(t, node["rule"])
            assert rule_changes_text(node["sparsity"]) in attrs["label"][1]  # the rules' own figure, said as such
        edge_labels = [e[2]["label"][1].replace("\n", " ") for e in g["edges"]]
        expected = [n[k] for n in tree if "feature" in n for k in ("left_text", "right_text")]
        assert sorted(edge_labels) == sorted(expected)


def test_dot_leaf_shows_the_metarule_text_and_rule_metrics(fig1):
    ex, X, y, blue = fig1
    g = F.parse_dot(F.metarule_tree_dot(ex, blue, max_label=200))
    labels = [a["label"][1] for a in g["nodes"].values()]
    assert any("Change x1 to ≤ 1.125, while keeping x2 ≤ 5.125" in lab for lab in labels)
    assert any("<I>accuracy 1.00 · feasibility 0.05</I>" in lab for lab in labels)
    assert any("complexity 2" in lab for lab in labels)


def test_population_counts_and_collapsed_subtrees(fig1):
    ex, X, y, blue = fig1
    # only red points with x2 <= 5: nobody in the "x2 > 5.125" subtree of the blue tree
    rows = ((y == "red") & (X.x2 <= 5)).to_numpy()
    pop = ex.explain(X[rows], y_pred=y[rows])
    dot = F.metarule_tree_dot(ex, blue, population=pop)
    g = F.parse_dot(dot)
    labels = {n: a["label"][1] for n, a in g["nodes"].items()}
    collapsed = [n for n, lab in labels.items() if "no one here" in lab]
    assert len(collapsed) == 1 and "(1 metarule, no one here)" in labels[collapsed[0]]
    assert g["nodes"][collapsed[0]]["color"][1] == "#999999"
    assert f"{int(rows.sum())} here" in labels["n0"]
    assert len(g["nodes"]) == len(list(_tree_nodes(ex.metarule_tree(blue))))  # a leaf collapses to one node
    full = F.parse_dot(F.metarule_tree_dot(ex, blue, population=pop, collapse_empty=False))
    assert not any("no one here" in a["label"][1] for a in full["nodes"].values())
    assert any("<B>0 here</B>" in a["label"][1] for a in full["nodes"].values())
    # nobody at all here: the whole tree is one grey node
    none = F.parse_dot(F.metarule_tree_dot(ex, blue, population=pop.iloc[:0]))
    assert len(none["nodes"]) == 1 and "3 metarules, no one here" in next(iter(none["nodes"].values()))["label"][1]


def test_collapsed_subtree_with_several_metarules(mix):
    ex, X, y = mix
    pop = ex.explain(X[X.age > 55], y_pred=y[(X.age > 55).to_numpy()])
    g = F.parse_dot(F.metarule_tree_dot(ex, 0, population=pop))
    labels = [a["label"][1] for a in g["nodes"].values()]
    assert any(re.search(r"\(\d+ metarules, no one here\)", lab) for lab in labels)
    assert len(g["nodes"]) < len(list(_tree_nodes(ex.metarule_tree(0))))


def test_no_rule_target_and_single_metarule_tree(lopsided):
    ex, X, y = lopsided
    g = F.parse_dot(F.metarule_tree_dot(ex, 0))
    assert len(g["nodes"]) == 1 and not g["edges"]
    assert "No valid rule" in next(iter(g["nodes"].values()))["label"][1]
    one = F.parse_dot(F.metarule_tree_dot(ex, 1))
    # target 0 has no rule (and no metarule), so rule 0 / metarule 0 of target 1 are the explainer's first: R1, M1
    assert len(one["nodes"]) == 1 and "Metarule M1 → R1" in one["nodes"]["n0"]["label"][1]
    assert F.dot_to_svg(F.metarule_tree_dot(ex, 0)).count("<rect x=") == 1
    assert "No valid rule" in F.metarule_icicle(ex, 0).layout.annotations[0].text
    assert len(F.metarule_icicle(ex, 1).data[0].ids) == 1


def test_dot_escapes_user_strings():
    X, y = mixed(n=300)
    X = X.rename(columns={"job": 'j<o>b "&" {x}'})
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    dot = F.metarule_tree_dot(ex, 0)
    assert _balanced(dot)
    g = F.parse_dot(dot)
    assert any("j&lt;o&gt;b &quot;&amp;&quot; {x}" in a["label"][1] for a in g["nodes"].values())
    svg = F.dot_to_svg(dot)
    ET.fromstring(svg)  # well-formed XML
    assert "j&lt;o&gt;b" in svg


def test_svg_layout_is_a_tree_without_overlaps(mix):
    ex, X, y = mix
    svg = F.metarule_tree_svg(ex, 0)
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    boxes = [(float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height")))
             for r in root.iterfind(".//s:g/s:rect", ns)]
    assert len(boxes) == len(list(_tree_nodes(ex.metarule_tree(0))))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]
    width = float(root.get("width"))
    assert all(0 <= x and x + w <= width for x, _, w, _ in boxes)
    assert F.dot_to_svg("digraph { a -> c; b -> c; }") is None  # two parents: not a tree
    assert F.dot_to_svg("digraph { subgraph s { a } }") is None
    assert F.dot_to_svg("graph { a -- b }") is not None


def test_icicle_matches_the_tree_and_population(fig1):
    ex, X, y, blue = fig1
    fig = F.metarule_icicle(ex, blue)
    ic = fig.data[0]
    tree = list(_tree_nodes(ex.metarule_tree(blue)))
    assert len(ic.ids) == len(tree) and list(ic.values) == [n["n_cells"] for n in tree]
    assert ic.branchvalues == "total"
    leaf_colors = [c for c, n in zip(ic.marker.colors, tree) if "metarule" in n]
    assert leaf_colors == [F.rule_color(blue, n["rule"]) for n in tree if "metarule" in n]
    pop = ex.explain(X, y_pred=y)
    ic = F.metarule_icicle(ex, blue, population=pop).data[0]
    assert ic.values[0] == int((pop.target == blue).sum())
    for i, parent in zip(ic.ids, ic.parents):  # totals add up
        kids = [v for v, p in zip(ic.values, ic.parents) if p == i]
        if kids:
            assert sum(kids) == ic.values[list(ic.ids).index(i)]


def test_population_must_be_an_explain_frame(fig1):
    ex, X, y, blue = fig1
    with pytest.raises(ParameterError, match="explain"):
        F.metarule_tree_dot(ex, blue, population=pd.DataFrame({"a": [1]}))


# ---------------------------------------------------------------------- one individual


def test_individual_table(mix):
    ex, X, y = mix
    x = X.iloc[0]
    exp = ex.explain_one(x, y_pred=y[0])
    tab = F.individual_table(exp, x)
    assert list(tab.columns) == ["feature", "current value", "counterfactual value", "real example value", "action",
                                 "rule condition"]
    assert list(tab.feature) == list(X.columns)
    act = dict(zip(tab.feature, tab.action))
    assert {f for f, a in act.items() if a == "change"} == {c["feature"] for c in exp.changes}
    assert {f for f, a in act.items() if a == "keep"} == {k["feature"] for k in exp.keeps}
    for r in tab.itertuples():
        assert r._2 == x[r.feature] and r._3 == exp.counterfactual[r.feature]
        assert r._6 == exp.rule_conditions.get(r.feature, {}).get("text", "")
    done = ex.explain_one(x, y_pred=y[0], target=[y[0]])
    assert done.status == "already_in_target"
    tab = F.individual_table(done, dict(x))
    assert set(tab.action) == {"free"} and tab["counterfactual value"].isna().all()


def test_rule_legend_shows_the_whole_rule(mix):
    ex, X, y = mix
    fig = F.rule_plot(ex, 0, "age", "income", X, y)
    rules = ex.rules_frame().set_index("rule_id")
    traces = _kind(fig, "rule")
    assert traces
    for t in traces:
        text = html.unescape(t.name.replace("<br>", " "))  # names are escaped for plotly
        assert "…" not in text and text == f"{t.meta['rule_id']}: {rules.loc[t.meta['rule_id'], 'conditions']}"
        assert max(len(line) for line in t.name.split("<br>")) <= 44 + 12  # wrapped, one comparison per line end


def test_individual_table_never_calls_an_immutable_feature_free(mix):
    ex, X, y = mix
    fixed = next(f for f in X.columns if f not in ex.explain_one(X.iloc[[0]], y_pred=[y[0]]).rule_conditions)
    constrained = TCREx(rho=0.03, tau=0.85, constraints={fixed: "immutable"}).fit(X, y_pred=y)
    exp = constrained.explain_one(X.iloc[[0]], y_pred=[y[0]])
    tab = F.individual_table(exp, X.iloc[0], constraints=constrained.constraints_)
    act = dict(zip(tab.feature, tab.action))
    if fixed not in exp.rule_conditions:
        assert act[fixed] == "immutable"
    assert all(a != "free" for f, a in act.items() if f == fixed)
    # a {feature: spec} dict works the same; without constraints the old words stay
    assert dict(zip(*F.individual_table(exp, X.iloc[0], constraints={fixed: "immutable"})[["feature", "action"]]
                    .to_numpy().T))[fixed] == act[fixed]
    assert "immutable" not in set(F.individual_table(exp, X.iloc[0]).action)


def test_metacounterfactual_table_and_figure(fig1):
    ex, X, y, blue = fig1
    exp = ex.explain_one({"x1": 2.0, "x2": 2.0}, y_pred="red")
    tab = F.metacounterfactual_table(exp)
    assert list(tab.metarule) == [a["metarule_id"] for a in exp.alternatives]  # order as given, by public id
    assert list(tab["if"]) == ["x1 > 3.125", "x2 > 5.125"]
    assert list(tab["difference from now"]) == [a["n_changes"] - exp.n_changes for a in exp.alternatives]
    assert list(tab.text) == [a["text"] for a in exp.alternatives]
    # readable headers, and rules by their one public id (as in rules_frame)
    assert not any(c.startswith("n_") or "vs now" in c for c in tab.columns)
    ids = ex.rules_frame().set_index(["target", "rule"])["rule_id"]
    assert list(tab.rule) == [ids[(exp.target, a["rule"])] for a in exp.alternatives]
    fig = F.metacounterfactual_figure(exp)
    (differ,) = _kind(fig, "metachanges")
    assert list(differ.x) == [0] + [a["n_metachanges"] for a in exp.alternatives]
    changes = _kind(fig, "changes")
    assert {t.meta["rule"] for t in changes} == {exp.rule} | {a["rule"] for a in exp.alternatives}
    assert all(t.marker.color == F.rule_color(blue, t.meta["rule"]) for t in changes)


def test_metacounterfactuals_when_there_are_none(lopsided):
    ex, X, y = lopsided
    single = ex.explain_one({"a": 1.0, "b": 1.0}, y_pred=5.0)  # served by the one-metarule target
    assert single.rule == 0 and not single.alternatives
    assert F.metacounterfactual_table(single).empty
    assert "no alternative" in F.metacounterfactual_figure(single).layout.title.subtitle.text
    no_rule = ex.explain_one({"a": 1.0, "b": 1.0}, y_pred=0.0)
    assert no_rule.status == "no_rule"
    assert F.metacounterfactual_table(no_rule).empty
    assert "No valid rule" in F.metacounterfactual_figure(no_rule).layout.annotations[0].text
    assert set(F.individual_table(no_rule, {"a": 1.0, "b": 1.0}).action) == {"free"}


# ---------------------------------------------------------------------- hygiene


def test_no_streamlit_in_figures_or_report():
    root = Path(__file__).resolve().parents[2] / "tcrex"
    for path in list((root / "figures").glob("*.py")) + list((root / "report").glob("*.py")):
        assert "streamlit" not in path.read_text(encoding="utf-8"), path


def test_figures_are_deterministic(mix):
    ex, X, y = mix
    pop = ex.explain(X.iloc[:50], y_pred=y[:50])
    for make in (lambda: F.metarule_tree_dot(ex, 0, population=pop), lambda: F.metarule_icicle(ex, 0).to_json(),
                 lambda: F.rule_plot(ex, 0, "age", "job", X, y, F.RulePlotOptions(individual=X.iloc[3],
                                                                                  individual_y=y[3])).to_json()):
        assert make() == make()


def test_dot_parser_rejects_garbage():
    with pytest.raises(_tree.DotError):
        F.parse_dot("digraph { a -> ")
    with pytest.raises(_tree.DotError):
        F.parse_dot("not a graph")


# ---------------------------------------------------------------------- audit heatmap


def test_audit_heatmap_drops_features_no_group_changes():
    from tcrex.audit import audit
    from tcrex.datasets import make_recourse_groups

    df = make_recourse_groups(1500, disparity=True, random_state=1)
    X = df.drop(columns=["group", "approved"]).assign(noise=np.arange(1500) % 7, constant=1.0)
    y = df["approved"].to_numpy()
    ex = TCREx(rho=0.02, tau=0.9, target=1).fit(X, y_pred=y)
    res = audit(ex, X, df["group"], y_pred=y, n_boot=50)
    shares = res.feature_change_shares()
    never = [f for f in shares.columns if not (shares[f].fillna(0) > 0).any()]
    assert "constant" in never  # a rule never asks anyone to change a constant
    (h,) = F.feature_change_heatmap(res).data
    assert set(h.x) == set(shares.columns) - set(never) and len(h.x) >= 1
    assert h.meta["dropped"] == never
    fig = F.feature_change_heatmap(res)
    assert f"not shown: {len(never)} feature" in fig.layout.title.subtitle.text and "constant" in \
        fig.layout.title.subtitle.text
