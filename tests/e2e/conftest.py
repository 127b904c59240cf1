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
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

from servers import answers, serve_on_free_port, stop

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
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
# How the server is started: the launcher behind `make run` (options are appended).
SERVER_COMMAND = [sys.executable, "-m", "tcrex.ui.launch"]
SERVER_START_LIMIT = 180.0  # seconds: only bounds a hang (a server that never answers), not a speed target
APP_TIMEOUT_MS = 90_000  # page load + first script run


def pytest_collection_modifyitems(config, items):
    """Every test in this directory is an end-to-end test."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


def start_server(request: pytest.FixtureRequest, log_name: str) -> str:
    """Start ``SERVER_COMMAND`` on a free port (retried on a clash, :func:`servers.serve_on_free_port`), stopped by
    a finaliser of ``request``; return its base URL once ``/_stcore/health`` answers."""
    log_path = ARTIFACTS / log_name
    env = dict(os.environ, PYTHONUNBUFFERED="1", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    command = lambda port: [*SERVER_COMMAND, "--server.headless", "true", "--server.port", str(port),  # noqa: E731
                            "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    proc, port = serve_on_free_port(command, log_path, limit_s=SERVER_START_LIMIT, cwd=REPO_ROOT, env=env,
                                    ready=lambda port: answers(f"http://127.0.0.1:{port}/_stcore/health"))
    request.addfinalizer(lambda: stop(proc))
    return f"http://127.0.0.1:{port}"


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


def wait_for_app_idle(page) -> None:
    """Wait until the Streamlit app is connected and its script run has finished.

    ``[data-testid="stApp"]`` carries ``data-test-script-state``: ``initial``
    before the first run, ``running`` during a run, ``notRunning`` after it.
    The "Running..." status widget (``stStatusWidget``) must be gone too.
    """
    page.wait_for_selector('[data-testid="stApp"]', state="attached")
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            return app !== null
                && app.getAttribute('data-test-script-state') === 'notRunning'
                && document.querySelector('[data-testid="stStatusWidget"]') === null;
        }""",
        polling=100,
        timeout=APP_TIMEOUT_MS,
    )


def open_tab(page, name: str) -> None:
    """Click the tab called ``name`` and return once it is the selected tab and the app is idle.

    A script run that starts just before the click (a widget's rerun, the page still settling) redraws the tabs
    and can leave the first tab selected; the click is repeated until the tab reports ``aria-selected`` (the
    event), at most a few times, each wait bounded by Playwright's own timeout."""
    tab = page.get_by_role("tab", name=name)
    for _ in range(5):
        wait_for_app_idle(page)
        tab.click()
        wait_for_app_idle(page)
        try:
            page.wait_for_function(
                "(name) => [...document.querySelectorAll('[role=tab]')].some(t => t.innerText.trim() === name"
                " && t.getAttribute('aria-selected') === 'true')", arg=name, polling=100, timeout=10_000)
            return
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: the rerun reset the tabs; click again
            continue
    raise AssertionError(f"tab {name!r} never became the selected tab")


#: Resolves once the sizes of the page's charts, tables, frames and main containers have stayed the same over
#: ``STILL_FRAMES`` consecutive animation frames: the layout after a resize, a new chart or a tab switch has
#: settled. An event of the browser's rendering loop, not a fixed wait.
STILL_FRAMES = 8
_LAYOUT_SETTLED_JS = """(frames) => new Promise(resolve => {
    const boxes = () => JSON.stringify([...document.querySelectorAll(
        '[data-testid="stPlotlyChart"], [data-testid="stDataFrame"], [data-testid="stMain"], [role="dialog"], '
        + '.js-plotly-plot, .modebar, iframe, img')].map(e => { const r = e.getBoundingClientRect();
            return [r.x, r.y, r.width, r.height]; }));
    let last = boxes(), still = 0;
    const tick = () => {
        const now = boxes();
        still = now === last ? still + 1 : 0;
        last = now;
        if (still >= frames) resolve(true); else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
})"""


def wait_for_layout(target) -> None:
    """Wait until the layout of ``target`` (a Playwright page or frame) has settled: what is drawn after a script
    run, a resize or a hover is on screen when this returns (see ``_LAYOUT_SETTLED_JS``)."""
    target.evaluate(_LAYOUT_SETTLED_JS, STILL_FRAMES)


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
