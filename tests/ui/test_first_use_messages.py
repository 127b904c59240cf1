"""Messages a new user meets: ROC/PR for an uploaded XGBoost JSON model, neutral guidance before a model
is chosen, an empty model file said as such, and the label column chosen or changed after upload."""

from __future__ import annotations

import json


from tcrex import datasets
from tcrex.ui.state import session

from tests.support.apptest_kit import (assert_clean, csv_bytes, goto, loans_with_uploaded_model, new_app, upload_data,
                                       use_this_data)


def test_an_uploaded_xgboost_json_model_gets_roc_and_pr_curves():
    doc = json.loads((datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL).read_text())
    assert doc["learner"]["objective"]["name"] == "binary:logistic"
    at = loans_with_uploaded_model()
    assert_clean(at)
    text = " ".join(c.value for c in at.caption)
    assert "gives no class scores" not in text
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("ROC" in s for s in specs) and any("recision" in s for s in specs)


def test_before_a_model_is_chosen_the_guidance_is_neutral():
    at = new_app()
    # no column named like a label ("income" would be taken as one)
    frame = datasets.load_bundled_loans().head(300).drop(columns=["approved"]).rename(columns={"income": "earnings"})
    upload_data(at, "nolabel.csv", csv_bytes(frame))
    use_this_data(at)
    goto(at, "data_model")
    assert_clean(at)  # no red box: nothing is wrong yet
    assert any("Choose a model" in i.value for i in at.info)
    assert not any("cannot be used" in e.value for e in at.error)
    goto(at, "home")
    assert_clean(at)
    assert any("Choose a model to explain" in i.value for i in at.info)


def test_an_empty_model_file_is_said_as_such():
    at = new_app()
    upload_data(at, "loans.csv", csv_bytes(datasets.load_bundled_loans().head(300)))
    use_this_data(at)
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("upload").run()
    at.get("file_uploader")[-1].set_value(("model.json", b"", "application/json")).run()
    errors = [e.value for e in at.error]
    assert any("The model file cannot be used" in e and "empty" in e for e in errors), errors
    assert not any("does not match the data" in e or "cannot be used with this data" in e for e in errors)


def test_the_label_column_is_chosen_after_upload_and_never_stays_a_feature():
    at = new_app()
    frame = datasets.load_bundled_loans().head(600).rename(columns={"approved": "apprvd", "income": "earnings"})
    upload_data(at, "typo.csv", csv_bytes(frame))
    assert any("No label column is chosen" in w.value and "apprvd" in w.value for w in at.warning)
    use_this_data(at)
    goto(at, "data_model")
    assert session.data_spec(at.session_state).label is None  # without a choice it would be a feature ...
    box = next(s for s in at.selectbox if s.label == "Label column")
    assert box.value == "(none)"
    box.set_value("apprvd").run()
    next(b for b in at.button if b.label == "Use as label column").click()
    at.run()
    assert_clean(at)
    spec = session.data_spec(at.session_state)
    assert spec.label == "apprvd"
    roles = at.dataframe[-1].value.set_index("column")["role"]
    assert roles["apprvd"] == "label"
    # a model is trained on it; the label is no feature of the explainer
    from tests.support.apptest_kit import last_result
    assert "apprvd" not in last_result(at).explainer.schema_.names
    # changing it again: the old label is left out of the features, never silently one
    box = next(s for s in at.selectbox if s.label == "Label column")
    box.set_value("(none)").run()
    next(b for b in at.button if b.label == "Use as label column").click()
    at.run()
    assert_clean(at)
    spec = session.data_spec(at.session_state)
    assert spec.label is None and "apprvd" in spec.drop
