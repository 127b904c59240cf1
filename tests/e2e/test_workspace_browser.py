"""Workspaces in a real server and a real browser: a link restores the work after the server is killed with
SIGKILL and restarted; a read-only link shows it and saves nothing; a forged link gets a message."""
from __future__ import annotations

import os
import re
import signal

import pytest

from conftest import REPO_ROOT, SERVER_COMMAND, wait_for_app_idle
from servers import answers, serve_on_free_port, stop

pytestmark = pytest.mark.slow


def _serve(state_dir, log_path):
    """A dashboard on a free port with its workspaces in ``state_dir``; returns (process, base URL)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
               TCREX_STATE_DIR=str(state_dir))
    command = lambda port: [*SERVER_COMMAND, "--server.headless", "true", "--server.port", str(port),  # noqa: E731
                            "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    proc, port = serve_on_free_port(command, log_path, cwd=REPO_ROOT, env=env,
                                    ready=lambda port: answers(f"http://127.0.0.1:{port}/_stcore/health"))
    return proc, f"http://127.0.0.1:{port}"


def _open(page, url):
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app_idle(page)


def _ws_id(page) -> str:
    match = re.search(r"[?&]ws=([A-Za-z0-9_-]{32})", page.url)
    assert match, page.url
    return match.group(1)


def _banner_text(page) -> str:
    return page.locator('[data-testid="stAlert"]', has_text="Read-only link").inner_text()


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def _individual_text(page) -> str:
    """The Individual page's text once it is drawn to its end (the metacounterfactual chart is last)."""
    page.wait_for_selector("text=Try this advice in Edit values")
    page.wait_for_selector("text=nearest alternatives first")
    wait_for_app_idle(page)
    return _main_text(page)


def test_a_link_restores_the_work_after_sigkill_and_restart(browser, tmp_path):
    state, first_log, log = tmp_path / "state", tmp_path / "first-server.log", tmp_path / "server.log"
    proc, url = _serve(state, first_log)
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        _open(page, f"{url}/individual")
        ws_id = _ws_id(page)
        # Choose another person: row 17 in the Individual page's "By row" picker.
        row = page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first
        row.fill("17")
        row.press("Enter")
        page.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText"
                               ".includes('Row 17') || document.querySelector('[data-testid=\"stMain\"] "
                               "[data-testid=\"stNumberInput\"] input').value === '17'")
        before = _individual_text(page)
        assert page.locator('[data-testid="stMain"] [data-testid="stNumberInput"] input').first.input_value() == "17"
        context.close()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc, url = _serve(state, log)
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
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
        # A forged id: a clear message and a fresh workspace, never a traceback.
        _open(page, f"{url}/?ws={'A' * 32}")
        text = _main_text(page)
        assert "No workspace has this link" in text and "Traceback" not in text
        assert _ws_id(page) != "A" * 32
        context.close()
    finally:
        stop(proc)
    assert "Traceback" not in first_log.read_text() + log.read_text()
