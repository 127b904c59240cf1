"""Every dashboard page in a real browser: renders, no exception or error alert, a screenshot per page.

Also the two interactions a browser test can check that AppTest cannot: a real file upload through the file
input, and changing tau with the slider in the sidebar form.
"""

from __future__ import annotations

import pytest

from tcrex import datasets

from tests.support.browser import (HANG_LIMIT_MS, SELECTORS, assert_no_errors, open_via_navigation, sidebar_text,
                                   upload_table, wait_for_app_idle, wait_for_layout)

pytestmark = pytest.mark.e2e

# url path -> (screenshot name, heading, what must be drawn)
PAGES = {
    "/": ("home", "T-CREx — counterfactual rules and metarules", ["plotly"]),
    "/data_model": ("data_model", "Data & model", ["dataframe"]),
    "/global_rules": ("global_rules", "Global rules", ["table", "outline"]),
    "/rule_plot": ("rule_plot", "Rule map (2-D)", ["plotly"]),
    "/change_keep": ("change_keep", "Change & keep", ["plotly"]),
    "/individual": ("individual", "Individual", ["plotly", "dataframe"]),
    "/export": ("export", "Export", ["download"]),
}


@pytest.mark.parametrize("path", list(PAGES))
def test_page_renders(page, open_app, save_screenshot, path):
    name, heading, drawn = PAGES[path]
    open_app(page, path)
    page.get_by_role("heading", name=heading).first.wait_for()
    for what in drawn:
        page.locator(SELECTORS[what]).first.wait_for(state="visible")
    sidebar = sidebar_text(page)
    assert "Loans sample" in sidebar and "XGBoost" in sidebar
    assert "rules" in sidebar and "metarules" in sidebar
    assert_no_errors(page)
    path_png = save_screenshot(page, name)
    assert path_png.stat().st_size > 20_000
    assert_no_errors(page)


def test_changing_tau_in_the_form_updates_the_rules(page, open_app, save_screenshot, wait_idle):
    open_app(page, "/global_rules")
    page.locator(SELECTORS["outline"]).first.wait_for(state="visible")
    assert "τ = 0.90" in sidebar_text(page)
    slider = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').first.get_by_role("slider")
    slider.focus()
    for _ in range(5):
        slider.press("ArrowLeft")
    # the form's own run says what Apply would change: the server holds the slider's last value (the event; Apply
    # clicked before it could apply a value from the middle of the key presses)
    page.locator('[data-testid="stSidebar"]').get_by_text("τ 0.90 → 0.85", exact=False).wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Apply parameters").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes('τ = 0.85')",
        timeout=HANG_LIMIT_MS)
    wait_idle(page)
    page.locator(SELECTORS["outline"]).first.wait_for(state="visible")
    assert "updated in" in sidebar_text(page)  # tau re-derived the rules; the surrogate was not regrown
    assert_no_errors(page)
    save_screenshot(page, "global_rules_tau_085")


def test_uploading_a_csv(page, open_app, save_screenshot, wait_idle, tmp_path):
    csv = tmp_path / "applicants.csv"
    datasets.make_loans(600, random_state=3).to_csv(csv, index=False)
    open_app(page, "/data_model")
    upload_table(page, csv, "600")
    page.get_by_text("trained in the app").first.wait_for()
    sidebar = sidebar_text(page)
    assert "600 rows" in sidebar and "metarules" in sidebar
    assert_no_errors(page)
    save_screenshot(page, "data_model_upload")




def test_audit_page(page, open_app, save_screenshot, wait_idle):
    open_via_navigation(page, open_app, wait_idle, "Subgroup audit")
    page.get_by_role("heading", name="Subgroup audit").first.wait_for()
    page.get_by_text("Audit of", exact=False).first.wait_for()
    charts = page.locator(SELECTORS["plotly"])
    charts.nth(3).wait_for(state="visible")  # bars, changes per group, forest plot, heatmap
    assert charts.count() >= 4
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "employment = salaried employee (Salaried)" in text and "95% CI" in text  # findings as the headline
    assert_no_errors(page)
    save_screenshot(page, "audit")




def _overlap(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


@pytest.mark.parametrize("path", ["/rule_plot", "/data_model"])
def test_plotly_toolbar_never_covers_a_chart_title(page, open_app, save_screenshot, path):
    """The toolbar shows on hover in the chart's top-right corner; titles (the rule-focus title spans the width)
    are drawn below its band. Hover each chart and compare the boxes; chart screenshots show it."""
    from pathlib import Path

    shots = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
    open_app(page, path)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    # both pages draw at least two titled charts; count them once the page's run is over and the second is drawn
    charts.nth(1).locator(".main-svg").first.wait_for(state="visible")
    wait_for_app_idle(page)
    checked = 0
    for i in range(min(charts.count(), 4)):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        plot = chart.locator(".js-plotly-plot").first
        plot.wait_for(state="attached")
        # whether the figure has a title is in its layout; if so, wait for plotly to draw it (a count is a snapshot)
        if not plot.evaluate("gd => Boolean(gd.layout && gd.layout.title && gd.layout.title.text)"):
            continue
        title = chart.locator(".gtitle")
        title.first.wait_for(state="visible")
        chart.hover(position={"x": 40, "y": 120})
        bar = chart.locator(".modebar")
        bar.first.wait_for(state="visible")
        wait_for_layout(page)  # the toolbar has faded in where it stays
        box_bar, box_title = bar.first.bounding_box(), title.first.bounding_box()
        shots.mkdir(parents=True, exist_ok=True)
        chart.screenshot(path=str(shots / f"toolbar{path.replace('/', '_')}_{i}.png"))
        assert not _overlap(box_bar, box_title), (i, box_bar, box_title)
        assert box_title["y"] >= box_bar["y"] + box_bar["height"] - 1, (i, box_bar, box_title)  # below its band
        checked += 1
    assert checked >= 2
    assert_no_errors(page)
