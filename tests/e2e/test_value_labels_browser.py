"""Value labels in a real browser: a codebook uploaded on Data & model is used on the Individual page
and in the downloaded report, next to the codes ("on a payroll (Salaried)"), with HTML in a label escaped."""
from __future__ import annotations

from tests.support.browser import HANG_LIMIT_MS, assert_no_errors, download_report, go_to, set_toggle, wait_for_layout

CODEBOOK = ("feature,value,label\n"
            "employment,Salaried,on a payroll\n"
            "employment,Self-employed,runs own firm\n"
            "employment,Retired,pensioner\n"
            "employment,Unemployed,<b>looking for work</b>\n"
            "home_ownership,Rent,tenant\n"
            "home_ownership,Mortgage,mortgagor\n"
            "home_ownership,Own,outright owner\n")
EMPLOYMENT = {"Salaried": "on a payroll", "Self-employed": "runs own firm", "Retired": "pensioner",
              "Unemployed": "<b>looking for work</b>"}


def _grid_text(page) -> str:
    """The text of the page, data grids included (their cells are drawn on a canvas; the grid keeps an
    accessible copy of the visible cells in the DOM)."""
    return page.evaluate("""() => {
        const parts = [document.querySelector('[data-testid="stMain"]').innerText];
        document.querySelectorAll('[data-testid="stDataFrame"] td, [data-testid="stDataFrame"] [role="gridcell"]')
            .forEach(td => parts.push(td.textContent));
        return parts.join('\\n');
    }""")


def test_uploaded_codebook_reaches_the_individual_page_and_the_report(page, open_app, wait_idle, tmp_path,
                                                                      save_screenshot):
    book = tmp_path / "codebook.csv"
    book.write_text(CODEBOOK, encoding="utf-8")
    open_app(page, "/data_model")
    set_toggle(page, "Upload a codebook file")
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text="codebook")
    uploader.locator('input[type="file"]').set_input_files(str(book))
    wait_idle(page)
    page.get_by_text("7 label(s) for 2 feature(s) match the data").wait_for()
    page.get_by_role("button", name="Use this codebook").click()
    # the codebook's run offers the way back to the data's own codebook (the event: idle alone could see the run
    # before the click was answered)
    page.get_by_role("button", name="Back to the data's own codebook").wait_for()
    wait_idle(page)
    assert_no_errors(page)

    go_to(page, "Individual")
    page.locator('[data-testid="stDataFrame"]').first.wait_for(state="visible")
    wait_for_layout(page)  # the grid has drawn its cells (sizes steady), not a fixed wait
    wait_idle(page)
    assert_no_errors(page)
    # the grids keep their accessible copy of the cells a moment after they are drawn: wait for a labelled value
    # to appear there (the event itself; a page that never shows one fails on the wait's limit)
    expected = [f"{label} ({code})" for code, label in EMPLOYMENT.items()]
    page.wait_for_function("""(expected) => {
        const parts = [document.querySelector('[data-testid="stMain"]').innerText];
        document.querySelectorAll('[data-testid="stDataFrame"] td, [data-testid="stDataFrame"] [role="gridcell"]')
            .forEach(td => parts.push(td.textContent));
        const text = parts.join('\\n');
        return expected.some(e => text.includes(e));
    }""", arg=expected)
    text = _grid_text(page)
    shown = [f"{label} ({code})" for code, label in EMPLOYMENT.items() if f"{label} ({code})" in text]
    assert shown, text[:3000]
    save_screenshot(page, "individual_value_labels")

    go_to(page, "Export")
    set_toggle(page, "Include the chosen person")  # off by default: no one's values unless asked
    page.get_by_text("1 chosen person with their feature values").wait_for(state="visible", timeout=HANG_LIMIT_MS)
    wait_idle(page)
    path = download_report(page, tmp_path)
    html = path.read_text(encoding="utf-8")
    assert "<b>looking for work</b>" not in html  # HTML in a label is text, never markup
    in_report = [code for code, label in EMPLOYMENT.items()
                 if f"{label.replace('<', '&lt;').replace('>', '&gt;')} ({code})" in html]
    assert in_report, "no labelled employment value in the report"
