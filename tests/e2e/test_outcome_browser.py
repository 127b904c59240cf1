"""In a real browser: an uploaded credit-bureau-like table (not the sample) whose label marks a bad
outcome with 1 is asked which outcome is favourable, the classes are named, and the names reach the sidebar and
the pages; the old sample's label never stays on screen."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.support.browser import HANG_LIMIT_MS, assert_no_errors, go_to, sidebar_text, upload_table


def _credit(n: int = 800) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    risk = rng.integers(40, 95, n)
    months = rng.integers(5, 300, n)
    delq = rng.integers(0, 8, n)
    trades = rng.integers(0, 60, n)
    bad = ((risk < 65) | (delq < 3) & (months < 60)).astype(int)  # 1 = Bad
    return pd.DataFrame({"ExternalRiskEstimate": risk, "AverageMInFile": months, "MaxDelqEver": delq,
                         "NumSatisfactoryTrades": trades, "PercentTradesNeverDelq": rng.integers(50, 101, n),
                         "target": bad})


def _outcome_box(page) -> str:
    """What the sidebar's Favourable outcome box shows (its label and the chosen option)."""
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(has_text="Favourable outcome")
    return box.first.locator("input").input_value()  # the chosen option is the combobox's value


def test_the_outcome_question_on_an_uploaded_credit_table(page, open_app, wait_idle, save_screenshot, tmp_path):
    csv = tmp_path / "credit.csv"
    _credit().to_csv(csv, index=False)
    open_app(page, "/data_model")
    assert "Favourable outcome: approved" in sidebar_text(page)  # the sample's outcome, before the upload
    assert "approved (approved = 1)" in _outcome_box(page)
    upload_table(page, csv, "800")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Which outcome is favourable?").wait_for()
    text = main.inner_text()
    assert "1 = Bad" in text  # the reason: 1 is only a convention
    sidebar = sidebar_text(page)
    assert "only suggested" in sidebar and "approved" not in sidebar  # no stale label from the sample
    assert "approved" not in _outcome_box(page) and "target = 1" in _outcome_box(page)
    # name the classes, then answer
    for label, name in (("target = 0", "Good"), ("target = 1", "Bad")):
        box = main.get_by_role("textbox", name=label, exact=True)
        box.fill(name)
        box.press("Enter")
        # the name's run has drawn it into the options (idle alone could see the run before the name was sent)
        main.locator('[data-testid="stRadio"]').get_by_text(f"{name} ({label})", exact=True).wait_for()
        wait_idle(page)
    # the options read the names as they are typed (applied with the answer)
    main.locator('[data-testid="stRadio"]').get_by_text("Good (target = 0)", exact=True).click()
    wait_idle(page)
    page.get_by_role("button", name="Use this outcome").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes('Favourable outcome: Good')",
        timeout=HANG_LIMIT_MS)
    wait_idle(page)
    sidebar = sidebar_text(page)
    assert "only suggested" not in sidebar and "approved" not in sidebar
    assert "Good (target = 0)" in _outcome_box(page)
    # the suggested constraints, each with its reason and one button
    assert "MaxDelqEver" in main.inner_text() and "past events" in main.inner_text()
    assert page.get_by_role("button", name="Apply these").count() == 1
    assert_no_errors(page)
    save_screenshot(page, "outcome_question_credit")
    go_to(page, "Global rules")
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "Target\n\nGood" in text and "output = 0" not in text  # the metric names the outcome
    assert_no_errors(page)
    # the page fits its width: nothing runs off to the right at 1400 px
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    save_screenshot(page, "global_rules_credit_named")
