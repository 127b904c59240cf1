"""The Audit page in a real browser speaks the verified advice: with the bundled model present, the
number-of-changes chart draws no bar at 0 for people needing recourse (the model rejects them as they are, so their
verified advice changes at least one feature), and says it counts the verified advice."""

from __future__ import annotations

import pytest

from tests.support.browser import go_to

pytestmark = pytest.mark.e2e

CHART = '[data-testid="stPlotlyChart"]'


def test_changes_chart_has_no_bar_at_zero_when_a_model_is_present(page, open_app, wait_idle, save_screenshot):
    open_app(page, "/")
    go_to(page, "Subgroup audit")
    page.get_by_text("Audit of", exact=False).first.wait_for()
    assert "Recourse is verified on the model" in page.locator('[data-testid="stMain"]').inner_text()
    chart = page.locator(CHART).filter(has_text="Number of changes by").first
    chart.locator(".main-svg").first.wait_for(state="visible")
    chart.scroll_into_view_if_needed()
    # plotly draws the axes and bars after the chart's frame: wait for them (a count or a read is a snapshot)
    chart.locator(".xtick text").first.wait_for(state="attached")
    chart.locator(".bars path").first.wait_for(state="attached")
    # what the browser drew: the x-axis categories and the bars' own data, read from plotly's graph div
    ticks = [t.strip() for t in chart.locator(".xtick text").all_text_contents()]
    assert ticks and "0" not in ticks, ticks
    drawn = chart.locator(".js-plotly-plot").first.evaluate(
        "gd => gd.data.map(t => ({name: t.name, x: t.x.map(String), y: Array.from(t.y)}))")
    assert drawn and all(len(t["x"]) == len(t["y"]) for t in drawn)
    for trace in drawn:
        assert "0" not in trace["x"], trace
        assert sum(trace["y"]) == pytest.approx(1.0)  # shares of the group's people with verified recourse
    assert chart.locator(".bars path").count() > 0
    assert "Verified on the model" in " ".join(chart.locator(".gtitle, .gtitle-subtitle, text").all_text_contents())
    save_screenshot(page, "audit_changes_verified")
