"""Chart labels stay readable at real size: on the bundled loans sample, the rule map's metarule labels
and the rules overview's rule ids, rendered by plotly.js in Chromium at 1440 x 900, never overlap (bounding boxes
of the text elements of the rendered SVG)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tcrex import TCREx
from tcrex import figures as F
from tcrex.datasets import SAMPLES, load_bundled_loans, load_bundled_model

PAIRS = [("income", "debt_to_income"), ("income", "credit_history_years"), ("debt_to_income", "n_late_payments")]


@pytest.fixture(scope="module")
def charts():
    frame = load_bundled_loans()
    X = frame.drop(columns=["approved"])
    model = load_bundled_model()
    y = model.predict(X)
    ex = TCREx(target=1, class_names=SAMPLES["loans"].class_names).fit(X, model)
    person = X.index[int(np.flatnonzero(y == 0)[0])]
    out = {f"rule map {a} x {b}": F.rule_plot(ex, 0, a, b, X, y, F.RulePlotOptions(individual=person, max_points=1500))
           for a, b in PAIRS}
    out["rules overview"] = F.rules_overview(ex)
    return out


def _overlaps(boxes):
    return [(a["text"], b["text"]) for a, b in itertools.combinations(boxes, 2)
            if a["w"] and b["w"] and a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
            and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]]


def test_chart_labels_never_overlap(browser, charts, tmp_path):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    found = {}
    try:
        for name, fig in charts.items():
            path = tmp_path / "chart.html"
            # plotly draws in steps after the frame (.main-svg) appears; post_script runs once newPlot has resolved
            path.write_text(fig.to_html(include_plotlyjs=True, post_script="document.body.dataset.plotted = 'yes';"),
                            encoding="utf-8")
            page.goto(path.as_uri())
            page.wait_for_selector("body[data-plotted='yes']", state="attached")
            found[name] = page.evaluate("""Array.from(document.querySelectorAll(
                '.annotation-text, .textpoint text')).map(t => {const r = t.getBoundingClientRect();
                return {text: t.textContent, x: r.x, y: r.y, w: r.width, h: r.height};})""")
    finally:
        page.close()
    labelled = {name: [b for b in boxes if b["text"].strip()] for name, boxes in found.items()}
    assert sum(len(b) for b in labelled.values()) >= 8, labelled  # the labels were drawn and measured
    assert {name: _overlaps(boxes) for name, boxes in labelled.items()} == {name: [] for name in labelled}
    # the test's own overlap check catches two boxes that share a corner region
    assert _overlaps([{"text": "R1", "x": 0, "y": 0, "w": 10, "h": 10}, {"text": "R6", "x": 5, "y": 5, "w": 10, "h": 10}])
