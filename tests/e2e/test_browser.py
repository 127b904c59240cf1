"""The dashboard in a real browser: server, Chromium, rendering, screenshot."""

from __future__ import annotations

import urllib.request

import pytest

pytestmark = pytest.mark.e2e

TITLE = "T-CREx — counterfactual rules and metarules"


def assert_no_errors(page) -> None:
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.all_inner_texts()
    alerts = page.locator('[data-testid="stAlertContentError"]')
    assert alerts.count() == 0, alerts.all_inner_texts()
    assert page.tcrex_errors == [], page.tcrex_errors


def test_health_endpoint(streamlit_server):
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # ignore http_proxy
    with direct.open(f"{streamlit_server}/_stcore/health", timeout=10) as resp:
        assert resp.status == 200
        assert resp.read().decode().strip() == "ok"


def test_home_page_renders(page, open_app, save_screenshot):
    open_app(page, "/")
    page.get_by_role("heading", name=TITLE).wait_for()

    # the data table, the metrics and the histogram are on screen
    page.locator('[data-testid="stDataFrame"]').first.wait_for(state="visible")
    page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for(state="visible")
    metrics = page.locator('[data-testid="stMetric"]')
    assert metrics.count() == 3
    assert "4,000" in metrics.nth(0).inner_text()

    # the sidebar names the active data and model
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "Loans sample" in sidebar.inner_text()
    assert "XGBoost" in sidebar.inner_text()

    assert_no_errors(page)
    path = save_screenshot(page, "home")
    assert path.stat().st_size > 10_000
    assert_no_errors(page)
