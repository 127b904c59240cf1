"""tcrex.metrics on tiny data where every desideratum can be worked out by hand.

The fit data is x = 1..20 with a model f(x) = [x > 10], except f(1) = 1 and f(20) = 0. With rho = 0.25 (leaves
of at least 5 rows) CART splits at 10.5, then 5.5 (left) and 15.5 (right):

    x <= 10.5  (9 of 10 rows have f = 0)     x <= 5.5 (4/5 zeros)      5.5 < x <= 10.5 (5/5 zeros)
    x >  10.5  (9 of 10 rows have f = 1)     10.5 < x <= 15.5 (5/5 ones)  x > 15.5 (4/5 ones)

At tau = 0.8 the maximal-valid rules are A: x > 10.5 (target {1}) and B: x <= 10.5 (target {0}). At tau = 0.95
they are (10.5, 15.5] and (5.5, 10.5]. Percentiles come from the fit data: F(v) = #{fit x <= v} / 20 = v / 20.
"""
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.metrics import DESIDERATA, evaluate

FIT = pd.DataFrame({"x": np.arange(1, 21)})


def f(X):
    x = np.asarray(X["x"], dtype=float)
    return np.where(x == 1, 1, np.where(x == 20, 0, (x > 10).astype(int)))


def fitted(tau):
    return TCREx(rho=0.25, tau=tau).fit(FIT, y_pred=f(FIT))


def _rule_texts(ex):
    return sorted(ex.rules_frame()["conditions"])


def test_the_fixture_has_the_rules_worked_out_in_the_docstring():
    assert _rule_texts(fitted(0.8)) == ["x ≤ 10", "x ≥ 11"]  # (-inf, 10.5] and (10.5, inf) on whole numbers
    assert _rule_texts(fitted(0.95)) == ["x in [11, 15]", "x in [6, 10]"]


def test_every_desideratum_by_hand():
    ex = fitted(0.8)
    X = pd.DataFrame({"x": [1, 3, 9, 12, 16, 20]})
    y = f(X)  # [1, 0, 0, 1, 1, 0]
    summary, rows = evaluate(ex, X, y, model=f, return_rows=True)
    # x=1 and x=20 already satisfy their rule (B and A) although their output is not in the target
    assert list(rows.status) == ["already_in_rule", "ok", "ok", "ok", "ok", "already_in_rule"]
    assert summary["n_explained"] == 6 and summary["n_rules_used"] == 2
    # A (x > 10.5) holds test rows 12, 16, 20 (f = 1, 1, 0); B (x <= 10.5) holds 1, 3, 9 (f = 1, 0, 0)
    assert rows.feasibility.tolist() == [0.5] * 6
    assert rows.accuracy.tolist() == pytest.approx([2 / 3] * 6)
    assert rows.sparsity.tolist() == [0, 1, 1, 1, 1, 0]
    assert rows.complexity.tolist() == [1] * 6
    # counterfactual points: A -> 11 (next whole number above 10.5), B -> 10; shift = |x' - x| / 20
    assert rows.distance.tolist() == pytest.approx([0, 8 / 20, 2 / 20, 2 / 20, 6 / 20, 0])
    # f at those points: f(1) = 1 is not in {0}, f(11) = 1 in {1}, f(10) = 0 in {0}, f(20) = 0 is not in {1}
    assert rows.point_valid.tolist() == [0, 1, 1, 1, 1, 0]
    # real examples: the nearest fit row inside the rule with its output in the target (2, 11, 11, 10, 10, 19)
    assert rows.example_distance.tolist() == pytest.approx([1 / 20, 8 / 20, 2 / 20, 2 / 20, 6 / 20, 1 / 20])
    assert rows.example_valid.tolist() == [1] * 6
    assert summary["feasibility"] == 0.5
    assert summary["accuracy"] == pytest.approx(2 / 3)
    assert summary["sparsity"] == pytest.approx(4 / 6)
    assert summary["complexity"] == 1
    assert summary["consistency"] == pytest.approx(2 / 6)
    assert summary["distance"] == pytest.approx(0.9 / 6)
    assert summary["point_validity"] == pytest.approx(4 / 6)
    assert summary["example_validity"] == 1
    assert summary["runtime"] == pytest.approx(summary["fit_time"] + summary["explain_time"])
    assert summary["runtime_per_input"] == pytest.approx(summary["runtime"] / 6)
    assert set(DESIDERATA) <= set(summary)


def test_accuracy_falls_back_to_the_marginal_when_no_test_row_is_in_the_rule():
    ex = fitted(0.95)
    X = pd.DataFrame({"x": [1, 3, 18, 20]})
    y = f(X)  # [1, 0, 1, 0]: half of the test outputs are in each target
    summary, rows = evaluate(ex, X, y, model=f, return_rows=True)
    # every row must move into (10.5, 15.5] or (5.5, 10.5], which hold no test row
    assert rows.feasibility.tolist() == [0, 0, 0, 0]
    assert rows.accuracy.tolist() == [0.5] * 4
    assert rows.sparsity.tolist() == [1] * 4
    assert rows.complexity.tolist() == [2] * 4
    assert summary["consistency"] == 0.5
    # 1 -> 6 and 18 -> 10 for target {0}; 3 -> 11 and 20 -> 15 for target {1}
    assert rows.distance.tolist() == pytest.approx([5 / 20, 8 / 20, 8 / 20, 5 / 20])


def test_categorical_change_counts_one_and_a_condition_is_one_term():
    X = pd.DataFrame({"c": ["a", "b", "c"] * 10})
    y = (X.c == "a").astype(int).to_numpy()
    ex = TCREx(rho=0.2, tau=0.9).fit(X, y_pred=y)
    assert _rule_texts(ex) == ["c = a", "c ≠ a"]
    Xt = pd.DataFrame({"c": ["a", "b", "c"]})
    model = lambda Z: (np.asarray(Z["c"]) == "a").astype(int)  # noqa: E731
    summary, rows = evaluate(ex, Xt, model(Xt), model=model, return_rows=True)
    # a -> {b, c} (2 of 3 test rows, all in target {0}); b, c -> {a} (1 of 3, in target {1})
    assert rows.feasibility.tolist() == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    assert rows.accuracy.tolist() == [1, 1, 1]
    assert rows.sparsity.tolist() == [1, 1, 1]
    assert rows.complexity.tolist() == [1, 1, 1]
    assert rows.distance.tolist() == [1, 1, 1]
    assert rows.point_valid.tolist() == [1, 1, 1]
    assert summary["consistency"] == pytest.approx(2 / 3)


def test_rows_already_in_target_or_without_rule_are_counted_not_scored():
    X = pd.DataFrame({"x": np.arange(1, 101)})
    y = np.where(X.x > 50, "hi", np.where(X.x > 25, "mid", "lo"))
    ex = TCREx(rho=0.1, tau=0.9, target="hi").fit(X, y_pred=y)  # targeted: only "hi" is Y*
    Xt = pd.DataFrame({"x": [10, 40, 90]})
    summary, rows = evaluate(ex, Xt, np.array(["lo", "mid", "hi"]), return_rows=True, examples=False)
    assert list(rows.status) == ["ok", "ok", "already_in_target"]
    assert summary["n_explained"] == 2 and summary["n_already_in_target"] == 1
    assert np.isnan(rows.feasibility.iloc[2]) and np.isnan(rows.distance.iloc[2])
    assert math.isnan(summary["point_validity"])  # no model given, none known to the explainer
    assert math.isnan(summary["example_validity"])  # examples=False


def test_targets_chosen_at_explain_time_are_scored_with_their_own_rules():
    X = pd.DataFrame({"x": np.arange(1, 101)})
    y = np.where(X.x > 50, "hi", np.where(X.x > 25, "mid", "lo"))
    ex = TCREx(rho=0.1, tau=0.9).fit(X, y_pred=y)  # untargeted multi-class
    Xt = pd.DataFrame({"x": [10, 40]})
    model = lambda Z: np.where(Z.x > 50, "hi", np.where(Z.x > 25, "mid", "lo"))  # noqa: E731
    summary, rows = evaluate(ex, Xt, model(Xt), model=model, target="hi", return_rows=True, examples=False)
    assert list(rows.status) == ["ok", "ok"] and summary["n_rules_used"] == 1
    # the rule for "hi" is x > 50.5 (whole numbers: x >= 51); no test row lies in it
    assert rows.feasibility.tolist() == [0, 0]
    assert rows.accuracy.tolist() == [0, 0]  # marginal share of test outputs equal to "hi"
    assert rows.point_valid.tolist() == [1, 1]  # moved to 51, the model says "hi"
    assert rows.distance.tolist() == pytest.approx([41 / 100, 11 / 100])


def test_distance_percentiles_can_come_from_given_fit_data():
    ex = TCREx.from_json(fitted(0.8).to_json())  # a restored explainer keeps no fit data
    X = pd.DataFrame({"x": [3, 12]})
    no_fit = evaluate(ex, X, f(X), examples=False)
    assert math.isnan(no_fit["distance"])
    with_fit = evaluate(ex, X, f(X), X_fit=FIT, fit_time=0.0, examples=False)
    assert with_fit["distance"] == pytest.approx((8 / 20 + 2 / 20) / 2)
    assert with_fit["runtime"] == pytest.approx(with_fit["explain_time"])


DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.mark.skipif(not (DATA / "pima.csv").exists(), reason="needs ../shared/datasets/pima.csv")
def test_on_a_real_dataset_with_an_xgboost_model():
    xgboost = pytest.importorskip("xgboost")
    df = pd.read_csv(DATA / "pima.csv")
    X, y = df.drop(columns="target"), df["target"]
    train, test = X.index[:600], X.index[600:]
    model = xgboost.XGBClassifier(n_estimators=20, max_leaves=8, tree_method="hist", n_jobs=1,
                                  random_state=0).fit(X.loc[train], y.loc[train])
    ex = TCREx(rho=0.02, tau=0.9).fit(X.loc[train], model)
    summary, rows = evaluate(ex, X.loc[test], model=model, return_rows=True)
    assert summary["n_explained"] == summary["n_rows"] == len(test)
    for key in ("feasibility", "accuracy", "point_validity", "example_validity"):
        assert 0 <= summary[key] <= 1, key
    assert summary["example_validity"] == 1  # real examples are fit rows the model sends to the target
    assert 1 <= summary["complexity"] and 0 <= summary["sparsity"] <= X.shape[1]
    assert 0 < summary["consistency"] <= 1 and summary["distance"] >= 0
    assert (rows.sparsity == ex.explain(X.loc[test], model=model)["changes"]).all()
