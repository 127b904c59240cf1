"""Fixtures for end-to-end tests: a real Streamlit server and Debian's Chromium.

* ``streamlit_server`` (session): starts the dashboard the way ``make run`` does
  (``python -m tcrex.ui.launch``, i.e. ``streamlit run app.py`` with the
  "Page not found" fix, see :mod:`tcrex.ui.launch`) on a free port from the
  repository root, waits for ``/_stcore/health`` and yields the base URL.  A
  finaliser always stops the server.  Its output goes to
  ``test-artifacts/streamlit-server.log``.
* ``fresh_server`` (per test): the same, but a server of the test's own, for
  what only shows on a server's first request (log:
  ``test-artifacts/streamlit-fresh-server.log``).
* ``browser`` (session): ``/usr/bin/chromium`` driven by Playwright
  (never Playwright's own browser download).  Missing chromium skips the tests,
  unless ``TCREX_REQUIRE_BROWSER=1`` (set by ``.ci/run``), which fails them.
* ``page`` (per test): a fresh browser context and page; JavaScript errors are
  collected in ``page.tcrex_errors``.
* ``open_app``: ``open_app(page, path="/")`` loads a dashboard URL and waits
  until the script run has finished (see :func:`wait_for_app_idle`).
* ``save_screenshot``: ``save_screenshot(page, "name")`` writes a full-page PNG
  to ``test-artifacts/screenshots/name.png`` and returns its path.

New pages add their tests next to ``test_browser.py`` and reuse these fixtures;
the server is started once per session.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tests.support.browser import APP_TIMEOUT_MS, SCREENSHOTS, start_server, wait_for_app_idle, wait_for_layout

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(config, items):
    """Every test in this directory is an end-to-end test."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def streamlit_server(request: pytest.FixtureRequest) -> str:
    """Base URL (``http://127.0.0.1:<port>``) of a running dashboard, shared by the session."""
    return start_server(request, "streamlit-server.log")


@pytest.fixture
def fresh_server(request: pytest.FixtureRequest) -> str:
    """Base URL of a dashboard started for this test alone (no request has reached it yet)."""
    return start_server(request, "streamlit-fresh-server.log")


@pytest.fixture(scope="session")
def browser(request: pytest.FixtureRequest):
    """Headless Debian Chromium under Playwright."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        reason = (
            f"{CHROMIUM} not found: end-to-end tests need Debian's chromium "
            "(`make browser` installs it as root: apt-get install -y chromium)"
        )
        if os.environ.get("TCREX_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + "; TCREX_REQUIRE_BROWSER=1 forbids skipping")
        pytest.skip(reason)

    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    request.addfinalizer(playwright.stop)
    chromium = playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
    request.addfinalizer(chromium.close)
    return chromium


@pytest.fixture
def page(browser) -> Iterator:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(APP_TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.tcrex_errors = errors  # JavaScript exceptions seen by this page
    try:
        yield page
    finally:
        context.close()




@pytest.fixture
def open_app(streamlit_server: str) -> Callable:
    """``open_app(page, path="/")``: load a dashboard page and wait until idle."""

    def _open(page, path: str = "/"):
        page.goto(streamlit_server + path, wait_until="domcontentloaded")
        wait_for_app_idle(page)
        return page

    return _open


@pytest.fixture
def save_screenshot() -> Callable[..., Path]:
    """``save_screenshot(page, name)``: full-page PNG of the whole dashboard."""

    def _save(page, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        # Streamlit scrolls inside its main container, not the document; grow
        # the viewport to the content height so the screenshot shows it all.
        height = page.evaluate(
            """() => Math.max(...['stMain', 'stAppViewContainer', 'stMainBlockContainer']
                .map(id => document.querySelector(`[data-testid="${id}"]`))
                .filter(el => el !== null)
                .map(el => el.scrollHeight))"""
        )
        width = page.viewport_size["width"] if page.viewport_size else 1400
        page.set_viewport_size({"width": width, "height": int(min(max(height + 40, 800), 8000))})
        wait_for_app_idle(page)
        wait_for_layout(page)  # charts re-layout to the new height
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return _save


@pytest.fixture
def wait_idle() -> Callable:
    """``wait_idle(page)``: wait until the current script run has finished (see :func:`wait_for_app_idle`)."""
    return wait_for_app_idle
