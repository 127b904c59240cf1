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

from tests.support.servers import answers, serve_on_free_port, stop

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
# How the server is started: the launcher behind `make run` (options are appended).
SERVER_COMMAND = [sys.executable, "-m", "tcrex.ui.launch"]
SERVER_START_LIMIT = 180.0  # seconds: only bounds a hang (a server that never answers), not a speed target
APP_TIMEOUT_MS = 90_000  # page load + first script run


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


def go_to(page, label: str) -> None:
    """Click the sidebar link ``label`` (the navigation a user takes) and wait until the page's script run ends."""
    page.locator('[data-testid="stSidebarNav"]').get_by_text(label, exact=True).click()
    wait_for_app_idle(page)


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
        page.get_by_role("button", name="Download report").click()
    path = folder / "report.html"
    download.value.save_as(str(path))
    return path
