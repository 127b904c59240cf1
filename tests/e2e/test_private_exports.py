"""On a real server: an export's media URL stops answering soon after the download, for any client, and a
closed session is released (tcrex/ui/widgets/downloads.py, tcrex/ui/state/memory.py).

Nothing here sleeps against the TTL: the test sets the TTL, then waits for the server's own log lines (written with
``TCREX_MEMORY_LOG=1``) that say the export was removed and the session released, and checks the URL after that.
The TTL is long enough (20 s) for the download and the first check to happen inside it on a loaded machine."""

from __future__ import annotations

import urllib.error
import urllib.request

from tests.support.browser import ARTIFACTS, HANG_LIMIT_MS, start_server, wait_for_app_idle
from tests.support.servers import wait_until

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a client with no cookies, no session
TTL_S = 20


def _status(url: str) -> int:
    try:
        with _DIRECT.open(url, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_an_export_url_expires_after_the_download_and_a_closed_session_is_released(request, browser, monkeypatch):
    monkeypatch.setenv("TCREX_DOWNLOAD_TTL_S", str(TTL_S))
    monkeypatch.setenv("TCREX_SESSION_GRACE_S", "2")
    monkeypatch.setenv("TCREX_RELEASE_POLL_S", "0.5")
    monkeypatch.setenv("TCREX_MEMORY_LOG", "1")
    base = start_server(request, "streamlit-private-exports.log")
    log = ARTIFACTS / "streamlit-private-exports.log"
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(HANG_LIMIT_MS)
    page.goto(base + "/export", wait_until="domcontentloaded")
    wait_for_app_idle(page)
    # The first check must fall inside the TTL. On an overloaded machine the TTL may run out first (the server's
    # log then says so): download again, a bounded number of times; a URL that does not answer inside its TTL
    # (no removal logged) fails at once.
    for attempt in range(3):
        with page.expect_download() as info:
            page.get_by_role("button", name="Download JSON").click()
        download = info.value
        url = download.url
        assert "/media/" in url and download.path().read_text().startswith("{")
        fid = url.rsplit("/", 1)[-1].split(".", 1)[0]
        removed = f"download {fid} removed"
        status = _status(url)  # the download window: the bearer URL answers anyone (documented)
        if status == 200:
            break
        assert removed in log.read_text(), f"the URL answered {status} inside its TTL"
        wait_for_app_idle(page)
    else:
        raise AssertionError(f"the TTL ({TTL_S} s) elapsed before the first check three times (machine overloaded?)")
    # the page stays open and idle: no script run happens from here on, so only the TTL can remove the export
    # (closing the session first would let Streamlit's own sweep remove it)
    wait_until(lambda: removed in log.read_text(), f"the server to remove the export ({removed!r})")
    assert _status(url) == 404  # gone, although no script run happened since
    context.close()
    wait_until(lambda: "released session" in log.read_text(), "the server to release the closed session")
