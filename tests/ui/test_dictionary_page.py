"""The data dictionary on the Data & model page, in AppTest: the codes the data suggests are one-click findings,
the tables show and edit titles, codes (with their row counts) and actionability, an uploaded dictionary
(CSV, JSON, Table Schema) is read as untrusted input, downloads read back equal, and every page names features
by their titles. Two tables: a generated credit-card table, and a differently shaped one (other names, other
codes, more months)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.support.apptest_kit import assert_clean, csv_bytes, goto, last_result, new_app, upload_data, \
    use_this_data

from tcrex import datasets
from tcrex.dictionary import DataDictionary, read_dictionary, value_key
from tcrex.ui.state import session
from tcrex.ui.widgets import dictionary as dictionary_widget

CARD = datasets.make_credit_card(1200, random_state=3)
#: Shaped differently: other column names, codes -9/-8 beside the delays, eight months.
OTHER_CODES = {-9: "account closed", -8: "not billed"}
OTHER = datasets.make_credit_card(1200, months=8, status_codes=OTHER_CODES, random_state=5,
                                  status="pay_status_m{k}", bill="stmt_m{k}", paid="pay_amt_m{k}")


def _card_app(frame: pd.DataFrame = CARD, name: str = "card.csv"):
    at = new_app()
    upload_data(at, name, csv_bytes(frame))
    use_this_data(at)
    goto(at, "data_model")
    assert_clean(at)
    return at


def _dictionary(at) -> DataDictionary:
    (text,) = at.session_state[session.DICTIONARY].values()
    return DataDictionary.from_json(text)


def _upload_dictionary(at, name: str, data: bytes):
    at.toggle(key="dictionary_upload_open").set_value(True).run()
    uploader = next(u for u in at.get("file_uploader") if u.proto.label.startswith("A data dictionary"))
    uploader.set_value((name, data, "text/csv" if name.endswith(".csv") else "application/json")).run()
    assert_clean(at)
    next(b for b in at.button if b.key == "dictionary_use").click()
    return at.run()


@pytest.mark.parametrize("frame,status,codes", [(CARD, "status", [-2, -1, 0]),
                                                 (OTHER, "pay_status_m", [-9, -8])])
def test_the_suggested_codes_are_one_click_findings_and_the_fit_honours_them(frame, status, codes):
    at = _card_app(frame)
    columns = [c for c in frame.columns if c.startswith(status)]
    questions = [m.value for m in at.markdown if "as codes?" in m.value]
    assert len(questions) == len(columns), questions  # one per status column, none for the amounts
    shown = ", ".join(str(c).replace("-", "−") for c in codes)
    assert any(f"**{shown}** of **{columns[0]}**" in q for q in questions), questions
    # the rows each code holds are previewed (suggested, not declared yet)
    table = next(d.value for d in at.data_editor if d.key == "dictionary_numeric").set_index("feature")
    counts = " · ".join(f"{c}: {int((frame[columns[0]] == c).sum()):,}" for c in codes)
    assert table.loc[columns[0], "rows per code"] == counts + " (suggested above)"
    next(b for b in at.button if b.key == "dictionary_codes_all").click()
    at.run()
    assert_clean(at)
    assert _dictionary(at).special_codes == {c: codes for c in columns}
    schema = last_result(at).explainer.schema_
    assert {f.name: list(f.special_codes) for f in schema.features if f.special_codes} == {c: codes for c in columns}
    assert not [m.value for m in at.markdown if "as codes?" in m.value]  # answered
    table = next(d.value for d in at.data_editor if d.key == "dictionary_numeric").set_index("feature")
    assert table.loc[columns[0], "rows per code"] == counts


def test_titles_and_actionability_edited_in_the_table_reach_every_page():
    at = _card_app()
    editor = next(d for d in at.data_editor if d.key == "dictionary_numeric")
    rows = list(editor.value.feature)
    at.session_state[editor.key] = {"edited_rows": {
        rows.index("status_1"): {"title": "repayment status last month",
                                 "special codes": "-2 = no consumption; -1 = paid in full; 0 = revolving credit"},
        rows.index("status_2"): {"history": True},
        rows.index("age"): {"title": "age in years", "actionability": "increase only"}},
        "added_rows": [], "deleted_rows": []}
    cats = next(d for d in at.data_editor if d.key == "dictionary_categorical")
    assert json.loads(cats.proto.columns)["actionability"]["type_config"]["options"] == [
        "not declared", "free", "immutable"]  # a categorical column is never offered a direction
    at.session_state[cats.key] = {"edited_rows": {list(cats.value.feature).index("marital_status"): {
        "title": "marital status", "actionability": "immutable"}}, "added_rows": [], "deleted_rows": []}
    next(b for b in at.button if b.label == "Apply the dictionary").click()
    at.run()
    assert_clean(at)
    d = _dictionary(at)
    assert d["status_1"].codes == ((-2, "no consumption"), (-1, "paid in full"), (0, "revolving credit"))
    assert d.titles == {"status_1": "repayment status last month", "age": "age in years",
                        "marital_status": "marital status"}
    # declared actionability is applied as constraints (history: immutable)
    assert session.params(at.session_state).constraint_spec == {
        "age": "increase_only", "marital_status": "immutable", "status_2": "immutable"}
    ex = last_result(at).explainer
    assert ex.dictionary_.titles["status_1"] == "repayment status last month"
    assert {f.name: list(f.special_codes) for f in ex.schema_.features if f.special_codes}["status_1"] == [-2, -1, 0]
    # the Individual page names the features by their titles (the sentences and the condition lists)
    goto(at, "individual")
    assert_clean(at)
    texts = " ".join(m.value for m in at.markdown)
    assert "repayment status last month (status_1)" in texts and "`status_1`" not in texts, texts[:2000]
    goto(at, "rule_plot")  # the Rule map's axes and its hint name the titles too
    assert_clean(at)
    axis = next(b for b in at.selectbox if b.label == "Horizontal axis")
    assert "repayment status last month (status_1)" in axis.options and "age in years (age)" in axis.options
    # the workspace keeps it: a fresh session restored from the snapshot has the same dictionary
    from tcrex.ui.state import workspace
    fresh: dict = {}
    workspace.restore(json.loads(json.dumps(workspace.snapshot(at.session_state))), {}, fresh)
    assert fresh[session.DICTIONARY] == at.session_state[session.DICTIONARY]


@pytest.mark.parametrize("fmt", ["csv", "json", "schema"])
def test_an_uploaded_dictionary_is_used_and_the_downloads_read_back(fmt):
    book = DataDictionary.from_parts(value_labels=datasets.credit_card_codebook(),
                                     special_codes={c: [-2, -1, 0] for c in datasets.credit_card_columns()["status"]},
                                     titles=datasets.credit_card_titles())
    data, name = {"csv": (book.to_csv().encode(), "dict.csv"), "json": (book.to_json().encode(), "dict.json"),
                  "schema": (json.dumps(book.to_table_schema()).encode(), "schema.json")}[fmt]
    at = _card_app()
    _upload_dictionary(at, name, data)
    assert_clean(at)
    d = _dictionary(at)
    assert d.titles == datasets.credit_card_titles()
    assert d.special_codes == {c: [-2, -1, 0] for c in datasets.credit_card_columns()["status"]}
    ex = last_result(at).explainer
    assert ex.dictionary_ is not None and ex.dictionary_.titles["status_1"] == "repayment status last month"
    assert not [m.value for m in at.markdown if "as codes?" in m.value]  # declared: nothing left to ask
    texts = last_result(at).explanations["text"].astype(str)
    named = texts[texts.str.contains("status_1")]
    assert len(named) and named.str.contains("repayment status last month (status_1)", regex=False).all()
    # downloads: the CSV and the Table Schema read back to the same titles, codes and labels
    labels = {**datasets.credit_card_codebook()}
    features = [c for c in CARD.columns if c != datasets.CREDIT_CARD_TARGET]
    full, skipped = dictionary_widget.complete_dictionary(features, ["sex", "education", "marital_status"],
                                                          CARD[features], labels, d)
    assert skipped == []
    for raw, file in ((dictionary_widget.csv_download(full), "d.csv"),
                      (dictionary_widget.table_schema_download(full), "d.json")):
        back = read_dictionary(raw, file)
        assert back.titles == datasets.credit_card_titles()
        assert back.special_codes == d.special_codes
        said = {value_key(v): label for v, label in back["status_1"].value_labels.items()}
        assert said[value_key(-2)] == "no consumption that month"
        assert said[value_key(1)] == "1 month late"
        assert dict(back["education"].labels)["c3"] == "high school"
        assert back["education"].kind == "categorical" and back["credit_limit"].kind == "numeric"
    assert {b.proto.label for b in at.get("download_button")} >= {"Download the dictionary (CSV)",
                                                                  "Download as Table Schema (JSON)"}


def test_a_hostile_dictionary_is_refused_whole():
    at = _card_app()
    bad = b"feature,value,label,kind\nstatus_1,,<script>alert(1)</script>,title\n"
    at.toggle(key="dictionary_upload_open").set_value(True).run()
    uploader = next(u for u in at.get("file_uploader") if u.proto.label.startswith("A data dictionary"))
    uploader.set_value(("bad.csv", bad, "text/csv")).run()
    assert not at.exception
    assert any(e.value.startswith("The dictionary cannot be used") and "HTML" in e.value for e in at.error), \
        [e.value for e in at.error]
    assert session.DICTIONARY not in at.session_state or not at.session_state[session.DICTIONARY]


def test_a_codebook_label_with_markup_is_left_out_of_the_dictionary_download_not_a_crash():
    """The codebook reader keeps HTML in a label (shown escaped); a dictionary never holds markup, so the
    download leaves that label out and says so, and the page stays whole."""
    at = _card_app()
    at.toggle(key="codebook_upload_open").set_value(True).run()
    uploader = next(u for u in at.get("file_uploader") if "codebook" in u.proto.label)
    uploader.set_value(("book.csv", b"feature,value,label\neducation,c1,<b>graduate</b>\neducation,c2,university\n",
                        "text/csv")).run()
    next(b for b in at.button if b.key == "codebook_use").click()
    at.run()
    assert_clean(at)
    note = [c.value for c in at.caption if "hold HTML markup" in c.value]
    assert note and "education = c1" in note[0], [c.value for c in at.caption]


def test_the_rules_export_carries_the_history_flags_while_the_editor_decides_the_constraints():
    # The fit takes its constraints from the editor only (engine_dictionary strips actionability); the Export
    # page's rules JSON still carries the dictionary's declarations, so a file read elsewhere says which columns
    # describe the past -- and restoring it applies no constraint the editor did not.
    from types import SimpleNamespace

    from tcrex import TCREx
    from tcrex.dictionary import FeatureEntry
    from tcrex.ui.pages import export
    from tcrex.ui.state import active

    X = CARD.drop(columns=["default"])
    history = [c for c in X.columns if c.startswith("status_")][1:]
    d = DataDictionary(tuple([FeatureEntry("status_1", title="repayment status last month",
                                           codes=((-2, "no consumption"), (-1, "paid in full"), (0, "revolving"))),
                              *[FeatureEntry(c, history=True) for c in history],
                              FeatureEntry("age", actionability="increase_only")]))
    ws = SimpleNamespace(data=SimpleNamespace(dictionary=d), categorical=["sex", "education", "marital_status"],
                         features=list(X.columns))
    fitted = active.engine_dictionary(ws)
    assert all(e.actionability is None and not e.history for e in fitted.entries)
    import xgboost as xgb
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, enable_categorical=True, tree_method="hist").fit(
        X.astype({c: "category" for c in ws.categorical}), CARD["default"])
    editor = {"age": "increase_only"}  # the user freed the history columns in the editor
    ex = TCREx(dictionary=fitted, constraints=editor, categorical_features=ws.categorical, target=0).fit(
        X.astype({c: "category" for c in ws.categorical}), model)
    text = export.rules_json(SimpleNamespace(explainer=ex), None, export.export_dictionary(ws))()
    doc = json.loads(text)
    assert doc["params"]["constraints"] == {"age": {"kind": "increase_only"}}
    flagged = {e["name"] for e in doc["dictionary"]["features"] if e.get("history")}
    assert flagged == set(history)
    back = TCREx.from_json(text)
    assert back.constraints_.to_dict() == {"age": {"kind": "increase_only"}}
    assert {e.name for e in back.dictionary_.entries if e.history} == set(history)
    assert back.dictionary_.titles["status_1"] == "repayment status last month"
