"""On a real server: an export's media URL stops answering soon after the download, for any client, and a
closed session is released (tcrex/ui/downloads.py, tcrex/ui/memory.py)."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

from conftest import ARTIFACTS, start_server, wait_for_app_idle

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a client with no cookies, no session


def _status(url: str) -> int:
    try:
        with _DIRECT.open(url, timeout=5) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_an_export_url_expires_after_the_download_and_a_closed_session_is_released(request, browser, monkeypatch):
    monkeypatch.setenv("TCREX_DOWNLOAD_TTL_S", "3")
    monkeypatch.setenv("TCREX_SESSION_GRACE_S", "2")
    monkeypatch.setenv("TCREX_RELEASE_POLL_S", "0.5")
    monkeypatch.setenv("TCREX_MEMORY_LOG", "1")
    base = start_server(request, "streamlit-private-exports.log")
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(base + "/export", wait_until="domcontentloaded")
    wait_for_app_idle(page)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download JSON").click()
    download = info.value
    url = download.url
    assert "/media/" in url and download.path().read_text().startswith("{")
    assert _status(url) == 200  # the download window: the bearer URL answers anyone (documented)
    time.sleep(4.5)
    assert _status(url) == 404  # gone after TCREX_DOWNLOAD_TTL_S although no script run happened since
    context.close()
    log = ARTIFACTS / "streamlit-private-exports.log"
    deadline = time.monotonic() + 30
    while "released session" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert "released session" in log.read_text()
