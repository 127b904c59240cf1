"""The HTML report of a realistic credit-like example, measured in Chromium: at most 15 screens of 1440 px, no
table wider than 1280 px, the full tables present but collapsed, and an immutable feature never called "free"."""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.audit import audit
from tcrex.report import ReportOptions, build_report

from tests.support.credit_like import credit_like, credit_model

from tests.support.browser import SCREENSHOTS

SCREEN = 1440  # px: one screen of a 1440 px tall display
MAX_SCREENS = 15
PAGE_WIDTH = 1280  # px: the report's page (A4 landscape at 96 dpi is about 1123 px; the body is capped at 1280)
IMMUTABLE = "MaxDelqEver"


@pytest.fixture(scope="module")
def credit_report(tmp_path_factory):
    frame = credit_like()
    X = frame.drop(columns="target")
    model = credit_model(frame)
    ex = TCREx(rho=0.01, tau=0.8, target=0, constraints={IMMUTABLE: "immutable"}).fit(X, model)
    explanations = ex.explain(X, model=model)
    effectiveness = ex.effectiveness(X, model=model)
    row = int(np.flatnonzero(explanations["status"].astype(str).to_numpy() == "ok")[0])
    chosen = {f"Row {row}": (ex.explain_one(X.iloc[[row]], model=model), X.iloc[row])}
    groups = pd.cut(X["MSinceOldestTradeOpen"], [-1, 33, 66, 100], labels=["short", "medium", "long"]).astype(str)
    res = audit(ex, X, groups, model=model, n_boot=200)
    html = build_report(ex, ReportOptions(title="Credit-like report",
                                          data_description="credit-like, 6,000 rows, 23 features",
                                          data_fingerprint="a" * 64, model_description="XGBoost, 200 trees",
                                          model_fingerprint="b" * 64, params={"tau": 0.8, "rho": 0.01},
                                          individuals=chosen, explanations=explanations,
                                          actions=ex.feature_actions(X, model=model), effectiveness=effectiveness,
                                          audit=res, audit_title="by credit history length",
                                          class_names={0: "Good", 1: "Bad"},
                                          generated_at=datetime(2026, 1, 2, tzinfo=timezone.utc)))
    path = tmp_path_factory.mktemp("report") / "credit-report.html"
    path.write_text(html, encoding="utf-8")
    return ex, html, path


def test_credit_report_fits_fifteen_screens_and_the_page_width(browser, credit_report):
    ex, html, path = credit_report
    assert sum(len(s.metarules) for s in ex.targets_) > 100  # a realistic size, not a toy
    page = browser.new_page(viewport={"width": SCREEN, "height": SCREEN})
    try:
        page.goto(path.as_uri())
        height = page.evaluate("document.documentElement.scrollHeight")
        widths = page.evaluate("""Array.from(document.querySelectorAll('table')).map(t => {
            const r = t.getBoundingClientRect();
            return {width: Math.round(r.width), section: (t.closest('section') || {}).id, shown: r.width > 0};
        })""")
        doc_width = page.evaluate("document.documentElement.scrollWidth")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "report-credit-like.png"), full_page=True)
        # the collapsed full tables, once opened, fit the page too
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        opened = page.evaluate("Math.max(...Array.from(document.querySelectorAll('table')).map(t => "
                               "t.getBoundingClientRect().width))")
        opened_height = page.evaluate("document.documentElement.scrollHeight")
    finally:
        page.close()
    assert height <= MAX_SCREENS * SCREEN, f"report is {height} px tall ({height / SCREEN:.1f} screens)"
    assert doc_width <= SCREEN
    shown = [w for w in widths if w["shown"]]
    assert shown and max(w["width"] for w in shown) <= PAGE_WIDTH, shown
    assert opened <= PAGE_WIDTH
    assert opened_height > 3 * height  # the full tables are there, only collapsed


def test_credit_report_reads_as_a_board_document(credit_report):
    ex, html, _ = credit_report
    order = [s for s in ("executive-summary", "individuals", "rules", "metarules", "audit")
             if f'<section id="{s}">' in html]
    assert order == ["executive-summary", "individuals", "rules", "metarules", "audit"]
    positions = [html.index(f'<section id="{s}">') for s in order]
    assert positions == sorted(positions)
    for raw in ("target_description", "n_served", "boundary_effectiveness", "n_metarules", "<th>n</th>"):
        assert raw not in html, raw
    n_metas = sum(len(s.metarules) for s in ex.targets_)
    assert f"All {n_metas:,} metarules" in html and '<details class="full">' in html
    # the immutable feature is "immutable" in the chosen person's table, never "free"
    person = html.split('<section id="individuals">')[1].split("</section>")[0]
    row = person.split(f"<td>{IMMUTABLE}</td>")[1].split("</tr>")[0] if f"<td>{IMMUTABLE}</td>" in person else \
        person.split(f'<td class="short">{IMMUTABLE}</td>')[1].split("</tr>")[0] if \
        f'<td class="short">{IMMUTABLE}</td>' in person else None
    assert row is not None and ">immutable<" in row and ">free<" not in row
