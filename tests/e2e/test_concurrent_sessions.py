"""Many sessions clicking at once on one real server: reports, exports and page changes overlap, and nothing
raises -- not in any page, not in the server's log (``memory.track()`` raised "dictionary changed size
during iteration" on 1 of ~7 report clicks, while the report was built on another thread of the same session).

One thread drives every browser context: each round starts one action in every session without waiting
(Playwright's clicks return once dispatched), so the server runs up to six script runs and six download builds
at the same time; then the round waits for every session to settle and every clicked file to arrive. The loops
are bounded by count (rounds x sessions), never by time.
"""

from __future__ import annotations

import contextlib
import json
import re

from tests.support.browser import (ARTIFACTS, APP_TIMEOUT_MS, SCREENSHOTS, click_nav, go_to, on_page, start_server,
                                   wait_arrived, wait_for_app_idle)

SESSIONS = 6
ROUNDS = 4
LOG = "streamlit-concurrent-sessions.log"
DOWNLOADS = {"json": ("Download JSON", "tcrex-rules.json"), "csv": ("Download CSV", "tcrex-explanations.csv"),
             "report": ("Download report", "tcrex-report.html")}
CONTENT = {"json": '"format": "tcrex-rules"', "csv": "row,split", "html": "<html"}  # what each file starts with
#: What session ``i`` does in round ``r``: ``ACTIONS[(i + r) % len(ACTIONS)]``, so every round mixes all kinds.
ACTIONS = ["report", "json", "nav:Global rules", "csv", "report", "nav:Individual"]
#: Server log lines that mean something raised (Streamlit logs failed script runs and download builds so).
FAILURE = re.compile(r"Traceback|Error executing deferred|RuntimeError|Exception|changed size during iteration")


def _on_export(page) -> None:
    if not on_page(page, "Export"):  # the page is idle here: the sidebar says which page it shows
        go_to(page, "Export")
    page.get_by_role("button", name="Download JSON").wait_for()


def test_six_sessions_clicking_reports_exports_and_pages_at_once(request, browser, monkeypatch):
    monkeypatch.setenv("TCREX_MEMORY_LOG", "1")  # track() runs on every script run either way; this logs it
    base = start_server(request, LOG)
    pages, errors, downloads = [], [], []
    for i in range(SESSIONS):
        context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
        request.addfinalizer(context.close)
        page = context.new_page()
        page.set_default_timeout(APP_TIMEOUT_MS)
        page.on("pageerror", lambda exc, i=i: errors.append(f"session {i}: {exc}"))
        pages.append(page)
    for page in pages:  # every session opens Export at once
        page.goto(base + "/export", wait_until="domcontentloaded")
    for page in pages:
        wait_for_app_idle(page)

    for r in range(ROUNDS):
        for page in pages:
            _on_export(page)
        clicked, moved = [], []
        with contextlib.ExitStack() as waiting:  # leaving it waits for every clicked file (a hung build fails)
            for i, page in enumerate(pages):  # start everything, wait for nothing
                action = ACTIONS[(i + r) % len(ACTIONS)]
                if action.startswith("nav:"):
                    moved.append((page, action[4:], click_nav(page, action[4:])))
                    continue
                label, name = DOWNLOADS[action]
                clicked.append((i, name, waiting.enter_context(page.expect_download(timeout=APP_TIMEOUT_MS))))
                page.get_by_role("button", name=label, exact=True).click()  # "Download report (PDF)" beside it
        downloads += [(i, name, info.value) for i, name, info in clicked]
        # each new page's run has started and ended (idle alone could see the old page's last run: the click not
        # yet answered, and the next round would take the old page for the Export page)
        for page, label, before in moved:
            wait_arrived(page, label, before)
        for page in pages:
            wait_for_app_idle(page)
            assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
                '[data-testid="stException"]').first.inner_text()
            assert page.locator('[data-testid="stDownloadButtonError"]').count() == 0

    assert len(downloads) == ROUNDS * sum(not a.startswith("nav:") for a in ACTIONS)
    for i, name, d in downloads:
        assert d.failure() is None, (i, name, d.failure())
        text = d.path().read_text(errors="replace")
        assert CONTENT[name.rsplit(".", 1)[-1]] in text[:2000], (i, name, text[:200])
        if name.endswith(".json"):  # the whole file, not only its start: a truncated download fails here
            assert "targets" in json.loads(text), (i, name)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    pages[0].screenshot(path=str(SCREENSHOTS / "concurrent_sessions_export.png"), full_page=True)
    assert not errors, errors
    log = (ARTIFACTS / LOG).read_text(errors="replace")
    assert "script run" in log  # the log is the server's (TCREX_MEMORY_LOG lines), so a clean log means clean
    bad = [line for line in log.splitlines() if FAILURE.search(line)]
    assert not bad, "\n".join(bad[:40])
