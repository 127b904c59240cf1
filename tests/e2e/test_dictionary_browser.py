"""The data dictionary in a real browser: a generated credit-card table is uploaded with its dictionary (titles and
the codebook's labels, no codes declared), the suggested codes are accepted with one click, and the Individual
page's advice then names features by their titles and never moves a repayment status into a code."""
from __future__ import annotations

import re

from tcrex import datasets
from tcrex.dictionary import DataDictionary
from tests.support.browser import assert_no_errors, go_to, set_toggle, upload_table, wait_for_layout

ROWS = 1200
CODE_MEANINGS = dict(datasets.CREDIT_CARD_STATUS_CODES)


def test_accepted_codes_and_titles_reach_the_individual_page(page, open_app, wait_idle, tmp_path, save_screenshot):
    table = tmp_path / "credit_card.csv"
    datasets.make_credit_card(ROWS, random_state=3).to_csv(table, index=False)
    book = tmp_path / "dictionary.csv"
    book.write_text(DataDictionary.from_parts(value_labels=datasets.credit_card_codebook(),
                                              titles=datasets.credit_card_titles()).to_csv(), encoding="utf-8")
    open_app(page, "/data_model")
    upload_table(page, table, f"{ROWS:,}")
    page.get_by_text("Upload a data dictionary", exact=True).wait_for()
    set_toggle(page, "Upload a data dictionary")
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text="A data dictionary")
    uploader.locator('input[type="file"]').set_input_files(str(book))
    page.get_by_text(re.compile(r"dictionary\.csv: \d+ column\(s\) described")).wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Use this dictionary").click()
    # the data suggests the status codes: one question per status column, one button for all
    accept = page.get_by_role("button", name="Treat all 6 as codes")
    accept.wait_for()
    wait_idle(page)
    question = page.get_by_text(re.compile(r"Treat no consumption that month \(−2\), paid in full \(−1\), "
                                           r"revolving credit \(minimum paid\) \(0\) of repayment status last month "
                                           r"\(status_1\) as codes\?"))
    assert question.count() == 1
    accept.click()
    accept.wait_for(state="detached")
    wait_idle(page)
    assert_no_errors(page)
    page.get_by_text("5 · Data dictionary").scroll_into_view_if_needed()
    save_screenshot(page, "data_model_dictionary")

    go_to(page, "Individual")
    page.get_by_text("Checked on the model").first.wait_for()
    wait_for_layout(page)
    wait_idle(page)
    assert_no_errors(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    # titles, not bare column names, in the advice, the rule, the metarule, the changes and the side-by-side table
    assert "repayment status last month (status_1)" in text, text[:3000]
    change = next(line for line in text.splitlines() if line.startswith("Change:"))
    assert "(" in change and not re.search(r"\bChange: [a-z_]+\d* from", change), change
    # the advice never moves a feature into a code
    for code, meaning in CODE_MEANINGS.items():
        assert f"to {meaning} ({code})" not in change, change
    # the side-by-side grid (cells drawn on a canvas, an accessible copy in the DOM) names the title too
    page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stDataFrame"] [role="gridcell"], '
        + '[data-testid="stDataFrame"] td')].some(td => td.textContent.includes('(status_1)'))""")
    save_screenshot(page, "individual_dictionary_titles")
