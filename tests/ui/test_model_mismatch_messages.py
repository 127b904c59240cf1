"""Messages that help: a model that does not fit the table says what the model expects and what the
data has (counts and first names), which side looks one-hot, and the one change to make; the sidebar repeats a
short summary, never the whole column list."""
from __future__ import annotations

import pandas as pd
import pytest

from tcrex.datasets import make_credit_bureau
from tcrex.ui.state import session

from tests.support.apptest_kit import csv_bytes, new_app, sidebar_text, upload_data, use_this_data

LABEL = "target"  # found as the label by its name


def _model_bytes(frame: pd.DataFrame, tmp_path, **kw) -> bytes:
    import xgboost

    X, y = frame.drop(columns=LABEL), (frame[LABEL] == "Good").astype(int)
    path = tmp_path / "model.json"
    xgboost.XGBClassifier(n_estimators=5, max_depth=3, **kw).fit(X, y).save_model(path)
    return path.read_bytes()


def _upload(data: pd.DataFrame, model: bytes):
    at = new_app()
    upload_data(at, "credit.csv", csv_bytes(data))
    use_this_data(at)
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("upload").run()
    at.get("file_uploader")[-1].set_value(("model.json", model, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def credit():
    return make_credit_bureau(400).rename(columns={"RiskPerformance": LABEL})


def test_one_hot_model_with_categorical_columns_says_the_one_change(credit, tmp_path):
    hot = pd.get_dummies(credit.drop(columns=LABEL), dtype=int).assign(**{LABEL: credit[LABEL]})
    at = _upload(credit, _model_bytes(hot, tmp_path))
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error if "cannot be used with this data" in e.value]
    assert len(errors) == 1, ([e.value for e in at.error], sidebar_text(at), [i.value for i in at.info], [w.value for w in at.warning])
    text = errors[0]
    n_model, n_data = hot.shape[1] - 1, credit.shape[1] - 1
    assert f"the model expects {n_model} features but the data has {n_data}" in text, text
    assert "looks trained on one-hot columns" in text and "'Checking_account_status_A11'" in text
    assert "7 categorical column(s) (Checking_account_status, Credit_history, Purpose, Savings and 3 more)" in text
    assert "The one change: one-hot encode those columns" in text
    assert "drop them" not in text  # dropping the categorical columns would not fix a one-hot model
    side = sidebar_text(at)
    assert "Checking_account_status_A12" not in side and "Savings and 3 more" not in side  # never the list


def test_categorical_model_with_one_hot_columns_says_the_one_change(credit, tmp_path):
    typed = credit.astype({c: "category" for c in credit.columns if credit[c].dtype.kind in "OT" and c != LABEL})
    hot = pd.get_dummies(credit.drop(columns=LABEL), dtype=int).assign(**{LABEL: credit[LABEL]})
    at = _upload(hot, _model_bytes(typed, tmp_path, enable_categorical=True, tree_method="hist"))
    text = next(e.value for e in at.error if "cannot be used with this data" in e.value)
    assert f"the model expects {credit.shape[1] - 1} features but the data has {hot.shape[1] - 1}" in text, text
    assert "the data looks one-hot encoded" in text
    assert "The one change: upload the table with one column per categorical feature" in text
    assert "'Checking_account_status' = 'A11'" in text


def test_misspelt_columns_name_the_counts(credit, tmp_path):
    typed = credit.astype({c: "category" for c in credit.columns if credit[c].dtype.kind in "OT" and c != LABEL})
    at = _upload(credit.rename(columns=str.lower),
                 _model_bytes(typed, tmp_path, enable_categorical=True, tree_method="hist"))
    text = next(e.value for e in at.error if "cannot be used with this data" in e.value)
    n = credit.shape[1] - 1
    assert f"the model expects {n} features but the data has {n}: it needs column(s)" in text, text
    assert "one-hot" not in text


def test_the_sidebar_summary_is_the_first_sentence():
    from tcrex.ui.state.sources import problem_summary

    long = "the model expects 40 features but the data has 17: it looks one-hot. Model: " + ", ".join("abc" * 40)
    assert problem_summary(long) == ("the model expects 40 features but the data has 17: it looks one-hot. (the "
                                     "whole message is on the Data & model page)")
    assert problem_summary("no rows") == "no rows"
    assert len(problem_summary("x " * 400)) < 250
