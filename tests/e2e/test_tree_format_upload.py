"""A LightGBM text model and a CatBoost .cbm uploaded in a real browser: the model uploader accepts their extensions
and says what it loads, the model is checked in the sandbox and used on the bundled loans table; the CatBoost file
becomes the Compare page's model B; and the workspace, exported and imported into another server's store, restores
the LightGBM upload."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.support import builders as b
from tests.support.browser import APP_TIMEOUT_MS, HANG_LIMIT_MS, SCREENSHOTS, go_to, serve_dashboard, wait_for_app_idle
from tests.support.servers import stop

pytest.importorskip("lightgbm")
pytest.importorskip("catboost")
REPO = Path(__file__).resolve().parents[2]


def _loans():
    frame = pd.read_csv(REPO / "sample_data" / "loans.csv")
    y = frame.pop("approved").to_numpy()
    return frame, y


def _models(tmp_path):
    X, y = _loans()
    lgb_data, _, _ = b.lgb_model("binary", X=X, y=y, n_estimators=40)
    cb_data, _, _ = b.cb_model("binary", X=X, y=y, n_estimators=40)
    (tmp_path / "loans_lightgbm.txt").write_bytes(lgb_data)
    (tmp_path / "loans_catboost.cbm").write_bytes(cb_data)
    return tmp_path / "loans_lightgbm.txt", tmp_path / "loans_catboost.cbm"


def _main(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def _upload_model(page, path):
    page.get_by_text("Upload a model file").first.click()
    wait_for_app_idle(page)
    uploader = page.locator('[data-testid="stFileUploader"]').last
    accept = uploader.locator('input[type="file"]').get_attribute("accept") or ""
    assert ".txt" in accept and ".cbm" in accept and ".json" in accept, accept
    assert "LightGBM .txt, CatBoost .cbm/JSON" in uploader.inner_text()
    uploader.locator('input[type="file"]').set_input_files(str(path))


def _ws_id(page) -> str:
    match = re.search(r"[?&]ws=([A-Za-z0-9_-]{32})", page.url)
    assert match, page.url
    return match.group(1)


def test_lightgbm_and_catboost_uploads_in_the_browser(browser, tmp_path):
    lgb_path, cb_path = _models(tmp_path)
    state, log = tmp_path / "state", tmp_path / "server.log"
    proc, url = serve_dashboard(log, env={"TCREX_STATE_DIR": str(state)})
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1100})
        page = context.new_page()
        page.set_default_timeout(APP_TIMEOUT_MS)
        page.goto(url + "/data_model", wait_until="domcontentloaded")
        wait_for_app_idle(page)
        _upload_model(page, lgb_path)
        page.get_by_text("LightGBM binary classifier").first.wait_for()
        wait_for_app_idle(page)
        text = _main(page)
        assert "3 categorical" in text and "Traceback" not in text and "cannot be used" not in text
        assert "loans_lightgbm.txt" in page.locator('[data-testid="stSidebar"]').inner_text()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "upload_lightgbm.png"), full_page=True)
        ws_id = _ws_id(page)

        # the CatBoost file as the Compare page's model B
        go_to(page, "Compare models")
        page.get_by_role("heading", name="Compare models").first.wait_for()
        wait_for_app_idle(page)
        page.screenshot(path=str(SCREENSHOTS / "compare_before_b.png"), full_page=True)
        page.locator('[data-testid="stMain"]').get_by_text("Upload a model file").first.click()
        wait_for_app_idle(page)
        uploader = page.locator('[data-testid="stFileUploader"]').last
        assert ".cbm" in (uploader.locator('input[type="file"]').get_attribute("accept") or "")
        uploader.locator('input[type="file"]').set_input_files(str(cb_path))
        page.get_by_text(re.compile(r"lose(s)? recourse, [\d,]+ gains?")).first.wait_for(timeout=HANG_LIMIT_MS)
        wait_for_app_idle(page)
        text = _main(page)
        assert "Traceback" not in text and "cannot be used" not in text
        page.screenshot(path=str(SCREENSHOTS / "compare_catboost_b.png"), full_page=True)
        context.close()
    finally:
        stop(proc)
    assert "Traceback" not in log.read_text()

    # the workspace moves to another server's store and its LightGBM upload comes back
    env = {"TCREX_STATE_DIR": str(state)}
    out = tmp_path / "ws.zip"
    run = lambda *args, **kw: subprocess.run([sys.executable, "-m", "tcrex", *args], capture_output=True,  # noqa: E731
                                             text=True, cwd=REPO, check=True, **kw)
    run("workspace", "export", ws_id, "--out", str(out), env={**os.environ, **env})
    other = tmp_path / "other-state"
    imported = run("workspace", "import", str(out), env={**os.environ, "TCREX_STATE_DIR": str(other)})
    new_id = re.search(r"^id: (\S+)$", imported.stdout, re.M).group(1)
    proc, url = serve_dashboard(tmp_path / "other-server.log", env={"TCREX_STATE_DIR": str(other)})
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1100})
        page = context.new_page()
        page.set_default_timeout(APP_TIMEOUT_MS)
        page.goto(f"{url}/data_model?ws={new_id}", wait_until="domcontentloaded")
        wait_for_app_idle(page)
        page.get_by_text("LightGBM binary classifier").first.wait_for()
        assert "loans_lightgbm.txt" in page.locator('[data-testid="stSidebar"]').inner_text()
        page.screenshot(path=str(SCREENSHOTS / "upload_lightgbm_imported.png"), full_page=True)
        context.close()
    finally:
        stop(proc)
