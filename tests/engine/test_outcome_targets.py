"""The favourable outcome: ordered class targets ("this class or better") and the suggested default with its
reason (what the dashboard asks a person to confirm)."""
import json

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx, ordered_labels, suggest_favourable
from tcrex.errors import ParameterError, SchemaError


@pytest.fixture(scope="module")
def quality():
    """An ordinal score 3-9 that a model outputs (as a wine quality)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(900, 3)), columns=["alcohol", "acidity", "sugar"])
    y = np.clip(np.round(6 + 1.5 * X["alcohol"] - X["acidity"]), 3, 9).astype(int).to_numpy()
    return X, y


def test_at_least_targets_the_class_and_every_better_one(quality):
    X, y = quality
    ex = TCREx(rho=0.02, tau=0.8, target={"at_least": 7}).fit(X, y_pred=y)
    assert [t.target.classes for t in ex.targets_] == [tuple(c for c in sorted(set(y)) if c >= 7)]
    out = ex.explain(X, y_pred=y)
    rated = y >= 7
    # a wine rated 8 already has a favourable outcome: it is never told how to become 7
    assert (out["status"].astype(str).to_numpy()[rated] == "already_in_target").all()
    assert (out["status"].astype(str).to_numpy()[~rated] != "already_in_target").all()
    low = TCREx(rho=0.02, tau=0.8, target={"at_most": 4}).fit(X, y_pred=y)
    assert low.targets_[0].target.classes == tuple(c for c in sorted(set(y)) if c <= 4)
    # the bound need not be a class; the spec survives the JSON round trip
    assert TCREx(rho=0.02, tau=0.8, target={"at_least": 6.5}).fit(X, y_pred=y).targets_[0].target.classes == \
        tuple(c for c in sorted(set(y)) if c >= 7)
    back = TCREx.from_json(ex.to_json())
    assert back.target == {"at_least": 7}
    assert back.explain(X, y_pred=y)["status"].astype(str).equals(out["status"].astype(str))


def test_ordered_targets_are_checked(quality):
    X, y = quality
    for spec, match in [({"at_least": 3}, "every class"), ({"at_least": 10}, "no class"),
                        ({"above": 7}, "at_least"), ({"at_least": "high"}, "number")]:
        with pytest.raises(ParameterError, match=match):
            TCREx(target=spec).fit(X, y_pred=y)
    with pytest.raises(ParameterError, match="numeric class labels"):
        TCREx(target={"at_least": "b"}).fit(X, y_pred=np.array(["a", "b", "c"])[y % 3])
    with pytest.raises(ParameterError, match="regression"):
        TCREx(target={"at_least": 1.0}).fit(X, y_pred=X["alcohol"].to_numpy())
    doc = json.loads(TCREx(rho=0.02, tau=0.8, target={"at_least": 7}).fit(X, y_pred=y).to_json())
    doc["params"]["target"] = {"at_least": 7, "at_most": 9}
    with pytest.raises(SchemaError, match="at_least"):
        TCREx.from_json(json.dumps(doc))
    assert ordered_labels([3, 4, 5]) and ordered_labels(["3", "4", "5"])
    assert not ordered_labels([0, 1]) and not ordered_labels(["a", "b", "c"])


@pytest.mark.parametrize("classes, label, named, expected, confident", [
    ([0, 1], "approved", 1, 1, True),  # metadata wins
    (["Bad", "Good"], "RiskPerformance", None, "Good", True),  # a label reads favourable
    (["denied", "other"], "decision", None, "other", True),  # a label reads adverse: the other one
    ([0, 1], "RiskPerformance", None, 0, False),  # 1 = Bad in credit data: never silently 1
    ([0, 1], "is_default", None, 0, False),
    ([0, 1], "hired", None, 1, False),
    ([0, 1], "target", None, 1, False),  # nothing says: a convention, and the reason says to check it
])
def test_suggested_favourable_class_and_its_reason(classes, label, named, expected, confident):
    s = suggest_favourable("classification", classes, label=label, named=named)
    assert s.target == expected and s.confident == confident
    assert s.reason and "\n" not in s.reason
    if label == "target":
        assert "1 = Bad" in s.reason and "choose 0" in s.reason


def test_suggested_outcome_for_ordinal_nominal_and_regression(quality):
    X, y = quality
    s = suggest_favourable("classification", sorted(set(y.tolist())), label="quality", y=y)
    start = s.target["at_least"]
    assert np.mean(y >= start) <= 0.5 < np.mean(y >= start - 1)  # where at most half the rows already are
    assert "or better" in s.reason
    assert suggest_favourable("classification", [0, 1, 2], label="cultivar").target is None  # unordered: ask
    r = suggest_favourable("regression", label="progression", y=np.array([100.0, 200.0, 150.0]))
    assert r.target == (None, 150.0) and "lower" in r.reason  # never "both directions"
    h = suggest_favourable("regression", label="price", y=np.array([1.0, 2.0, 4.0]))
    assert h.target[1] is None and h.target[0] == pytest.approx(2.333) and "higher" in h.reason


def test_text_labels_with_a_0_1_model_suggest_what_the_rows_say_or_ask():
    """Label column "Good"/"Bad" (named RiskPerformance, which reads adverse), model outputs 0/1: the name describes
    the text, not the model's numbers. The rows say which output goes with "Good"; when they do not, ask (None)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from tcrex import datasets

    frame = datasets.make_credit_bureau(1500, random_state=11)
    labels = frame.pop(datasets.CREDIT_BUREAU_TARGET)
    X = frame.select_dtypes("number")
    for favourable_code, coded in ((1, labels == "Good"), (0, labels == "Bad")):
        model = HistGradientBoostingClassifier(max_iter=60, random_state=0).fit(X, coded.astype(int))
        y = model.predict(X)
        s = suggest_favourable("classification", [0, 1], label="RiskPerformance", y=y, labels=labels)
        assert s.target == favourable_code, s
        assert "'Good'" in s.reason and not s.confident
    unknown = suggest_favourable("classification", [0, 1], label="RiskPerformance", y=np.array([0, 1] * 750),
                                 labels=pd.Series(["Good", "Good", "Bad", "Bad"] * 375))
    assert unknown.target is None and "'Bad', 'Good'" in unknown.reason  # each output with each word: ask
    codes = suggest_favourable("classification", [0, 1], label="RiskPerformance", y=np.array([0, 1] * 50),
                               labels=pd.Series(["A1", "A2"] * 50))
    assert codes.target is None  # neither text reads favourable or adverse: ask, not the name's guess (0)
    numeric = suggest_favourable("classification", [0, 1], label="RiskPerformance", y=np.array([0, 1] * 50),
                                 labels=pd.Series([0, 1] * 50))
    assert numeric.target == 0  # a 0/1 label column: its name speaks for the numbers, as before
