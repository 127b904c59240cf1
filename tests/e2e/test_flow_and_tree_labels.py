"""Text stays readable at real size: the Compare page's flow chart and the Global rules page's tree
(its outline, opened fully, and its diagram), rendered in Chromium at 1440 x 900 on the bundled loans sample and on
a 1,000-row credit table with 20 features, never draw one text box over another (the boxes of every rendered text
node), and the flow's state labels sit beside its bars, never on its bands."""
from __future__ import annotations

import itertools

import pytest

from tcrex import TCREx
from tcrex.compare import compare_models
from tcrex.datasets import LOANS_MODEL_B, SAMPLE_DATA_DIR, SAMPLES, load_bundled_loans, load_bundled_model
from tcrex.figures import metarule_tree_html, metarule_tree_svg, recourse_flow
from tcrex.ui.widgets.components import modebar_room

from tests.support.browser import SCREENSHOTS
from tests.support.credit_like import FEATURES, credit_like, credit_model

#: Every visible text node's boxes (a wrapped line is one box each), in page coordinates.
TEXT_BOXES = """() => { const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) { const n = walker.currentNode;
    if (!n.textContent.trim() || !n.parentElement.checkVisibility()) continue;
    const r = document.createRange(); r.selectNodeContents(n);
    for (const b of r.getClientRects()) if (b.width > 0 && b.height > 0)
      out.push({text: n.textContent.trim().slice(0, 60), x: b.x, y: b.y, w: b.width, h: b.height}); }
  return out; }"""


def _setups():
    frame = load_bundled_loans()
    X = frame.drop(columns=["approved"])
    model = load_bundled_model()
    ex = TCREx(target=1, class_names=SAMPLES["loans"].class_names).fit(X, model)
    yield "loans", ex, compare_models(ex, X, load_bundled_model(SAMPLE_DATA_DIR / LOANS_MODEL_B), model_a=model)
    keep = FEATURES[:20] + ["target"]
    frame = credit_like(1000)[keep]
    X = frame.drop(columns="target")
    model = credit_model(frame)
    ex = TCREx(target=0, class_names={0: "Good", 1: "Bad"}).fit(X, model)
    yield "credit-20", ex, compare_models(ex, X, credit_model(credit_like(1000, seed=1)[keep]), model_a=model)


@pytest.fixture(scope="module")
def charts():
    out = {}
    for name, ex, comparison in _setups():
        flow = recourse_flow(comparison)
        top = flow.layout.margin.t
        modebar_room(flow)  # as the Compare page draws it: the toolbar's band must not move the plot
        assert flow.layout.margin.t == top
        # plotly draws in steps after its first shapes appear; post_script runs once newPlot has resolved
        out[f"{name} flow"] = flow.to_html(include_plotlyjs=True, post_script="document.body.dataset.plotted = 'yes';")
        out[f"{name} tree outline"] = metarule_tree_html(ex, 0, open_all=True)
        out[f"{name} tree diagram"] = metarule_tree_svg(ex, 0)
    return out


def overlaps(boxes, tol: float = 1.0) -> list:
    """Pairs of boxes that share more than ``tol`` px in both directions."""
    return [(a["text"], b["text"]) for a, b in itertools.combinations(boxes, 2)
            if a["x"] + tol < b["x"] + b["w"] and b["x"] + tol < a["x"] + a["w"]
            and a["y"] + tol < b["y"] + b["h"] and b["y"] + tol < a["y"] + a["h"]]


def test_flow_and_tree_text_never_overlaps(browser, charts, tmp_path):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    boxes, bands = {}, {}
    try:
        for name, html in charts.items():
            path = tmp_path / "chart.html"
            path.write_text(html, encoding="utf-8")
            page.goto(path.as_uri())
            if "flow" in name:
                page.wait_for_selector("body[data-plotted='yes']", state="attached")  # every label placed
                # the bands run between the two columns of bars: from the left bars' left to the right bars' right
                bands[name] = page.evaluate("""(() => { const r = Array.from(document.querySelectorAll(
                    '.sankey .node-rect')).map(e => e.getBoundingClientRect());
                    return {x0: Math.min(...r.map(b => b.x)), x1: Math.max(...r.map(b => b.right)),
                            y0: Math.min(...r.map(b => b.y)), y1: Math.max(...r.map(b => b.bottom))}; })()""")
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / f"flow-{name.split()[0]}.png"))
            boxes[name] = page.evaluate(TEXT_BOXES)
    finally:
        page.close()
    for name, found in boxes.items():
        print(f"{name}: {len(found)} text boxes")
    assert all(len(b) >= 8 for b in boxes.values()), {n: len(b) for n, b in boxes.items()}  # drawn and measured
    assert {n: overlaps(b) for n, b in boxes.items()} == {n: [] for n in boxes}
    for name, area in bands.items():
        labels = [b for b in boxes[name] if "(" in b["text"] and b["y"] + b["h"] > area["y0"]]
        assert len(labels) >= 4, (name, labels)  # the states with people, beside their bars
        on_bands = [b["text"] for b in labels if b["x"] + b["w"] > area["x0"] + 1 and b["x"] < area["x1"] - 1]
        assert on_bands == [], (name, on_bands, area)
    # the test's own check sees two boxes sharing a corner region, and not two that only touch
    assert overlaps([{"text": "a", "x": 0, "y": 0, "w": 10, "h": 10}, {"text": "b", "x": 5, "y": 5, "w": 10, "h": 10}])
    assert not overlaps([{"text": "a", "x": 0, "y": 0, "w": 10, "h": 10}, {"text": "b", "x": 10, "y": 0, "w": 5, "h": 10}])
