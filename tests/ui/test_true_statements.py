"""Statements on screen that are true of the current state: labels are checked against the model's
outputs before any metric, a failed upload changes nothing else, unapplied edits say so, accuracy says where it was
measured, and page texts use the current data's own rules and names."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tcrex import datasets
from tcrex.constraints import pack_constraints
from tcrex.ui.pages import audit
from tcrex.ui.state import session

from tests.support.apptest_kit import (assert_clean, csv_bytes, goto, last_result, loans_with_uploaded_model, new_app,
                                       sidebar_text, upload_bundled_model, upload_data, use_this_data, wide_frame)


def _texts(at, kind: str) -> list[str]:
    return [e.value for e in at.get(kind)]


def test_labels_the_model_never_outputs_are_refused_before_any_metric():
    at = new_app()
    frame = datasets.load_bundled_loans().head(800)
    frame["approved"] = frame["approved"].map({1: "good", 0: "bad"})
    upload_data(at, "loans_good_bad.csv", csv_bytes(frame))
    use_this_data(at)
    upload_bundled_model(at)
    assert not at.exception, [e.value for e in at.exception]
    warnings = " ".join(_texts(at, "warning"))
    assert "'approved' holds 'bad', 'good' but the model outputs 0, 1" in warnings, warnings
    assert "No accuracy" in warnings
    assert not any("accuracy" in s for s in _texts(at, "success")), _texts(at, "success")  # no green tick
    assert not [m for m in at.metric if m.label == "accuracy"]  # the panel shows no figure either
    assert any("'approved' holds 'bad', 'good'" in i for i in _texts(at, "info"))
    goto(at, "home")
    score = next(m for m in at.metric if m.label.startswith("Model"))
    assert score.value == "n/a"


def test_a_wrong_model_file_changes_nothing_else():
    at = loans_with_uploaded_model(600)
    spec_before = session.model_spec(at.session_state)
    applied = pack_constraints({"age": "immutable", "employment": "immutable", "income": "increase_only",
                                "home_ownership": "immutable", "purpose": "immutable",
                                "n_late_payments": "increase_only"})
    p = replace(session.params(at.session_state), constraints=applied, tau=0.85)
    session.set_params(p, at.session_state)
    session.choose_individual(7, at.session_state)
    at.run()
    at.get("file_uploader")[-1].set_value(("other_model.json", b'{"learner": "not a model"}',
                                           "application/json")).run()
    after = session.params(at.session_state)
    assert after.constraints == applied and after.tau == 0.85  # before: every constraint wiped
    errors = " ".join(_texts(at, "error"))
    assert "The model file cannot be used" in errors and "Nothing else changed" in errors, errors
    assert session.model_spec(at.session_state) == spec_before
    assert session.individual(at.session_state) == 7
    goto(at, "home")
    assert_clean(at)


def test_the_headline_accuracy_says_where_it_was_measured():
    at = new_app()  # the bundled model was trained on every row of the sample: its figures are training figures
    score = next(m for m in at.metric if m.label.startswith("Model accuracy"))
    assert "training rows" in score.help and "optimistic" in score.help
    captions = " ".join(c.value for c in at.main.caption)
    assert "training rows" in captions and "optimistic" in captions, captions


def test_the_reference_box_and_the_coverage_chart_name_the_current_grouping_and_target():
    at = goto(new_app(), "audit")
    first = at.selectbox(key=audit.reference_key("audit", "employment"))
    assert first.options[0] == "the largest group (employment = salaried employee (Salaried))"  # the codebook's words
    at.selectbox(key="audit_column").set_value("age").run()
    assert_clean(at)
    # a new grouping is a new widget: the browser keeps a widget's chosen text, and one key across groupings showed
    # "the largest group (Foreign_worker = A201)" while grouping by age
    box = at.selectbox(key=audit.reference_key("audit", "age"))
    assert box.options[0].startswith("the largest group (age = ") and box.value == audit.LARGEST
    goto(at, "global_rules")
    icicle = next(c.proto.spec for c in at.get("plotly_chart") if "metarule_icicle" in c.proto.spec)
    title = json.loads(icicle)["layout"]["title"]["text"]
    assert "Metarules toward approved" in title and "target 0" not in title, title  # the index is never shown


def test_an_edited_constraints_table_says_not_applied_yet():

    at = new_app()
    upload_data(at, "wide.csv", csv_bytes(wide_frame()))
    use_this_data(at)
    goto(at, "data_model")
    next(b for b in at.button if b.label == "Apply constraints").click()  # the suggestion (age) confirmed
    at.run()
    assert not any("Not applied yet" in w for w in _texts(at, "warning"))
    editor = next(d for d in at.data_editor if str(d.key).startswith("con_table_"))
    row = list(editor.value.feature).index("f03")
    at.session_state[editor.key] = {"edited_rows": {row: {"constraint": "immutable"}}, "added_rows": [],
                                    "deleted_rows": []}
    at.run()
    assert_clean(at)
    pending = [w for w in _texts(at, "warning") if "Not applied yet" in w]
    assert pending and "f03: immutable" in pending[0] and "age: increase only" in pending[0], _texts(at, "warning")
    assert session.params(at.session_state).constraint_spec == {"age": "increase_only"}  # nothing applied
    # the sidebar's summary says so too (it read the sidebar editor's widgets only, which 11+ features never draw)
    constraints_line = " ".join(c.value for c in at.sidebar.caption).split("**Constraints:**")[1]
    assert "changes not applied yet" in constraints_line, constraints_line
    next(b for b in at.button if b.label == "Apply constraints").click()
    at.run()
    constraints_line = " ".join(c.value for c in at.sidebar.caption).split("**Constraints:**")[1]
    assert "changes not applied yet" not in constraints_line, constraints_line
    assert session.params(at.session_state).constraint_spec == {"age": "increase_only", "f03": "immutable"}


def test_the_overview_quotes_a_rule_of_the_current_data():

    at = new_app()
    upload_data(at, "wide.csv", csv_bytes(wide_frame()))
    use_this_data(at)
    goto(at, "home")
    assert_clean(at)
    intro = next(m.value for m in at.markdown if "Counterfactual rules" in m.value)
    assert "debt_to_income" not in intro  # the bundled sample's rule, quoted on any data before
    rules = last_result(at).explainer.rules_frame()
    best = rules.sort_values(["n", "accuracy"], ascending=False).iloc[0]
    assert f"with {best['conditions']}, the model gives" in intro and best["rule_id"] in intro, intro


def test_edited_parameters_and_constraints_say_not_applied_in_the_summary():
    at = new_app()
    next(w for w in at.sidebar.get("slider") if w.key == session.PARAM_TAU).set_value(0.8)
    kind = next(s for s in at.sidebar.selectbox if str(s.key).startswith("con_kind_") and s.key.endswith("_age"))
    kind.set_value("immutable")
    at.run()
    goto(at, "global_rules")  # another page: the editors' widgets keep their edits
    assert_clean(at)
    summary = " ".join(c.value for c in at.sidebar.caption)
    params_line = summary.split("**Parameters:**")[1].split("**Constraints:**")[0]
    constraints_line = summary.split("**Constraints:**")[1]
    assert "τ = 0.90" in params_line and "changes not applied yet" in params_line, params_line
    assert "changes not applied yet" in constraints_line, constraints_line
    assert any("Not applied yet" in w.value and "τ 0.90 → 0.80" in w.value for w in at.sidebar.warning)
    assert session.params(at.session_state).tau == 0.9 and session.params(at.session_state).constraints == ()


@pytest.mark.parametrize("uploaded", [False, True])
def test_the_sidebar_says_the_overviews_accuracy(uploaded):
    """One owner for the model's headline figure: the sidebar said "accuracy on this data 0.916" while
    the Overview said 92.0% on other rows; both now come from the same measurement, with the same rows."""
    at = loans_with_uploaded_model(800) if uploaded else new_app()
    goto(at, "home")
    assert_clean(at)
    score = next(m for m in at.metric if m.label == "Model accuracy")
    side = sidebar_text(at)
    caveat = score.help.rsplit("(", 1)[1].rstrip(").")  # "on training rows: optimistic", "on hold-out rows", …
    said = f"accuracy {score.value} ({caveat})"
    assert said in side, (said, side)
    goto(at, "data_model")
    assert any(said in s for s in _texts(at, "success")), (said, _texts(at, "success"))


def test_a_fresh_workspace_does_not_say_changes_are_not_applied():
    """Nothing edited: the editor's pre-filled suggestions (said as "suggested") are not an edit, so the summary
    does not say "changes not applied yet" for the parameters or the constraints; an edit still does."""
    at = new_app()
    for page in ("global_rules", "individual", "home"):
        goto(at, page)
        assert_clean(at)
        summary = " ".join(c.value for c in at.sidebar.caption)
        assert "changes not applied yet" not in summary, (page, summary)
    kind = next(s for s in at.sidebar.selectbox if str(s.key).startswith("con_kind_") and s.key.endswith("_age"))
    assert kind.value == "increase_only"  # the suggestion, pre-filled
    kind.set_value("immutable")
    at.run()
    goto(at, "global_rules")
    assert "changes not applied yet" in " ".join(c.value for c in at.sidebar.caption).split("**Constraints:**")[1]
