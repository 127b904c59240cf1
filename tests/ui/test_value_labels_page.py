"""Value labels in the dashboard: the loans sample's codebook is in force from the start, a codebook
file uploaded on Data & model changes what every page says, an edited label changes it again, and a hostile
codebook gets clear messages."""
from __future__ import annotations

import pandas as pd
import pytest

from tests.support.apptest_kit import assert_clean, goto, last_result, new_app

pytestmark = pytest.mark.apptest


def _page_text(at) -> str:
    """Everything the page shows as text: markdown, captions, alerts, and every cell of its tables."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [str(a.value) for kind in ("success", "info", "warning", "error") for a in at.get(kind)]
    for frame in at.dataframe:
        value = frame.value
        value = value.data if hasattr(value, "data") and not isinstance(value, pd.DataFrame) else value
        parts.append(value.to_csv(index=False))
    for table in at.table:
        parts.append(table.value.to_csv(index=False))
    return "\n".join(parts)


def _editor(at):
    return next(d for d in at.data_editor if d.key == "value_labels_table")


def _individual_text(at) -> str:
    goto(at, "individual")
    assert_clean(at)
    return _page_text(at)


def _use_codebook(at, name: str, data: bytes, mime: str = "text/csv"):
    goto(at, "data_model")
    at.toggle(key="codebook_upload_open").set_value(True).run()
    uploader = next(u for u in at.get("file_uploader") if u.proto.id.endswith("codebook_upload")
                    or "codebook" in str(u.proto.label).lower())
    uploader.set_value((name, data, mime)).run()
    return at


def test_the_sample_codebook_is_in_force_and_a_codebook_upload_changes_every_page():
    at = new_app()
    assert_clean(at)
    ex = last_result(at).explainer
    assert ex.value_labels["employment"]["Salaried"] == "salaried employee"
    text = _individual_text(at)
    assert "(Salaried)" in text or "(Self-employed)" in text or "(Retired)" in text or "(Unemployed)" in text
    # the table on Data & model lists every category with its label
    goto(at, "data_model")
    assert_clean(at)
    table = _editor(at).value
    row = table[(table.feature == "employment") & (table.value == "Salaried")]
    assert row.label.tolist() == ["salaried employee"]
    # upload a codebook: CSV feature,value,label
    book = ("feature,value,label\n"
            + "".join(f"employment,{v},job {v.lower()}\n" for v in ["Salaried", "Self-employed", "Retired",
                                                                    "Unemployed"])
            + "nowhere,x,y\n").encode()
    _use_codebook(at, "codebook.csv", book)
    assert_clean(at)
    assert any("'nowhere'" in w.value and "not in the data" in w.value for w in at.warning)
    next(b for b in at.button if b.label == "Use this codebook").click()
    at.run()
    assert_clean(at)
    assert last_result(at).explainer.value_labels == {
        "employment": {"Salaried": "job salaried", "Self-employed": "job self-employed", "Retired": "job retired",
                       "Unemployed": "job unemployed"}}
    text = _individual_text(at)
    assert "job " in text and "salaried employee" not in text
    goto(at, "global_rules")
    assert_clean(at)


def test_editing_a_label_changes_it_everywhere_and_the_report_says_it():
    at = new_app()
    goto(at, "data_model")
    editor = _editor(at)
    table = editor.value
    rows = {(f, v): i for i, (f, v) in enumerate(zip(table.feature, table.value))}
    edits = {rows[("employment", v)]: {"label": f"edited {v}"} for v in ["Salaried", "Self-employed", "Retired",
                                                                           "Unemployed"]}
    at.session_state[editor.key] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}
    next(b for b in at.button if b.label == "Apply labels").click()
    at.run()
    assert_clean(at)
    ex = last_result(at).explainer
    assert ex.value_labels["employment"]["Salaried"] == "edited Salaried"
    assert ex.value_labels["home_ownership"]["Rent"] == "rents the home"  # the others stay
    text = _individual_text(at)
    assert "edited " in text and "salaried employee" not in text


def test_a_code_of_a_numeric_feature_gets_a_label():
    at = new_app()
    goto(at, "data_model")
    at.selectbox(key="value_labels_code_feature").set_value("n_late_payments")
    at.text_input(key="value_labels_code_value").input("3")
    at.text_input(key="value_labels_code_label").input("three late payments")
    next(b for b in at.button if b.label == "Add label").click()
    at.run()
    assert_clean(at)
    ex = last_result(at).explainer
    assert ex.value_text("n_late_payments", 3) == "three late payments (3)"
    assert ex.value_text("n_late_payments", 0) == "no late payments on record (0)"  # the sample's label stays
    at.text_input(key="value_labels_code_value").input("often")
    at.text_input(key="value_labels_code_label").input("x")
    next(b for b in at.button if b.label == "Add label").click()
    at.run()
    assert any("codes are numbers" in e.value for e in at.error)


@pytest.mark.parametrize("name, data, message", [
    ("huge.csv", b"feature,value,label\n" + b"employment,Salaried,x\n" * 300_000, "at most 5 MB"),
    ("wrong.csv", b"a,b\n1,2\n", "exactly the columns feature,value,label"),
    ("multi.csv", b"feature,value,label\nemployment,Salaried,\"two\nlines\"\n", "control character"),
    ("bad.json", b'{"employment": "Salaried"}', "a JSON codebook is an object"),
])
def test_a_hostile_codebook_gets_a_clear_message(name, data, message):
    at = new_app()
    _use_codebook(at, name, data, "application/json" if name.endswith("json") else "text/csv")
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert not [b for b in at.button if b.label == "Use this codebook"]
    assert last_result(at).explainer.value_labels["employment"]["Salaried"] == "salaried employee"


def test_the_transition_boxes_name_categories_by_label_and_keep_codes():
    """The constraints editor's "From X to" boxes say "not currently employed (Unemployed)"; what they hold, and
    so the applied transitions, are the codes."""
    from tcrex.datasets import LOANS_VALUE_LABELS
    labels = LOANS_VALUE_LABELS["employment"]
    at = new_app()
    next(c for c in at.sidebar.checkbox if c.key.startswith("con_limit_") and c.key.endswith("_employment")).check()
    at.run()
    boxes = [m for m in at.sidebar.multiselect if "_employment_" in m.key]
    assert sorted(m.label for m in boxes) == sorted(f"From {label} ({code}) to" for code, label in labels.items())
    box = next(m for m in boxes if m.label == f"From {labels['Unemployed']} (Unemployed) to")
    assert f"{labels['Self-employed']} (Self-employed)" in box.options
    assert "Self-employed" in box.value  # the values are the codes
    box.set_value(["Self-employed"])
    at.button(key="con_apply").click().run()
    assert_clean(at)
    assert last_result(at).explainer.constraints_.to_dict()["employment"]["transitions"] == {
        "Unemployed": ["Self-employed"]}


def test_a_plain_text_search_finds_rows_by_a_values_label():
    """On the Individual page "pension" (in "retired, on a pension (Retired)") finds the retired applicants, and
    the code still finds them."""
    at = new_app()
    goto(at, "individual")
    at.segmented_control(key="ind_mode").set_value("search").run()
    found = {}
    for query in ("pension", "Retired", "owns the home outright"):
        at.text_input(key="ind_query").input(query).run()
        assert_clean(at)
        box = next(s for s in at.selectbox if s.key == "ind_hit")
        found[query] = [int(h.split(":")[0].removeprefix("row ")) for h in box.options]
    from tcrex.ui.state import sources
    data, _, _ = sources.load_sample_frame("loans")
    assert found["pension"] and found["pension"] == found["Retired"]
    assert set(data.loc[found["pension"], "employment"]) == {"Retired"}
    assert found["owns the home outright"]
    assert set(data.loc[found["owns the home outright"], "home_ownership"]) == {"Own"}


def test_the_compare_page_names_groups_by_label_and_code():
    """Compare models groups by the same rule as the audit (tcrex.audit.labelled_groups): the groups, the
    reference choice, the findings and the people frame say "label (code)"."""
    from tcrex.datasets import LOANS_VALUE_LABELS
    from tcrex.ui.pages import audit as auditing
    from tcrex.ui.state import session
    at = new_app()
    goto(at, "compare")
    at.selectbox(key="compare_column").set_value("home_ownership").run()
    assert_clean(at)
    res = session.last_comparison(at.session_state).result
    want = [f"{label} ({code})" for code, label in LOANS_VALUE_LABELS["home_ownership"].items()]
    assert sorted(res.group_labels) == sorted(want)
    assert sorted(at.selectbox(key=auditing.reference_key("compare", "home_ownership")).options) == sorted(want + ["everyone else (rest)"])
    assert set(res.people["group"].astype(str)) <= set(want)
    assert any(w in " ".join(res.findings()) for w in want)


def test_edit_values_offers_categories_by_their_labels_and_keeps_codes():
    """Edit values showed bare codes (A14, A43, …) in its category boxes while every sentence and table on the page
    named them by the codebook; the box now names them as the sentences do, and the value it holds is the code."""
    at = new_app()
    goto(at, "individual")
    at.segmented_control(key="ind_mode").set_value("edit").run()
    assert_clean(at)
    box = at.selectbox(key="ind_e_employment")
    assert "salaried employee (Salaried)" in box.options
    assert box.value in set(last_result(at).explainer.value_labels["employment"])  # a code, as the data holds
    box.set_value("Salaried").run()
    assert_clean(at)
    assert at.selectbox(key="ind_e_employment").value == "Salaried"


def test_special_codes_are_named_in_the_edit_boxes_and_the_label_columns_entry_names_classes():
    """Credit-bureau data with its codebook: the Edit-values box of a numeric feature with special codes says what
    each code means (the value stays a number), and the codebook's entry for the label column names its classes
    instead of being reported as "not in the data"."""
    import json

    from tests.support.apptest_kit import csv_bytes, upload_data, use_this_data
    from tcrex import datasets

    at = new_app()
    upload_data(at, "bureau.csv", csv_bytes(datasets.make_credit_bureau(1200, random_state=11)))
    next(s for s in at.selectbox if s.label.startswith("Label column")).set_value(datasets.CREDIT_BUREAU_TARGET)
    use_this_data(at)
    assert_clean(at)
    _use_codebook(at, "bureau.json", json.dumps(datasets.CREDIT_BUREAU_CODEBOOK).encode(), "application/json")
    assert_clean(at)
    said = " ".join(str(a.value) for kind in ("info", "warning") for a in at.get(kind))
    assert "not in the data" not in said, said
    assert "RiskPerformance" in said and "Good = repaid as agreed" in said
    next(b for b in at.button if b.label == "Use this codebook").click().run()
    assert_clean(at)
    goto(at, "individual")
    at.segmented_control(key="ind_mode").set_value("edit").run()
    assert_clean(at)
    box = at.number_input(key="ind_e_MSinceMostRecentDelq")
    assert isinstance(box.value, (int, float))  # a number, as the data holds
    assert "−7 (no delinquency on record)" in box.help and "−9 (no bureau record)" in box.help, box.help
    assert "never moves a value into or out of them" in box.help
