"""The Monitor page in a real browser: a monitor of the store (the bundled loans followed through the bundled model,
its retrain and a version that rejects every self-employed applicant) opened by name shows the versions on a
timeline with the alerting version marked, each group's share across versions, and the alerts in words naming the
group; the people who lost recourse are listed."""

from __future__ import annotations

import os

import pytest

from tests.support.browser import SELECTORS, assert_no_errors, go_to, wait_for_app_idle
from tests.support.monitor_case import LOANS_DEGRADED, LOANS_MONITOR, bundled_loans_monitor

pytestmark = pytest.mark.e2e

CHART = '[data-testid="stPlotlyChart"]'


@pytest.fixture(scope="module")
def loans_monitor(tmp_path_factory):
    from tcrex.monitor import Monitor
    state = os.environ["TCREX_STATE_DIR"]  # the store the test servers use (tests/conftest.py)
    if LOANS_MONITOR not in Monitor(state).names():
        bundled_loans_monitor(state, tmp_path_factory.mktemp("loans-monitor"))
    return Monitor(state).history(LOANS_MONITOR)


def test_monitor_page_shows_the_timeline_and_the_alert(page, open_app, save_screenshot, loans_monitor):
    open_app(page, "/")
    go_to(page, "Monitor")
    page.get_by_role("heading", name="Monitor").first.wait_for()
    page.get_by_role("tab", name="Open a monitor of the store").click()
    # monitors are not listed unless the operator opts in (a list would show what a visitor has no link to)
    page.get_by_label("Monitor name (as given to `tcrex monitor init --name`)").fill(LOANS_MONITOR)
    page.get_by_role("button", name="Open this monitor").click()
    wait_for_app_idle(page)
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Alert (share drop):", exact=False).first.wait_for()
    timeline = page.locator(CHART).filter(has_text=f"Model versions of {LOANS_MONITOR}").first
    timeline.locator(".main-svg").first.wait_for(state="visible")
    timeline.locator(".scatterlayer .point").first.wait_for(state="attached")
    drawn = timeline.locator(".js-plotly-plot").first.evaluate(
        "gd => ({text: gd.data[0].text, symbols: gd.data[0].marker.symbol})")
    assert drawn["text"] == [r.version.label for r in loans_monitor.runs]
    assert drawn["symbols"] == ["circle", "circle", "diamond"]  # the last version raised alerts
    groups = page.locator(CHART).filter(has_text="Verified recourse by").first
    groups.locator(".scatterlayer .trace").first.wait_for(state="attached")
    column, value = LOANS_DEGRADED
    text = main.inner_text()
    assert f"Verified recourse for {column} = {value} fell from" in text
    assert loans_monitor.last.headline() in text
    assert "lost recourse" in text
    page.locator(SELECTORS["dataframe"]).nth(1).wait_for(state="visible")
    assert_no_errors(page)
    shot = save_screenshot(page, "monitor")
    assert shot.stat().st_size > 30_000
