"""Browser-test helpers shared by the end-to-end tests (tests/e2e): how the dashboard is started, how a page is
waited on (script run finished, layout settled, a tab selected), the steps many tests take (go to a page, upload a
table, download the report) and what a clean page is. The fixtures that use them (``streamlit_server``,
``browser``, ``page``, ``open_app`` …) stay in tests/e2e/conftest.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcrex.ui.state import verification
from tests.support.servers import answers, serve_on_free_port, stop

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
# How the server is started: the launcher behind `make run` (options are appended).
SERVER_COMMAND = [sys.executable, "-m", "tcrex.ui.launch"]
SERVER_START_LIMIT = 180.0  # seconds: only bounds a hang (a server that never answers), not a speed target
APP_TIMEOUT_MS = 90_000  # page load + first script run
#: How long a browser test waits for an event that follows a computation (a fit, a verified search, a sandboxed
#: model's answer or fault, a download) before calling it a hang. Like SERVER_START_LIMIT it only bounds a hang: no
#: result depends on how soon the event comes, so a loaded machine (a load of 20 on 2 cores) is slow, never red.
HANG_LIMIT_MS = 600_000


def serve_dashboard(log_path: Path, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``SERVER_COMMAND`` on a free port (retried on a clash, :func:`~tests.support.servers.serve_on_free_port`)
    with ``env`` added to this process's environment; return (process, base URL) once ``/_stcore/health``
    answers. The caller stops the process (:func:`~tests.support.servers.stop`)."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **(env or {})}
    command = lambda port: [*SERVER_COMMAND, "--server.headless", "true", "--server.port", str(port),  # noqa: E731
                            "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    proc, port = serve_on_free_port(command, log_path, limit_s=SERVER_START_LIMIT, cwd=REPO_ROOT, env=full_env,
                                    ready=lambda port: answers(f"http://127.0.0.1:{port}/_stcore/health"))
    return proc, f"http://127.0.0.1:{port}"


def start_server(request: pytest.FixtureRequest, log_name: str, env: dict | None = None) -> str:
    """:func:`serve_dashboard` logging to ``test-artifacts/<log_name>``, stopped by a finaliser of ``request``;
    return its base URL."""
    proc, url = serve_dashboard(ARTIFACTS / log_name, env)
    request.addfinalizer(lambda: stop(proc))
    return url


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
    page.wait_for_function(_IDLE_JS, arg=list(PENDING_TEXTS), polling=100, timeout=HANG_LIMIT_MS)


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


#: What a drawn page shows, by kind: the selector that finds it.
SELECTORS = {
    "plotly": '[data-testid="stPlotlyChart"] .main-svg',
    "graphviz": '[data-testid="stGraphVizChart"] svg, img[alt="metarule tree"]',
    "outline": ".tcrex-outline details",
    "dataframe": '[data-testid="stDataFrame"]',
    "table": '[data-testid="stTable"]',
    "download": '[data-testid="stDownloadButton"] button',
}


def assert_no_errors(page) -> None:
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.all_inner_texts()
    alerts = page.locator('[data-testid="stAlertContentError"]')
    assert alerts.count() == 0, alerts.all_inner_texts()
    assert page.tcrex_errors == [], page.tcrex_errors


def sidebar_text(page) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text()


def open_via_navigation(page, open_app, wait_idle, label: str) -> None:
    """Start on the home page and click a sidebar link (deep links to a sub-page URL are covered by
    ``test_page_renders`` and, on a fresh server, ``test_deep_link.py``)."""
    open_app(page, "/")
    go_to(page, label)


def upload_table(page, path: Path, rows: str) -> None:
    """On the Data & model page: choose an upload, give ``path`` to the file input, wait for "<name> — <rows> rows",
    press "Use this data" and wait until the sidebar names the file and the script run has ended."""
    page.get_by_text("Upload a CSV, Parquet or Excel file").click()
    wait_for_app_idle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(str(path))
    page.get_by_text(f"{path.name} — {rows} rows").wait_for()
    wait_for_app_idle(page)
    page.get_by_role("button", name="Use this data").click()
    page.wait_for_function("(name) => document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes(name)",
                           arg=path.name, timeout=APP_TIMEOUT_MS)
    wait_for_app_idle(page)


def download_report(page, folder: Path) -> Path:
    """Press the Export page's "Download report"; the report is saved as ``folder/report.html``, returned."""
    with page.expect_download() as download:
        page.get_by_role("button", name="Download report", exact=True).click()  # not "Download report (PDF)"
    path = folder / "report.html"
    download.value.save_as(str(path))
    return path
