"""Workspaces in a real server and a real browser: a link restores the work after the server is killed with
SIGKILL and restarted; a read-only link shows it and saves nothing; a forged link gets a message."""
from __future__ import annotations

import re
import signal

import pytest

from tests.support.browser import APP_TIMEOUT_MS, serve_dashboard, wait_for_app_idle, wait_for_layout
from tests.support.servers import stop

pytestmark = pytest.mark.slow


def _open(page, url):
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app_idle(page)


def _ws_id(page) -> str:
    match = re.search(r"[?&]ws=([A-Za-z0-9_-]{32})", page.url)
    assert match, page.url
    return match.group(1)


def _wait_for_row(page, row: str) -> None:
    """Until the server has drawn the page for that row (its headline says "Row 17 (test split)"): the input's own
    value changes in the browser before the server has seen it."""
    page.wait_for_function("(row) => document.querySelector('[data-testid=\"stMain\"]').innerText"
                           ".includes('Row ' + row + ' (')", arg=row)
    wait_for_app_idle(page)


def _banner_text(page) -> str:
    return page.locator('[data-testid="stAlert"]', has_text="Read-only link").inner_text()


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def _individual_text(page) -> str:
    """The Individual page's text once it is drawn and its charts and tables keep their sizes."""
    wait_for_app_idle(page)
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stNumberInput"]')
    wait_for_layout(page)
    wait_for_app_idle(page)
    # The page's words and numbers (headings, markdown, captions, metrics, alerts); tables and charts draw
    # asynchronously in the browser and are compared through the texts that state their figures.
    parts = page.locator('[data-testid="stMain"]').locator(
        '[data-testid="stHeading"], [data-testid="stMarkdown"], [data-testid="stCaptionContainer"], '
        '[data-testid="stMetric"], [data-testid="stAlert"]')
    return "\n".join(parts.all_inner_texts())


def test_a_link_restores_the_work_after_sigkill_and_restart(browser, tmp_path):
    state, first_log, log = tmp_path / "state", tmp_path / "first-server.log", tmp_path / "server.log"
    proc, url = serve_dashboard(first_log, env={"TCREX_STATE_DIR": str(state)})
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(APP_TIMEOUT_MS)
        _open(page, f"{url}/individual")
        ws_id = _ws_id(page)
        # Choose another person: row 17 in the Individual page's "By row" picker.
        row = page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first
        row.fill("17")
        row.press("Enter")
        _wait_for_row(page, "17")
        before = _individual_text(page)
        assert page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first.input_value() == "17"
        context.close()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc, url = serve_dashboard(log, env={"TCREX_STATE_DIR": str(state)})
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(APP_TIMEOUT_MS)
        _open(page, f"{url}/?ws={ws_id}")  # no page in the link: the workspace opens where the work was
        page.wait_for_url(re.compile(r"/individual"))
        wait_for_app_idle(page)
        assert _ws_id(page) == ws_id
        chosen = page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first
        assert chosen.input_value() == "17"
        # The same person with the same advice: the page's whole text (not the sidebar) is the same.
        assert _individual_text(page) == before
        # The read-only link: the same page and numbers, a banner, and nothing saved.
        _open(page, f"{url}/workspaces?ws={ws_id}")
        page.wait_for_function("() => [...document.querySelectorAll('code')]"
                               ".filter(c => c.innerText.includes('?ws=')).length >= 2")
        links = {t.strip() for t in page.locator("code").all_inner_texts() if "?ws=" in t}
        assert f"{url}/?ws={ws_id}" in links and len(links) == 2
        view_id = next(link for link in links if ws_id not in link).rsplit("=", 1)[1]
        _open(page, f"{url}/individual?ws={view_id}")
        seen = _individual_text(page)
        assert "Read-only link" in seen
        assert seen.replace(_banner_text(page), "").strip() == before.strip()
        assert "Row 17" in before or "row 17" in before.lower() or "17" in before
        # A forged id: a clear message and a fresh workspace, never a traceback.
        _open(page, f"{url}/?ws={'A' * 32}")
        text = _main_text(page)
        assert "No workspace has this link" in text and "Traceback" not in text
        assert _ws_id(page) != "A" * 32
        context.close()
    finally:
        stop(proc)
    assert "Traceback" not in first_log.read_text() + log.read_text()


@pytest.mark.cluster
def test_two_dashboard_processes_on_one_postgresql_serve_one_workspace(browser, tmp_path):
    """Two dashboard processes behind a balancer share PostgreSQL and a blob folder: a change made through one is
    what the other shows, in turn."""
    from tests.support.servers import postgres_server

    with postgres_server() as url:
        env_store = {"TCREX_STORE": url, "TCREX_BLOBS": str(tmp_path / "blobs")}
        servers = []
        try:
            for name in ("one", "two"):
                servers.append(serve_dashboard(tmp_path / f"{name}.log",
                                               env={**env_store, "TCREX_STATE_DIR": str(tmp_path / f"unused-{name}")}))
            (_, one), (_, two) = servers
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(APP_TIMEOUT_MS)
            _open(page, f"{one}/individual")
            ws_id = _ws_id(page)
            for row, base in (("11", one), ("23", two), ("5", one)):
                _open(page, f"{base}/individual?ws={ws_id}")
                box = page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first
                box.fill(row)
                box.press("Enter")
                _wait_for_row(page, row)
                shown = _individual_text(page)
                other = two if base == one else one
                _open(page, f"{other}/individual?ws={ws_id}")
                assert page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first \
                    .input_value() == row
                seen = _individual_text(page)
                if seen != shown:
                    page.screenshot(path=str(tmp_path / f"other-{row}.png"), full_page=True)
                assert seen == shown
            context.close()
        finally:
            for proc, _ in servers:
                stop(proc)
    for name in ("one", "two"):
        assert "Traceback" not in (tmp_path / f"{name}.log").read_text()


def _links(page) -> set[str]:
    return {t.strip() for t in page.locator("code").all_inner_texts() if "?ws=" in t}


def test_a_stranger_and_a_viewer_never_see_an_editing_link_and_a_viewer_changes_nothing(browser, tmp_path):
    """Default settings, three browser contexts: the owner's Workspaces page shows both links; a stranger (no link)
    and a viewer (the read-only link) see no editing link anywhere; the viewer's inputs are disabled in the
    browser, and Duplicate gives the viewer links of their own."""
    log = tmp_path / "server.log"
    proc, url = serve_dashboard(log, env={"TCREX_STATE_DIR": str(tmp_path / "state")})
    try:
        owner = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = owner.new_page()
        page.set_default_timeout(APP_TIMEOUT_MS)
        _open(page, f"{url}/workspaces")
        page.wait_for_function("() => [...document.querySelectorAll('code')]"
                               ".filter(c => c.innerText.includes('?ws=')).length >= 2")
        ws_id = _ws_id(page)
        view_id = next(link for link in _links(page) if ws_id not in link).rsplit("=", 1)[1]
        owner.close()
        stranger = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = stranger.new_page()
        page.set_default_timeout(APP_TIMEOUT_MS)
        _open(page, f"{url}/workspaces")
        page.wait_for_function("() => [...document.querySelectorAll('code')]"
                               ".filter(c => c.innerText.includes('?ws=')).length >= 2")
        assert ws_id not in page.content() and view_id not in page.content()
        stranger.close()
        viewer = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = viewer.new_page()
        page.set_default_timeout(APP_TIMEOUT_MS)
        _open(page, f"{url}/workspaces?ws={view_id}")
        page.wait_for_selector('[data-testid="stAlert"]:has-text("Read-only link")')
        assert ws_id not in page.content()
        _open(page, f"{url}/individual?ws={view_id}")
        page.wait_for_selector('[data-testid="stMain"] [data-testid="stNumberInput"] input')
        inputs = page.locator('[data-testid="stMain"] input, [data-testid="stSidebar"] input, '
                              '[data-testid="stMain"] button[kind^="secondary"], '
                              '[data-testid="stSidebar"] button[kind^="primary"]')
        assert inputs.count() > 0
        live = [inputs.nth(i).evaluate("e => e.outerHTML.slice(0, 120)") for i in range(inputs.count())
                if inputs.nth(i).is_enabled()]
        assert not live, live
        _open(page, f"{url}/workspaces?ws={view_id}")
        page.get_by_role("button", name="Duplicate").click()
        page.wait_for_url(lambda u: view_id not in u)
        wait_for_app_idle(page)
        page.wait_for_function("() => [...document.querySelectorAll('code')]"
                               ".filter(c => c.innerText.includes('?ws=')).length >= 2")
        mine = _links(page)
        assert len(mine) == 2 and not [link for link in mine if ws_id in link or view_id in link]
        assert ws_id not in page.content()
        viewer.close()
    finally:
        stop(proc)
    assert "Traceback" not in log.read_text()
