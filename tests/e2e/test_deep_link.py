"""A fresh server's very first request may be a deep link to a sub page: it shows that page, with no "Page not found".

Started with plain ``streamlit run app.py``, Streamlit treats the app as a legacy ``pages/`` directory app on the
server's first script run (the repository has a top-level ``pages/`` folder), sends "Page not found" for
``/global_rules`` and leaves a modal over the page (streamlit/streamlit#8860, #9992).  ``make run`` starts the
server through ``tcrex.ui.launch``, which avoids it; ``fresh_server`` starts it the same way.  The shared session
server cannot show this: it has already answered other requests.
"""

from __future__ import annotations

import pytest
from tests.support.browser import wait_for_layout

pytestmark = pytest.mark.e2e


def test_first_request_of_a_fresh_server_to_a_sub_page(page, fresh_server, wait_idle, save_screenshot):
    page.goto(fresh_server + "/global_rules", wait_until="domcontentloaded")
    wait_idle(page)
    # the page has rendered (CSS selectors: a modal would hide the page from role queries)
    page.locator('[data-testid="stMain"] h1', has_text="Global rules").first.wait_for(state="visible")
    page.locator('[data-testid="stTable"]').first.wait_for(state="visible")
    wait_idle(page)
    wait_for_layout(page)  # a modal sent with the run is drawn once the run is over and the layout has settled
    save_screenshot(page, "deep_link_fresh_server")
    dialogs = page.locator('[role="dialog"]')
    assert dialogs.count() == 0, dialogs.all_inner_texts()
    assert page.get_by_text("Page not found").count() == 0
    assert page.get_by_role("heading", name="Global rules").first.is_visible()
    assert page.tcrex_errors == [], page.tcrex_errors
