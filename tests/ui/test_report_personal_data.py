"""Personal data only when asked: the Export page says what the report will hold before it is
written, and the report names no individual's values unless "Include the chosen person" is ticked."""

from __future__ import annotations

from tcrex.ui.pages import export
from tcrex.ui.state import active

from tests.support.apptest_kit import assert_clean, goto, last_result, new_app


def _markdown(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_the_export_page_says_what_the_report_holds_and_leaves_the_person_out_by_default():
    at = new_app()
    goto(at, "export")
    assert_clean(at)
    box = at.checkbox(key="report_person")
    assert box.label == "Include the chosen person" and box.value is False
    text = _markdown(at)
    assert "What will be in the file" in text and "no individual's values" in text
    assert "chosen person with their feature values" not in text

    box.check().run()
    assert_clean(at)
    text = _markdown(at)
    assert "1 chosen person with their feature values" in text and "no individual's values" not in text

    result = last_result(at)
    ws = active.data_and_model()  # the default choices (loans sample, bundled model), outside the app's session
    plain = export.html_report(ws, result)()
    person = export.html_report(ws, result, include_person=True)()
    name = person.split('<section id="individuals">')[1].split("<h3>")[1].split("</h3>")[0]  # "Row 17"
    assert name.startswith("Row ") and name not in plain and 'id="individuals"' not in plain
    assert "no individual&#x27;s values" in plain and "1 chosen person with their feature values" in person
    for html in (plain, person):
        assert "None" not in html.split("<footer")[0].split("</style>")[1]
