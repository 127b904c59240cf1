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

Waiting (functions; wait on events, never a fixed time): :func:`wait_for_app_idle` (no run under way or still to
come), :func:`go_to` (a page through the sidebar, drawn whole), :func:`open_tab` and :func:`set_toggle` (clicked
until the widget reports the state), :func:`frame_of` (an iframe's own frame), :func:`wait_for_layout` (sizes
settled). After an action, wait for what its run draws, then for idle: right after a click the app still reads
idle from the run before.

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
from tcrex.ui.state import verification

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


#: What the dashboard draws in place of a figure while the recommended points are checked in the background
#: (:mod:`tcrex.ui.state.verification`); a fragment polls the check and reruns the whole page when it ends, so a page
#: showing one has a script run still to come (and that run redraws the page: tabs, outlines, charts).
PENDING_TEXTS = (verification.CHECKING_VALUE, verification.CHECKING_SENTENCE)
_IDLE_JS = """(pending) => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app === null || app.getAttribute('data-test-script-state') !== 'notRunning'
            || document.querySelector('[data-testid="stStatusWidget"]') !== null) return false;
    return ![...document.querySelectorAll('[data-testid="stMetricValue"], [data-testid="stCaptionContainer"]')]
        .some(e => pending.some(p => e.textContent.includes(p)));
}"""


def wait_for_app_idle(page) -> None:
    """Wait until the Streamlit app is connected, its script run has finished and no run is still to come.

    ``[data-testid="stApp"]`` carries ``data-test-script-state``: ``initial``
    before the first run, ``running`` during a run, ``notRunning`` after it.
    The "Running..." status widget (``stStatusWidget``) must be gone too, and no
    placeholder of a background check (:data:`PENDING_TEXTS`) may be on the page:
    between its fragment's polls the state reads ``notRunning``, yet the page
    reruns when the check ends.

    A click's own rerun starts only when the server answers it: right after a
    click the state still reads ``notRunning`` from the run before. So after an
    action wait first for something only its run draws (:func:`go_to` waits for
    the new page's title; tests wait for the text, the row, the chart they
    expect), then for idle.
    """
    page.wait_for_selector('[data-testid="stApp"]', state="attached")
    page.wait_for_function(_IDLE_JS, arg=list(PENDING_TEXTS), polling=100, timeout=APP_TIMEOUT_MS)


_TITLE_JS = """() => { const h = document.querySelector('[data-testid="stMain"] h1');
    return h === null ? null : h.innerText.trim(); }"""
_ARRIVED_JS = """([label, before]) => {
    const link = [...document.querySelectorAll('[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]')]
        .find(a => a.innerText.split('\\n').map(t => t.trim()).includes(label));  // its icon's name, its label
    const h = document.querySelector('[data-testid="stMain"] h1');
    return link !== undefined && link.getAttribute('aria-current') === 'page'
        && h !== null && h.innerText.trim() !== before;
}"""


def click_nav(page, label: str) -> str | None:
    """Click the sidebar link ``label`` without waiting; returns what :func:`wait_arrived` needs (the title shown
    before the click)."""
    before = page.evaluate(_TITLE_JS)
    page.locator('[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]').filter(
        has=page.get_by_text(label, exact=True)).click()
    return before


def wait_arrived(page, label: str, before: str | None) -> None:
    """Wait until the page ``label`` clicked by :func:`click_nav` is drawn whole: its link is the current page and
    the main title is no longer the one shown before the click (the new page's run has started: the server sent
    its first element), then until that run is over (:func:`wait_for_app_idle`)."""
    page.wait_for_function(_ARRIVED_JS, arg=[label, before], polling=100, timeout=APP_TIMEOUT_MS)
    wait_for_app_idle(page)


def go_to(page, label: str) -> None:
    """Open the page ``label`` through the sidebar navigation, as a user does, and return once it is drawn whole.

    Waiting for idle alone right after the click can see the previous page's finished run (the new one has not
    started yet) and read or click the old page."""
    wait_arrived(page, label, click_nav(page, label))


def on_page(page, label: str) -> bool:
    """Whether the sidebar marks ``label`` as the current page (call it when the app is idle)."""
    return page.locator('[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"][aria-current="page"]') \
        .filter(has=page.get_by_text(label, exact=True)).count() == 1


def open_tab(page, name: str) -> None:
    """Click the tab called ``name`` and return once it is the selected tab and the app is idle.

    While a script run has not yet redrawn a tab's content, Streamlit draws the tab disabled (stale) and a click on
    it is lost; a run that remounts the tabs selects the default tab again. So the click is repeated until the tab
    reports ``aria-selected`` (the event), at most a few times, each wait bounded by Playwright's own timeout."""
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


def set_toggle(page, label: str, on: bool = True) -> None:
    """Set the visible toggle (or checkbox) called ``label`` to ``on`` and return once its input reports it and the
    app is idle. A click that a rerun swallowed (the widget redrawn under it) is repeated, at most a few times;
    an already set toggle is left alone (clicking it would turn it off)."""
    box = page.locator('[data-testid="stCheckbox"]:visible').filter(has=page.get_by_text(label, exact=True)).first
    field = box.locator('input[type="checkbox"]')
    for _ in range(5):
        wait_for_app_idle(page)
        if field.is_checked() == on:
            return
        box.locator("label").first.click()
        try:
            page.wait_for_function("([e, on]) => e.checked === on", arg=[field.element_handle(), on],
                                   polling=100, timeout=10_000)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: a rerun redrew the toggle; look again
            continue
    wait_for_app_idle(page)
    if field.is_checked() != on:
        raise AssertionError(f"toggle {label!r} never became {'on' if on else 'off'}")


def frame_of(iframe_locator):
    """The Playwright frame of the first element of ``iframe_locator``, once it is attached and its document has
    loaded (not a scan of ``page.frames``, which may not hold it yet and holds the frames of hidden tabs too)."""
    iframe_locator.first.wait_for(state="visible")
    frame = iframe_locator.first.element_handle().content_frame()
    assert frame is not None
    frame.wait_for_load_state("load")
    return frame


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
