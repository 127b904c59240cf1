"""On a real server: an uploaded model that segfaults or hangs while predicting takes down only its sandbox worker.

The server runs with ``TCREX_SANDBOX_FAULT`` (a test-only switch of tcrex/intake/_worker.py) so that the worker of
every *uploaded* model faults natively when it predicts; bundled models run in-process and are unaffected. The
user who uploaded gets a clear message, and the server, its health check and another user's session live on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import ARTIFACTS, HANG_LIMIT_MS, start_server, wait_for_app_idle
from tests.support.servers import answers, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL = REPO_ROOT / "sample_data" / "loans_model.json"


def _healthy(base: str) -> bool:
    """The server answers its health check: asked until it does (a server busy with a loaded machine's other
    session may take longer than any fixed limit to answer once; the wait only bounds a hang)."""
    return bool(wait_until(lambda: answers(base + "/_stcore/health", "ok"), "the server's health check",
                           limit_s=HANG_LIMIT_MS / 1000))


@pytest.mark.parametrize("fault, message", [("segv", "crashed while"), ("hang", "did not answer in")])
def test_a_faulting_uploaded_model_leaves_the_server_and_other_sessions_working(request, browser, monkeypatch,
                                                                                 fault, message):
    monkeypatch.setenv("TCREX_SANDBOX_FAULT", fault)
    monkeypatch.setenv("TCREX_SANDBOX_PREDICT_SECONDS", "3")  # the hang is cut after 3 s
    base = start_server(request, f"streamlit-crashing-model-{fault}.log")

    uploader = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = uploader.new_page()
    page.set_default_timeout(HANG_LIMIT_MS)
    page.goto(base + "/data_model", wait_until="domcontentloaded")
    wait_for_app_idle(page)
    page.get_by_text("Upload a model file").first.click()
    wait_for_app_idle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').last.set_input_files(str(MODEL))
    page.get_by_text(message).first.wait_for()
    wait_for_app_idle(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "Traceback" not in text and "Segmentation" not in text
    assert "does not match the data" not in text  # a fault of the model, not a mismatch
    page.screenshot(path=str(ARTIFACTS / "screenshots" / f"crashing_model_{fault}.png"), full_page=True)

    assert _healthy(base)  # the server process survived the worker's fault
    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    second = other.new_page()
    second.set_default_timeout(HANG_LIMIT_MS)
    second.goto(base + "/global_rules", wait_until="domcontentloaded")
    wait_for_app_idle(second)
    second.get_by_role("heading", name="Global rules").wait_for()
    assert "metarules" in second.locator('[data-testid="stSidebar"]').inner_text()  # the bundled model still works

    page.reload(wait_until="domcontentloaded")  # and the uploader's own session keeps answering
    wait_for_app_idle(page)
    assert _healthy(base)
    other.close()
    uploader.close()
