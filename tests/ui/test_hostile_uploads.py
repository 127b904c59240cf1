"""Hostile and broken uploads through the Data & model page (AppTest): every one gives an error or a warning on
the page, never an exception, and nothing from an uploaded file is executed. Files come from the intake tests'
generators (tests/support/builders.py)."""

from __future__ import annotations

import pytest

from tests.support import builders as b
from tcrex import datasets
from tcrex.ui.state import session

from tests.support.apptest_kit import (assert_clean, csv_bytes, goto, loans_with_income_gaps, new_app, sidebar_text,
                                       upload_data, use_this_data)


def upload_model(at, name: str, data: bytes):
    goto(at, "data_model")
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("upload").run()
    at.get("file_uploader")[-1].set_value((name, data, "application/octet-stream")).run()
    return at


def messages(at) -> str:
    return " ".join(e.value for e in [*at.error, *at.warning]).lower()


# The upload control does not offer .pkl/.joblib (the browser refuses them), so a pickle arrives disguised under an
# accepted extension: it must be recognised by its content and refused without running.
@pytest.mark.parametrize("name,kind", [("model.json", "pickle"), ("model.skops", "pickle"),
                                       ("model.onnx", "joblib"), ("model.ubj", "joblib")])
def test_pickle_model_never_runs(tmp_path, name, kind):
    marker = tmp_path / "pwned"
    data = b.evil_pickle(marker, b.sklearn_pipeline()) if kind == "pickle" else \
        b.evil_joblib(marker, b.sklearn_pipeline())
    at = new_app()
    upload_model(at, name, data)
    assert not at.exception
    assert at.error and "pickle" in messages(at)
    assert not marker.exists()  # the payload never ran
    before = session.model_spec(at.session_state)
    goto(at, "global_rules")  # the refused file changed nothing: every page goes on with the model in use
    assert_clean(at)
    assert session.model_spec(at.session_state) == before and before.kind == "bundled"
    assert not marker.exists()


def test_pickle_banner_when_the_operator_enables_it(monkeypatch):
    monkeypatch.setenv("TCREX_ALLOW_PICKLE", "1")
    at = new_app()
    assert not at.exception
    main = [w.value for w in at.main.warning]
    assert any("Pickle loading is enabled" in w for w in main)  # on the page itself, not only the sidebar
    assert any("Pickle loading is ON" in w.value for w in at.sidebar.warning)
    goto(at, "audit")
    assert any("Pickle loading is enabled" in w.value for w in at.main.warning)


def test_garbage_json_model():
    at = new_app()
    upload_model(at, "model.json", b.garbage())
    assert not at.exception
    assert at.error


def test_onnx_model_with_external_data_is_refused():
    at = new_app()
    upload_model(at, "model.onnx", b.onnx_bytes(b.onnx_external_data()))
    assert not at.exception
    assert at.error and "external" in messages(at)


def test_model_with_the_wrong_feature_count():
    at = new_app()  # the loans sample has 9 features; this ONNX model takes 3 inputs by position
    upload_model(at, "three_inputs.onnx", b.onnx_bytes(b.onnx_linear_classifier(names=None)))
    assert not at.exception
    text = messages(at)
    assert at.error and "3 input" in text and "9 column" in text


def test_csv_with_missing_values_offers_a_strategy_and_reports_it():
    at = new_app()
    upload_data(at, "gaps.csv", loans_with_income_gaps(10))
    assert not at.exception
    radio = next(r for r in at.radio if r.label == "Rows with missing values")
    assert not radio.disabled and radio.options == ["Drop rows with a missing value",
                                                    "Fill in: median (numbers) / most common value (categories)"]
    assert any("40 missing value(s)" in m.value and "income" in m.value for m in at.markdown)
    radio.set_value("impute")
    use_this_data(at)
    assert_clean(at)
    notes = " ".join(s.value for s in [*at.success, *at.info])
    assert "imputed 40 missing value(s)" in notes  # through intake.handle_missing, with the count
    assert "400 rows" in sidebar_text(at)


def test_csv_with_duplicate_column_names():
    at = new_app()
    text = "a,a,b,approved\n" + "\n".join(f"{i},{i % 7},{i % 3},{i % 2}" for i in range(60))
    upload_data(at, "dupes.csv", text.encode())
    assert not at.exception
    assert at.error or at.warning
    assert "duplicate" in messages(at) or "a.1" in messages(at)


def test_one_class_label():
    at = new_app()
    frame = datasets.make_loans(300, random_state=2)
    frame["approved"] = 1
    upload_data(at, "one_class.csv", csv_bytes(frame))
    use_this_data(at)
    assert not at.exception
    assert at.error and "single value" in messages(at)


def test_uploaded_model_passes_task_and_categorical_features_to_the_explainer():
    """An XGBoost model with a categorical feature stored as integer codes: check_compatibility names it, and the
    explainer treats it as categorical; the loader's warnings are shown."""
    X, y = b.loans(400)
    X = X.assign(job=X["job"].map({"clerk": 0, "manager": 1, "nurse": 2}).astype("category"))
    raw, model, _ = b.xgb_classifier(X, y)
    at = new_app()
    frame = X.assign(job=X["job"].astype(int), approved=y)
    upload_data(at, "jobs.csv", csv_bytes(frame))
    use_this_data(at)
    upload_model(at, "model.json", raw)
    assert not at.exception
    result = session.current_fit(at.session_state)
    ex = result.explainer
    assert "Uploaded model" in sidebar_text(at)
    assert ex.task_ == "classification"
    assert "job" in [f.name for f in ex.schema_.features if f.is_categorical]
    assert any("categorical" in w.value for w in at.warning)  # the compatibility warning is shown


def test_how_to_read_this_file_overrides_the_guessed_separators():
    """`1,000` in a semicolon file is read as 1.0 with a warning naming both readings; choosing the point as
    decimal mark and the comma as thousands separator under "How to read this file" reads 1000, and the choice is
    kept with the data spec (so the active data is parsed the same way)."""
    from tcrex.ui.state import sources

    rows = "\n".join(f"{i % 9 + 1},{i * 37 % 1000:03d};{i % 5};{'ab'[i % 2]};{(i * 7) % 2}" for i in range(120))
    data = ("amount;x;group;approved\n" + rows + "\n").encode()
    at = new_app()
    upload_data(at, "amounts.csv", data)
    assert not at.exception and not at.error
    assert "could be 1.000 (decimal comma) or 1000 (thousands separator)" in " ".join(w.value for w in at.warning)
    digest = sources.sha256(data)[:12]
    assert at.selectbox(key=f"setup_read_decimal_{digest}").value is None  # automatic by default
    at.selectbox(key=f"setup_read_decimal_{digest}").set_value(".").run()
    at.selectbox(key=f"setup_read_thousands_{digest}").set_value(",").run()
    assert not at.exception and not at.error
    assert "as chosen" in " ".join(w.value for w in at.warning)
    assert at.dataframe[0].value["amount"].tolist()[:2] == [1000, 2037]
    use_this_data(at)
    assert not at.exception
    spec = session.data_spec(at.session_state)
    assert spec.kind == "upload" and dict(spec.reading) == {"decimal": ".", "thousands": ","}


def test_a_header_and_rows_with_different_delimiters_say_so_on_the_page():
    at = new_app()
    upload_data(at, "mixed.csv", b"a,b,approved\n" + b"".join(f"{i};{i % 3};{i % 2}\n".encode() for i in range(60)))
    assert not at.exception
    assert at.error and "split at commas, but the rows have 3 fields split at semicolons" in messages(at)
