"""Data & model as a state machine: new data resets what depended on the old data, messages belong to
the current attempt, and Excel workbooks are read (or refused with "save it as CSV")."""

from __future__ import annotations

import io

import openpyxl
from tests.support import builders as b
from tests.support.apptest_kit import assert_clean, csv_bytes, goto, new_app, sidebar_text, upload_data, use_this_data

from tcrex import datasets
from tcrex.ui.state import session


def _messages(at) -> str:
    return " ".join(m.value for m in [*at.error, *at.warning, *at.info, *at.success])


def _xlsx(frame) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(list(frame.columns))
    for row in frame.itertuples(index=False):
        sheet.append([v.item() if hasattr(v, "item") else v for v in row])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _upload_model(at, name: str, data: bytes):
    goto(at, "data_model")
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("upload").run()
    at.get("file_uploader")[-1].set_value((name, data, "application/octet-stream")).run()
    return at


def test_excel_workbook_is_read_and_used():
    frame = datasets.make_loans(200, random_state=3)
    at = new_app()
    upload_data(at, "loans.xlsx", _xlsx(frame))
    assert_clean(at)
    assert any("200 rows" in m.value and "loans.xlsx" in m.value for m in at.markdown)
    use_this_data(at)
    assert_clean(at)
    assert "Upload: loans.xlsx" in sidebar_text(at) and "200 rows" in sidebar_text(at)


def test_unreadable_excel_is_refused_with_save_as_csv():
    at = new_app()
    upload_data(at, "broken.xlsx", b"PK\x03\x04 this is not a workbook")
    assert not at.exception
    assert at.error and "save it as CSV" in _messages(at)
    assert not at.get("arrow_data_frame")  # no preview of anything else under the refusal


def test_new_data_resets_the_uploaded_model_individual_and_constraints():
    """An uploaded model never stays active with new data: it is set aside with a note; so are the chosen
    individual and the constraints, which named the old data's rows and features."""
    X, y = b.loans(300)
    raw, _, _ = b.xgb_classifier(X, y)
    at = new_app()
    upload_data(at, "first.csv", csv_bytes(X.assign(approved=y)))
    use_this_data(at)
    _upload_model(at, "model.json", raw)
    assert "Uploaded model" in sidebar_text(at)
    session.set_individual(5, at.session_state)
    other = datasets.make_loans(250, random_state=7)
    upload_data(at, "second.csv", csv_bytes(other))
    # while the new file is reviewed, the active data still resolves: no stale "no longer in this session"
    assert "no longer in this session" not in _messages(at) + sidebar_text(at)
    use_this_data(at)
    assert_clean(at)
    text = _messages(at)
    assert "set aside because the data changed" in text and "model.json" in text
    assert "Uploaded model" not in sidebar_text(at)
    assert session.individual(at.session_state) is None
    assert session.model_spec(at.session_state).kind == "train"


def test_switching_samples_resets_the_chosen_individual():
    at = new_app()
    goto(at, "data_model")
    session.set_individual(3, at.session_state)
    at.radio(key=session.SETUP_DATA_CHOICE).set_value("sample:wine").run()
    assert_clean(at)
    assert session.individual(at.session_state) is None
    assert "Wine" in sidebar_text(at)


def _quality_scores(n: int = 300):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"alcohol": rng.normal(10, 1, n), "acidity": rng.normal(3, 0.5, n),
                      "sulphates": rng.uniform(0.3, 1.0, n)})
    quality = np.clip(np.round(6 + 1.2 * (X["alcohol"] - 10) - X["acidity"] + 3 + 2 * X["sulphates"] - 4), 3, 9)
    return X.assign(quality=quality.astype(int))


def _set_label(at, value):
    next(b for b in at.selectbox if b.label.startswith("Label column")).set_value(value)
    return at


def _set_task(at, value):
    radio = next(r for r in at.radio if r.label == "Task of the label column")
    radio.set_value(value)
    return at


def test_integer_scores_are_classes_by_default_and_regression_on_request():
    at = new_app()
    upload_data(at, "quality.csv", csv_bytes(_quality_scores()))
    _set_label(at, "quality")
    use_this_data(at)
    assert_clean(at)
    assert "**Task:** classification" in sidebar_text(at)
    goto(at, "data_model")
    _set_label(at, "quality")
    _set_task(at, "regression")
    use_this_data(at)
    assert_clean(at)
    assert "**Task:** regression" in sidebar_text(at)
    assert session.current_fit(at.session_state).explainer.task_ == "regression"


def test_failed_parameters_keep_the_last_good_result_with_a_banner_naming_the_parameter():
    from tests.support.apptest_kit import apply_params, charts

    at = new_app()
    goto(at, "global_rules")
    assert_clean(at)
    good = session.last_good_fit(at.session_state)[1]
    n_charts = charts(at)
    apply_params(at, tau=0.9, rho=0.005, trees=20, max_cells=1000)  # the grid cell limit is hit
    assert not at.exception
    banner = at.error[0].value
    assert "Grid cell limit" in banner and "last good result" in banner
    assert "Data & model" not in " ".join(str(p.proto) for p in at.get("page_link"))
    assert charts(at) == n_charts  # the page still draws the last good result
    for name in ("home", "rule_plot", "change_keep", "individual"):
        goto(at, name)
        assert not at.exception and "Grid cell limit" in at.error[0].value
    apply_params(at, tau=1.0, rho=0.2, trees=1, max_cells=100_000)  # no valid rule
    assert not at.exception
    assert "lower **τ** or **ρ**" in at.error[0].value
    assert session.last_good_fit(at.session_state)[1] is good
