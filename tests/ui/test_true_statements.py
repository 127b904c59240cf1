"""Statements on screen that are true of the current state (issue 33): labels are checked against the model's
outputs before any metric, a failed upload changes nothing else, unapplied edits say so, accuracy says where it was
measured, and page texts use the current data's own rules and names."""

from __future__ import annotations

from dataclasses import replace

from apptest_kit import (assert_clean, csv_bytes, goto, loans_with_uploaded_model, new_app, upload_bundled_model,
                         upload_data, use_this_data)

from tcrex import datasets
from tcrex.constraints import pack_constraints
from tcrex.ui import session


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
    assert "This model file cannot be used" in errors and "Nothing else changed" in errors, errors
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
