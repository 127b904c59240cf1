"""Value labels (a codebook) and class names: every sentence names a labelled value by its label with
its code, never the raw code alone; both survive the JSON export; bad codebooks are refused with messages."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcrex import TCREx
from tcrex.errors import ParameterError, SchemaError
from tcrex.text import value_text

CODES = ["A11", "A12", "A13", "A14"]
LABELS = {"A11": "overdrawn", "A12": "under 200 DM", "A13": "200 DM or more", "A14": "no checking account"}
SPECIAL = {-7: "no delinquency on record", -8: "no usable trades"}


def _data(seed: int, n: int = 400):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"status": rng.choice(CODES, n), "purpose": rng.choice(["P1", "P2", "P3"], n),
                      "months": rng.choice([-8, -7, 1, 3, 6, 12, 24], n), "income": rng.normal(50, 15, n).round(1)})
    score = (X.status.isin(["A13", "A14"]) * 2 + (X.purpose == "P2") + (X.months > 5) + (X.income > 55)
             + rng.normal(0, 0.3, n))
    return X, score


def _model(X):
    return ((X["status"].isin(["A13", "A14"]).astype(int) * 2 + (X["purpose"] == "P2") + (X["months"] > 5)
             + (X["income"] > 55)) >= 3).astype(int).to_numpy()


def _no_raw_code(text: str, codes: dict) -> None:
    """Every labelled code in ``text`` sits inside "label (code)"."""
    for code, label in codes.items():
        stripped = text.replace(f"{label} ({code})", "")
        assert not re.search(rf"(?<![\w.-]){re.escape(str(code))}(?![\w.])", stripped), (code, text)


def _all_texts(ex, X) -> list[str]:
    texts = list(ex.explain(X).text) + list(ex.counterfactuals(X).text)
    texts += [ex.summary_text()]
    texts += list(ex.rules_frame().conditions) + list(ex.metarules_frame().text) + list(ex.metarules_frame().conditions)
    for i in range(min(len(X), 8)):
        e = ex.explain_one(X.iloc[[i]])
        texts += [e.text, e.paper_text or ""] + [a["text"] for a in e.alternatives]
    return texts


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_sentences_with_labels_never_show_a_raw_code_alone(seed):
    X, _ = _data(seed)
    codes = {"P1": "car", "P2": "education", "P3": "repairs"}
    ex = TCREx(rho=0.03, tau=0.85, value_labels={"status": LABELS, "purpose": codes}).fit(X, _model)
    for text in _all_texts(ex, X.head(40)):
        _no_raw_code(text, {**LABELS, **codes})


def test_labels_reach_rules_sentences_and_tree_with_the_code():
    X, _ = _data(1)
    ex = TCREx(rho=0.03, tau=0.85, value_labels={"status": LABELS}).fit(X, _model)
    plain = TCREx(rho=0.03, tau=0.85).fit(X, _model)
    assert "no checking account (A14)" in ex.summary_text() or "200 DM or more (A13)" in ex.summary_text()
    # words only: the rules and their counts are those of the explainer without labels
    assert ex.rules_frame()[["n", "accuracy"]].equals(plain.rules_frame()[["n", "accuracy"]])
    said = []

    def walk(node):
        if "left_text" in node:
            said.append(node["left_text"] + " " + node["right_text"])
            walk(node["left"])
            walk(node["right"])
    for t in range(len(ex.targets_)):
        walk(ex.metarule_tree(t))
    assert any("(A1" in s for s in said)
    for text in said:
        _no_raw_code(text, LABELS)
    assert ex.value_text("status", "A14") == "no checking account (A14)"
    assert ex.value_text("purpose", "P1") == "P1"


def test_numeric_codes_match_as_floats():
    X, _ = _data(2)
    ex = TCREx(rho=0.03, tau=0.85, value_labels={"months": {"-7": "no delinquency on record", -8.0: "none"}}).fit(
        X, _model)
    assert ex.value_text("months", -7) == "no delinquency on record (-7)"
    assert ex.value_text("months", -7.0) == "no delinquency on record (-7)"
    assert ex.value_text("months", -8) == "none (-8)"
    assert ex.value_text("months", 3) == "3"
    assert value_text(-7, {-7.0: "x"}) == "x (-7)"


def test_labels_and_class_names_survive_json():
    X, _ = _data(3)
    ex = TCREx(rho=0.03, tau=0.85, value_labels={"status": LABELS, "months": SPECIAL},
               class_names={1: "approved", 0: "rejected"}).fit(X, _model)
    text = ex.to_json()
    doc = json.loads(text)
    assert doc["version"] == 5 and doc["class_names"] == [[0, "rejected"], [1, "approved"]] or \
        sorted(doc["class_names"]) == [[0, "rejected"], [1, "approved"]]
    back = TCREx.from_json(text)
    assert back.value_labels == {"status": LABELS, "months": {-7.0: SPECIAL[-7], -8.0: SPECIAL[-8]}}
    assert back.class_names == {1: "approved", 0: "rejected"}
    assert back.summary_text() == ex.summary_text()
    assert "Toward approved" in back.summary_text()
    y = _model(X.head(30))
    assert list(back.explain(X.head(30), y_pred=y).text) == list(ex.explain(X.head(30)).text)
    # an export without labels (version 4 and before) still loads, without them
    doc.pop("class_names")
    doc["version"] = 4
    for f in doc["features"]:
        f.pop("labels", None)
    old = TCREx.from_json(json.dumps(doc))
    assert old.value_labels is None and old.class_names is None
    assert "(A14)" not in old.summary_text()


def test_update_changes_labels_without_refitting_and_every_text_follows():
    X, _ = _data(4)
    ex = TCREx(rho=0.03, tau=0.85, value_labels={"status": LABELS}).fit(X, _model)
    before = ex.summary_text()
    fits = ex.n_surrogate_fits_
    ex.update(value_labels={"status": {**LABELS, "A14": "no account at all"}})
    assert ex.n_surrogate_fits_ == fits
    assert ex.value_labels["status"]["A14"] == "no account at all"
    after = ex.summary_text()
    assert ("no checking account (A14)" in before) == ("no account at all (A14)" in after)
    assert "no checking account" not in after
    assert all("no checking account" not in t for t in ex.explain(X.head(50)).text)
    ex.update(value_labels={})
    assert ex.value_labels is None and "(A14)" not in ex.summary_text()
    # a restored explainer (no surrogate) takes new labels too
    back = TCREx.from_json(ex.to_json())
    back.update(value_labels={"status": LABELS}, class_names={1: "approved"})
    assert back.class_names == {1: "approved"}


def test_class_names_are_the_default_of_every_text():
    X, _ = _data(5)
    ex = TCREx(rho=0.03, tau=0.85, class_names={1: "approved", 0: "rejected"}).fit(X, _model)
    assert "output = " not in ex.summary_text()
    assert set(ex.rules_frame().target_description) <= {"approved", "rejected"}
    # a caller's own names still win
    assert "Toward yes" in ex.summary_text(class_names={1: "yes", 0: "no"})


@pytest.mark.parametrize("labels, message", [
    ({"nope": {"a": "b"}}, "'nope', which is not a feature"),
    ({"status": {"A99": "x"}}, "'A99', which are not categories of 'status'"),
    ({"months": {"often": "x"}}, "not numbers, and 'months' is numeric"),
    ({"status": {"A14": ""}}, "the label is empty"),
    ({"status": {"A14": "x" * 201}}, "at most 200 are allowed"),
    ({"status": {"A14": "two\nlines"}}, "control character"),
    ({"status": {"A14": 5}}, "a label must be text"),
    ({"status": ["A14"]}, "must be a mapping"),
    ("A14=no account", "must be a mapping"),
    ({"status": {f"v{i}": "x" for i in range(100_001)}}, "more than 100,000 labels"),
])
def test_bad_codebooks_are_refused_with_a_message(labels, message):
    X, _ = _data(6)
    with pytest.raises(ParameterError, match=re.escape(message)):
        TCREx(rho=0.03, value_labels=labels).fit(X, _model)


def test_class_names_for_classes_the_model_never_outputs_are_refused():
    X, _ = _data(7)
    with pytest.raises(ParameterError, match="never outputs"):
        TCREx(rho=0.03, class_names={2: "maybe"}).fit(X, _model)


def test_a_damaged_export_with_labels_is_refused():
    X, _ = _data(8)
    doc = json.loads(TCREx(rho=0.03, value_labels={"status": LABELS}).fit(X, _model).to_json())
    feature = next(f for f in doc["features"] if f["name"] == "status")
    feature["labels"] = [["A99", "ghost"]]
    with pytest.raises(SchemaError, match="A99"):
        TCREx.from_json(json.dumps(doc))
    feature["labels"] = [["A14", "<b>\n</b>"]]
    with pytest.raises(SchemaError, match="control character"):
        TCREx.from_json(json.dumps(doc))


def test_groups_are_named_by_label_and_code_in_the_column_order():
    """tcrex.audit.labelled_groups, the one rule the dashboard, the audit, the comparison and the CLI name
    groups by: "label (code)" for a labelled value, the value itself otherwise, in the column's order; with
    every_label the codebook's absent values are categories too (batches counted apart then add up alike)."""
    from tcrex.population import labelled_groups
    s = pd.Series(["A14", "A11", "A99", "A11"], name="status")
    got = labelled_groups(s, {"A11": "overdrawn", "A14": "no checking account", "A12": "under 200 DM"})
    assert got.tolist() == ["no checking account (A14)", "overdrawn (A11)", "A99", "overdrawn (A11)"]
    assert list(got.cat.categories) == ["overdrawn (A11)", "no checking account (A14)", "A99"]
    full = labelled_groups(s, {"A11": "overdrawn", "A14": "no checking account", "A12": "under 200 DM"},
                           every_label=True)
    assert list(full.cat.categories) == ["overdrawn (A11)", "under 200 DM (A12)", "no checking account (A14)", "A99"]
    months = pd.Series([3, -7, 3], name="months")
    assert labelled_groups(months, {"-7": "no delinquency on record"}).tolist() == [
        "3", "no delinquency on record (-7)", "3"]
    assert list(labelled_groups(months, {-8: "no usable trades"}, every_label=True).cat.categories) == [
        "no usable trades (-8)", "-7", "3"]
    assert labelled_groups(s, {"B1": "north"}) is s  # nothing labelled: the column itself


def test_the_audit_and_the_comparison_name_groups_by_the_explainers_labels():
    """In memory as in the CLI: grouped by a labelled feature's name, the groups are "label (code)"."""
    from tcrex.audit import audit
    from tcrex.compare import compare_models
    X, score = _data(5)
    y = (score > score.median()).astype(int).to_numpy()
    ex = TCREx(rho=0.05, target=1, value_labels={"status": LABELS}).fit(X, y_pred=y)
    res = audit(ex, X, groups="status", y_pred=y, n_boot=20)
    assert list(res.groups) == [f"{LABELS[c]} ({c})" for c in CODES]
    assert set(res.table()["group"]) == set(res.groups)

    class Rule:  # a real model object: the same rule the outputs were made by
        def predict(self, frame):
            return _model(frame)
    cmp = compare_models(ex, X, Rule(), model_a=Rule(), groups="status", n_boot=20)
    assert set(cmp.groups["group"]) == {f"{LABELS[c]} ({c})" for c in CODES}
