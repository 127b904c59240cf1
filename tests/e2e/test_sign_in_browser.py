"""Sign-in through a real OpenID provider (panva's certified ``oidc-provider`` under Debian's nodejs, on loopback)
and a real browser: every page needs a signed-in user; the owner shares a workspace with a viewer by e-mail; the
viewer, holding even the editing link, has every input disabled and changes nothing in the store; a stranger gets
nothing of it; Sign out and an expired ID token send the user back to the sign-in screen.

``make oidc-provider`` installs the provider (npm, pinned in tests/support/oidc/package.json); without node or
the installed package the test skips (fails under ``TCREX_REQUIRE_OIDC=1``)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.browser import (APP_TIMEOUT_MS, REPO_ROOT, SERVER_COMMAND, SERVER_START_LIMIT, wait_for_app_idle)
from tests.support.servers import answers, free_port, serve_on_free_port, stop, wait_until

pytestmark = pytest.mark.slow

OIDC = REPO_ROOT / "tests" / "support" / "oidc"
SHORT_TTL_S = 15  # the provider's ID-token lifetime for the account "late" (provider.mjs)


def _need_provider():
    node = shutil.which("node")
    if node is None or not (OIDC / "node_modules" / "oidc-provider").is_dir():
        message = "the OpenID provider is not installed (make oidc-provider: npm install in tests/support/oidc)"
        if os.environ.get("TCREX_REQUIRE_OIDC"):
            pytest.fail(message + "; TCREX_REQUIRE_OIDC=1 forbids skipping")
        pytest.skip(message)
    return node


def _store_contents(state: Path, ws_id: str) -> str:
    """The shared workspace's row, uploads and roles (signing in elsewhere makes the user a workspace of their own)."""
    from tcrex.workspace import WorkspaceStore

    with WorkspaceStore(str(state)).transaction() as tx:
        rows = tx.execute("SELECT id, settings, revision, updated FROM workspaces WHERE id = ?", (ws_id,)).fetchall()
        blobs = tx.execute("SELECT digest FROM workspace_blobs WHERE ws_id = ? ORDER BY digest", (ws_id,)).fetchall()
        roles = tx.execute("SELECT principal, role FROM workspace_roles WHERE ws_id = ? ORDER BY principal",
                           (ws_id,)).fetchall()
    assert rows, "the shared workspace is in the store"
    return json.dumps([[list(r) for r in rows], [list(b) for b in blobs], [list(r) for r in roles]])


@pytest.fixture
def deployment(tmp_path):
    """A provider on loopback and a dashboard whose secrets.toml names it; yields (dashboard URL, state folder)."""
    node = _need_provider()
    op_port = free_port()
    state, logs = tmp_path / "state", tmp_path
    secrets = tmp_path / "secrets.toml"

    def command(port):
        secrets.write_text(
            "[auth]\n"
            f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
            'cookie_secret = "tcrex-test-cookie-secret-of-enough-length-0123456789"\n'
            'client_id = "tcrex"\nclient_secret = "tcrex-test-secret"\n'
            f'server_metadata_url = "http://127.0.0.1:{op_port}/.well-known/openid-configuration"\n'
            # Streamlit asks for prompt=select_account unless told otherwise; this provider knows login/consent
            'client_kwargs = { prompt = "login" }\n')
        command.port = port
        return [*SERVER_COMMAND, "--server.headless", "true", "--server.port", str(port), "--server.address",
                "127.0.0.1", "--server.fileWatcherType", "none", "--secrets.files", str(secrets)]

    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TCREX_STATE_DIR": str(state)}
    app, port = serve_on_free_port(command, logs / "server.log", limit_s=SERVER_START_LIMIT, cwd=REPO_ROOT, env=env,
                                   ready=lambda p: answers(f"http://127.0.0.1:{p}/_stcore/health"))
    op_log = open(logs / "provider.log", "w")
    op = subprocess.Popen([node, str(OIDC / "provider.mjs"), str(op_port), f"http://127.0.0.1:{port}/oauth2callback"],
                          stdout=op_log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{op_port}/.well-known/openid-configuration"),
                   "the OpenID provider to answer")
        yield f"http://127.0.0.1:{port}", state
    finally:
        stop(op)
        op_log.close()
        stop(app)
    assert "Traceback" not in (logs / "server.log").read_text()


def _context(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(APP_TIMEOUT_MS)
    return context, page


def _sign_in(page, url: str, login: str, path: str = "") -> None:
    """Open the dashboard, press Sign in, log in at the provider as ``login`` (and consent), back to the app."""
    page.goto(f"{url}/{path}", wait_until="domcontentloaded")
    page.locator('[data-testid="stMain"] button:has-text("Sign in")').click()
    page.wait_for_selector('input[name="login"]')
    page.fill('input[name="login"]', login)
    page.fill('input[name="password"]', "any")
    page.click('button[type="submit"]')
    page.wait_for_url(lambda u: u.startswith(url) or "/interaction/" in u)
    if "/interaction/" in page.url and not page.url.startswith(url):  # the consent screen
        page.click('button[type="submit"]')
    page.wait_for_url(lambda u: u.startswith(url) and "oauth2callback" not in u)
    wait_for_app_idle(page)
    if path:  # Streamlit comes back to the app's root after signing in
        page.goto(f"{url}/{path}", wait_until="domcontentloaded")
        wait_for_app_idle(page)


def _back_at_sign_in(page, url: str) -> None:
    """After Sign out (or an expired token): confirm at the provider's sign-out screen if it asks, then the app's
    sign-in screen (whichever comes first is waited for; each wait follows navigations)."""
    sign_in = page.locator('[data-testid="stMain"] button:has-text("Sign in")')
    confirm = page.locator('button[name="logout"][value="yes"]')  # the provider's "Yes, sign me out"
    sign_in.or_(confirm).first.wait_for()
    if not page.url.startswith(url):
        confirm.first.click()
    sign_in.wait_for()
    assert page.url.startswith(url)


def _ws_id(page) -> str:
    page.wait_for_url(re.compile(r"[?&]ws=[A-Za-z0-9_-]{32}"))
    return re.search(r"[?&]ws=([A-Za-z0-9_-]{32})", page.url).group(1)


def test_sign_in_roles_sign_out_and_expiry_with_a_real_provider(browser, deployment):
    url, state = deployment
    # Nobody signed in: only the sign-in screen, on every page.
    context, page = _context(browser)
    for path in ("", "individual", "workspaces"):
        page.goto(f"{url}/{path}", wait_until="domcontentloaded")
        page.wait_for_selector('[data-testid="stMain"] button:has-text("Sign in")')
        wait_for_app_idle(page)
        main = page.locator('[data-testid="stMain"]').inner_text()
        assert "for signed-in users" in main and "Editing link" not in main and "?ws=" not in page.url
    # The owner signs in, and shares the workspace with the viewer by e-mail.
    _sign_in(page, url, "ana")
    ws_id = _ws_id(page)
    page.goto(f"{url}/workspaces?ws={ws_id}", wait_until="domcontentloaded")
    page.wait_for_selector('input[aria-label="E-mail address"]')
    assert "ana@bank.example" in page.locator('[data-testid="stSidebar"]').inner_text()
    page.fill('input[aria-label="E-mail address"]', "vic@bank.example")
    page.get_by_role("button", name="Share").click()
    page.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText"
                           ".includes('vic@bank.example — viewer')")
    context.close()
    before = _store_contents(state, ws_id)
    # The viewer, even with the editing link, sees the work with every input disabled; nothing changes.
    context, page = _context(browser)
    _sign_in(page, url, "vic", f"individual?ws={ws_id}")
    page.wait_for_selector('[data-testid="stAlert"]:has-text("Read-only link")')
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stNumberInput"] input')
    inputs = page.locator('[data-testid="stMain"] input, [data-testid="stSidebar"] input')
    assert inputs.count() > 0
    live = [inputs.nth(i).evaluate("e => e.outerHTML.slice(0, 120)") for i in range(inputs.count())
            if inputs.nth(i).is_enabled()]
    assert not live, live
    assert _store_contents(state, ws_id) == before
    # Sign out: back to the sign-in screen.
    page.get_by_role("button", name="Sign out").click()
    _back_at_sign_in(page, url)
    context.close()
    # A stranger with the editing link gets nothing of the workspace.
    context, page = _context(browser)
    _sign_in(page, url, "eve", f"?ws={ws_id}")
    page.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText"
                           ".includes('not shared with you')")
    assert _ws_id(page) != ws_id
    context.close()
    # An ID token that expires: once its exp has passed, the next page run sends the user to sign in.
    context, page = _context(browser)
    _sign_in(page, url, "late")
    signed_in_at = time.time()  # after the token was issued: its exp is at most SHORT_TTL_S after this
    wait_until(lambda: time.time() > signed_in_at + SHORT_TTL_S + 1, "the short ID token's expiry to pass",
               limit_s=SHORT_TTL_S + 600)
    page.reload(wait_until="domcontentloaded")
    _back_at_sign_in(page, url)
    assert "late@bank.example" not in page.content()
    context.close()
