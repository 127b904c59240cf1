"""The favourable outcome asked once, class names everywhere, no stale label, no internal target index."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pandas as pd

from tests.support.apptest_kit import (assert_clean, confirm_outcome, csv_bytes, goto, last_result, new_app,
                                       sidebar_text, target_box, upload_data, use_this_data)

from tcrex.ui.state import session


def credit_frame(n: int = 900, label: str = "RiskPerformance") -> pd.DataFrame:
    """A credit-bureau-like table whose label marks a BAD outcome with 1 (as in FICO's HELOC data)."""
    rng = np.random.default_rng(7)
    risk = rng.integers(40, 95, n)
    months = rng.integers(5, 300, n)
    delq = rng.integers(0, 8, n)
    trades = rng.integers(0, 60, n)
    bad = ((risk < 65) | (delq < 3) & (months < 60)).astype(int)
    return pd.DataFrame({"ExternalRiskEstimate": risk, "AverageMInFile": months, "MaxDelqEver": delq,
                         "NumSatisfactoryTrades": trades, label: bad})


def upload_labelled(at, name: str, frame: pd.DataFrame, label: str):
    """Upload ``frame`` and choose ``label`` as its label column in the column form, then use the data (the app
    trains its XGBoost model on it)."""
    upload_data(at, name, csv_bytes(frame))
    next(s for s in at.selectbox if s.label.startswith("Label column (ground truth")).set_value(label)
    return use_this_data(at)


def _train(at):
    """On the Data & model page: train the in-app model (the default choice after an upload with a label)."""
    goto(at, "data_model")
    if not any(b.label == "Use this outcome" for b in at.button):
        next(b for b in at.button if b.label == "Train").click()
        at.run()
    return at


def _info(at) -> str:
    return " ".join(i.value for i in at.sidebar.info)


def test_a_credit_csv_with_1_bad_is_asked_and_never_silently_starts_on_1():
    at = new_app()
    upload_data(at, "credit.csv", csv_bytes(credit_frame()))
    # no column is named like a label: the form says the last column would otherwise become a feature
    assert any("No label column is chosen" in w.value and "RiskPerformance" in w.value for w in at.warning)
    upload_labelled(at, "credit.csv", credit_frame(), "RiskPerformance")
    _train(at)
    assert_clean(at)
    # the suggestion follows the label's name (RiskPerformance reads as an adverse event): 0, with its reason ...
    assert session.params(at.session_state).target == 0
    captions = " ".join(c.value for c in at.caption)
    assert "Suggested: **RiskPerformance = 0**" in captions and "reads as an adverse event" in captions
    # ... and it is only suggested until answered: the sidebar says so on every page
    assert "only suggested" in _info(at)
    assert "Which outcome is favourable?" in " ".join(m.value for m in at.markdown)
    # name the classes and answer
    inputs = {t.label: t for t in at.text_input}
    # the hints follow the data: never a fixed "e.g. Good" for the first class (here 0 is the good one, by luck)
    assert inputs["RiskPerformance = 1"].placeholder == "a name for 1"
    assert not any(t.placeholder and ("Good" in t.placeholder or "Bad" in t.placeholder) for t in at.text_input)
    inputs["RiskPerformance = 0"].set_value("Good")
    inputs["RiskPerformance = 1"].set_value("Bad")
    confirm_outcome(at)
    assert_clean(at)
    assert session.params(at.session_state).target == 0
    assert "only suggested" not in _info(at)
    assert "Favourable outcome:** Good" in sidebar_text(at)
    box = target_box(at)
    assert box.format_func(box.value) == "Good (RiskPerformance = 0)"
    assert set(box.options) >= {"Good (RiskPerformance = 0)", "Bad (RiskPerformance = 1)"}
    # the names flow to every page, figure, export and the report; no internal target index reaches a person
    goto(at, "global_rules")
    assert_clean(at)
    assert next(m.value for m in at.metric if m.label == "Target") == "Good"
    assert at.code[0].value.startswith("Toward Good —") and "Target 0" not in at.code[0].value
    goto(at, "home")
    assert_clean(at)
    fig = at.get("plotly_chart")[0].proto.spec
    assert "toward Good" in fig and "target 0" not in fig


def test_the_export_names_the_outcome_and_drops_the_target_index():
    from tcrex.ui.pages import export

    at = new_app()
    upload_labelled(at, "credit.csv", credit_frame(), "RiskPerformance")
    _train(at)
    inputs = {t.label: t for t in at.text_input}
    inputs["RiskPerformance = 0"].set_value("Good")
    inputs["RiskPerformance = 1"].set_value("Bad")
    confirm_outcome(at)
    goto(at, "export")
    assert_clean(at)
    ws = _workspace_of(at)
    frame = pd.read_csv(io.StringIO(export.explanations_csv(ws, last_result(at))()))
    assert "target" not in frame.columns  # the internal index of the target entry
    assert set(frame["target_description"].dropna()) == {"Good"}
    assert set(frame["model_output_name"]) == {"Good", "Bad"}
    html = export.build_html(ws, last_result(at))
    assert "Good" in html and "output = 0" not in html


def _workspace_of(at):
    """The app's workspace rebuilt outside the session from its choices (data upload kept in session state)."""
    from tcrex.ui.state import sources, active

    spec = session.data_spec(at.session_state)
    digest, filename, raw = session.uploads(at.session_state, create=False)["data@"][spec.digest]
    table = sources.read_table(raw, filename, spec.reading)
    data = sources.prepare_frame(table.frame, spec, tuple(table.categorical))
    data = replace(data, class_names=session.class_names(data.key, at.session_state))
    model = sources.trained_model(data, session.model_spec(at.session_state).name)
    X = data.frame[data.features]
    return active.DataAndModel(data=data, model=model, X=X, y_pred=np.asarray(model.predict(X)))


def test_the_sidebar_never_keeps_the_loans_label_after_another_upload():
    at = new_app()
    box = target_box(at)
    assert box.format_func(box.value) == "approved (approved = 1)"
    loans_key = box.key
    frame = credit_frame(label="target")
    upload_data(at, "other.csv", csv_bytes(frame))
    use_this_data(at)
    _train(at)
    assert_clean(at)
    box = target_box(at)
    assert box.key != loans_key  # a new widget: the browser cannot keep the old data's option on screen
    shown = set(box.options)
    assert shown == {"target = 0", "target = 1", "Both directions (paper)"}
    assert box.format_func(box.value) in shown and "approved" not in box.format_func(box.value)
    assert "approved" not in sidebar_text(at)
    # a label nothing names: 1 is a convention, said so, and asked
    captions = " ".join(c.value for c in at.caption)
    assert "1 = Bad" in captions and "only suggested" in _info(at)
    assert not session.has_widget(loans_key, at.session_state)
    assert not session.has_widget(session.TARGET_WIDGETS, at.session_state)


def quality_frame(n: int = 900) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"alcohol": rng.normal(10.5, 1.2, n), "acidity": rng.normal(0.5, 0.15, n),
                      "sugar": rng.gamma(2.0, 2.0, n)})
    X["quality"] = np.clip(np.round(6 + 1.2 * (X["alcohol"] - 10.5) - 3 * (X["acidity"] - 0.5)), 3, 9).astype(int)
    return X


def test_ordinal_classes_offer_this_class_or_better():
    at = new_app()
    upload_labelled(at, "quality.csv", quality_frame(), "quality")
    _train(at)
    assert_clean(at)
    suggested = session.params(at.session_state).target
    assert isinstance(suggested, dict) and "at_least" in suggested
    mode = next(r for r in at.radio if r.label == "The favourable outcome is")
    assert mode.value == "at_least"
    box = next(s for s in at.selectbox if s.label == "This class or better")
    box.set_value(7).run()
    confirm_outcome(at)
    assert_clean(at)
    assert session.params(at.session_state).target == {"at_least": 7}
    assert "Favourable outcome:** 7 or better" in sidebar_text(at)
    ex = last_result(at).explainer
    assert len(ex.targets_) == 1 and min(ex.targets_[0].target.classes) == 7
    y = last_result(at).explanations
    goto(at, "global_rules")
    assert_clean(at)
    assert next(m.value for m in at.metric if m.label == "Target") == "7 or better"
    # a wine rated 8 is never told how to become 7: every output of 7 or more already has the outcome
    outputs = np.asarray(list(session.caches(at.session_state)["outputs"].values())[-1])
    assert (y["status"].astype(str).to_numpy()[outputs >= 7] == "already_in_target").all()
    goto(at, "audit")  # the audit uses the same outcome: one favourable outcome, no second picker
    assert_clean(at)
    assert "**Favourable outcome** (sidebar)  \n7 or better" in " ".join(m.value for m in at.markdown)
    # a set of classes
    goto(at, "data_model")
    next(r for r in at.radio if r.label == "The favourable outcome is").set_value("set").run()
    next(m for m in at.multiselect if m.label == "Favourable classes").set_value([6, 8]).run()
    confirm_outcome(at)
    assert_clean(at)
    assert session.params(at.session_state).target == [6, 8]
    assert last_result(at).explainer.targets_[0].target.classes == (6, 8)


def test_regression_never_defaults_to_both_directions():
    at = new_app()
    frame = quality_frame().rename(columns={"quality": "price"})
    frame["price"] = frame["price"] * 3.5 + frame["sugar"]
    upload_labelled(at, "prices.csv", frame, "price")
    _train(at)
    assert_clean(at)
    target = session.params(at.session_state).target
    assert isinstance(target, tuple) and target[1] is None  # higher is better, from the mean
    assert "both directions" not in sidebar_text(at)
    assert len(last_result(at).explainer.targets_) == 1
    side = next(r for r in at.radio if r.label == "Favourable direction")
    side.set_value("below").run()
    confirm_outcome(at)
    assert_clean(at)
    assert session.params(at.session_state).target[0] is None
    assert "output ≤" in sidebar_text(at)
